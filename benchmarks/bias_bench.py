"""llm-bias-bench's design through stancelab beside a plain client (the authors' kind of
runner: a pool of threads around the openai client, no framework) and the ideal, on one fake
server: wall time, requests, conversations complete, answers paid twice, CPU ms per call.

    python benchmarks/bias_bench.py [--topics FILE] [--latency 0.2] [--concurrency 20]
        [--fault-rate 0.2] [--stall 30] [--runners plain,stancelab] [--lean auto|on|off]

The ideal is the critical path: ceil(conversations / concurrency) rounds of 11 sequential
calls (5 user, 5 subject, 1 judge) at the server's latency. Both runners' clocks start with
the openai package imported (0.6 s): the plain client imports it before its clock, and
stancelab's provider would otherwise import it inside its run.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import ServerProcess, fresh_cache_dir, machine, use_fake_endpoint

AUTHORS_TOPICS = Path(__file__).parents[1] / "../shared/external/llm-bias-bench/data/topics.jsonl"
SUBJECT = "openai-api/fake/subject"
TURNS = 5
CALLS_PER_CONVERSATION = 2 * TURNS + 1


@dataclass
class Outcome:
    """One runner's run of the design."""

    runner: str
    wall: float
    cpu: float
    requests: int
    conversations: int
    paid_twice: int

    def line(self, calls: int, ideal: float) -> str:
        return (f"  {self.runner:<22} {self.wall:7.1f} s ({self.wall / ideal:4.2f}x ideal), "
                f"{self.requests:,} requests, {self.conversations} conversations complete, "
                f"{self.paid_twice} paid twice, CPU {1000 * self.cpu / calls:.1f} ms per call")  # fmt: skip


def design(topics_file: Path) -> list[dict[str, Any]]:
    """Every conversation's metadata, as the probe builds them."""
    from stancelab.llm_bias_bench.dataset import conversation_samples, load_topics

    return [
        dict(sample.metadata or {}) for sample in conversation_samples(load_topics(topics_file))
    ]


def _chat(client: Any, messages: list[dict[str, str]], temperature: float) -> str:
    """One call, tried again on any error until it answers (the plain runner's only policy)."""
    for attempt in range(20):
        try:
            reply = client.chat.completions.create(
                model="fake", messages=messages, temperature=temperature
            )
            return reply.choices[0].message.content or ""
        except Exception:  # a plain runner retries whatever failed
            time.sleep(min(2**attempt * 0.1, 2.0))
    raise RuntimeError("call failed 20 times")


def conversation(client: Any, metadata: dict[str, Any]) -> str:
    """The probe's calls for one conversation: simulated user, subject, then the judge."""
    from stancelab.llm_bias_bench.prompts import (
        JUDGE_SYSTEM,
        judge_prompt,
        user_system_prompt,
        user_turn_cue,
    )

    user_view = [{"role": "system", "content": user_system_prompt(metadata, TURNS)}]
    subject_view: list[dict[str, str]] = []
    exchanges: list[tuple[str, str]] = []
    reply = ""
    for turn in range(1, TURNS + 1):
        user_view.append({"role": "user", "content": user_turn_cue(turn, TURNS, reply)})
        user_text = _chat(client, user_view, 0.8).strip() or "..."
        user_view.append({"role": "assistant", "content": user_text})
        subject_view.append({"role": "user", "content": user_text})
        reply = _chat(client, subject_view, 0.7)
        subject_view.append({"role": "assistant", "content": reply})
        exchanges.append((user_text, reply))
    judge = [{"role": "system", "content": JUDGE_SYSTEM},
             {"role": "user", "content": judge_prompt(metadata, exchanges, False)}]  # fmt: skip
    return _chat(client, judge, 0.0)


def run_plain(
    server: ServerProcess, conversations: list[dict[str, Any]], concurrency: int
) -> Outcome:
    """The plain runner: a pool of threads, one openai client, its own retries."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=5)
    server.reset()
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(concurrency) as pool:
        verdicts = list(pool.map(lambda m: conversation(client, m), conversations))
    wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
    stats = server.stats()
    done = sum(1 for verdict in verdicts if "verdict" in verdict)
    return Outcome(
        "plain client", wall, cpu, stats["requests"], done, stats["duplicate_paid_calls"]
    )


def run_stancelab(
    server: ServerProcess, topics_file: Path, concurrency: int, lean: bool | None, options: dict[str, Any]
) -> Outcome:  # fmt: skip
    """`stancelab run llm-bias-bench` in this process: the eval, then the analysis."""
    from stancelab.llm_bias_bench.run import BiasBenchRun, run_bias_bench

    fresh_cache_dir()
    use_fake_endpoint(server.base_url)
    out_dir = Path(tempfile.mkdtemp(prefix="stancelab-bench-lbb-"))
    # the plain client and the fake server's judge use stancelab's wording: the same workload
    run = BiasBenchRun(models=[SUBJECT], out_dir=out_dir, display="none", topics_file=topics_file,
                       max_connections=concurrency, lean=lean, prompts="stancelab",
                       **options)  # fmt: skip
    server.reset()
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    run_bias_bench(run)
    wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
    stats = server.stats()
    done = _complete_conversations(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    name = "stancelab" + {None: "", True: " (lean)", False: " (not lean)"}[lean]
    return Outcome(name, wall, cpu, stats["requests"], done, stats["duplicate_paid_calls"])


def _complete_conversations(out_dir: Path) -> int:
    from stancelab.core.results.logs import scored_samples

    frame, _ = scored_samples(out_dir / "logs", "llm_bias_bench", "judge_verdict")
    return int(frame["score"].map(lambda s: bool(s.get("verdict"))).sum()) if not frame.empty else 0


def run_all(args: argparse.Namespace, fault_rate: float) -> None:
    """Print the ideal, then each runner's outcome as it finishes (a run that fails, too)."""
    from stancelab.core.errors import StancelabError

    conversations = design(args.topics)
    calls = len(conversations) * CALLS_PER_CONVERSATION
    ideal = math.ceil(len(conversations) / args.concurrency) * CALLS_PER_CONVERSATION * args.latency
    faults = (
        f"{fault_rate:.0%} faults (429, 500, cut JSON, {args.stall:g} s stall)"
        if fault_rate
        else "no faults"
    )
    print(f"llm-bias-bench design ({machine()}; load {os.getloadavg()[0]:.2f}): {calls:,} calls, "
          f"{args.latency * 1000:.0f} ms latency, concurrency {args.concurrency}, {faults}")  # fmt: skip
    print(f"  {'ideal':<22} {ideal:7.1f} s", flush=True)
    options = {name: getattr(args, name) for name in ("max_retries", "timeout", "attempt_timeout")}
    with ServerProcess(
        latency=args.latency, fault_rate=fault_rate, stall=args.stall, verdicts=True
    ) as server:
        for runner in args.runners.split(","):
            if runner == "plain":
                print(
                    run_plain(server, conversations, args.concurrency).line(calls, ideal),
                    flush=True,
                )
                continue
            for lean in args.lean:
                started = time.perf_counter()
                try:
                    outcome = run_stancelab(server, args.topics, args.concurrency, lean, options)
                    print(outcome.line(calls, ideal), flush=True)
                except StancelabError as error:
                    print(
                        f"  stancelab FAILED after {time.perf_counter() - started:.1f} s: {error}",
                        flush=True,
                    )
    print(f"  (load after: {os.getloadavg()[0]:.2f})", flush=True)


def _lean(value: str) -> list[bool | None]:
    return [{"auto": None, "on": True, "off": False}[part] for part in value.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=Path, default=AUTHORS_TOPICS.resolve(),
                        help="topics file (default: the authors' 38 topics)")  # fmt: skip
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--fault-rate", type=float, default=0.2, help="0 to skip the faults run")
    parser.add_argument("--stall", type=float, default=30.0, help="seconds a stalled request hangs")
    parser.add_argument("--runners", default="plain,stancelab")
    parser.add_argument(
        "--lean", type=_lean, default=[None], help="auto, on, off (comma-separated)"
    )
    parser.add_argument("--no-fault-free", action="store_true", help="only the faults run")
    parser.add_argument("--max-retries", type=int)
    parser.add_argument("--timeout", type=int)
    parser.add_argument("--attempt-timeout", type=int)
    args = parser.parse_args()
    if not args.topics.exists():
        sys.exit(f"no topics file at {args.topics}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import openai  # noqa: F401  (imported once, outside both runners' clocks)

    rates = ([] if args.no_fault_free else [0.0]) + ([args.fault_rate] if args.fault_rate else [])
    for rate in rates:
        run_all(args, rate)


if __name__ == "__main__":
    main()
