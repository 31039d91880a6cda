"""An append-only store of per-episode results (JSON Lines), keyed by instance id.

Each finished episode is one line, written with a single `write` and flushed to disk (fsync) before
the next one starts, so a run killed at any moment loses at most the episodes in flight. A line cut
short by a crash is detected on the next open: it is truncated away (it was never acknowledged),
and the episodes before it are kept. Re-running skips the ids already stored, except those whose
latest record is an error (`errored`): those are run again, and the new record replaces the error.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from helper_agent.evals.engine.runfiles import result_line
from helper_agent.files import parse_json_text, write_failure


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a results file in order, read only: nothing is locked or repaired, and a last
    line without its newline (an append still being written, or cut by a crash) is not read."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as fh:  # bytes: a line that is not UTF-8 is named by its number, like any damage
        for number, line in enumerate(fh, 1):
            if not line.endswith(b"\n") or not line.strip():
                continue
            source = f"{path}: line {number}"
            data = parse_json_text(line, source)
            if isinstance(data, dict) and isinstance(data.get("instance_id"), str):
                source = f"{source} (episode {data['instance_id']!r})"
            yield result_line(data, source)


def errored(record: dict[str, Any]) -> bool:
    """Whether a record is an episode that errored (the LLM unavailable, an exception in the agent or
    the environment): not an agent's result; it is retried on resume and left out of SR and GC."""
    return record.get("ended_by") == "error" or bool(record.get("error"))


class ResultStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.path) + ".lock")
        with self._lock:
            self._repair()

    def _repair(self) -> None:
        """Drop a trailing partial line left by a crash mid-write."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        with self.path.open("r+b") as fh:
            fh.truncate(cut)
            fh.flush()
            os.fsync(fh.fileno())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from read_records(self.path)

    def records(self) -> dict[str, dict[str, Any]]:
        """The latest record per instance id."""
        return {r["instance_id"]: r for r in self}

    def done_ids(self) -> set[str]:
        """The ids whose latest record is a result (an errored episode is not done: it is retried)."""
        return {key for key, record in self.records().items() if not errored(record)}

    def append(self, record: dict[str, Any]) -> None:
        if "instance_id" not in record:
            raise ValueError("a result record needs an 'instance_id'")
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        with self._lock:
            self._repair()
            _append_durably(self.path, line.encode("utf-8"))


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append `record` as one JSON line to a results file without a `ResultStore` (EAI's runs): a
    torn last line left by a crash is cut first, then the line is written and fsynced."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            _truncate(path, data.rfind(b"\n") + 1)
    _append_durably(path, (json.dumps(record, default=str) + "\n").encode("utf-8"))


def _truncate(path: Path, size: int) -> None:
    with contextlib.suppress(OSError), path.open("r+b") as fh:
        fh.truncate(size)


def _append_durably(path: Path, data: bytes) -> None:
    """Append `data` and fsync; on a failure (a full disk) cut the file back to where it was and
    raise `FileWriteError` naming it, so no half line is left for the next reader."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):  # what remains is repaired on the next open
                os.ftruncate(fd, start)
            raise write_failure(path, exc) from None
    finally:
        os.close(fd)
