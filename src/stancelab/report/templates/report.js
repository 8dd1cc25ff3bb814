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
  var front = document.getElementById("front-table");
  var modelFilter = document.getElementById("model-filter");
  var filterCount = document.getElementById("filter-count");
  function frontRows() { return Array.prototype.slice.call(front.tBodies[0].rows); }
  function sortKey(row, column) {
    var cell = row.cells[column];
    var raw = cell ? cell.getAttribute("data-sort") : "";
    if (raw === null || raw === "") { return null; }
    var number = parseFloat(raw);
    return isNaN(number) ? raw.toLowerCase() : number;
  }
  function groupKey(row, column) {
    var cell = row.cells[column];
    var group = cell ? cell.getAttribute("data-group") : null;
    return group === null || group === "" ? 0 : parseInt(group, 10);
  }
  function sortBy(header) {
    var column = parseInt(header.getAttribute("data-col"), 10);
    var descending = header.getAttribute("aria-sort") !== "descending";
    front.querySelectorAll("thead th").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var rows = frontRows();
    rows.sort(function (a, b) {
      var x = sortKey(a, column), y = sortKey(b, column);
      if (x === null && y === null) { return 0; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      var gx = groupKey(a, column), gy = groupKey(b, column);
      if (gx !== gy) { return gx - gy; }  // a column of several unit sets ranks within a set
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { front.tBodies[0].appendChild(row); });
  }
  if (front) {
    front.querySelectorAll("thead th.sortable").forEach(function (header) {
      header.addEventListener("click", function () { sortBy(header); });
    });
  }
  if (front && modelFilter) {
    modelFilter.addEventListener("input", function () {
      var query = modelFilter.value.trim().toLowerCase();
      var shown = 0;
      frontRows().forEach(function (row) {
        var keep = row.getAttribute("data-model").indexOf(query) >= 0;
        row.hidden = !keep;
        if (keep) { shown += 1; }
      });
      filterCount.textContent = shown + " of " + frontRows().length + " models";
    });
  }
  var pairSelect = document.getElementById("pair-select");
  if (pairSelect) {
    var showPair = function () {
      document.querySelectorAll("details.pair").forEach(function (block) {
        var chosen = block.getAttribute("data-index") === pairSelect.value;
        block.hidden = !chosen;
        block.open = chosen;
      });
    };
    pairSelect.addEventListener("change", showPair);
    showPair();
  }
  var matrixModel = document.getElementById("matrix-model");
  if (matrixModel) {
    matrixModel.addEventListener("change", function () {
      document.querySelectorAll("div.matrix-model").forEach(function (block) {
        block.hidden = block.getAttribute("data-index") !== matrixModel.value;
      });
    });
  }
  document.querySelectorAll("a.evidence-link").forEach(function (link) {
    link.addEventListener("click", function () {
      var index = link.getAttribute("data-model-index");
      document.querySelectorAll("div.matrix-model").forEach(function (block) {
        block.hidden = block.getAttribute("data-index") !== index;
      });
      if (matrixModel) { matrixModel.value = index; }
    });
  });
  document.querySelectorAll("button.show-transcripts").forEach(function (button) {
    button.addEventListener("click", function () {
      var query = JSON.parse(button.getAttribute("data-q"));
      box.value = query.join(" ");
      filter();
      document.getElementById("transcripts").scrollIntoView();
    });
  });
})();
