"""Figures as PNG files: matplotlib without a display, one figure per call, written atomically.

Every plot of the engine and the studies is drawn inside `figure(path, size)`: it sets up the
headless backend, lays the figure out, writes it through `files.atomic_path` (a crash never leaves a
half-written PNG) and closes it (a long run that plots per iteration does not keep figures alive).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from helper_agent.files import atomic_path


@contextmanager
def figure(path: str | Path, size: tuple[float, float], ncols: int = 1) -> Iterator[tuple[Any, Any]]:
    """`with figure(path, (w, h)) as (fig, ax):` draw on `ax` (a row of `ncols` axes when more than
    one); on leaving the block the PNG is written to `path`."""
    # Deferred: matplotlib takes about a second to import, and most processes that import the engine
    # (episode workers, `helper --help`) never draw.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=size) if ncols > 1 else plt.subplots(figsize=size)
    try:
        yield fig, axes
        fig.tight_layout()
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png", dpi=110)
    finally:
        plt.close(fig)
