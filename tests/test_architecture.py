"""docs/architecture.md stays true: its layer table is the import contract's, and the repository
points at it, not at a document outside the repository."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import grimp  # import-linter's graph builder (the dev extra)
import pytest

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


def import_cycles(package: str) -> list[list[str]]:
    """The import circles between `package`'s modules (strongly connected groups of two or more), as
    grimp reads them: every `import` statement, inside a function included, so a deferred import that
    closes a circle counts (issue 53's two did: `llm/decoding_args -> factory -> openai_compatible`,
    `engine/executors <-> ray_executor`)."""
    graph = grimp.build_graph(package, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):  # Tarjan's algorithm, iteratively (the graph has ~250 modules)
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_import_circle_between_modules_deferred_imports_included() -> None:
    """No module of the package imports itself back through others, a package's `__init__` included
    (the `acyclic_siblings` contract of pyproject.toml checks the same between sibling packages)."""
    assert import_cycles("helper_agent") == []


def test_the_cycle_check_finds_a_circle_closed_by_a_deferred_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circled import b\n")
    (package / "b.py").write_text("def later():\n    from circled import a  # deferred\n    return a\n")
    (package / "c.py").write_text("from circled import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("circled") == [["circled.a", "circled.b"]]
