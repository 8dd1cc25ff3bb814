(function () {
  "use strict";
  var box = document.getElementById("transcript-search");
  var counter = document.getElementById("transcript-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("details.transcript"));
  function normalise(text) { return text.trim().toLowerCase().replace(/\s+/g, "_"); }
  function matches(item, tokens) {
    var keys = item.getAttribute("data-search");
    var text = null;
    for (var i = 0; i < tokens.length; i++) {
      var token = tokens[i];
      if (token.indexOf("=") > 0) {
        if (keys.indexOf("|" + token + "|") < 0) { return false; }
      } else {
        if (text === null) { text = item.textContent.toLowerCase(); }
        if (keys.indexOf(token) < 0 && text.indexOf(token) < 0) { return false; }
      }
    }
    return true;
  }
  function filter() {
    var tokens = box.value.split(/\s+/).filter(function (t) { return t.length > 0; })
      .map(function (t) { return t.indexOf("=") > 0 ? normalise(t) : t.toLowerCase(); });
    var shown = 0;
    items.forEach(function (item) {
      var keep = matches(item, tokens);
      item.hidden = !keep;
      if (keep) { shown += 1; }
    });
    counter.textContent = shown + " of " + items.length + " transcripts shown";
  }
  if (box) {
    box.addEventListener("input", filter);
    filter();
  }
  document.querySelectorAll("button.show-transcripts").forEach(function (button) {
    button.addEventListener("click", function () {
      var query = JSON.parse(button.getAttribute("data-q"));
      box.value = query.join(" ");
      filter();
      document.getElementById("transcripts").scrollIntoView();
    });
  });
})();
