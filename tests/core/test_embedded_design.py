"""The embedded model's design settings and number format (issues 40 and 37): a run whose
subject is the embedded model uses the demo's repetitions for the options the user did not set
(printed, recorded in run.toml and summary.json); every other model keeps the method's design.
The weights are bfloat16 where the CPU computes it natively, else float32, and the choice is
recorded."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from stancelab.core.embedded import precision
from stancelab.core.embedded.model import EMBEDDED_MODEL
from stancelab.core.errors import StancelabError
from stancelab.core.runs.caps import CAPS_KEY
from stancelab.core.runs.options import RUN_CONFIG, build_options
from stancelab.core.runs.pipeline import plan
from stancelab.millstone.run import DEFAULT_TRIALS, MillstoneRun
from stancelab.probes import get_probe

ROLES = get_probe("millstone").roles


def millstone(tmp_path: Path, given: dict[str, object]) -> MillstoneRun:
    return build_options(MillstoneRun, ROLES, tmp_path / "run", {"prompts": "stancelab", **given})


def test_the_embedded_subject_gets_the_embedded_design_unless_the_user_sets_it(
    tmp_path: Path,
) -> None:
    embedded = millstone(tmp_path, {"models": ["embedded"]})
    assert (embedded.trials, embedded.max_tokens) == (1, 16)
    assert millstone(tmp_path, {"models": ["embedded"], "trials": "15"}).trials == 15
    other = millstone(tmp_path, {"models": ["openai/gpt-4o"]})
    assert (other.trials, other.max_tokens) == (DEFAULT_TRIALS, None)
    both = millstone(tmp_path, {"models": [EMBEDDED_MODEL, "openai/gpt-4o"]})
    assert both.trials == DEFAULT_TRIALS  # a comparison keeps one design for every model


def test_the_design_is_printed_and_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = millstone(tmp_path, {"models": ["embedded"], "limit": "1"})
    plan(get_probe("millstone"), options)
    header = capsys.readouterr().out
    assert f"[embedded] design: --trials 1 (the method's: {DEFAULT_TRIALS})" in header
    recorded = tomllib.loads((options.out_dir / RUN_CONFIG).read_text())
    assert recorded["options"]["trials"] == 1
    assert recorded[CAPS_KEY]["design"] == {"trials": 1, "max_tokens": 16}
    assert "--max-tokens 16 (the method's: the provider's)" in header
    assert recorded[CAPS_KEY]["caps"]["subject"] == 64  # the design's cap is not the user's
    assert recorded[CAPS_KEY]["weights"] == precision.embedded_dtype()


def test_bfloat16_only_where_the_cpu_computes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native = tmp_path / "native"
    native.write_text("processor: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile\n")
    emulated = tmp_path / "emulated"
    emulated.write_text("processor: 0\nflags\t\t: fpu avx2 avx512f\n")
    assert precision.native_bf16_flags(native) == ("amx_bf16",)
    assert precision.native_bf16_flags(emulated) == ()
    monkeypatch.setattr(precision, "native_bf16_flags", lambda: ())
    assert precision.embedded_dtype() == "float32"
    monkeypatch.setattr(precision, "native_bf16_flags", lambda: ("avx512_bf16",))
    assert precision.embedded_dtype() == "bfloat16"
    monkeypatch.setenv(precision.DTYPE_ENV, "float32")
    assert precision.embedded_dtype() == "float32"
    monkeypatch.setenv(precision.DTYPE_ENV, "half")
    with pytest.raises(StancelabError, match="STANCELAB_EMBEDDED_DTYPE='half'"):
        precision.embedded_dtype()
