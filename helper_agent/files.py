"""Files the project writes and reads back: atomic writes, and bounded, typed reads.

Two failures shaped this module. A full disk while `helper eval` wrote `spec.json` left it empty,
and every later resume stopped on it until someone deleted it by hand; a full disk while writing
`metrics.json` left it cut at 8,192 bytes. And the project's own files, damaged (empty, cut,
`[[[[...` nested thousands deep, a list where an object belongs, not UTF-8), were read with
`json.loads(path.read_text())`, so each damage was a different traceback (RecursionError,
AttributeError, KeyError, ...).

- **Writes** go to a temporary file in the same folder, are flushed to disk (fsync), then renamed
  over the target (`atomic_write_text`, `atomic_write_bytes`, `atomic_path` for writers that take a
  path, such as matplotlib's `savefig`). A reader sees the old file or the new one, never half of
  one; a write that fails (ENOSPC) removes its temporary file and raises `FileWriteError`, one line
  naming the file, with the old file untouched.
- **Reads** (`read_json_model`) refuse a file over a size limit before reading it, decode UTF-8,
  parse JSON with Python's bounded recursion (a nesting too deep is an error, not a crash), and
  validate the result into a pydantic model; every failure is a `FileFormatError`, one line naming
  the file and the field (`metrics.json: field 'overall.SR': Input should be a finite number`).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

DEFAULT_MAX_RUN_FILE_BYTES = 64 * 1024 * 1024
"""A run folder's spec or metrics file is a few KB; 64 MiB is far above any real one."""

ModelT = TypeVar("ModelT", bound=BaseModel)


class FileFormatError(ValueError):
    """A file the project reads back is damaged or not what it should be: one line, file and field."""


class FileWriteError(Exception):
    """A file could not be written (a full disk, a read-only folder); the previous file is intact.

    Not an `OSError`: its message is already the one line to show (`<file>: cannot write (...)`)."""

    def __init__(self, message: str, errno: int = 0) -> None:
        super().__init__(message)
        self.errno = errno


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable (a crash right after it must not bring the old file back)."""
    with contextlib.suppress(OSError):  # some filesystems cannot open a directory; the rename stands
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_failure(path: Path, exc: OSError) -> FileWriteError:
    """The one-line error for a failed write of `path` (ENOSPC says what to do)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = "; free some space and run the command again (it resumes)" if exc.errno == 28 else ""
    return FileWriteError(f"{path}: cannot write ({reason}){hint}", exc.errno or 0)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` (same suffix, so writers that infer a format from it work);
    once the block has written it, it is fsynced and renamed over `path`."""
    path = Path(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise write_failure(path, exc) from None
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; the file gets the mode open() would give it
        yield tmp
        with tmp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_failure(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Replace `path` with `data` atomically (see the module docstring)."""
    with atomic_path(path) as tmp, tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Replace `path` with `text` (UTF-8) atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, data: Any, *, indent: int | None = 1) -> Path:
    """Replace `path` with `data` as JSON atomically; NaN and infinities are refused (they are not JSON,
    and a table read back from them printed `nan (nan)`)."""
    try:
        text = json.dumps(data, indent=indent, allow_nan=False, default=str)
    except ValueError as exc:
        raise FileFormatError(f"{path}: not written, the data holds a value JSON cannot hold ({exc})") from None
    return atomic_write_text(path, text)


def field_path(loc: tuple[Any, ...]) -> str:
    """`('overall', 'SR')` -> `overall.SR`; `('runs', 3, 'x')` -> `runs[3].x`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_message(source: str, exc: ValidationError) -> str:
    """`<source>: field 'a.b': <message>` for the first error of a pydantic validation."""
    first = exc.errors()[0]
    where = field_path(tuple(first.get("loc", ())))
    message = str(first.get("msg", "invalid value"))
    more = exc.error_count() - 1
    tail = f" (and {more} more)" if more > 0 else ""
    return f"{source}: field '{where}': {message}{tail}" if where else f"{source}: {message}{tail}"


def parse_json_text(text: str | bytes, source: str) -> Any:
    """JSON from `text`, every failure a `FileFormatError` naming `source` (line/column, nesting)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileFormatError(f"{source}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                                  f"{exc.start})") from None
    if not text.strip():
        raise FileFormatError(f"{source}: empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise FileFormatError(f"{source}: JSON nested too deeply") from None


def read_bounded(path: str | Path, max_bytes: int = DEFAULT_MAX_RUN_FILE_BYTES, *, setting: str = "") -> bytes:
    """The bytes of `path`, refused when larger than `max_bytes` (at most `max_bytes + 1` are read;
    `setting` names the setting that sets the limit, for the message)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise FileFormatError(f"{path}: is a folder, not a file")
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise FileFormatError(f"{path}: larger than {max_bytes} bytes" + (f" ({setting})" if setting else ""))
    return data


def read_json_object(path: str | Path, *, max_bytes: int = DEFAULT_MAX_RUN_FILE_BYTES) -> dict[str, Any]:
    """`path` parsed as a JSON object (a run's spec); any damage is one `FileFormatError` line."""
    data = parse_json_text(read_bounded(path, max_bytes), str(path))
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def read_json_model(path: str | Path, model: type[ModelT], *, max_bytes: int = DEFAULT_MAX_RUN_FILE_BYTES) -> ModelT:
    """`path` parsed and validated into `model`; any damage is one `FileFormatError` line."""
    data = parse_json_text(read_bounded(path, max_bytes), str(path))
    return validate_model(data, model, str(path))


def validate_model(data: Any, model: type[ModelT], source: str) -> ModelT:
    """`data` validated into `model`, a `FileFormatError` naming `source` and the field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FileFormatError(validation_message(source, exc)) from None
    except RecursionError:
        raise FileFormatError(f"{source}: nested too deeply") from None
