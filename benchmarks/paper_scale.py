"""Each probe's full default design for one model against the fake server as a hosted API
behaves: lognormal latency (median 1 s, p99 5 s), a rate limit answered 429 with Retry-After,
1% 5xx. Per probe: wall against the rate-limit bound (calls / allowed rate), harness CPU per
call, peak RSS, log size, `stancelab analyze` time and peak memory (a fresh process), and the
calls paid twice after a kill -9 at half way and a re-run. Every answer a run needs is stored in
Inspect's cache once it is back, so the calls paid twice are counted as the calls paid and never
stored (the server's paid calls less the cache's entries; for a whole run too), beside the
calls paid beyond a whole run's (which varies run to run where answers decide what is asked
next, as in Conviction's clustering) and the calls in flight at the kill.

    python benchmarks/paper_scale.py [--probe millstone] [--scale 0.1] [--rpm 3000]
        [--client-rpm same|off|N] [--connections 0]

`--client-rpm` is stancelab's own `--rpm` (its client-side limit; default: the server's
limit), `--connections 0` leaves the connections to Inspect's adaptive controller. Per probe it
also prints the answers of 429 per paid call and the requests in flight at the server
(sampled each second while the run's calls are paid).

IssueBench runs its paper protocol (`--protocol paper`, 36,000 calls on stancelab's issues
and templates), not its default design; llm-bias-bench the authors' 38 topics in stancelab's
wording. Every role of a probe points at the same fake model. Each run is the command line in a
subprocess under /usr/bin/time -v (its workers included: their CPU adds up, the peak is the
largest process's), with a fresh cache and the project's default processes unless --workers.
`--scale S` runs the first units of each design (`--limit`) up to S of its calls.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import ServerProcess, machine
from bias_bench import AUTHORS_TOPICS

MODEL = "openai-api/fake/fake-model"
PROBES: dict[str, tuple[str, ...]] = {
    "millstone": ("--prompts", "stancelab"),
    "issuebench": ("--prompts", "stancelab", "--protocol", "paper"),
    "even-handedness": (),
    "llm-bias-bench": ("--topics-file", str(AUTHORS_TOPICS.resolve()), "--prompts", "stancelab"),
    "conviction": (),
    "prior-prejudice": (),
}
TIME_FIELDS = {"user": "User time (seconds)", "system": "System time (seconds)",
               "rss_kb": "Maximum resident set size (kbytes)"}  # fmt: skip


class PaperServer(ServerProcess):
    """The fake server answering every probe (`paper_replies`), in its own process."""

    def __enter__(self) -> PaperServer:
        command = [sys.executable, __file__, "serve", "--port", str(self.port),
                   "--latency", str(self.latency), *self.traffic_flags]  # fmt: skip
        self.process = subprocess.Popen(command)
        for _ in range(400):
            try:
                self.stats()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the fake server did not start")


def serve(argv: list[str]) -> None:
    """`paper_scale.py serve --port P ...`: the fake server with `paper_reply`, in the foreground."""
    import uvicorn
    from paper_replies import paper_reply

    from stancelab.testing.fake_openai import (
        FakeOpenAIServer,
        _Server,
        add_traffic_arguments,
        traffic_from_args,
    )

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=1.0)
    add_traffic_arguments(parser)
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency=args.latency, port=args.port, reply=paper_reply,
                              traffic=traffic_from_args(args))  # fmt: skip
    config = uvicorn.Config(server, host="127.0.0.1", port=args.port, log_level="error",
                            backlog=4096, timeout_keep_alive=30)  # fmt: skip
    _Server(config, server).run()


# ---------------------------------------------------------------- the design


def planned(probe_name: str, flags: tuple[str, ...]) -> tuple[int, list[str]]:
    """(planned calls, roles other than the subject) of a design (stancelab's own plan)."""
    from stancelab.cli import build_parser, options_from_args

    args = build_parser().parse_args(["run", probe_name, "--model", MODEL, *flags])
    probe, options = options_from_args(args)
    plans = probe.plan(options)
    roles = sorted({plan.role for plan in plans} - {"subject"})
    return sum(int(plan.calls_max) for plan in plans), roles


def scaled_limit(probe_name: str, flags: tuple[str, ...], target: int) -> int | None:
    """The smallest `--limit` whose plan reaches `target` calls (None: the whole design)."""
    full, _ = planned(probe_name, flags)
    if target >= full:
        return None
    low, high = 1, 1
    while planned(probe_name, (*flags, "--limit", str(high)))[0] < target:
        low, high = high + 1, high * 2
    while low < high:
        middle = (low + high) // 2
        if planned(probe_name, (*flags, "--limit", str(middle)))[0] < target:
            low = middle + 1
        else:
            high = middle
    return high


# ---------------------------------------------------------------- measuring


@dataclass
class Timed:
    """One command under /usr/bin/time -v."""

    wall: float
    cpu: float
    rss_mb: float
    output: str


class InFlight:
    """The server's requests in flight, sampled every `every` seconds in a thread while a run
    goes (samples from the first paid call on: the command's start-up is not the design's)."""

    def __init__(self, server: ServerProcess, every: float = 1.0) -> None:
        self.server, self.every = server, every
        self.samples: list[int] = []
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            stats = self.server.stats(keys=False)
            self.peak = max(self.peak, int(stats["max_in_flight"]))
            if stats["paid_calls"] or stats["in_flight"]:
                self.samples.append(int(stats["in_flight"]))

    def __enter__(self) -> InFlight:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def line(self) -> str:
        if not self.samples:
            return "in flight: not measured (no sample while calls were paid)"
        mean = sum(self.samples) / len(self.samples)
        return f"in flight at the server: mean {mean:.1f}, peak {self.peak}"


def timed(command: list[str], env: dict[str, str], in_flight: InFlight | None = None) -> Timed:
    report = Path(tempfile.mkstemp(prefix="stancelab-time-")[1])
    started = time.perf_counter()
    if in_flight is None:
        done = subprocess.run(["/usr/bin/time", "-v", "-o", str(report), *command], env=env,
                              capture_output=True, text=True)  # fmt: skip
    else:
        with in_flight:
            done = subprocess.run(["/usr/bin/time", "-v", "-o", str(report), *command],
                                  env=env, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    text = report.read_text()
    report.unlink()
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command[3:6])} failed:\n{(done.stdout + done.stderr)[-3000:]}"
        )
    values = {key: float(re.search(rf"{re.escape(label)}: ([\d.]+)", text).group(1))  # type: ignore[union-attr]
              for key, label in TIME_FIELDS.items()}  # fmt: skip
    return Timed(wall, values["user"] + values["system"], values["rss_kb"] / 1024, done.stdout)


def folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


@dataclass
class Timeline:
    """Where a run's wall went: start-up (the command's start to the first paid call), the paid
    span (first to last paid call) and the finish (the last paid call to the command's exit),
    and the server's CPU a request."""

    startup: float
    paid_span: float
    finish: float
    server_cpu_ms: float

    @classmethod
    def of(cls, started: float, ended: float, before: dict, after: dict) -> Timeline:
        first, last = after["first_paid_at"] or ended, after["last_paid_at"] or ended
        requests = max(1, after["requests"] - before["requests"])
        cpu = 1000 * (after["cpu_seconds"] - before["cpu_seconds"]) / requests
        return cls(first - started, last - first, ended - last, cpu)

    def line(self, calls: int) -> str:
        rate = (
            f"{calls / self.paid_span:.0f} calls/s" if self.paid_span > 0 else "rate not measured"
        )
        return (
            f"start-up {self.startup:.1f} s, paid span {self.paid_span:.1f} s ({rate}), "
            f"finish {self.finish:.1f} s; server CPU {self.server_cpu_ms:.2f} ms a request"
        )


@dataclass
class Measured:
    probe: str
    calls: int
    bound: float | None
    run: Timed
    analysis: Timed
    log_mb: float
    header: str
    outcomes: dict[str, int]
    stored: int
    paid_twice: KillAccount | None
    in_flight: str
    timeline: Timeline


def run_command(probe_name: str, flags: tuple[str, ...], out: Path, connections: int,
                workers: int | None, client_rpm: float | None) -> list[str]:  # fmt: skip
    """The run's command line; `connections` 0 leaves them to Inspect's adaptive controller,
    `client_rpm` None runs without stancelab's `--rpm`."""
    return [sys.executable, "-m", "stancelab", "run", probe_name, "--model", MODEL, *flags,
            "--out", str(out), "--display", "none",
            *(["--max-connections", str(connections)] if connections else []),
            *(["--rpm", f"{client_rpm:g}"] if client_rpm else []),
            *(["--workers", str(workers)] if workers else [])]  # fmt: skip


def environment(server: ServerProcess, scratch: Path) -> dict[str, str]:
    return {**os.environ, "FAKE_BASE_URL": server.base_url, "FAKE_API_KEY": "local",
            "INSPECT_CACHE_DIR": str(scratch / "cache"), "HF_HUB_OFFLINE": "1"}  # fmt: skip


def stored_calls(scratch: Path) -> int:
    """The model calls Inspect's cache under `scratch` holds (one file a stored call)."""
    root = scratch / "cache" / "generate"
    return sum(1 for path in root.rglob("*") if path.is_file()) if root.exists() else 0


@dataclass
class KillAccount:
    """Where the paid calls of a run killed (-9) at half way and run again went: every paid
    call either stored in the cache (needed once) or paid and never stored (paid for nothing;
    it is paid again if the re-run needs it)."""

    whole_run: int
    killed_paid: int
    killed_in_flight: int
    killed_stored: int
    rerun_paid: int
    final_stored: int

    @property
    def beyond_whole_run(self) -> int:
        return self.killed_paid + self.rerun_paid - self.whole_run

    @property
    def not_stored(self) -> int:
        return self.killed_paid + self.rerun_paid - self.final_stored

    def line(self) -> str:
        return (f"paid twice after kill -9 at half way and a re-run: {self.not_stored:,} paid and "
                f"never stored ({self.beyond_whole_run:,} beyond a whole run's {self.whole_run:,}); "
                f"the killed run paid {self.killed_paid:,} ({self.killed_in_flight} in flight at "
                f"the kill), stored {self.killed_stored:,}; the re-run paid {self.rerun_paid:,}, "
                f"{self.final_stored:,} stored in all")  # fmt: skip


def settled_paid(server: ServerProcess, quiet_for: float = 2.0, at_most: float = 60.0) -> int:
    """The server's paid calls once none is in flight (the killed run's last requests are
    answered, and billed, after the kill)."""
    deadline = time.monotonic() + at_most
    while time.monotonic() < deadline:
        stats = server.stats(keys=False)
        if not stats["in_flight"]:
            time.sleep(quiet_for)
            again = server.stats(keys=False)
            if not again["in_flight"] and again["paid_calls"] == stats["paid_calls"]:
                return int(again["paid_calls"])
        time.sleep(0.2)
    return int(server.stats(keys=False)["paid_calls"])


def paid_twice_after_kill(server: ServerProcess, command: list[str], env: dict[str, str],
                          calls: int, scratch: Path) -> KillAccount:  # fmt: skip
    """The run killed (-9, its process group) once half of `calls` (a whole run's) are paid,
    then run again to the end, with a fresh cache under `scratch`: what each paid and stored."""
    server.reset()
    killed = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    while server.stats(keys=False)["paid_calls"] < calls // 2:
        if killed.poll() is not None:
            raise RuntimeError("the run ended before half its calls were paid")
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)
    in_flight = int(server.stats(keys=False)["in_flight"])
    killed.wait()
    killed_paid, killed_stored = settled_paid(server), stored_calls(scratch)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the re-run failed:\n{(done.stdout + done.stderr)[-3000:]}")
    rerun_paid = int(server.stats(keys=False)["paid_calls"]) - killed_paid
    return KillAccount(calls, killed_paid, in_flight, killed_stored, rerun_paid,
                       stored_calls(scratch))  # fmt: skip


def measure(server: ServerProcess, probe_name: str, scale: float, rpm: float, connections: int,
            workers: int | None, kill: bool, client_rpm: float | None) -> Measured:  # fmt: skip
    flags = PROBES[probe_name]
    full, roles = planned(probe_name, flags)
    limit = scaled_limit(probe_name, flags, round(scale * full)) if scale < 1 else None
    flags = (*flags, *(f"--role={role}={MODEL}" for role in roles),
             *(["--limit", str(limit)] if limit else []))  # fmt: skip
    scratch = Path(tempfile.mkdtemp(prefix=f"stancelab-paper-{probe_name}-"))
    try:
        env, out = environment(server, scratch), scratch / "run"
        server.reset()
        in_flight, before, started = InFlight(server), server.stats(keys=False), time.time()
        run = timed(run_command(probe_name, flags, out, connections, workers, client_rpm), env,
                    in_flight)  # fmt: skip
        ended, stats = time.time(), server.stats(keys=False)
        timeline = Timeline.of(started, ended, before, stats)
        calls, stored = int(stats["paid_calls"]), stored_calls(scratch)
        analysis = timed([sys.executable, "-m", "stancelab", "analyze", str(out)], env)
        header = next((line for line in run.output.splitlines() if "process" in line), "")
        paid_twice = None
        if kill:
            again = scratch / "killed"
            env = environment(server, again)
            paid_twice = paid_twice_after_kill(
                server,
                run_command(probe_name, flags, again / "run", connections, workers, client_rpm),
                env,
                calls,
                again,
            )
        bound = calls / (rpm / 60) if rpm else None
        return Measured(probe_name, calls, bound, run, analysis,
                        folder_mb(out / "logs"), header, stats["outcomes"], stored, paid_twice,
                        in_flight.line(), timeline)  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def line(result: Measured) -> str:
    twice = ("paid twice after kill -9 at half way and a re-run: not measured (--no-kill)"
             if result.paid_twice is None else result.paid_twice.line())  # fmt: skip
    outcomes = ", ".join(f"{key} {value:,}" for key, value in sorted(result.outcomes.items()))
    refused = result.outcomes.get("rate-limited", 0)
    per_call = f"{refused / result.calls:.2f}" if result.calls else "not measured (no paid call)"
    bound = ("no rate limit" if result.bound is None else f"the rate bound {result.bound:.0f} s -> "
             f"{result.run.wall / result.bound:.2f}x (target <= 1.15x)")  # fmt: skip
    return (f"{result.probe}: {result.calls:,} calls paid, {result.calls / result.run.wall:.0f} per s; "
            f"wall {result.run.wall:.0f} s vs {bound}; harness CPU {1000 * result.run.cpu / max(1, result.calls):.1f} ms per call; peak RSS "
            f"{result.run.rss_mb:,.0f} MB; logs {result.log_mb:.1f} MB; analyze {result.analysis.wall:.1f} s, "
            f"peak {result.analysis.rss_mb:,.0f} MB; {result.stored:,} calls stored in the cache "
            f"({result.calls - result.stored:,} paid and not stored)\n    {twice}"
            f"\n    {result.timeline.line(result.calls)}"
            f"\n    requests: {outcomes}; 429s per paid call {per_call}; {result.in_flight}"
            f"\n    header: {result.header.strip()}\n    "
            f"{headlines(result.analysis.output)}")  # fmt: skip


def headlines(analyze_output: str) -> str:
    """The headline lines `stancelab analyze` printed (whether the answers were read)."""
    _, _, after = analyze_output.partition("Headlines:")
    return "headlines: " + " | ".join(part.strip() for part in after.strip().splitlines()[:3])


def client_quota(text: str, server_rpm: float, parser: argparse.ArgumentParser) -> float | None:
    """stancelab's `--rpm` from `--client-rpm` (None: off)."""
    if text == "off":
        return None
    if text == "same":
        return server_rpm or None
    try:
        return float(text)
    except ValueError:
        parser.error(f"--client-rpm takes same, off or a number, not {text!r}")


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="append", choices=sorted(PROBES),
                        help="a probe to run (repeat; default all six)")  # fmt: skip
    parser.add_argument("--scale", type=float, default=1.0, help="share of each design's calls")
    parser.add_argument("--rpm", type=float, default=3000,
                        help="the server's requests per minute (0: no limit)")  # fmt: skip
    parser.add_argument("--latency", type=float, default=1.0, help="median latency (s)")
    parser.add_argument("--p99", type=float, default=5.0, help="99th-percentile latency (s)")
    parser.add_argument("--server-errors", type=float, default=0.01, help="share of 5xx")
    parser.add_argument("--connections", type=int, default=100,
                        help="--max-connections (per worker; 0: Inspect's adaptive)")  # fmt: skip
    parser.add_argument("--client-rpm", default="same",
                        help="stancelab's --rpm: same (the server's), off, or a number")  # fmt: skip
    parser.add_argument("--workers", type=int, default=None, help="default: the project's")
    parser.add_argument("--no-kill", action="store_true", help="skip the kill -9 and re-run")
    args = parser.parse_args()
    if not 0 < args.scale <= 1:
        parser.error("--scale must be in (0, 1]")
    client_rpm = client_quota(args.client_rpm, args.rpm, parser)
    traffic = ("--latency-p99", str(args.p99), "--server-errors", str(args.server_errors),
               *(("--rpm", str(args.rpm)) if args.rpm else ()))  # fmt: skip
    print(f"paper scale ({machine()}; load {os.getloadavg()[0]:.2f}): {args.scale:g} of each design, "
          f"{args.rpm:,.0f} requests/min, latency median {args.latency:g} s p99 {args.p99:g} s, "
          f"{args.server_errors:.0%} 5xx, "
          f"{args.connections or 'adaptive (Inspect)'} connections, client --rpm "
          f"{f'{client_rpm:,.0f}' if client_rpm else 'off'}", flush=True)  # fmt: skip
    with PaperServer(latency=args.latency, traffic_flags=traffic) as server:
        for probe_name in args.probe or list(PROBES):
            result = measure(server, probe_name, args.scale, args.rpm, args.connections,
                             args.workers, not args.no_kill, client_rpm)  # fmt: skip
            print(line(result) + f"\n    load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
