"""Shared pieces of the benchmarks: a fake OpenAI endpoint for Inspect, and a tiny task."""

from __future__ import annotations

import os
import resource
import tempfile
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy
from inspect_ai.solver import generate

FAKE_MODEL = "openai-api/fake/fake-model"


def use_fake_endpoint(base_url: str) -> None:
    """Point Inspect's `openai-api/fake/...` provider at a local server."""
    os.environ["FAKE_BASE_URL"] = base_url
    os.environ["FAKE_API_KEY"] = "local"


def fresh_cache_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="stancelab-bench-cache-"))
    os.environ["INSPECT_CACHE_DIR"] = str(path)
    return path


def calls_task(
    n: int, cached: bool = True, name: str = "calls",
    prompt: str = "Benchmark prompt {i}: answer with position A or B.",
) -> Task:  # fmt: skip
    """N one-message samples with distinct prompts, answered by one generate() each."""
    samples = [Sample(id=i, input=prompt.format(i=i)) for i in range(n)]
    policy = CachePolicy(expiry=None) if cached else False
    return Task(dataset=MemoryDataset(samples, name=name), solver=generate(cache=policy))


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    cores = os.cpu_count()
    with open("/proc/meminfo") as handle:
        total_kb = int(handle.readline().split()[1])
    return f"{cores} cores, {total_kb / 1024 / 1024:.0f} GB RAM"


class ServerProcess:
    """The fake OpenAI server in its own process, so its CPU is not the harness's."""

    def __init__(self, latency: float = 0.0, fault_rate: float = 0.0, random_ab: bool = False,
                 stall: float = 3.0, verdicts: bool = False,
                 traffic_flags: tuple[str, ...] = ()) -> None:  # fmt: skip
        from stancelab.testing.fake_openai import free_port

        self.port = free_port()
        self.latency, self.fault_rate, self.random_ab = latency, fault_rate, random_ab
        self.stall, self.verdicts = stall, verdicts
        self.traffic_flags = traffic_flags  # fake_openai's Traffic flags: --rpm, --latency-p99...
        self.process = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self, keys: bool = True) -> dict:
        """The server's stats; `keys` False leaves out the paid requests' keys."""
        import json
        import urllib.request

        query = "" if keys else "?keys=0"
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.port}/stats{query}", timeout=10
        ) as reply:
            return json.loads(reply.read())

    def reset(self) -> None:
        import urllib.request

        urllib.request.urlopen(f"http://127.0.0.1:{self.port}/reset", timeout=10).read()

    def __enter__(self) -> ServerProcess:
        import subprocess
        import sys
        import time

        self.process = subprocess.Popen(
            [sys.executable, "-m", "stancelab.testing.fake_openai", "--port", str(self.port),
             "--latency", str(self.latency), "--fault-rate", str(self.fault_rate),
             "--stall", str(self.stall), *(["--random-ab"] if self.random_ab else []),
             *(["--verdicts"] if self.verdicts else []), *self.traffic_flags],
        )  # fmt: skip
        for _ in range(200):
            try:
                self.stats()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("fake server did not start")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
