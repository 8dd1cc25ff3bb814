"""The number format the embedded model computes in.

On a CPU with native bfloat16 arithmetic (Intel AMX or AVX-512 BF16) the weights are loaded in
bfloat16: half the memory (0.27 GB instead of 0.54 GB) and about twice the speed of float32
(benchmarks/README.md). Elsewhere, where bfloat16 is emulated and slower, they stay float32.
`STANCELAB_EMBEDDED_DTYPE` (float32 or bfloat16) overrides the choice; log-probabilities are
taken in float32 from the model's logits either way (`core.embedded.logprobs`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from stancelab.core.errors import StancelabError

DTYPE_ENV = "STANCELAB_EMBEDDED_DTYPE"
DTYPES = ("float32", "bfloat16")
NATIVE_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
"""CPU flags (Linux /proc/cpuinfo) of native bfloat16 arithmetic"""


def embedded_dtype() -> str:
    """`STANCELAB_EMBEDDED_DTYPE` when set, else bfloat16 on a CPU that computes it natively,
    else float32."""
    chosen = os.environ.get(DTYPE_ENV, "").strip().lower()
    if chosen:
        if chosen not in DTYPES:
            raise StancelabError(f"{DTYPE_ENV}={chosen!r}: expected one of {', '.join(DTYPES)}")
        return chosen
    return "bfloat16" if native_bf16_flags() else "float32"


@functools.cache
def native_bf16_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, ...]:
    """This CPU's native bfloat16 flags (none off Linux or where /proc/cpuinfo says none)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return ()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return tuple(sorted(flags & NATIVE_BF16_FLAGS))


def dtype_note(dtype: str) -> str:
    """How the run's header names the embedded model's number format."""
    if os.environ.get(DTYPE_ENV):
        return f"weights in {dtype} ({DTYPE_ENV})"
    if dtype == "bfloat16":
        flags = "/".join(native_bf16_flags())
        return f"weights in bfloat16 (this CPU computes it natively: {flags}; {DTYPE_ENV}=float32 for full precision)"
    return "weights in float32"
