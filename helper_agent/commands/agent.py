"""`helper run` (one task from a dialogue) and `helper chat` (a household that remembers its user)."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import typer
from langchain_core.callbacks import BaseCallbackHandler
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
from helper_agent.chat_runtime import ChatRuntime, chat_config
from helper_agent.commands import load_chat_model, program_syntax
from helper_agent.commands.errors import fail
from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.harness import run_instance
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.helper import FEEDBACK_QUESTION
from helper_agent.graphs.helper.facts import log_lines, request_facts
from helper_agent.graphs.helper.household import household_lines
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import BuildRequest, build_agent, method_names
from helper_agent.llm import LLMBudget, LLMError
from helper_agent.teach.errors import TeachFormatError
from helper_agent.teach.instances import load_instance
from helper_agent.world.rooms import ROOM_TYPES

console = Console()


def _check_room(room: str) -> None:
    if room not in ROOM_TYPES:
        raise typer.BadParameter(f"unknown room {room!r}; choose {', '.join(ROOM_TYPES)}", param_hint="--room")


def _print_trace(state: dict[str, Any]) -> None:
    """The whole episode's subgoals so far (every execute segment: plan, corrections, replans)."""
    table = Table(title="subgoals")
    table.add_column("#", justify="right")
    table.add_column("subgoal")
    table.add_column("outcome")
    table.add_column("actions", justify="right")
    for n, (subgoal, status, actions) in enumerate((state.get("execution") or {}).get("trace", []), 1):
        colour = "green" if status == "done" else "yellow" if status == "skipped" else "red"
        table.add_row(str(n), subgoal, f"[{colour}]{status}[/{colour}]", str(actions))
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
        chat_model = _with_spinner(load_chat_model(llm))  # a spinner shows while the LLM works
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
HISTORY_FILE = "chat_history"


def llm_spinner(out: Console) -> Any:
    """A LangChain callback handler that shows a Rich spinner while the chat model answers
    (started when a chat model call starts, stopped when it ends or fails)."""
    class LLMSpinner(BaseCallbackHandler):
        def __init__(self) -> None:
            self.status: Any = None
            self.running = 0
            self.calls = 0

        def _start(self, name: str | None) -> None:
            self.calls += 1
            self.running += 1
            text = f"asking the LLM ({name})..." if name else "asking the LLM..."
            if self.status is None:
                self.status = out.status(text, spinner="dots")
                self.status.start()
            else:
                self.status.update(text)

        def _stop(self) -> None:
            self.running = max(0, self.running - 1)
            if self.running == 0 and self.status is not None:
                self.status.stop()
                self.status = None

        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            self._start(kwargs.get("name"))

        def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
            self._start(kwargs.get("name"))

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            self._stop()

        def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
            self._stop()

    return LLMSpinner()


def _with_spinner(model: Any) -> Any:
    """`model` with the spinner among its own callbacks: the graph's nodes call it with their own
    callback list, so the model's callbacks are the ones every call keeps."""
    own = model.callbacks if isinstance(getattr(model, "callbacks", None), list) else []
    model.callbacks = [*own, llm_spinner(console)]
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
    context = runtime.context(env, _with_spinner(load_chat_model(llm)), user, helper_config)
    session = {"thread": thread or _current_thread(home, user)}

    def config() -> dict[str, Any]:
        return runtime.config(session["thread"])

    ask = _reader(home)
    shown = {"subgoals": -1}  # how many subgoal runs the last table showed

    def subgoals(values: dict[str, Any]) -> None:
        _print_trace(values)
        shown["subgoals"] = len((values.get("execution") or {}).get("trace") or [])

    def stream(payload: Any) -> None:
        """Run the graph, printing each node's log lines as it finishes (so progress shows) and
        each program once it is valid."""
        for chunk in graph.stream(payload, config(), context=context, stream_mode="updates", durability="sync"):
            for node, update in chunk.items():
                if node == "__interrupt__" or not isinstance(update, dict):
                    continue
                for line in log_lines(update.get("log")):
                    console.print(f"[dim]{escape(line)}[/dim]", highlight=False)
                if node == "adapt" and update.get("adaptation"):  # before acting: the routine and the changes understood
                    console.print(f"[bold]{escape(update['adaptation']['summary'])}[/bold]", highlight=False)
                if node == "validate" and update.get("program") and not update.get("plan_error"):
                    console.print(Panel(program_syntax(update["program"]), title="program"))

    def drive(payload: Any) -> None:
        """One request to its end, under its own LLM budget; an LLM that fails ends the request
        (recorded in the thread, so a restart does not resume it), never the chat."""
        try:
            with LLMBudget(budget_seconds):
                stream(payload)
                while True:
                    snapshot = graph.get_state(config())
                    if not any(task.interrupts for task in snapshot.tasks):
                        break
                    subgoals(snapshot.values)
                    answer = ask(f"[bold]{FEEDBACK_QUESTION}[/bold] ")
                    if answer is None:
                        return
                    stream(Command(resume=answer))
        except LLMError as exc:
            outcome = "llm_budget" if "budget" in type(exc).__name__.lower() else "llm_unavailable"
            graph.update_state(config(), {"outcome": outcome, "execution": {"status": outcome, "error": str(exc)},
                                          "log": [f"stopped: {type(exc).__name__}: {exc}"]}, as_node="finish")
            console.print(f"[red]{escape(type(exc).__name__)}:[/red] {escape(str(exc))}", highlight=False)
        values = graph.get_state(config()).values
        if len((values.get("execution") or {}).get("trace") or []) != shown["subgoals"]:
            subgoals(values)  # the whole episode's subgoals, when the last table did not show them all
        console.print(_outcome(values, env))

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
    if snapshot.next:
        console.print("[yellow]resuming the request that was interrupted[/yellow]")
        pending = any(task.interrupts for task in snapshot.tasks)
        if pending:
            subgoals(snapshot.values)
            answer = ask(f"[bold]{FEEDBACK_QUESTION}[/bold] ")
            if answer is not None:
                drive(Command(resume=answer))
        else:
            drive(None)
    console.print(Panel(f"household of {user} (session {session['thread']}). {HELP}", title="helper chat"))
    try:
        while True:
            text = ask(f"[cyan]{user}>[/cyan] ")
            if text is None or text.strip() in ("/quit", "/exit"):
                break
            text = text.strip()
            if not text:
                continue
            if text == "/state":
                _print_state(env, helper_config, budget_seconds)
                continue
            if text == "/map":
                console.print(f"map: {env.render(home / f'map-{uuid.uuid4().hex[:6]}.png')}")
                continue
            if text == "/routines":
                _print_routines(memories.routines, user)
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
            shown["subgoals"] = -1
            drive({"request": text, "user": user})
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
    for line in household_lines(env.objects_metadata(), limit=40):
        console.print(f"  {escape(line)}", highlight=False)


def _print_routines(routines: Any, user: str) -> None:
    found = routines.routines(user=user)
    if not found:
        console.print("no routines yet; teach one with 'Perform the <name>: <what to do>'")
    for r in found:
        console.print(Panel(Syntax(r.program, "python", theme="ansi_dark"), title=f"{r.name} (v{getattr(r, 'version', '?')})"))
