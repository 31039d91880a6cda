"""Finding a built-in benchmark's episode of a task family, for the tests that run one (the
benchmark is generated per test module: `generate_benchmark(path, seed=0, sizes=...)`)."""

from __future__ import annotations

import json
from pathlib import Path


def family_episode(bench: Path, family: str, split: str = "valid_unseen") -> Path:
    """The first TfD instance file of `split` whose episode is of `family` (an `AssertionError` when
    the generated split holds none: generate more episodes)."""
    for path in sorted((bench / "tfd_instances" / split).glob("*.json")):
        if json.loads(path.read_text())["helper_agent"]["family"] == family:
            return path
    raise AssertionError(f"no {family} episode in {split}")
