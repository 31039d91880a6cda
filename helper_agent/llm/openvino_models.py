"""The local models as OpenVINO folders: made once from their GGUF files, cached beside them.

`prepare_openvino_model("0.5b")` returns `HELPER_MODEL_DIR/openvino/<gguf name>-<weights>/` (default
`~/.cache/helper-agent/models/...`), making it from the verified GGUF file (`gguf.assemble_local_model`)
first if that folder is missing or was made from another file. Two ways make a folder:

- `gguf` (the default, `HELPER_LOCAL_WEIGHTS`): the GGUF file's own weights, read by OpenVINO GenAI
  and saved (`gguf_openvino`). It needs nothing beyond the `local` extra, takes about 25 s for the
  0.5B, and keeps the quantization the model ships with.
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

from helper_agent.llm.errors import LLMUnavailable
from helper_agent.llm.gguf import LOCAL_MODELS, assemble_local_model, ensure_model_dir, model_cache_dir
from helper_agent.llm.gguf_openvino import save_openvino_folder, write_readable_gguf

WEIGHT_FORMATS = ("gguf", "int8", "int4")
"""How a folder's weights are made (see the module doc); the first is the default."""

WEIGHT_FORMAT = WEIGHT_FORMATS[0]

STAMP = "helper-agent-conversion.json"
CONVERT_SCRIPT = Path(__file__).with_name("convert_gguf.py")
CONVERTER_REQUIREMENTS = Path(__file__).with_name("converter-requirements.txt")


def converter_dir() -> Path:
    """The converter venv's folder: `HELPER_CONVERTER_DIR`, default `~/.cache/helper-agent/converter`."""
    return Path(os.environ.get("HELPER_CONVERTER_DIR", model_cache_dir().parent / "converter"))


def converter_python() -> Path:
    return converter_dir() / "bin" / "python"


def openvino_model_dir(size: str, weight_format: str = WEIGHT_FORMAT) -> Path:
    model = LOCAL_MODELS[size]
    return model_cache_dir() / "openvino" / f"{Path(model.filename).stem}-{weight_format}"


def _stamp(size: str, weight_format: str) -> dict[str, str]:
    model = LOCAL_MODELS[size]
    return {"gguf": model.filename, "gguf_sha256": model.sha256 or "", "weight_format": weight_format}


def is_prepared(size: str, weight_format: str = WEIGHT_FORMAT) -> bool:
    """Whether the folder of `size` exists and was made from the current GGUF file."""
    stamp = openvino_model_dir(size, weight_format) / STAMP
    try:
        return json.loads(stamp.read_text(encoding="utf-8")) == _stamp(size, weight_format)
    except (OSError, ValueError):
        return False


def prepare_openvino_model(size: str = "0.5b", weight_format: str = WEIGHT_FORMAT, *,
                           log: bool = False) -> Path:
    """The OpenVINO folder of local model `size`, made first if needed (see the module doc).
    Raises `LLMUnavailable` with what to run when the converter is missing or the build fails."""
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
            if weight_format == "gguf":
                _from_gguf(gguf, partial)
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


def _from_gguf(gguf: Path, partial: Path) -> None:
    """The `gguf` folder: the file made readable for GenAI (`gguf_openvino`), then read and saved."""
    readable = partial.with_name(partial.name + ".gguf")
    try:
        write_readable_gguf(gguf, readable)
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
