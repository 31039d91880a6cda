"""docs/architecture.md stays true: its layer table is the import contract's, and the repository
points at it, not at a document outside the repository."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def test_the_layer_table_is_the_import_contracts() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    contract = [[name.strip().removeprefix("helper_agent.") for name in layer.split(":")] for layer in layers]
    rows = re.findall(r"^\| (\d) \| ([^|]+) \|", DOC.read_text(), flags=re.M)
    documented = [re.findall(r"`([a-z_]+)`", cell) for _, cell in rows]
    assert [int(n) for n, _ in rows] == list(range(1, len(contract) + 1))
    assert documented == contract


def test_the_repository_points_at_its_own_architecture_document() -> None:
    assert "](docs/architecture.md)" in (ROOT / "README.md").read_text()
    texts = [ROOT / "README.md", ROOT / "pyproject.toml", *ROOT.glob("docs/*.md"),
             *ROOT.glob("helper_agent/**/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("benchmarks/*.py")]
    outside = [str(p.relative_to(ROOT)) for p in texts
               if p != Path(__file__).resolve() and re.search(r"\.\./shared|DESIGN\.md", p.read_text())]
    assert outside == []


def test_evals_is_split_by_job_as_the_contract_and_the_table_say() -> None:
    """evals/ holds only its three job folders, each a layer of the evals contract and named in the table."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    evals = next(c for c in contracts if c.get("containers") == ["helper_agent.evals"])
    layers = [layer.strip() for layer in evals["layers"]]
    table = re.search(r"^\| \d \| `evals` \|([^|]+)\|", DOC.read_text(), flags=re.M)
    assert table is not None
    documented = re.findall(r"`([a-z_]+)/`", table.group(1))
    folders = sorted(p.name for p in (ROOT / "helper_agent" / "evals").iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    modules = sorted(p.stem for p in (ROOT / "helper_agent" / "evals").glob("*.py") if p.stem != "__init__")
    assert sorted(documented) == sorted(layers) == folders == ["benchmark", "engine", "studies"]
    assert modules == []


def test_an_import_of_our_own_modules_inside_a_function_says_why_it_is_deferred() -> None:
    """Imports sit at module level (a deferred one hides a dependency from readers and import-linter's
    reader alike); the few that stay inside a function carry a `deferred:` comment just above them."""
    silent = []
    for path in sorted((ROOT / "helper_agent").rglob("*.py")):
        lines = path.read_text().splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helper_agent") or \
                        isinstance(node, ast.Import) and any(a.name.startswith("helper_agent") for a in node.names):
                    above = " ".join(lines[max(0, node.lineno - 4):node.lineno]).lower()
                    if "deferred" not in above:
                        silent.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert silent == []
