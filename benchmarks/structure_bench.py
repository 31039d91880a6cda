"""Structure figures of the package: the largest modules and the project imports hidden in functions.

A project import inside a function hides a dependency from a reader and from import-linter's
picture of the layers (the `runner -> report -> progressive -> runner` circle of issue 39 sat
behind such imports). The house rule is imports at module level, with a deferred one kept only
for a heavy optional package or a real cycle, and a comment saying which. This script counts them
(an `import helper_agent...` or `from helper_agent... import` statement anywhere inside a function
or method body) so a change can quote the figure before and after.

Run: `python benchmarks/structure_bench.py [--root helper_agent] [--top 5] [--list] [--json figures.json]`.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

PROJECT = "helper_agent"


def _is_project(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == PROJECT
    return any(alias.name.split(".")[0] == PROJECT for alias in node.names)


def in_function_imports(path: Path) -> list[int]:
    """Line numbers of project imports inside function bodies of the module at `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    lines: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and in_function and _is_project(child):
                lines.append(child.lineno)
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(tree, False)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=PROJECT)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--list", action="store_true", help="print every file with in-function project imports")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    files = sorted(Path(args.root).rglob("*.py"))
    sizes = sorted(((len(f.read_text().splitlines()), f) for f in files), reverse=True)
    hidden = {f: in_function_imports(f) for f in files}
    hidden = {f: lines for f, lines in hidden.items() if lines}
    figures: dict[str, float | str] = {
        "modules": float(len(files)),
        "in_function_project_imports": float(sum(len(v) for v in hidden.values())),
        "files_with_them": float(len(hidden)),
    }
    for rank, (lines, path) in enumerate(sizes[: args.top], 1):
        figures[f"largest_{rank}"] = f"{path} {lines}"
    for key, value in figures.items():
        print(f"{key:28s} {value}")
    if args.list:
        for path, lines in sorted(hidden.items(), key=lambda kv: -len(kv[1])):
            print(f"{len(lines):4d}  {path}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
