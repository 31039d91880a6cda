"""Where a run's memory lives: its folder, or, when a Chroma server is configured, the run's own
collections on that server.

With `HELPER_CHROMA_HOST` set the server always wins: `path=None` gives the shared collections
(`helper chat`, `helper run` and `helper routines` use them), a `path` (an evaluation's
`<out>/memory`) gives that run's own collections on the server, prefixed with
`server_namespace(path)`, so runs do not mix. Without a server, `path` is a local folder (default:
the settings' memory folder).
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any, TypeVar

from helper_agent.memory.settings import get_memory_settings

M = TypeVar("M")


def server_namespace(path: str) -> str:
    """The collection prefix of a memory folder's stand-in on a Chroma server: the folder's last
    names (readable in the server's collection list) and a hash of its absolute path (unique)."""
    absolute = os.path.abspath(os.path.expanduser(path))
    readable = re.sub(r"[^A-Za-z0-9]+", "-", "-".join(absolute.split(os.sep)[-3:])).strip("-")[-40:].strip("-")
    return f"{readable or 'memory'}-{hashlib.sha256(absolute.encode()).hexdigest()[:10]}"


def open_run_memory(kind: type[M], path: str | None, **kwargs: Any) -> M:
    """The memory `kind` of a run's folder (`path`; None: the shared memories), or its own
    collection on the configured Chroma server."""
    if get_memory_settings().chroma_host:
        prefix = f"{server_namespace(path)}." if path else ""
        return kind(collection=prefix + kind.default_collection, **kwargs)  # type: ignore[attr-defined,call-arg]
    return kind(**({"path": path} if path else {}), **kwargs)  # type: ignore[call-arg]
