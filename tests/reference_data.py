"""Where the tests find public reference data (TEACh's official task files, ALFRED's object facts,
LLM-Planner's knn_set.json): the folder `HELPER_REFERENCE_DIR` names, laid out as `teach/`,
`alfred_layouts/`, `llm_planner/`. None of it is in the repository; the tests that read it skip without it."""

from __future__ import annotations

import os
from pathlib import Path


def reference_path(relative: str) -> Path:
    """`relative` inside the reference folder (a path that does not exist when none is set)."""
    folder = os.environ.get("HELPER_REFERENCE_DIR", "")
    return Path(folder) / relative if folder else Path("/nonexistent-reference-dir") / relative
