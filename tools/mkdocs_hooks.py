"""MkDocs hooks: the results pages are filled from the files in `results/` when the site is built.

A results page holds the prose and the commands; every table and plot comes from the run folders
themselves, so a figure is written once (by the run) and never typed into the docs. A page asks
for one with a directive on a line of its own:

    <!-- include: results/methods50/compare.md -->       a report the run wrote (its title dropped)
    <!-- plot: results/methods50/compare.png -->         a plot (copied into the site)
    <!-- eai: results/eai100/table/report.json -->       EAI's table, split like for like (see below)
    <!-- runs: results/served10/inprocess results/served10/served-lines -->   SR/GC/calls per run
    <!-- table3: results/personalization/packaged-0.5b-063e2b8.json ... -->  HELPER's Table 3 rows
    <!-- figures: results/planner-builds/0.5b-avx512/figures.json ... -->    a benchmark's figures
    <!-- compare: results/methods50/compare.json -->     `helper eval compare`'s table
    <!-- grid: results/erag-bench/erag-grid-20.json -->  a benchmark's `<row>_N<n>_<figure>` grid

A directive naming a file that does not exist is an error, so `mkdocs build --strict` fails on it
as it fails on a broken link. Nothing is fetched: the hooks read local files only.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.plugins.helper_results")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
SITE_RESULTS = "_results"  # where results/… files land in the site
DIRECTIVE = re.compile(r"^<!-- (include|plot|eai|runs|table3|figures|compare|grid|eai-steps): (.+?) -->$", re.M)

# EAI rows whose retrieved examples share the task's goal text or task name (the old leave-one-out
# `-k3` rows: a test-set task with the identical goal was usually the top example; P-RAG's later
# self-iterations: its own earlier episodes of the same tasks) are not comparable with the 15
# published LLMs, which saw no examples. They are shown apart, labelled so. Which rows: the table's
# own count, `examples_sharing_goal_or_name` (evals/studies/eai/pool.py); a report.json written
# before that column falls back to the old rows' names (`-k3` at the end; cross-task rows end `-cross`).
EAI_SAME_GOAL = re.compile(r"-k[1-9]\d*$")
EAI_SAME_GOAL_LABEL = "leave-one-out, same-goal examples (not comparable)"
EAI_COLUMNS = [("task_success", "task SR"), ("execution_success", "execution SR"),
               ("missing_step", "missing step"), ("affordance", "affordance"), ("wrong_order", "wrong order"),
               ("hallucination", "hallucination"), ("parsing", "parsing"),
               ("prompt_tokens_per_task", "prompt tokens / task"), ("llm_seconds_per_task", "LLM s / task")]


class DirectiveError(RuntimeError):
    """A results directive that cannot be filled: the page, the directive and why, in one line."""


def _path(name: str) -> Path:
    path = (ROOT / name).resolve()
    if not path.is_relative_to(RESULTS) or not path.exists():
        raise DirectiveError(f"{name}: no such file under results/")
    return path


def _number(value: object, digits: int = 1) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _include(name: str, page_uri: str) -> str:
    text = _path(name).read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    # Headings of the report sit below the page's own sections.
    return "\n".join("#" + line if line.startswith("##") else line for line in lines).strip()


def _plot(name: str, page_uri: str) -> str:
    _path(name)
    target = posixpath.join(SITE_RESULTS, name.removeprefix("results/"))
    link = posixpath.relpath(target, posixpath.dirname(page_uri) or ".")
    return f"![{name}]({link})"


def _eai(name: str, page_uri: str) -> str:
    rows = json.loads(_path(name).read_text(encoding="utf-8"))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    ours = [r for r in rows if str(r["name"]).startswith("ours-")]
    peers = [r for r in rows if not str(r["name"]).startswith("ours-")]
    def apart(r: dict) -> bool:
        if "examples_sharing_goal_or_name" in r:
            return bool(r["examples_sharing_goal_or_name"])
        return bool(EAI_SAME_GOAL.search(str(r["name"])))

    same_goal = [r for r in ours if apart(r)]
    like = [r for r in ours if r not in same_goal]

    def render(selected: list[dict], shared: bool = False) -> str:
        columns = EAI_COLUMNS + ([("examples_sharing_goal_or_name", "examples sharing goal or name")] if shared else [])
        header = ["row"] + [title for _, title in columns]
        body = [[f"**{r['name'].removeprefix('ours-')}**" if str(r["name"]).startswith("ours-") else str(r["name"])] +
                [_number(r.get(key), 2 if isinstance(r.get(key), float) and key.endswith("success") else 1)
                 for key, _ in columns] for r in selected]
        return _table(header, body)

    like_for_like = sorted(peers + like, key=lambda r: -float(r.get("task_success") or 0))
    parts = ["**Like for like: no examples in the prompt** (the 15 published LLMs' recorded outputs and our "
             "rows without retrieved examples, in bold, scored together by EAI's evaluator on the same tasks):",
             "", render(like_for_like)]
    if same_goal:
        parts += ["", "**Not comparable with the peers: retrieved examples share the task's goal or task name.** "
                  f"The `-k3` rows are {EAI_SAME_GOAL_LABEL}: they put three other tasks' gold sequences in the "
                  "prompt, retrieved from all 342 tasks by goal text, and a task with the identical goal was "
                  "usually among them, so they show how well the model adapts a near-identical answer. A P-RAG "
                  "row with a database (`db=`) retrieves its own earlier episodes of the same tasks. The last "
                  "column counts, over the row's tasks, the retrieved examples that share the task's goal or "
                  "name:", "", render(same_goal, shared=True)]
    return "\n".join(parts)


def _metrics(run: Path) -> dict:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    overall = metrics["overall"]
    per = metrics.get("per_episode") or {}
    return {"episodes": overall.get("episodes"), "SR": overall.get("SR"), "GC": overall.get("GC"),
            "llm_calls": per.get("llm_calls"), "errors": metrics.get("errors", 0)}


def _runs(names: str, page_uri: str) -> str:
    body = []
    for name in names.split():
        m = _metrics(_path(name))
        body.append([f"`{name}`", _number(m["episodes"]), _number(m["SR"], 2), _number(m["GC"], 2),
                     _number(m["llm_calls"], 2), _number(m["errors"])])
    return _table(["run", "episodes", "SR", "GC", "LLM calls / episode", "errors"], body)


def _table3(names: str, page_uri: str) -> str:
    body = []
    for name in names.split():
        result = json.loads(_path(name).read_text(encoding="utf-8"))
        t = result["table3"]
        suite = Path(str(result.get("suite", ""))).stem or "personalization"
        body.append([f"`{Path(name).name}`", suite, str(result.get("llm", "")),
                     *(_number(100 * t[k], 1) for k in ("original", "one", "two", "three", "overall")),
                     _number(result.get("llm_calls_per_request"), 2),
                     _number(result.get("llm_seconds_per_request"), 1)])
    return _table(["file", "suite", "model", "original", "one change", "two", "three", "overall",
                   "LLM calls / request", "LLM s / request"], body)


def _figures(names: str, page_uri: str) -> str:
    files = [_path(name) for name in names.split()]
    data = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    keys = [k for k in data[0] if all(k in d for d in data)]
    body = [[f"`{k}`", *(_number(d[k], 2) for d in data)] for k in keys]
    return _table(["figure", *(f"`{p.parent.name}`" if p.name == "figures.json" else f"`{p.name}`"
                               for p in files)], body)


def _compare(name: str, page_uri: str) -> str:
    rows = json.loads(_path(name).read_text(encoding="utf-8"))
    body = [[f"`{r['method']}`", _number(r["episodes"]), _number(r["SR"], 1), _number(r["GC"], 1),
             _number(r["PLW_SR"], 1), _number(r["PLW_GC"], 1), _number(r["llm_calls"], 1),
             _number(round(r["prompt_tokens"])), _number(r["seconds"], 1), _number(r["errors"])]
            for r in rows]
    return _table(["method", "episodes", "SR", "GC", "PLW SR", "PLW GC", "LLM calls", "prompt tokens",
                   "seconds", "errors"], body)


GRID_KEY = re.compile(r"^([a-z]+)_N(\d+)_([a-z_]+)$")


def _grid(name: str, page_uri: str) -> str:
    data = json.loads(_path(name).read_text(encoding="utf-8"))
    cells: dict[tuple[str, int], dict[str, object]] = {}
    figures: list[str] = []
    for key, value in data.items():
        if (m := GRID_KEY.match(key)) is not None:
            cells.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = value
            if m.group(3) not in figures:
                figures.append(m.group(3))
    body = [[row, _number(n), *(_number(cell.get(f), 2) for f in figures)]
            for (row, n), cell in sorted(cells.items(), key=lambda c: (c[0][1], c[0][0]))]
    return _table(["graph", "N extra objects", *(f.replace("_", " ") for f in figures)], body)


EAI_STEP_COLUMNS = [("entities_shown_per_step", "entities shown / step"),
                    ("prompt_tokens_per_step", "prompt tokens / step"), ("seconds_per_step", "s / step"),
                    ("steps_per_task", "steps / task"), ("task_success", "task SR"),
                    ("full_sequence_success", "full-sequence SR")]


def _eai_steps(name: str, page_uri: str) -> str:
    """Our step-wise EAI rows (those that report per-step figures), with those figures."""
    rows = json.loads(_path(name).read_text(encoding="utf-8"))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    stepwise = [r for r in rows if str(r["name"]).startswith("ours-") and r.get("entities_shown_per_step")]
    body = [[str(r["name"]).removeprefix("ours-"), *(_number(r.get(k), 2) for k, _ in EAI_STEP_COLUMNS)]
            for r in stepwise]
    return _table(["row", *(title for _, title in EAI_STEP_COLUMNS)], body)


RENDER = {"include": _include, "plot": _plot, "eai": _eai, "runs": _runs, "table3": _table3,
          "figures": _figures, "compare": _compare, "grid": _grid,
          "eai-steps": _eai_steps}


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 - MkDocs' hook signature
    """Fill every results directive of the page from the files in results/."""
    def fill(match: re.Match[str]) -> str:
        try:
            return RENDER[match.group(1)](match.group(2).strip(), page.file.src_uri)
        except (DirectiveError, OSError, KeyError, ValueError) as exc:
            raise DirectiveError(f"{page.file.src_uri}: {match.group(0)}: {exc}") from None
    return DIRECTIVE.sub(fill, markdown)


def on_files(files: Files, config) -> Files:  # noqa: ANN001 - MkDocs' hook signature
    """Copy the plots the pages show (their `plot` directives) into the site, under _results/."""
    wanted = set()
    for page in Path(config["docs_dir"]).rglob("*.md"):
        wanted |= {m.group(2).strip() for m in DIRECTIVE.finditer(page.read_text(encoding="utf-8"))
                   if m.group(1) == "plot"}
    for name in sorted(wanted):
        path = ROOT / name
        if path.is_file():  # a missing one is reported by the page that names it
            uri = posixpath.join(SITE_RESULTS, name.removeprefix("results/"))
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
