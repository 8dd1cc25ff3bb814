"""moto's S3 server over HTTP, for tests and benchmarks of logs on object storage.

    with S3Server() as server:
        server.make_bucket("bucket")
        env = {**os.environ, **server.env()}  # fake credentials, AWS_ENDPOINT_URL
        ...  # stancelab run ... --log-dir s3://bucket/prefix, in a child with `env`
        server.list_calls()  # ListObjectsV2 requests the server answered

The server is `moto_server` in a child process on a free port (a real HTTP server: s3fs,
botocore and Inspect talk to it as to S3; nothing is patched in-process). Every request it
answers is logged, so a test can count what a command asked of the store (`requests`).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
START_TIMEOUT = 30.0
# werkzeug's request line: `... "GET /bucket?list-type=2&prefix=p/ HTTP/1.1" 200 -`
REQUEST_LINE = re.compile(
    r'"(?:\x1b\[[0-9;]*m)*([A-Z]+) (\S+) HTTP/[0-9.]+(?:\x1b\[[0-9;]*m)*" (\d+)'
)
LIST_MARK = "list-type=2"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def moto_server_command(port: int) -> list[str]:
    """moto's server command from this interpreter's environment."""
    script = Path(sys.executable).with_name("moto_server")
    if script.exists():
        return [str(script), "-H", "127.0.0.1", "-p", str(port)]
    found = shutil.which("moto_server")
    if found is None:
        raise RuntimeError("moto_server not found: install moto[server] (the dev extra)")
    return [found, "-H", "127.0.0.1", "-p", str(port)]


class S3Server:
    """moto's S3 server in a child process on a free port; stopped on exit."""

    def __init__(self) -> None:
        self.port = free_port()
        self._log = tempfile.NamedTemporaryFile(prefix="moto-", suffix=".log", delete=False)  # noqa: SIM115
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment of a client of this server: fake credentials and its endpoint."""
        return {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint_url}

    def start(self) -> S3Server:
        self._process = subprocess.Popen(moto_server_command(self.port), stdout=self._log,
                                         stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"moto_server ended at start: {self._output()[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer within {START_TIMEOUT:.0f} s")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)

    def reset(self) -> None:
        """Empty the store (every bucket and object), as moto's reset API does."""
        request = urllib.request.Request(f"{self.endpoint_url}/moto-api/reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def make_bucket(self, name: str) -> None:
        request = urllib.request.Request(f"{self.endpoint_url}/{name}", method="PUT")
        urllib.request.urlopen(request, timeout=10).close()

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of every request answered since the start, in order."""
        return [(method, path, int(status))
                for method, path, status in REQUEST_LINE.findall(self._output())
                if not path.startswith("/moto-api")]  # fmt: skip

    def list_calls(self, since: int = 0) -> int:
        """ListObjectsV2 requests among those answered after the first `since`."""
        return sum(1 for _, path, _ in self.requests()[since:] if LIST_MARK in path)

    def _output(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def client_env(server: S3Server) -> dict[str, str]:
    """This process's environment with the server's (for a child command)."""
    return {**os.environ, **server.env()}
