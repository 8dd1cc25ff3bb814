"""Child processes that die with the process that started them, even when it is killed with
SIGKILL (nothing can clean up then).

`tethered(command)` wraps a command line as `python -I -S .../tether.py PID -- command`:
the wrapper asks Linux for a parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGKILL)`), checks
that its parent is still PID (it may have died before the request), then replaces itself with
the command (`exec`, same process id), which keeps the request. Done in the child after the
fork, not through `subprocess`'s `preexec_fn`, which is unsafe in a process with threads.

Linux sends the signal when the *thread* that started the child ends, so a child is started
from a thread that outlives it (the one that waits for it). Elsewhere `tethered` returns the
command unchanged; workers also watch a pipe from their parent (`core.runs.shards.follow_parent`).

The wrapper runs this file isolated (`-I -S`: no stancelab import, whatever the working
directory), so it starts in a few tens of milliseconds."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Sequence

PR_SET_PDEATHSIG = 1
"""prctl option: the signal this process gets when its parent ends (linux/prctl.h)"""
ORPHANED_EXIT = 125
"""exit code of the wrapper when its parent had already ended"""


def supported() -> bool:
    """Whether this system has a parent-death signal (Linux)."""
    return sys.platform.startswith("linux")


def tethered(command: Sequence[str]) -> list[str]:
    """`command` wrapped so that it is killed when this process ends (as is, where unsupported)."""
    if not supported():
        return list(command)
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()), "--", *command]


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent (thread) ends."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")


def main(argv: Sequence[str]) -> int:
    """`PARENT_PID -- COMMAND...`: run COMMAND in this process, killed when PARENT_PID ends."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -I -S tether.py PARENT_PID -- COMMAND...", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), list(argv[2:])
    die_with_parent()
    if os.getppid() != parent:  # the parent ended before the request: no signal will come
        return ORPHANED_EXIT
    for ignored in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these; the command gets defaults
        if hasattr(signal, ignored):
            signal.signal(getattr(signal, ignored), signal.SIG_DFL)
    sys.stdout.flush()
    os.execvp(command[0], command)
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
