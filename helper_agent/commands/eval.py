"""`helper eval`: TfD/EDH evaluations, comparisons, and the personalization experiment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from helper_agent.commands import (
    check_chat_model,
    eval_eai,
    eval_hlp,
    eval_progressive,
    eval_requests,
    load_chat_model,
    table_console,
)
from helper_agent.commands.errors import fail
from helper_agent.commands.eval_executor import (
    EXECUTOR,
    RAY_ADDRESS,
    RAY_NUM_CPUS,
    RAY_NUM_GPUS,
    executor_from_options,
)
from helper_agent.config import Settings
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.agents import ProgramAgent
from helper_agent.evals.engine.executors import Executor, local_executor
from helper_agent.evals.engine.report import (
    best_iteration,
    iteration_metrics,
    markdown_report,
    method_row,
    methods_table,
    on_common_episodes,
    plot_methods,
)
from helper_agent.evals.engine.runner import run_eval, seed_examples_from_split
from helper_agent.evals.engine.spec import ORACLE_PLANNERS, EvalSpec
from helper_agent.evals.engine.store import errored
from helper_agent.evals.studies.personalization import load_suite, run_suite, table3
from helper_agent.evals.studies.personalization import write_seeds as record_seeds
from helper_agent.files import atomic_write_json, atomic_write_text
from helper_agent.graphs.helper import HelperConfig
from helper_agent.graphs.helper.agent import HelperAgent, Memories
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import check_agent_options, method_names
from helper_agent.llm.server_slots import slot_shortfall

app = typer.Typer(no_args_is_help=True)
# Piped or logged (make demo's output), Rich would squeeze the metrics table into 80 columns.
console = table_console(132)


def _seed(seed: int | None) -> int:
    """`--seed`, else `HELPER_SEED` (read now: the settings were validated when the command started)."""
    return Settings().seed if seed is None else seed


def _run(mode: str, data: Path, split: str, limit: int | None, llm: str, workers: int, ablate: str | None,
         feedback: int, planner: str, out: Path, seed: int | None, memory_dir: Path | None, train_memory: bool = False,
         agent_options: list[str] | None = None, executor: Executor | None = None) -> None:
    if ablate not in (None, "mem", "precheck", "correction", "locator"):
        raise typer.BadParameter("--ablate takes mem, precheck, correction or locator")
    if feedback not in (0, 1, 2):
        raise typer.BadParameter("--feedback takes 0, 1 or 2")
    if planner not in (*method_names(), *ORACLE_PLANNERS):
        raise typer.BadParameter(f"--agent takes {', '.join(method_names())} (methods) or {', '.join(ORACLE_PLANNERS)} (oracles)")
    if ablate and planner != "helper":
        raise typer.BadParameter("--ablate switches off parts of HELPER; use --agent-option for other methods")
    try:
        options = parse_agent_options(agent_options)
        check_agent_options(planner, options, ORACLE_PLANNERS)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if planner not in ORACLE_PLANNERS:  # an oracle asks no model
        check_chat_model(llm)
    spec = EvalSpec(mode=mode, data=str(data), split=split, out=str(out), limit=limit, llm=llm, workers=workers,
                    ablate=ablate, feedback=feedback, planner=planner, seed=_seed(seed),
                    memory_dir=str(memory_dir) if memory_dir else None, agent_options=options)
    if train_memory:
        try:
            console.print(f"example memory: {seed_examples_from_split(spec)} examples from the train split added")
        except (FileNotFoundError, ValueError) as exc:
            fail(f"{exc}")
    if planner in ORACLE_PLANNERS:
        console.print(f"[yellow]planner '{planner}' is an ORACLE: it measures the world and executor, not an agent[/yellow]")
    elif warning := slot_shortfall(llm, workers):
        console.print(f"[yellow]{warning}[/yellow]", highlight=False)
    successes = {"n": 0, "done": 0}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("SR {task.fields[sr]}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task(spec.label(), total=None, sr="-")

        def report(done: int, total: int, record: dict) -> None:
            if record and not errored(record):
                successes["done"] += 1
                successes["n"] += int(record.get("success", 0))
            sr = f"{100 * successes['n'] / successes['done']:.1f}%" if successes["done"] else "-"
            bar.update(task, completed=done, total=total, sr=sr)

        try:
            with executor or local_executor(workers) as runs_on:
                metrics = run_eval(spec, progress=report, executor=runs_on)
        except (FileNotFoundError, ValueError) as exc:
            fail(f"{exc}")
    _print_metrics([metrics])
    console.print(f"results: {out / 'results.jsonl'}  metrics: {out / 'metrics.json'}  report: {out / 'report.md'}")
    _exit_on_errors(metrics)


def _exit_on_errors(metrics: dict) -> None:
    """Errored episodes are not results: say how many and why, and exit 1 until a re-run retries them."""
    errors = int(metrics.get("errors", 0) or 0)
    if not errors:
        return
    console.print(f"[red]{errors} episode(s) errored[/red] and are not in SR/GC "
                  f"({metrics['overall']['episodes']} scored); re-run the same command to retry them.", highlight=False)
    for message in metrics.get("error_messages") or []:
        console.print(f"  error: {message}", markup=False, highlight=False)
    raise typer.Exit(1)


def _print_metrics(runs: list[dict]) -> None:
    table = Table(title="SR and GC in %, path-length-weighted in parentheses")
    for column in ("run", "episodes", "SR (PLW)", "GC (PLW)", "step/failure limit, errors", "LLM calls/ep", "prompt tok/ep", "s/call"):
        table.add_column(column, no_wrap=column == "run")
    for m in runs:
        o, e, p = m["overall"], m["ended_by"], m["per_episode"]
        table.add_row(
            str(m.get("label", "")), str(o["episodes"]), f"{o['SR']:.2f} ({o['PLW_SR']:.2f})", f"{o['GC']:.2f} ({o['PLW_GC']:.2f})",
            f"{e['step_limit']}/{e['failure_limit']}, {e['error']}", f"{p['llm_calls']}", f"{p['prompt_tokens']}", f"{m['seconds_per_llm_call']}",
        )
    console.print(table)


_DATA = typer.Option(..., help="A TEACh-layout folder: games/, edh_instances/, tfd_instances/ per split.")
_SPLIT = typer.Option("valid_unseen", help="Split to evaluate.")
_LIMIT = typer.Option(None, help="Evaluate the first N instances only.")
_LLM = typer.Option("local", envvar="HELPER_LLM", help="Chat model: local, local:1.5b (append @llama.cpp for that runtime), openai:gpt-4o, or an OpenAI-compatible base URL.")
_WORKERS = typer.Option(1, help="Worker processes (each with its own environment and local model).")
_ABLATE = typer.Option(None, help="HELPER ablation: mem, precheck, correction or locator.")
_FEEDBACK = typer.Option(1, help="Feedback rounds: 0, 1 or 2.")
_PLANNER = typer.Option("helper", "--agent", "--planner",
                        help=f"The method: {', '.join(method_names())}; or an oracle: gold, oracle-graph.")
_AGENT_OPTIONS = typer.Option(None, "--agent-option", "-o",
                              help="A method's switch as KEY=VALUE (repeatable), e.g. -o replan=off for llm-planner.")
_OUT = typer.Option(..., help="Run folder: results.jsonl, metrics.json, report.md, plots. Re-running resumes.")
_SEED = typer.Option(None, help="Seed for random search and tie-breaking (default: HELPER_SEED, 0).")
_MEMORY = typer.Option(None, help="Memory folder (default: <out>/memory).")
_TRAIN_MEMORY = typer.Option(False, "--train-memory", help="Add the dataset's train split (dialogue -> gold program) to the example memory first.")


@app.command()
def tfd(data: Path = _DATA, split: str = _SPLIT, limit: int | None = _LIMIT, llm: str = _LLM, workers: int = _WORKERS,
        ablate: str | None = _ABLATE, feedback: int = _FEEDBACK, planner: str = _PLANNER, out: Path = _OUT,
        seed: int | None = _SEED, memory_dir: Path | None = _MEMORY, train_memory: bool = _TRAIN_MEMORY,
        agent_option: list[str] | None = _AGENT_OPTIONS, executor: str = EXECUTOR, ray_address: str | None = RAY_ADDRESS,
        ray_num_cpus: float = RAY_NUM_CPUS, ray_num_gpus: float = RAY_NUM_GPUS) -> None:
    """Trajectory from Dialogue: the whole dialogue is given; do the task."""
    _run("tfd", data, split, limit, llm, workers, ablate, feedback, planner, out, seed, memory_dir, train_memory,
         agent_option, executor_from_options(executor, workers, ray_address, ray_num_cpus, ray_num_gpus))


@app.command()
def edh(data: Path = _DATA, split: str = _SPLIT, limit: int | None = _LIMIT, llm: str = _LLM, workers: int = _WORKERS,
        ablate: str | None = _ABLATE, feedback: int = _FEEDBACK, planner: str = _PLANNER, out: Path = _OUT,
        seed: int | None = _SEED, memory_dir: Path | None = _MEMORY, train_memory: bool = _TRAIN_MEMORY,
        agent_option: list[str] | None = _AGENT_OPTIONS, executor: str = EXECUTOR, ray_address: str | None = RAY_ADDRESS,
        ray_num_cpus: float = RAY_NUM_CPUS, ray_num_gpus: float = RAY_NUM_GPUS) -> None:
    """Execution from Dialogue History: the dialogue and actions so far are given; finish the session."""
    _run("edh", data, split, limit, llm, workers, ablate, feedback, planner, out, seed, memory_dir, train_memory,
         agent_option, executor_from_options(executor, workers, ray_address, ray_num_cpus, ray_num_gpus))


def parse_agent_list(text: str) -> list[tuple[str, dict[str, str]]]:
    """`helper,embodiedrag[graph=full;k=5]` -> [("helper", {}), ("embodiedrag", {"graph": "full", "k": "5"})]."""
    items: list[tuple[str, dict[str, str]]] = []
    for match in re.finditer(r"\s*([A-Za-z0-9_-]+)(?:\[([^\]]*)\])?\s*(?:,|$)", text):
        if not match.group(1):
            continue
        options: dict[str, str] = {}
        for pair in filter(None, (p.strip() for p in (match.group(2) or "").split(";"))):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise typer.BadParameter(f"--agents: {pair!r} is not KEY=VALUE")
            options[key.strip()] = value.strip()
        items.append((match.group(1), options))
    if not items:
        raise typer.BadParameter("--agents names no agent")
    return items


def _run_dir_name(agent: str, options: dict[str, str]) -> str:
    return agent + "".join(f"_{k}-{v}" for k, v in sorted(options.items()))


@app.command()
def compare(runs: list[Path] | None = typer.Argument(None, help="Run folders to put side by side."),
            plot: Path | None = typer.Option(None, help="Also write a side-by-side PNG here."),
            data: Path | None = typer.Option(None, help="With --agents: the dataset to run every method on."),
            agents: str | None = typer.Option(None, help="Methods to run and tabulate on the same episodes, e.g. "
                                              "'helper,llm-planner,prag,embodiedrag' (switches: 'embodiedrag\\[graph=full;k=5]')."),
            mode: str = typer.Option("tfd", help="With --agents: tfd or edh."),
            split: str = _SPLIT, limit: int | None = _LIMIT, llm: str = _LLM, workers: int = _WORKERS,
            feedback: int = _FEEDBACK, seed: int | None = _SEED,
            out: Path | None = typer.Option(None, help="With --agents: one run folder per method under it, plus "
                                            "compare.md, compare.json and compare.png."),
            train_memory: bool = _TRAIN_MEMORY,
            common: bool = typer.Option(False, "--common", help="Score every run on the episodes all of them "
                                        "have (from their records; nothing is re-run).")) -> None:
    """Print runs side by side (e.g. HELPER and its ablations), or run several methods on the same episodes.

    `helper eval compare RUN_DIR...` tabulates finished runs. `helper eval compare --data DIR --agents
    helper,llm-planner,prag,embodiedrag --limit 50 --out DIR` runs each method on the same first
    episodes (a finished run is only re-read, an unfinished one resumes) and writes the methods
    table and plot. A method folder holding iterations (`<out>/prag/*/metrics.json`) counts with its best.
    The table says whether the runs scored the same episodes with the same model; `--common`
    re-scores every run on the episodes they share.
    """
    loaded: list[dict] = []
    try:
        loaded += [best_iteration(r) for r in runs or []]  # a plain run folder reads as itself
    except FileNotFoundError as exc:
        fail(f"{exc}")
    if agents:
        if data is None or out is None:
            raise typer.BadParameter("--agents needs --data and --out")
        loaded += _compare_agents(parse_agent_list(agents), data, mode, split, limit, llm, workers, feedback, _seed(seed), out,
                                  train_memory)
    if not loaded:
        raise typer.BadParameter("give run folders, or --data, --agents and --out")
    if common:
        try:
            loaded = on_common_episodes(loaded)
        except ValueError as exc:
            fail(f"--common: {exc}")
    _print_metrics(loaded)
    table = methods_table(loaded)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "compare.md", table)
        atomic_write_json(out / "compare.json", [method_row(r) for r in loaded])
        plot = plot or out / "compare.png"
        console.print(f"table: {out / 'compare.md'}")
    if plot is not None:
        console.print(f"plot: {plot_methods(loaded, plot)}")
    console.print(table, markup=False)  # Markdown: a method's switches in brackets are not Rich markup
    if not agents:
        console.print(markdown_report(loaded).split("## By task")[0], markup=False)


def _compare_agents(items: list[tuple[str, dict[str, str]]], data: Path, mode: str, split: str, limit: int | None,
                    llm: str, workers: int, feedback: int, seed: int, out: Path, train_memory: bool) -> list[dict]:
    """Run (or resume, or just read) each method's evaluation on the same episodes; their metrics."""
    for agent, _ in items:
        if agent not in method_names():
            raise typer.BadParameter(f"--agents: unknown method {agent!r}; choose from {', '.join(method_names())}")
    check_chat_model(llm)
    results = []
    for agent, options in items:
        folder = out / _run_dir_name(agent, options)
        if iteration_metrics(folder):  # iterations (P-RAG's progressive rounds): the best one
            console.print(f"{agent}: best of the iterations in {folder}")
            results.append(best_iteration(folder))
            continue
        spec = EvalSpec(mode=mode, data=str(data), split=split, out=str(folder), limit=limit, llm=llm, workers=workers,
                        feedback=feedback, planner=agent, seed=seed, agent_options=options)
        if train_memory:
            seed_examples_from_split(spec)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TimeRemainingColumn(), console=console) as bar:
            task = bar.add_task(spec.label(), total=None)
            try:
                metrics = run_eval(spec, progress=lambda done, total, record, task=task: bar.update(
                    task, completed=done, total=total))
            except (FileNotFoundError, ValueError) as exc:
                fail(f"{agent}: {exc}")
        results.append({**metrics, "folder": str(folder)})
    return results


def demo(
    episodes: int = typer.Option(5, help="How many valid_unseen TfD episodes to run."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model spec (default: the embedded Qwen2.5-Coder-0.5B)."),
    out: Path = typer.Option(Path("out/demo"), help="Folder for the benchmark and the run."),
) -> None:
    """The main job on the embedded defaults: a short TfD evaluation of HELPER with the local LLM."""
    check_chat_model(llm)  # before the benchmark is written
    data = out / "bench"
    if not (data / "manifest.json").exists():
        console.print(f"writing a small built-in benchmark to {data} ...")
        generate_benchmark(data, seed=0, sizes={"valid_unseen": max(episodes, 1)}, overwrite=True)
    _run("tfd", data, "valid_unseen", episodes, llm, 1, None, 1, "helper", out / f"run-{llm.replace('/', '_').replace(':', '_')}", 0, None)


@app.command()
def personalization(
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model spec."),
    out: Path = typer.Option(Path("runs/personalization"), help="Folder for results.json and the routines memory."),
    planner: str = typer.Option("helper", help="helper (the agent), gold or unmodified (baselines)."),
    suite_file: Path | None = typer.Option(None, "--suite", help="A suite file in the packaged format (default: the packaged suite; "
                                           "the calibration suite is helper_agent/evals/studies/data/personalization_calibration.json)."),
    limit: int | None = typer.Option(None, help="Score the first N requests only."),
    fast_recall: bool = typer.Option(False, "--fast-recall", help="Reuse a routine without the LLM when the request is exactly its name or its original request (off: the LLM sees every request)."),
    write_seeds: bool = typer.Option(False, "--write-seeds", help="Maintenance: recompute and record every request's scene seed, then stop."),
    routine_edits: bool = typer.Option(True, "--routine-edits/--whole-program",
                                       help="Adapt a recalled routine by checked edits (default), or let the planner rewrite the whole "
                                            "program from the routine (the earlier design, for before/after comparisons)."),
) -> None:
    """HELPER's personalization experiment: recall taught routines, adapt them, score per category (Table 3)."""
    if write_seeds:
        for rid, (old, new) in record_seeds(suite_file).items():
            console.print(f"{rid}: seed {old} -> {new}")
        return
    suite = load_suite(suite_file)
    requests = list(suite.requests)[:limit] if limit else list(suite.requests)
    out.mkdir(parents=True, exist_ok=True)
    if planner == "gold":
        console.print("[yellow]gold planner: an ORACLE (each request's gold adapted program)[/yellow]")
        agent = ProgramAgent("gold", lambda setup: suite.request(setup.instance_id).program, oracle=True)
    elif planner == "unmodified":
        agent = ProgramAgent("unmodified", lambda setup: suite.routine(suite.request(setup.instance_id).routine).program)
    elif planner == "helper":
        memories = Memories.at(str(out / "memory"))
        for routine in suite.routines:  # each user teaches their routine first
            if memories.routines.latest(routine.name, user=routine.user) is None:
                memories.routines.teach(routine.name, routine.program, routine.request, user=routine.user)
        # No feedback: Table 3 scores the adapted program the request produces, acted out once.
        config = HelperConfig(feedback_rounds=0, routine_fast_path=fast_recall, routine_edits=routine_edits)
        agent = HelperAgent(load_chat_model(llm), memories, config)
    else:
        raise typer.BadParameter("--planner takes helper, gold or unmodified")
    with Progress(TextColumn("personalization"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task("requests", total=len(requests))
        result = run_suite(agent, requests, progress=lambda done, total, score: bar.update(task, completed=done), suite=suite)
    rates = table3(result)
    table = Table(title=f"Personalization (HELPER Table 3), planner {planner}{' ORACLE' if planner == 'gold' else ''}")
    for key in rates:
        table.add_column(key)
    table.add_column("LLM calls/request")
    table.add_column("LLM s/request")
    calls = sum(s.llm_calls for s in result.scores) / max(len(result.scores), 1)
    seconds = sum(s.llm_seconds for s in result.scores) / max(len(result.scores), 1)
    table.add_row(*[f"{100 * v:.1f}" for v in rates.values()], f"{calls:.2f}", f"{seconds:.2f}")
    console.print(table)
    (out / "results.json").write_text(json.dumps({"planner": planner, "llm": llm, "fast_recall": fast_recall, "routine_edits": routine_edits, "table3": rates,
                                                   "suite": suite.source, "llm_calls_per_request": calls,
                                                   "llm_seconds_per_request": seconds,
                                                   "scores": [s.model_dump() for s in result.scores]}, indent=1, default=str))
    console.print(f"results: {out / 'results.json'}")


# Method-specific evaluations live in their own modules and register themselves here.
for _module in (eval_hlp, eval_progressive, eval_eai, eval_requests):
    _module.register(app)
