"""The local models as OpenVINO folders: made once from their GGUF files, cached beside them.

`prepare_openvino_model("0.5b")` returns `HELPER_MODEL_DIR/openvino/<gguf name>-int8/` (default
`~/.cache/helper-agent/models/...`), converting the verified GGUF file (`gguf.assemble_local_model`)
first if that folder is missing or was made from another file. The conversion runs in the converter's
own venv (`converter_python()`; why it has its own: `convert_gguf.py`), which `make install-local`
creates (`helper_agent/llm/converter-requirements.txt`). It takes about a minute for the 0.5B and
three for the 1.5B on 2 cores, once per machine: the folder lives outside the project's venv, so a
fresh clone finds it.

A stamp file in the folder records the GGUF's SHA-256 and the weight format; a folder without a
matching stamp (a conversion killed midway, another model) is made again. A conversion writes into a
temporary folder and renames it into place, under a file lock, so two processes never see half a
folder.
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

WEIGHT_FORMAT = "int8"
"""int8 weights: the format whose prompt evaluation and quality `benchmarks/llm_bench.py` measured;
int4 halves the file again but costs accuracy on a 0.5B model."""

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
    """The OpenVINO folder of local model `size`, converted first if needed (see the module doc).
    Raises `LLMUnavailable` with what to run when the converter is missing or the conversion fails."""
    folder = openvino_model_dir(size, weight_format)
    if is_prepared(size, weight_format):
        return folder
    ensure_model_dir(folder.parent.name)
    with FileLock(str(folder) + ".lock"):
        if is_prepared(size, weight_format):  # another process converted it while this one waited
            return folder
        gguf = assemble_local_model(size)
        python = converter_python()
        if not python.exists():
            raise LLMUnavailable(
                f"the local model {LOCAL_MODELS[size].name} is not converted to OpenVINO yet and the converter "
                f"is not installed at {converter_dir()}: run `make install-local` (or set HELPER_CONVERTER_DIR)")
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        started = time.perf_counter()
        if log:
            print(f"converting {gguf.name} to OpenVINO ({weight_format}) into {folder}, once", file=sys.stderr, flush=True)
        run = subprocess.run([str(python), "-I", str(CONVERT_SCRIPT), str(gguf), str(partial), "--weight-format", weight_format],
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
                             capture_output=True, text=True, check=False)
        if run.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            last = (run.stderr.strip().splitlines() or [f"exit code {run.returncode}"])[-1]
            raise LLMUnavailable(f"converting {gguf.name} to OpenVINO failed: {last}")
        (partial / STAMP).write_text(json.dumps(_stamp(size, weight_format)), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(partial, folder)
        if log:
            print(f"converted in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return folder
