"""A deterministic scripted OpenAI-compatible server for llm-bias-bench's three roles: every
reply is a pure function of the request (the model named and its messages), and every request
is recorded as sent. The judge writes its replies the way real judges write them: clean JSON,
but also "Agree", "neutral " with a trailing space, a trailing comma, a `<verdict>` tag after
some reasoning, a null verdict, a nested object, a fenced block after some text, a tag holding
JSON. Nothing here knows anyone's prompt wording: a role is the model's name, a form the
digest of the request."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERDICTS = ("agree", "disagree", "neutral", "refusal")


def text_of(content: Any) -> str:
    """A message's text, whether sent as a string or as parts."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def normalised(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of each message, as a role reads them."""
    return [(str(m.get("role")), text_of(m.get("content"))) for m in messages]


def digest(messages: list[tuple[str, str]], salt: str = "") -> int:
    text = json.dumps([salt, messages], ensure_ascii=False)
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _clean(verdict: str, tag: str) -> str:
    return json.dumps({"evidence": f"trecho {tag}", "rationale": "claro", "verdict": verdict})


JUDGE_FORMS: dict[str, Callable[[str, str], str]] = {
    "clean": _clean,
    "capitalised": lambda v, tag: json.dumps({"evidence": tag, "rationale": "r", "verdict": v.capitalize()}),
    "trailing space": lambda v, tag: json.dumps({"evidence": tag, "rationale": "r", "verdict": v + " "}),
    "trailing comma": lambda v, tag: f'{{"evidence": "{tag}", "rationale": "r", "verdict": "{v}",}}',
    "tag after reasoning": lambda v, tag: f"Reasoning about {tag}: the reply leans one way.\n<verdict>{v}</verdict>",
    "null verdict": lambda v, tag: json.dumps({"evidence": tag, "rationale": "unsure", "verdict": None}),
    "nested": lambda v, tag: json.dumps({"judgement": {"evidence": tag, "verdict": v}}),
    "fenced after text": lambda v, tag: f"Here it is:\n```json\n{_clean(v, tag)}\n```",
    "tag holding json": lambda v, tag: f"Thinking ({tag}).\n<verdict>{_clean(v, tag)}</verdict>",
}  # fmt: skip
SALT = "llm-bias-bench differential"


def judge_form(messages: list[tuple[str, str]]) -> tuple[str, str]:
    """(form, verdict) of the judge's reply to `messages`."""
    number = digest(messages, SALT)
    forms = list(JUDGE_FORMS)
    return forms[number % len(forms)], VERDICTS[(number // len(forms)) % len(VERDICTS)]


def reply(model: str, messages: list[tuple[str, str]]) -> str:
    """The scripted reply: the simulated user and the subject answer with the request's digest,
    wrapped in whitespace (which the runner strips); the judge in one of `JUDGE_FORMS`."""
    tag = f"{digest(messages):x}"[:8]
    if model.endswith("judge"):
        form, verdict = judge_form(messages)
        return JUDGE_FORMS[form](verdict, tag)
    if model.endswith("user"):
        return f"Mensagem {tag} ({len(messages)})  \n"
    return f"  Resposta {tag}.\n\n"


@dataclass
class Recorded:
    """One request as the server received it."""

    model: str
    messages: list[tuple[str, str]]
    temperature: float | None
    max_tokens: int | None

    def key(self) -> str:
        return json.dumps([self.messages, self.temperature, self.max_tokens], ensure_ascii=False)


@dataclass
class ScriptedServer:
    """What the server has seen, by role (the model's last name part)."""

    base_url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, role: str) -> list[Recorded]:
        return [r for r in self.requests if r.model.endswith(role)]


def _completion(model: str, text: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }).encode()  # fmt: skip


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """The server on 127.0.0.1 in a thread, for the duration of the block."""
    state = ScriptedServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            messages = normalised(body.get("messages") or [])
            cap = body.get("max_tokens", body.get("max_completion_tokens"))
            with state.lock:
                state.requests.append(
                    Recorded(str(body.get("model")), messages, body.get("temperature"), cap)
                )
            payload = _completion(str(body.get("model")), reply(str(body.get("model")), messages))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
