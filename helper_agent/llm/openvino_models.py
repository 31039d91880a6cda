"""The local models as OpenVINO folders: made once from their GGUF files, cached beside them.

`prepare_openvino_model("0.5b")` returns `HELPER_MODEL_DIR/openvino/<gguf name>-<weights>/` (default
`~/.cache/helper-agent/models/...`), making it from the verified GGUF file (`gguf.assemble_local_model`)
first if that folder is missing or was made from another file. Two ways make a folder:

- `q8` and `gguf` (the defaults, `DEFAULT_WEIGHTS`; `HELPER_LOCAL_WEIGHTS` overrides): made from the
  GGUF file by OpenVINO GenAI itself and saved (`gguf_openvino`), with nothing beyond the `local`
  extra, in 30 s to a minute on 2 cores. `q8` holds every quantized tensor as 8-bit blocks of 32;
  `gguf` keeps the file's own 4- and 6-bit blocks wherever GenAI reads them.
- `int8` and `int4`: the weights dequantized by transformers and compressed again by nncf, in the
  converter's own venv (`converter_python()`; why it has its own: `convert_gguf.py`), which
  `make install-converter` creates. About a minute for the 0.5B and three for the 1.5B. These are the
  folders the figures before issue 64 were made with; `benchmarks/llm_bench.py` compares all three.

The folder lives outside the project's venv, so a fresh clone finds it. A stamp file in the folder
records the GGUF's SHA-256 and the weight format; a folder without a matching stamp (a build killed
midway, another model) is made again. A build writes into a temporary folder and renames it into
place, under a file lock, so two processes never see half a folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from filelock import FileLock

from helper_agent.config import get_settings
from helper_agent.llm.errors import LLMUnavailable
from helper_agent.llm.gguf import LOCAL_MODELS, assemble_local_model, ensure_model_dir, model_cache_dir
from helper_agent.llm.gguf_openvino import KEPT_TYPES, save_openvino_folder, write_readable_gguf

WEIGHT_FORMATS = ("q8", "gguf", "int8", "int4")
"""How a folder's weights are made (see the module doc)."""

DEFAULT_WEIGHTS = {"0.5b": "q8", "1.5b": "gguf"}
"""Each model's weights unless `HELPER_LOCAL_WEIGHTS` names others, chosen by measurement among the
folders that need no converter (`results/llm-bench/README.md`, issue 64): the 0.5B's `q8` writes the
programs llama.cpp writes from the same file most often, as fast as `gguf`; the 1.5B's `gguf` (its
own 4- and 6-bit blocks) writes 1.4 times as fast as its `q8`, which the 1.5B, slower per token,
needs more than the few programs `q8` gets closer to llama.cpp's."""


def default_weights(size: str) -> str:
    """The weights model `size` runs on: `HELPER_LOCAL_WEIGHTS`, or the model's own default."""
    return get_settings().local_weights or DEFAULT_WEIGHTS[size]

STAMP = "helper-agent-conversion.json"
CONVERT_SCRIPT = Path(__file__).with_name("convert_gguf.py")
CONVERTER_REQUIREMENTS = Path(__file__).with_name("converter-requirements.txt")


def converter_dir() -> Path:
    """The converter venv's folder: `HELPER_CONVERTER_DIR`, default `~/.cache/helper-agent/converter`."""
    return Path(os.environ.get("HELPER_CONVERTER_DIR", model_cache_dir().parent / "converter"))


def converter_python() -> Path:
    return converter_dir() / "bin" / "python"


def openvino_model_dir(size: str, weight_format: str | None = None) -> Path:
    model = LOCAL_MODELS[size]
    weight_format = weight_format or default_weights(size)
    return model_cache_dir() / "openvino" / f"{Path(model.filename).stem}-{weight_format}"


def _stamp(size: str, weight_format: str) -> dict[str, str]:
    model = LOCAL_MODELS[size]
    return {"gguf": model.filename, "gguf_sha256": model.sha256 or "", "weight_format": weight_format}


def is_prepared(size: str, weight_format: str | None = None) -> bool:
    """Whether the folder of `size` exists and was made from the current GGUF file."""
    weight_format = weight_format or default_weights(size)
    stamp = openvino_model_dir(size, weight_format) / STAMP
    try:
        return json.loads(stamp.read_text(encoding="utf-8")) == _stamp(size, weight_format)
    except (OSError, ValueError):
        return False


def prepare_openvino_model(size: str = "0.5b", weight_format: str | None = None, *,
                           log: bool = False) -> Path:
    """The OpenVINO folder of local model `size` in `weight_format` (default `default_weights`), made
    first if needed (see the module doc). Raises `LLMUnavailable` with what to run when the converter
    is missing or the build fails."""
    weight_format = weight_format or default_weights(size)
    if weight_format not in WEIGHT_FORMATS:
        raise LLMUnavailable(f"unknown weight format {weight_format!r}; choose one of {', '.join(WEIGHT_FORMATS)}")
    folder = openvino_model_dir(size, weight_format)
    if is_prepared(size, weight_format):
        return folder
    ensure_model_dir(folder.parent.name)
    with FileLock(str(folder) + ".lock"):
        if is_prepared(size, weight_format):  # another process made it while this one waited
            return folder
        gguf = assemble_local_model(size)
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        started = time.perf_counter()
        if log:
            print(f"making the OpenVINO folder of {gguf.name} ({weight_format} weights) in {folder}, once",
                  file=sys.stderr, flush=True)
        try:
            if weight_format in KEPT_TYPES:
                _from_gguf(gguf, partial, KEPT_TYPES[weight_format])
            else:
                _convert(gguf, partial, weight_format)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        (partial / STAMP).write_text(json.dumps(_stamp(size, weight_format)), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(partial, folder)
        if log:
            print(f"made in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return folder


def _from_gguf(gguf: Path, partial: Path, keep: frozenset[str]) -> None:
    """A `gguf` or `q8` folder: the file made readable for GenAI (`gguf_openvino`), then read and saved."""
    readable = partial.with_name(partial.name + ".gguf")
    try:
        write_readable_gguf(gguf, readable, keep)
        save_openvino_folder(readable, partial)
    except (OSError, RuntimeError, ValueError) as exc:
        raise LLMUnavailable(f"building the OpenVINO model from {gguf.name} failed: {exc}") from None
    finally:
        readable.unlink(missing_ok=True)


def _convert(gguf: Path, partial: Path, weight_format: str) -> None:
    """An `int8` or `int4` folder, converted by transformers and nncf in the converter venv."""
    python = converter_python()
    if not python.exists():
        raise LLMUnavailable(
            f"{weight_format} weights of {gguf.name} need the converter venv, which is not installed at "
            f"{converter_dir()}: run `make install-converter` (or set HELPER_CONVERTER_DIR)")
    run = subprocess.run([str(python), "-I", str(CONVERT_SCRIPT), str(gguf), str(partial), "--weight-format", weight_format],
                         env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or [f"exit code {run.returncode}"])[-1]
        raise LLMUnavailable(f"converting {gguf.name} to OpenVINO failed: {last}")
