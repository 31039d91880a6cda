"""Load one of the repository's scripts (benchmarks/, tools/) as a module, by path: they are not part of
the installed package, so the tests that check their logic import them this way."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str) -> ModuleType:
    """The module at ROOT/relative, named after its file and registered in sys.modules (pydantic and
    dataclasses resolve a module's annotations through it)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
