"""A submitted job's work, which submitit pickles: a command run as a child process. It imports
nothing of stancelab's (no Inspect) so that a job starts fast; the command does the work."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class RunCommand:
    """Run `command`, its output into the job's log; fail when it fails."""

    command: tuple[str, ...]

    def __call__(self) -> None:
        sys.stdout.flush()
        ended = subprocess.run(list(self.command), check=False)
        if ended.returncode:
            raise RuntimeError(f"exit status {ended.returncode}: {' '.join(self.command)}")
