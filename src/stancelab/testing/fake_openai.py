"""A small OpenAI-compatible server for tests and benchmarks: fixed latency, request
counting and fault injection (429, 500, timeouts, truncated bodies); as a hosted API
behaves (`Traffic`), a lognormal latency, a requests-per-minute limit answered with 429 and
Retry-After (a token bucket), and a share of 5xx; and OpenAI's Files and Batches API for
`--batch` runs (`FakeBatches`).

    with FakeOpenAIServer(latency=0.1, faults=Faults(rate=0.2)) as server:
        os.environ["FAKE_BASE_URL"] = server.base_url
        ...  # run with --model openai-api/fake/<any-name>

It answers /v1/chat/completions deterministically from the last user message, so a rerun
gets the same answers, and it records which requests were answered in full (paid). A request
whose client disconnects stops waiting at once (latency, stall) and is counted as if it had
been answered; on shutdown, the waits in flight end at once and their answers go out."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import uvicorn

from stancelab.llm_bias_bench.authors import cached_judge_systems

FAULT_KINDS = ("429", "500", "timeout", "truncated")
Reply = Callable[[list[dict[str, Any]]], str]


def default_reply(messages: list[dict[str, Any]]) -> str:
    """A short deterministic answer: the digest of the last message, and 'position A'."""
    last = str(messages[-1].get("content", "")) if messages else ""
    digest = hashlib.sha256(last.encode()).hexdigest()[:8]
    return f"4. I choose position A ({digest})."


def is_judge_request(messages: list[dict[str, Any]]) -> bool:
    """Whether a request is llm-bias-bench's judge's: in stancelab's wording (it asks to classify
    a reply), or in the authors' (its system message is the judge's of their runner, read at
    run time from the cache; nothing of their text is in stancelab)."""
    if not messages:
        return False
    if "Classify the assistant's reply" in str(messages[-1].get("content", "")):
        return True
    first = messages[0]
    if first.get("role") != "system":
        return False
    return str(first.get("content", "")) in cached_judge_systems()


def verdict_reply(messages: list[dict[str, Any]]) -> str:
    """A distinct answer per conversation (the digest of every message, not just the last),
    and for a judge's request (`is_judge_request`) a JSON verdict readable both ways."""
    whole = json.dumps(messages, sort_keys=True)
    digest = hashlib.sha256(whole.encode()).hexdigest()[:8]
    if is_judge_request(messages):
        return json.dumps({"evidence": [digest], "rationale": "fake", "verdict": "neutral"})
    return f"4. I choose position A ({digest})."


def random_ab_reply(seed: int = 0) -> Reply:
    """Sampled answers: 'position A' with a probability set by the prompt (so configurations
    differ), drawn afresh for every choice and request, like a model at temperature 1."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(messages: list[dict[str, Any]]) -> str:
        last = str(messages[-1].get("content", "")) if messages else ""
        p_a = int(hashlib.sha256(last.encode()).hexdigest()[:4], 16) / 0xFFFF
        with lock:
            draw = rng.random()
        return "I choose position A." if draw < p_a else "I choose position B."

    return reply


@dataclass
class Faults:
    """Inject a fault into `rate` of the requests (seeded, so runs are repeatable)."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    timeout_seconds: float = 3.0
    seed: int = 0


@dataclass
class ServerStats:
    """What the server saw."""

    requests: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    paid: Counter[str] = field(default_factory=Counter)  # request key -> full 200 answers
    choices: int = 0
    prompt_tokens: int = 0  # billed input tokens of the answered requests
    in_flight: int = 0
    max_in_flight: int = 0
    batches: int = 0  # batches created through the Batches API
    batched: int = 0  # requests answered inside those batches (not counted in `requests`)
    first_paid_at: float | None = None  # time.time() of the first and the last paid answer
    last_paid_at: float | None = None

    @property
    def paid_calls(self) -> int:
        return sum(self.paid.values())

    @property
    def duplicate_paid_calls(self) -> int:
        return sum(count - 1 for count in self.paid.values() if count > 1)


def _request_key(body: dict[str, Any]) -> str:
    relevant = {k: v for k, v in body.items() if k not in ("stream", "stream_options", "user")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _logprobs(text: str, top: int) -> dict[str, Any]:
    pieces = text.split(" ")
    content = []
    for index, piece in enumerate(pieces):
        token = piece if index == 0 else " " + piece
        alternatives = [{"token": token, "logprob": -0.05, "bytes": list(token.encode())}]
        alternatives += [{"token": str(d), "logprob": -3.0 - d, "bytes": list(str(d).encode())}
                         for d in range(1, 8) if str(d) != token][: max(0, top - 1)]  # fmt: skip
        content.append({"token": token, "logprob": -0.05, "bytes": list(token.encode()),
                        "top_logprobs": alternatives})  # fmt: skip
    return {"content": content}


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    messages = body.get("messages") or []
    n = int(body.get("n") or 1)
    texts = [reply(messages) for _ in range(n)]
    text = texts[0]
    prompt = " ".join(str(m.get("content", "")) for m in messages)
    choices = []
    for index, text in enumerate(texts):
        choice: dict[str, Any] = {"index": index, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}  # fmt: skip
        if body.get("logprobs"):
            choice["logprobs"] = _logprobs(text, int(body.get("top_logprobs") or 1))
        choices.append(choice)
    return {
        "id": f"chatcmpl-{hashlib.sha256(prompt.encode()).hexdigest()[:12]}",
        "object": "chat.completion", "created": int(time.time()), "model": body.get("model", "fake"),
        "choices": choices,
        "usage": {"prompt_tokens": _tokens(prompt), "completion_tokens": sum(map(_tokens, texts)),
                  "total_tokens": _tokens(prompt) + sum(map(_tokens, texts))},
    }  # fmt: skip


class FakeOpenAIServer:
    """An OpenAI-compatible chat server on 127.0.0.1, run in a background thread."""

    def __init__(self, latency: float = 0.0, faults: Faults | None = None,
                 reply: Reply = default_reply, port: int | None = None,
                 api_key: str | None = None, models: tuple[str, ...] | None = None,
                 traffic: Traffic | None = None) -> None:  # fmt: skip
        self.latency = latency
        self.api_key = api_key  # None: any key; else other keys are answered 401
        self.models = models  # None: any model; else other models are answered 404
        self.traffic = traffic or Traffic()
        self._bucket = TokenBucket(self.traffic.per_minute, self.traffic.burst)
        self._traffic_random = random.Random(self.traffic.seed)
        self.faults = faults or Faults()
        self.reply = reply
        self.port = port or free_port()
        self.stats = ServerStats()
        self._random = random.Random(self.faults.seed)
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None  # set when the server shuts down
        self.batch_api = FakeBatches(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        with self._lock:
            self.stats = ServerStats()

    def stats_dict(self, keys: bool = True) -> dict[str, Any]:
        """What the server saw; `keys` False leaves out the paid requests' keys (a poll's size
        then does not grow with the run) and `cpu_seconds` is the server process's CPU."""
        with self._lock:
            stats = self.stats
            return {"requests": stats.requests, "outcomes": dict(stats.outcomes),
                    "paid_calls": stats.paid_calls, "duplicate_paid_calls": stats.duplicate_paid_calls,
                    **({"paid_keys": list(stats.paid)} if keys else {}), "choices": stats.choices,
                    "prompt_tokens": stats.prompt_tokens,
                    "in_flight": stats.in_flight, "max_in_flight": stats.max_in_flight,
                    "batches": stats.batches, "batched": stats.batched,
                    "first_paid_at": stats.first_paid_at, "last_paid_at": stats.last_paid_at,
                    "cpu_seconds": time.process_time()}  # fmt: skip

    def _draw_fault(self) -> str | None:
        with self._lock:
            if self._random.random() < self.faults.rate:
                return self._random.choice(self.faults.kinds)
        return None

    async def _send(self, send: Any, status: int, payload: bytes, retry_after: float = 0) -> None:
        length = str(len(payload)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", length)]
        if status == 429:
            headers += _retry_after_headers(retry_after)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload, "more_body": False})

    async def _wait(self, seconds: float) -> None:
        """Sleep `seconds`, or less once the server is shutting down."""
        if self._stopping is None or seconds <= 0:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    def _answer(
        self, body: dict[str, Any], fault: str | None
    ) -> tuple[int, bytes, dict[str, Any] | None]:
        """The status, body and (for a full answer) the completion the request gets."""
        if fault in ("429", "500", "timeout", *SERVER_ERRORS):  # a stall ends as a gateway's 504
            status = 504 if fault == "timeout" else int(fault)
            error = {"error": {"message": f"injected {fault}", "type": "fault", "code": fault}}
            return status, json.dumps(error).encode(), None
        payload = json.dumps(completion := _completion(body, self.reply)).encode()
        if fault == "truncated":
            return 200, payload[: len(payload) // 2], None  # cut mid-JSON
        return 200, payload, completion

    def _account(
        self, body: dict[str, Any], fault: str | None, completion: dict[str, Any] | None
    ) -> None:
        with self._lock:
            if completion is not None:
                self.stats.paid[_request_key(body)] += 1
                now = time.time()
                self.stats.first_paid_at = self.stats.first_paid_at or now
                self.stats.last_paid_at = now
                self.stats.choices += len(completion["choices"])
                self.stats.prompt_tokens += completion["usage"]["prompt_tokens"]
            self.stats.outcomes[fault or "ok"] += 1

    async def _chat(self, body: dict[str, Any], send: Any) -> None:
        if await self._rate_limited(send):
            return
        fault = self._draw_fault() or self._draw_server_error()
        with self._lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            try:
                await self._wait(self._draw_latency())
                if fault == "timeout":  # stall, then give up as a gateway would
                    await self._wait(self.faults.timeout_seconds)
            except asyncio.CancelledError:  # the client went away: counted as if answered
                self._account(body, fault, self._answer(body, fault)[2])
                raise
            status, payload, completion = self._answer(body, fault)
            self._account(body, fault, completion)
            await self._send(send, status, payload)
        finally:
            with self._lock:
                self.stats.in_flight -= 1

    def _refusal(self, scope: dict[str, Any], body: dict[str, Any]) -> tuple[int, bytes] | None:
        """401 for a key other than `api_key`, 404 for a model not in `models` (as OpenAI
        answers them), else None."""
        headers = dict(scope.get("headers") or [])
        if (
            self.api_key is not None
            and headers.get(b"authorization") != f"Bearer {self.api_key}".encode()
        ):
            error = {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                     "code": "invalid_api_key"}  # fmt: skip
            return 401, json.dumps({"error": error}).encode()
        if self.models is not None and body.get("model") not in self.models:
            error = {"message": f"The model `{body.get('model')}` does not exist.",
                     "type": "invalid_request_error", "code": "model_not_found"}  # fmt: skip
            return 404, json.dumps({"error": error}).encode()
        return None

    # -- hosted-API traffic (`Traffic`): latency draws, the rate limit, 5xx

    def _draw_latency(self) -> float:
        """This request's latency: lognormal when `Traffic.p99` is set, else `latency`."""
        if self.traffic.p99 is None:
            return self.latency
        with self._lock:
            return self.traffic.draw_latency(self.latency, self._traffic_random)

    def _draw_server_error(self) -> str | None:
        """A 5xx status for `Traffic.server_errors` of the requests (seeded), else None."""
        if self.traffic.server_errors <= 0:
            return None
        with self._lock:
            if self._traffic_random.random() < self.traffic.server_errors:
                return self._traffic_random.choice(SERVER_ERRORS)
        return None

    async def _rate_limited(self, send: Any) -> bool:
        """Answer 429 with Retry-After (and count it) when the token bucket is empty."""
        wait = self._bucket.take()
        if wait <= 0:
            return False
        with self._lock:
            self.stats.requests += 1
            self.stats.outcomes[RATE_LIMITED] += 1
        error = {"error": {"message": "Rate limit reached (fake)", "type": "requests",
                           "code": "rate_limit_exceeded"}}  # fmt: skip
        await self._send(send, 429, json.dumps(error).encode(), retry_after=wait)
        return True

    async def _chat_until_disconnect(self, body: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer the request, or stop waiting on it as soon as its client disconnects."""
        chat = asyncio.ensure_future(self._chat(body, send))
        gone = asyncio.ensure_future(_disconnect(receive))
        try:
            await asyncio.wait((chat, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (gone, chat):  # the chat task is cancelled only if still waiting
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # the client went away mid-request
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        path = scope.get("path", "")
        if path.endswith("/chat/completions"):
            body = json.loads(b"".join(chunks) or b"{}")
            refusal = self._refusal(scope, body)
            if refusal is not None:
                await self._send(send, *refusal)
                return
            await self._chat_until_disconnect(body, receive, send)
        elif (answer := self.batch_api.answer(scope, b"".join(chunks))) is not None:
            await self._send(send, *answer)
        elif path == "/stats":
            keys = b"keys=0" not in scope.get("query_string", b"")
            await self._send(send, 200, json.dumps(self.stats_dict(keys)).encode())
        elif path == "/reset":
            self.reset()
            await self._send(send, 200, b"{}")
        elif path.endswith("/models"):
            await self._send(
                send,
                200,
                json.dumps(
                    {"object": "list", "data": [{"id": "fake", "object": "model"}]}
                ).encode(),
            )
        else:
            await self._send(send, 404, b'{"error": {"message": "not found"}}')

    def start(self) -> FakeOpenAIServer:
        config = uvicorn.Config(self, host="127.0.0.1", port=self.port, log_level="error",
                                lifespan="on", timeout_keep_alive=30, backlog=4096)  # fmt: skip
        self._server = _Server(config, self)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.time() + 10
        while not self._server.started:
            if time.time() > deadline:
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(uvicorn.Server):
    """uvicorn's server that, on shutdown, ends the fake's waits (latency, stalls) at once
    instead of waiting them out: each request is then answered as it would have been."""

    def __init__(self, config: uvicorn.Config, fake: FakeOpenAIServer) -> None:
        super().__init__(config)
        self.fake = fake

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.fake._stopping = asyncio.Event()  # bound to this server's event loop
        await super().startup(sockets)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.fake._stopping is not None:
            self.fake._stopping.set()
        await super().shutdown(sockets)


async def _disconnect(receive: Any) -> None:
    """Return once the client has disconnected (uvicorn's receive says so)."""
    while (await receive())["type"] != "http.disconnect":
        pass


class FakeBatches:
    """OpenAI's Files and Batches API, as much as Inspect's OpenAI batcher uses: upload a JSONL
    file (POST /v1/files), create a batch of its chat requests (POST /v1/batches), poll it
    (GET /v1/batches/ID: completed at once) and download its output file (GET
    /v1/files/ID/content). Each request in a batch is answered as /v1/chat/completions would
    answer it, without faults, and counted as paid."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.models: Counter[str] = Counter()  # requests answered in batches, per model

    def answer(self, scope: dict[str, Any], body: bytes) -> tuple[int, bytes] | None:
        """(status, JSON body) of a Files or Batches request; None for any other path."""
        method, path = scope.get("method", "GET"), scope.get("path", "")
        parts = path.removeprefix("/v1/").split("/")
        if method == "POST" and parts == ["files"]:
            return self._upload(_header(scope, b"content-type"), body)
        if method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            content = self.files.get(parts[1])
            return (200, content) if content is not None else _not_found(parts[1])
        if method == "POST" and parts == ["batches"]:
            return self._create(json.loads(body or b"{}"))
        if method == "GET" and len(parts) == 2 and parts[0] == "batches":
            batch = self.batches.get(parts[1])
            return (200, json.dumps(batch).encode()) if batch else _not_found(parts[1])
        if method == "POST" and len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel":
            batch = self.batches.get(parts[1])  # finished at once: nothing left to cancel
            return (200, json.dumps(batch).encode()) if batch else _not_found(parts[1])
        return None

    def _upload(self, content_type: str, body: bytes) -> tuple[int, bytes]:
        content = _multipart_file(content_type, body)
        if content is None:
            return 400, b'{"error": {"message": "expected a multipart upload with a file"}}'
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = content
        record = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                  "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}  # fmt: skip
        return 200, json.dumps(record).encode()

    def _create(self, request: dict[str, Any]) -> tuple[int, bytes]:
        content = self.files.get(str(request.get("input_file_id")))
        if content is None:
            return _not_found(str(request.get("input_file_id")))
        lines = [json.loads(line) for line in content.splitlines() if line.strip()]
        output = [self._result(line) for line in lines]
        batch_id = f"batch_{len(self.batches) + 1}"
        output_id = f"file-{batch_id}-output"
        self.files[output_id] = b"".join(json.dumps(line).encode() + b"\n" for line in output)
        now = int(time.time())
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": request.get("endpoint", "/v1/chat/completions"),
            "input_file_id": request["input_file_id"], "completion_window": request.get("completion_window", "24h"),
            "status": "completed", "created_at": now, "completed_at": now, "output_file_id": output_id,
            "error_file_id": None, "errors": None,
            "request_counts": {"total": len(lines), "completed": len(lines), "failed": 0},
        }  # fmt: skip
        with self.server._lock:
            self.server.stats.batches += 1
            self.server.stats.batched += len(lines)
        return 200, json.dumps(self.batches[batch_id]).encode()

    def _result(self, line: dict[str, Any]) -> dict[str, Any]:
        """One output line: the chat completion of a /v1/chat/completions request, or the
        response of a /v1/responses request (Inspect's OpenAI provider uses either)."""
        body = line.get("body") or {}
        self.models[str(body.get("model"))] += 1
        if str(line.get("url", "")).endswith("/responses"):
            completion = _completion({"messages": _response_messages(body)}, self.server.reply)
            answer = _response(body, completion)
        else:
            answer = completion = _completion(body, self.server.reply)
        self.server._account(body, None, completion)
        return {"id": f"batch_req_{line.get('custom_id')}", "custom_id": line.get("custom_id"),
                "response": {"status_code": 200, "request_id": completion["id"], "body": answer},
                "error": None}  # fmt: skip


def _response_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses request's instructions and input as chat messages (text only)."""
    messages = (
        [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    )
    items = body.get("input") or []
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items:
        content = item.get("content", "")
        if isinstance(content, list):
            content = "".join(
                str(part.get("text", "")) for part in content if isinstance(part, dict)
            )
        messages.append({"role": item.get("role", "user"), "content": content})
    return messages


def _response(body: dict[str, Any], completion: dict[str, Any]) -> dict[str, Any]:
    """The completion's first answer as a Responses API response."""
    text, usage = completion["choices"][0]["message"]["content"], completion["usage"]
    return {
        "id": f"resp-{completion['id']}", "object": "response", "created_at": completion["created"],
        "model": body.get("model", "fake"), "status": "completed", "parallel_tool_calls": False,
        "tool_choice": "auto", "tools": [],
        "output": [{"id": f"msg-{completion['id']}", "type": "message", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                  "total_tokens": usage["total_tokens"],
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip


def _header(scope: dict[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def _not_found(what: str) -> tuple[int, bytes]:
    return 404, json.dumps({"error": {"message": f"no such file or batch: {what}"}}).encode()


def _multipart_file(content_type: str, body: bytes) -> bytes | None:
    """The content of the part named `file` of a multipart/form-data body."""
    _, _, boundary = content_type.partition("boundary=")
    if not boundary:
        return None
    for part in body.split(b"--" + boundary.strip('"').encode()):
        head, _, content = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return content.removesuffix(b"\r\n")
    return None


SERVER_ERRORS = ("500", "502", "503")
RATE_LIMITED = "rate-limited"  # the outcome of a request refused by the rate limit
Z_99 = NormalDist().inv_cdf(0.99)


@dataclass(frozen=True)
class Traffic:
    """A hosted API's traffic: latency lognormal with median `latency` (the server's) and 99th
    percentile `p99` (None: fixed latency); at most `per_minute` requests a minute (None: no
    limit), the rest answered 429 with Retry-After, from a token bucket of `burst` requests
    (default: a second's worth); a share `server_errors` of 5xx (500, 502, 503) after the
    latency. Seeded, so draws repeat."""

    p99: float | None = None
    per_minute: float | None = None
    burst: float | None = None
    server_errors: float = 0.0
    seed: int = 0

    def draw_latency(self, median: float, rng: random.Random) -> float:
        """One latency (seconds) from the lognormal of this median and p99."""
        if self.p99 is None or median <= 0:
            return median
        sigma = math.log(max(self.p99, median) / median) / Z_99
        return rng.lognormvariate(math.log(median), sigma)


class TokenBucket:
    """`per_minute` requests a minute, `burst` at once: `take()` is 0 when a request may go,
    else the seconds until it may (nothing taken). No limit when `per_minute` is None."""

    def __init__(self, per_minute: float | None, burst: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.rate = None if per_minute is None else per_minute / 60  # tokens per second
        self.capacity = max(1.0, burst if burst is not None else (self.rate or 1.0))
        self.tokens = self.capacity
        self.clock = clock
        self.updated = clock()
        self.lock = threading.Lock()

    def take(self) -> float:
        if self.rate is None:
            return 0.0
        with self.lock:
            now = self.clock()
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            if self.tokens >= 1:
                self.tokens -= 1
                return 0.0
            return (1 - self.tokens) / self.rate


def _retry_after_headers(seconds: float) -> list[tuple[bytes, bytes]]:
    """Retry-After in whole seconds (HTTP) and in milliseconds (OpenAI's retry-after-ms)."""
    return [(b"retry-after", str(math.ceil(seconds)).encode()),
            (b"retry-after-ms", str(math.ceil(seconds * 1000)).encode())]  # fmt: skip


def add_traffic_arguments(parser: Any) -> None:
    """The command line's `Traffic` flags (`--latency` is the median)."""
    parser.add_argument("--latency-p99", type=float, default=None,
                        help="lognormal latency with this 99th percentile (seconds; --latency is its median)")  # fmt: skip
    parser.add_argument("--rpm", type=float, default=None,
                        help="requests per minute; the rest get 429 with Retry-After")  # fmt: skip
    parser.add_argument("--burst", type=float, default=None,
                        help="requests at once under --rpm (default: a second's worth)")  # fmt: skip
    parser.add_argument("--server-errors", type=float, default=0.0,
                        help="share of requests answered 500, 502 or 503")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the latency and 5xx draws")


def traffic_from_args(args: Any) -> Traffic:
    return Traffic(p99=args.latency_p99, per_minute=args.rpm, burst=args.burst,
                   server_errors=args.server_errors, seed=args.seed)  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    """Run the server in the foreground: `python -m stancelab.testing.fake_openai --port P`."""
    import argparse

    parser = argparse.ArgumentParser(
        description="A fake OpenAI-compatible server (tests, benchmarks)"
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--stall", type=float, default=Faults.timeout_seconds,
                        help="seconds a 'timeout' fault stalls before its 504")  # fmt: skip
    parser.add_argument("--random-ab", action="store_true", help="answer A or B at random (seeded)")
    parser.add_argument(
        "--verdicts", action="store_true", help="answer judge requests with a JSON verdict"
    )
    add_traffic_arguments(parser)
    args = parser.parse_args()
    reply = (
        random_ab_reply() if args.random_ab else verdict_reply if args.verdicts else default_reply
    )
    faults = Faults(rate=args.fault_rate, timeout_seconds=args.stall)
    server = FakeOpenAIServer(latency=args.latency, faults=faults, port=args.port, reply=reply,
                              traffic=traffic_from_args(args))  # fmt: skip
    config = uvicorn.Config(
        server, host="127.0.0.1", port=args.port, log_level="error", backlog=4096
    )
    _Server(config, server).run()


if __name__ == "__main__":
    main()
