"""`helper run` (one task from a dialogue) and `helper chat` (a household that remembers its user)."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import typer
from langgraph.types import Command
from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from helper_agent import tracing
from helper_agent.chat_runtime import (
    ChatRuntime,
    RequestTooLong,
    chat_config,
    check_request,
    pending_question,
)
from helper_agent.commands import load_chat_model, program_syntax
from helper_agent.commands.errors import fail
from helper_agent.commands.waiting import Waiting, llm_waiting
from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.harness import run_instance
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.helper.facts import log_lines, question_lines, request_facts, step_outcome
from helper_agent.graphs.helper.household import household_lines
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import BuildRequest, build_agent, method_names
from helper_agent.llm import LLMBudget, LLMError
from helper_agent.teach.errors import TeachFormatError
from helper_agent.teach.instances import load_instance
from helper_agent.world.rooms import ROOM_TYPES

console = Console()


def _check_room(room: str) -> None:
    """One `error:` line (exit 2), not click's boxed usage error: a pipe or a log got five lines."""
    if room not in ROOM_TYPES:
        fail(f"--room: unknown room {room!r}; choose {', '.join(ROOM_TYPES)}")


def _print_trace(state: dict[str, Any], since: int = 0) -> None:
    """The episode's subgoals (every execute segment: plan, corrections, replans) from row `since`
    on, numbered as in the whole episode: a round's table does not repeat the earlier rounds'."""
    rows = list(enumerate((state.get("execution") or {}).get("trace", []), 1))[since:]
    if not rows:
        return
    table = Table(title="subgoals" if since == 0 else f"subgoals (from {since + 1})")
    table.add_column("#", justify="right")
    table.add_column("subgoal")
    table.add_column("outcome")
    table.add_column("actions", justify="right")
    for n, (subgoal, status, actions) in rows:
        colour = "green" if status == "done" else "yellow" if status == "skipped" else "red"
        table.add_row(str(n), subgoal, f"[{colour}]{step_outcome(status)}[/{colour}]", str(actions))
    console.print(table)


def run(
    request: str = typer.Argument("", help="What to do, e.g. \"Make me a coffee, the mug is in the cabinet\"."),
    scene: int = typer.Option(0, help="Seed of the generated household."),
    room: str = typer.Option("Kitchen", help="Kitchen, LivingRoom, Bedroom or Bathroom."),
    instance: Path | None = typer.Option(None, help="A TfD/EDH instance file (its game is read from the dataset layout)."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model spec (local, local:1.5b, openai:gpt-4o, or a base URL)."),
    out: Path = typer.Option(Path("out/run"), help="Folder for the top-down pictures."),
    agent_name: str = typer.Option("helper", "--agent", help=f"The method: {', '.join(method_names())}."),
    agent_option: list[str] | None = typer.Option(None, "--agent-option", "-o", help="A method's switch as KEY=VALUE (repeatable)."),
    user: str | None = typer.Option(None, help="Who asks: HELPER recalls their routines and adapts one the request names."),
) -> None:
    """Plan and act on one request in the embedded world; print the program, subgoals and verdict."""
    _check_room(room)
    env = SymbolicEnv()
    loaded = None
    if instance is not None:
        try:
            loaded = load_instance(instance)
        except (TeachFormatError, FileNotFoundError) as exc:
            fail(f"{exc}")
        loaded.start(env)
        request = loaded.dialogue
    elif not request.strip():
        raise typer.BadParameter("give a request, or --instance FILE")
    else:
        env.reset(scene, room_type=room)
    if agent_name not in method_names():
        raise typer.BadParameter(f"--agent takes {', '.join(method_names())}")
    try:
        options = parse_agent_options(agent_option)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        chat_model = _with_waiting(load_chat_model(llm), Waiting(console))  # a status line while the LLM works
        agent = build_agent(agent_name, BuildRequest.interactive(chat_model, options, task_known=loaded is not None))
    except ValueError as exc:
        fail(f"{exc}")
    out.mkdir(parents=True, exist_ok=True)
    env.render(out / "before.png")
    console.print(Panel(request, title="request"))
    if loaded is not None:
        record, result = run_instance(loaded, agent, env, tags=["run"])
    else:
        record, result = None, agent.run(EpisodeSetup(env=env, request=request, user=user, tags=["run"]))
    for line in result.log:
        if line.startswith("adapt: "):  # the recalled routine and the changes understood
            console.print(f"[bold]{escape(line.removeprefix('adapt: '))}[/bold]")
    console.print(program_syntax(result.program))
    _print_trace({"execution": {"trace": result.trace}})
    for line in result.log:
        console.print(f"[dim]{line}[/dim]")
    picture = env.render(out / "after.png")
    # The final household, so a person can check what was done (`helper world show` reads it too).
    household = out / "household.json"
    household.write_text(json.dumps(env.snapshot()["world"], indent=1), encoding="utf-8")
    if record is not None:
        verdict = "[green]task done[/green]" if record["success"] else "[red]task not done[/red]"
        console.print(f"checker: {verdict}, goal conditions {record['completed_goal_conditions']}/{record['total_goal_conditions']}")
    usage = result.usage
    console.print(f"steps {env.steps}, failed actions {env.failures}, outcome {result.outcome}")
    console.print(f"LLM: {usage.get('llm_calls', 0)} calls, {usage.get('prompt_tokens', 0)} prompt + "
                  f"{usage.get('completion_tokens', 0)} completion tokens, {usage.get('llm_seconds', 0)} s")
    console.print(f"pictures: {out / 'before.png'}  {picture}; final household: {household}")


# ------------------------------------------------------------------------------------------ chat
HELP = ("commands: /state  /map  /routines  /reset (a new household)  /new (a new session)  /quit   "
        "(anything else is a request)")
QUESTION_HELP = ("/state, /map and /routines work here too; /reset and /new wait until the question is "
                 "answered; /quit leaves it open for next time")
# Log lines a person reads without --verbose: a routine recalled or stored, and why a request stopped.
# The rest (validator notes, rejected edits, each search) is for --verbose, the trace and the log.
PLAIN_LOG = ("retrieve: routine", "plan: routine", "stopped:")
HISTORY_FILE = "chat_history"


def _with_waiting(model: Any, waiting: Waiting) -> Any:
    """`model` telling `waiting` when it answers: the graph's nodes call it with their own callback
    list, so the model's callbacks are the ones every call keeps."""
    own = model.callbacks if isinstance(getattr(model, "callbacks", None), list) else []
    model.callbacks = [*own, llm_waiting(waiting)]
    return model


def _reader(home: Path) -> Any:
    """`ask(prompt) -> str | None` (None at the end of input). A terminal gets prompt_toolkit's line
    editing with a history kept in `home/chat_history`; piped stdin is read line by line (and echoed),
    so a chat can be scripted."""
    if not sys.stdin.isatty():
        lines = iter(sys.stdin.readline, "")

        def scripted(prompt: str) -> str | None:
            console.print(prompt, end="")
            line = next(lines, None)
            if line is None:
                return None
            console.print(line.rstrip("\n"), markup=False, highlight=False)
            return line.rstrip("\n")

        return scripted
    session: Any = PromptSession(history=FileHistory(str(home / HISTORY_FILE)))

    def edited(prompt: str) -> str | None:
        with console.capture() as captured:
            console.print(prompt, end="")
        try:
            return session.prompt(ANSI(captured.get()))
        except (EOFError, KeyboardInterrupt):
            return None

    return edited


def _outcome(values: dict[str, Any], env: Any = None) -> str:
    """The request's end, as the agent knows it, from this request's facts only (`request_facts`):
    success only when its execution finished and the person was satisfied (the graph's `memorize`
    decides), never merely because someone said yes; "stored" only when this request stored."""
    facts = request_facts(values, getattr(env, "steps", None), getattr(env, "failures", None))
    colour = "green" if facts.succeeded else "red"
    return f"[bold {colour}]{escape(facts.reply())}[/bold {colour}]" + (f" [dim]({facts.steps} steps)[/dim]" if env else "")


THREADS_FILE = "chat_threads.json"
"""Each user's current chat thread in the chat's home (`/new` starts another)."""


def _current_thread(home: Path, user: str) -> str:
    try:
        threads = json.loads((home / THREADS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        threads = {}
    thread = threads.get(user) if isinstance(threads, dict) else None
    return thread if isinstance(thread, str) and thread else f"household:{user}"


def _set_thread(home: Path, user: str, thread: str) -> None:
    path = home / THREADS_FILE
    try:
        threads = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        threads = {}
    threads = threads if isinstance(threads, dict) else {}
    threads[user] = thread
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(threads, indent=1), encoding="utf-8")
    os.replace(partial, path)


def chat(
    user: str = typer.Option(..., help="Who is chatting: routines are stored per user."),
    scene: int = typer.Option(0, help="Seed of the household (first session, and /reset)."),
    room: str = typer.Option("Kitchen", help="Room of the household (first session, and /reset)."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model spec."),
    thread: str | None = typer.Option(None, help="Conversation id (default: the user's current session)."),
    home: Path | None = typer.Option(None, help="Folder for checkpoints and memory (default: HELPER_HOME or .helper)."),
    max_steps: int | None = typer.Option(None, min=1, help="Actions one request may take (default: HELPER_MAX_STEPS)."),
    llm_budget: float | None = typer.Option(
        None, min=1.0, help="LLM seconds one request may use (default: HELPER_LLM_BUDGET_SECONDS, else 600)."),
    feedback_rounds: int = typer.Option(2, min=0, max=5, help="Replans after a person says something is missing."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Show every node's notes (validator remarks, rejected edits, each search)."),
) -> None:
    """A chat with a persistent household: each request runs the HELPER graph; state survives restarts.

    Budgets are per request: each request may take --max-steps actions and --llm-budget LLM seconds,
    however long the household has been in use."""
    _check_room(room)
    if not user.strip():
        fail(f"--user {user!r}: a user name needs a visible character")
    settings = get_settings()
    # The same graph, SQLite checkpointer and memories as `helper app` (helper_agent.chat_runtime).
    runtime = ChatRuntime.open(home)
    home, memories, graph = runtime.home, runtime.memories, runtime.graph
    env = SymbolicEnv()
    budget_seconds = llm_budget or settings.llm_budget_seconds or 600.0
    helper_config = chat_config(feedback_rounds, max_steps)
    waiting = Waiting(console)
    context = runtime.context(env, _with_waiting(load_chat_model(llm), waiting), user, helper_config)
    session = {"thread": thread or _current_thread(home, user)}

    def config() -> dict[str, Any]:
        return runtime.config(session["thread"])

    ask = _reader(home)
    shown = {"subgoals": -1}  # how many subgoal runs the tables showed so far (-1: none this request)

    def subgoals(values: dict[str, Any]) -> None:
        """The steps of this round (every step so far with --verbose)."""
        _print_trace(values, 0 if verbose else max(shown["subgoals"], 0))
        shown["subgoals"] = len((values.get("execution") or {}).get("trace") or [])

    def show(node: str, update: dict[str, Any]) -> None:
        """What a person reads of one node's update: the routine recalled, the changes understood,
        the program, a replan's reason; with --verbose every log line and the numbered program."""
        lines = log_lines(update.get("log"))
        if verbose:
            for line in lines:
                console.print(f"[dim]{escape(line)}[/dim]", highlight=False)
        else:
            if node == "retrieve" and update.get("routine"):
                console.print(f"recalling your routine '{escape(update['routine']['name'])}'", highlight=False)
            for line in lines:
                if line.startswith(PLAIN_LOG):
                    console.print(f"[dim]{escape(line)}[/dim]", highlight=False)
        if node == "adapt" and update.get("adaptation"):  # before acting: the routine and the changes understood
            console.print(f"[bold]{escape(update['adaptation']['summary'])}[/bold]", highlight=False)
        if node == "validate" and update.get("program") and not update.get("plan_error"):
            body = program_syntax(update["program"]) if verbose else Syntax(
                update["program"].strip("\n"), "python", theme="ansi_dark")  # numbered only beside the notes
            console.print(Panel(body, title="program"))

    def stream(payload: Any) -> None:
        """Run the graph, printing what each node did as it finishes (so progress shows), with a
        status line of the node at work and its seconds while it runs."""
        waiting.start()
        try:
            for mode, data in graph.stream(payload, config(), context=context, stream_mode=["tasks", "updates"],
                                           durability="sync"):
                if mode == "tasks":
                    if "result" not in data:  # a node starts
                        waiting.node(str(data.get("name", "")))
                    continue
                for node, update in data.items():
                    if node != "__interrupt__" and isinstance(update, dict):
                        show(node, update)
        finally:
            waiting.stop()

    def command(text: str, asking: bool = False) -> bool:
        """Run a slash command that leaves the request alone; False when `text` is none of them."""
        if text == "/state":
            _print_state(env, helper_config, budget_seconds)
        elif text == "/map":
            console.print(f"map: {env.render(home / f'map-{uuid.uuid4().hex[:6]}.png')}")
        elif text == "/routines":
            _print_routines(memories.routines, user)
        elif asking and text in ("/reset", "/new"):
            console.print(f"{text} waits until the question is answered (done, or what is missing)")
        elif text in ("/help", "/?"):
            console.print(QUESTION_HELP if asking else HELP)
        else:
            return False
        return True

    def answer_question(snapshot: Any) -> str | None:
        """Say what was not done, then ask the feedback question until it is answered; a slash
        command typed there runs and the question is asked again (`/state` was once read as "not
        satisfied (/state)" and replanned). None: the person left (/quit, end of input)."""
        *before, question = question_lines(pending_question(snapshot) or {})
        for line in before:
            console.print(f"[bold red]{escape(line)}[/bold red]", highlight=False)
        while True:
            answer = ask(f"[bold]{escape(question)}[/bold] ")
            if answer is None or answer.strip() in ("/quit", "/exit"):
                return None
            if not answer.strip().startswith("/"):
                return answer
            if not command(answer.strip(), asking=True):
                console.print(QUESTION_HELP)

    def drive(payload: Any) -> bool:
        """One request to its end, under its own LLM budget; an LLM that fails ends the request
        (recorded in the thread, so a restart does not resume it), never the chat. False when the
        person left at the feedback question (the request waits there for the next chat)."""
        try:
            with LLMBudget(budget_seconds):
                stream(payload)
                while True:
                    snapshot = graph.get_state(config())
                    if not any(task.interrupts for task in snapshot.tasks):
                        break
                    subgoals(snapshot.values)
                    answer = answer_question(snapshot)
                    if answer is None:
                        return False
                    stream(Command(resume=answer))
        except LLMError as exc:
            outcome = "llm_budget" if "budget" in type(exc).__name__.lower() else "llm_unavailable"
            graph.update_state(config(), {"outcome": outcome, "execution": {"status": outcome, "error": str(exc)},
                                          "log": [f"stopped: {type(exc).__name__}: {exc}"]}, as_node="finish")
            console.print(f"[red]{escape(type(exc).__name__)}:[/red] {escape(str(exc))}", highlight=False)
        values = graph.get_state(config()).values
        if len((values.get("execution") or {}).get("trace") or []) != shown["subgoals"]:
            subgoals(values)  # the steps the last table did not show
        console.print(_outcome(values, env))
        return True

    def household(values: dict[str, Any]) -> None:
        """Act in the household the session's checkpoint holds, else in a new one."""
        if values.get("world"):
            env.restore(values["world"])
        else:
            env.reset(scene, room_type=room)

    def keep_household() -> None:
        """Write the live household into the session's checkpoint (so a restart finds it)."""
        graph.update_state(config(), {"world": env.snapshot(), "outcome": "", "log": []}, as_node="finish")

    snapshot = graph.get_state(config())
    household(snapshot.values)
    going = True
    if snapshot.next:
        console.print("[yellow]resuming the request that was interrupted[/yellow]")
        if any(task.interrupts for task in snapshot.tasks):
            subgoals(snapshot.values)
            answer = answer_question(snapshot)
            going = answer is not None and drive(Command(resume=answer))
        else:
            going = drive(None)
    if going:
        console.print(Panel(f"household of {user} (session {session['thread']}). {HELP}", title="helper chat"))
    try:
        while going:
            text = ask(f"[cyan]{user}>[/cyan] ")
            if text is None or text.strip() in ("/quit", "/exit"):
                break
            text = text.strip()
            if not text or command(text):
                continue
            if text == "/reset":
                env.reset(scene, room_type=room)
                keep_household()
                console.print(f"a new household (scene {scene}, {room}); your routines are kept")
                continue
            if text == "/new":
                session["thread"] = f"household:{user}:{uuid.uuid4().hex[:8]}"
                _set_thread(home, user, session["thread"])
                keep_household()
                console.print(f"a new session {session['thread']} in the same household")
                continue
            if text.startswith("/"):
                console.print(HELP)
                continue
            try:
                check_request(text)
            except RequestTooLong as exc:
                console.print(f"[red]{escape(str(exc))}[/red]", highlight=False)
                continue
            shown["subgoals"] = -1
            going = drive({"request": text, "user": user})
    finally:
        runtime.close()
        tracing.flush()


def _print_state(env: Any, config: Any = None, llm_budget: float | None = None) -> None:
    """Where the agent is and what it holds, each request's budgets, and where the movable things
    are and in what state (dirty, sliced, cooked, filled, on, open)."""
    state = env.state
    held = state.objects[state.held_id].object_type if state.held_id else "nothing"
    console.print(f"{state.scene_name}: agent at cell {state.agent.cell}, facing {state.agent.rotation}, holding {held}; "
                  f"{env.steps} steps, {env.failures} failed actions in this household so far")
    if config is not None:
        console.print(f"budgets per request: {config.max_steps} steps, {config.max_failures} failed actions"
                      + (f", {llm_budget:g} LLM seconds" if llm_budget else "")
                      + f", {config.feedback_rounds} feedback rounds")
    lines = household_lines(env.objects_metadata(), limit=len(env.state.objects))  # all of them: a cut list said nothing
    console.print(f"{len(lines)} movable or changed things:")
    for line in lines:
        console.print(f"  {escape(line)}", highlight=False)


def _print_routines(routines: Any, user: str) -> None:
    found = routines.routines(user=user)
    if not found:
        console.print("no routines yet; teach one with 'Perform the <name>: <what to do>'")
    for r in found:
        console.print(Panel(Syntax(r.program, "python", theme="ansi_dark"), title=f"{r.name} (v{getattr(r, 'version', '?')})"))
