"""`helper run` (one task from a dialogue) and `helper chat` (a household that remembers its user)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

console = Console()


def _context(llm: str, mode: str, task: Any = None, feedback: int = 1, tags: list[str] | None = None) -> Any:
    from helper_agent.graphs.helper import HelperConfig, HelperContext
    from helper_agent.llm import LLMUnavailable, make_chat_model

    try:
        chat = make_chat_model(llm)
    except LLMUnavailable as exc:
        console.print(f"[red]cannot load the chat model:[/red] {exc}")
        raise typer.Exit(2) from None
    return HelperContext(chat_model=chat, mode=mode, task=task, config=HelperConfig(feedback_rounds=feedback), tags=tags or [])


def _print_trace(state: dict[str, Any]) -> None:
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
    llm: str = typer.Option("local", help="Chat model spec (local, local:1.5b, openai:gpt-4o, or a base URL)."),
    out: Path = typer.Option(Path("out/run"), help="Folder for the top-down pictures."),
) -> None:
    """Plan and act on one request in the embedded world; print the program, subgoals and verdict."""
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.graphs.helper import build_graph
    from helper_agent.teach import check_task
    from helper_agent.world.generator import generate_scene
    from helper_agent.world.metadata import export_state

    task = None
    if instance is not None:
        world, request, task = _from_instance(instance)
    else:
        if not request.strip():
            raise typer.BadParameter("give a request, or --instance FILE")
        world = export_state(generate_scene(scene, room))
    context = _context(llm, "eval" if task is not None else "run", task, feedback=1 if task is not None else 0, tags=["run"])
    out.mkdir(parents=True, exist_ok=True)
    before = SymbolicEnv()
    before.reset(world)
    before.render(out / "before.png")
    console.print(Panel(request, title="request"))
    state = build_graph().invoke({"request": request, "world": world, "log": []},
                                 config={"run_name": "helper run", "tags": ["run"]}, context=context)
    console.print(Syntax(state.get("program", ""), "python", theme="ansi_dark", line_numbers=True))
    _print_trace(state)
    for line in state.get("log", []):
        console.print(f"[dim]{line}[/dim]")
    env = SymbolicEnv()
    env.reset(state["world"])
    picture = env.render(out / "after.png")
    if task is not None:
        progress = check_task(task, env.objects_metadata())
        verdict = "[green]task done[/green]" if progress.success else "[red]task not done[/red]"
        console.print(f"checker: {verdict}, goal conditions {progress.goal_conditions_satisfied}/{progress.goal_conditions_total}")
    usage = context.usage.summary()
    console.print(f"steps {state.get('steps', 0)}, failed actions {state.get('failures', 0)}, outcome {state.get('outcome')}")
    console.print(f"LLM: {usage['llm_calls']} calls, {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens, "
                  f"{usage['llm_seconds']} s ({usage['seconds_per_call']} s/call)")
    console.print(f"pictures: {out / 'before.png'}  {picture}")


def _from_instance(path: Path) -> tuple[dict[str, Any], str, Any]:
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.evals.benchmark import state_from_game
    from helper_agent.evals.dialogue import instruction_text
    from helper_agent.teach import default_registry
    from helper_agent.teach.errors import TeachFormatError
    from helper_agent.teach.evaluation import edh_check_task
    from helper_agent.teach.formats import read_edh_instance, read_game, read_tfd_instance
    from helper_agent.world.metadata import export_state

    edh = ".edh" in path.name
    try:
        inst = read_edh_instance(path) if edh else read_tfd_instance(path)
        game = read_game(path.parent.parent.parent / "games" / path.parent.name / f"{inst.game_id}.game.json")
    except (TeachFormatError, FileNotFoundError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    env = SymbolicEnv()
    env.reset(state_from_game(game))
    if edh:
        for action in inst.driver_action_history:
            try:
                env.step(action.action_name, action.oid)
            except ValueError:
                continue
    task = edh_check_task(inst) if edh else default_registry().task_from_game_task(game.task)
    return export_state(env.state), instruction_text(inst.dialog()), task


# ------------------------------------------------------------------------------------------ chat
HELP = "commands: /state  /map  /routines  /quit   (anything else is a request)"


def chat(
    user: str = typer.Option(..., help="Who is chatting: routines are stored per user."),
    scene: int = typer.Option(0, help="Seed of the household (first session only)."),
    room: str = typer.Option("Kitchen", help="Room of the household (first session only)."),
    llm: str = typer.Option("local", help="Chat model spec."),
    thread: str | None = typer.Option(None, help="Conversation id (default: the user's household)."),
    home: Path | None = typer.Option(None, help="Folder for checkpoints and memory (default: HELPER_HOME or .helper)."),
) -> None:
    """A chat with a persistent household: each request runs the HELPER graph; state survives restarts."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    from helper_agent.config import get_settings
    from helper_agent.graphs.helper import FEEDBACK_QUESTION, build_graph
    from helper_agent.world.generator import generate_scene
    from helper_agent.world.metadata import export_state

    settings = get_settings()
    home = home or settings.home
    home.mkdir(parents=True, exist_ok=True)
    context = _context(llm, "chat", tags=["chat", f"user:{user}"])
    _use_memory_home(context, home)
    config = {"configurable": {"thread_id": thread or f"household:{user}"}, "run_name": "helper chat", "tags": ["chat"]}
    lines = iter(sys.stdin.readline, "") if not sys.stdin.isatty() else None

    def ask(prompt: str) -> str | None:
        if lines is None:
            try:
                return console.input(prompt)
            except EOFError:
                return None
        console.print(prompt, end="")
        line = next(lines, None)
        if line is None:
            return None
        console.print(line.rstrip("\n"))
        return line.rstrip("\n")

    import sqlite3

    connection = sqlite3.connect(str(home / "checkpoints.sqlite"), check_same_thread=False)
    graph = build_graph(SqliteSaver(connection))
    def stream(payload: Any) -> None:
        """Run the graph, printing each node's log lines as it finishes (so progress shows)."""
        for chunk in graph.stream(payload, config, context=context, stream_mode="updates", durability="sync"):
            for node, update in chunk.items():
                if node == "__interrupt__" or not isinstance(update, dict):
                    continue
                for line in update.get("log", []) or []:
                    console.print(f"[dim]{line}[/dim]")

    def drive(payload: Any) -> None:
        stream(payload)
        while True:
            snapshot = graph.get_state(config)
            if not any(task.interrupts for task in snapshot.tasks):
                break
            _print_trace(snapshot.values)
            answer = ask(f"[bold]{FEEDBACK_QUESTION}[/bold] ")
            if answer is None:
                return
            stream(Command(resume=answer))
        console.print(f"[bold]{graph.get_state(config).values.get('outcome', '')}[/bold]")

    snapshot = graph.get_state(config)
    if snapshot.next:
        console.print("[yellow]resuming the request that was interrupted[/yellow]")
        pending = any(task.interrupts for task in snapshot.tasks)
        if pending:
            answer = ask(f"[bold]{FEEDBACK_QUESTION}[/bold] ")
            if answer is not None:
                drive(Command(resume=answer))
        else:
            drive(None)
    console.print(Panel(f"household of {user}. {HELP}", title="helper chat"))
    while True:
        text = ask(f"[cyan]{user}>[/cyan] ")
        if text is None or text.strip() in ("/quit", "/exit"):
            break
        text = text.strip()
        if not text:
            continue
        values = graph.get_state(config).values
        if text == "/state":
            _print_state(values)
            continue
        if text == "/map":
            _print_map(values, home)
            continue
        if text == "/routines":
            _print_routines(context, user)
            continue
        if text.startswith("/"):
            console.print(HELP)
            continue
        payload: dict[str, Any] = {"request": text, "user": user, "log": []}
        if not values.get("world"):
            payload["world"] = export_state(generate_scene(scene, room))
        drive(payload)
    connection.close()


def _use_memory_home(context: Any, home: Path) -> None:
    from helper_agent.memory.corrections import CorrectionMemory
    from helper_agent.memory.examples import ExampleMemory
    from helper_agent.memory.routines import RoutineMemory

    path = home / "memory"
    context.examples = ExampleMemory(path=path)
    context.corrections = CorrectionMemory(path=path)
    context.routines = RoutineMemory(path=path)


def _print_state(values: dict[str, Any]) -> None:
    from helper_agent.envs.symbolic import SymbolicEnv

    if not values.get("world"):
        console.print("no household yet: make a request first")
        return
    env = SymbolicEnv()
    env.reset(values["world"])
    state = env.state
    held = state.objects[state.held_id].object_type if state.held_id else "nothing"
    console.print(f"{state.scene_name}: agent at cell {state.agent.cell}, facing {state.agent.rotation}, holding {held}; "
                  f"{values.get('steps', 0)} steps so far")
    changed = [o for o in state.objects.values() if o.is_toggled or o.is_open or o.simbot_is_cooked or o.is_filled_with_liquid]
    for obj in changed[:20]:
        flags = [n for n, v in (("on", obj.is_toggled), ("open", obj.is_open), ("cooked", obj.simbot_is_cooked),
                                (f"filled with {obj.fill_liquid}", obj.is_filled_with_liquid)) if v]
        console.print(f"  {obj.object_type}: {', '.join(flags)}")


def _print_map(values: dict[str, Any], home: Path) -> None:
    from helper_agent.envs.symbolic import SymbolicEnv

    if not values.get("world"):
        console.print("no household yet")
        return
    env = SymbolicEnv()
    env.reset(values["world"])
    console.print(f"map: {env.render(home / f'map-{uuid.uuid4().hex[:6]}.png')}")


def _print_routines(context: Any, user: str) -> None:
    routines = context.routines.routines(user=user)
    if not routines:
        console.print("no routines yet; teach one with 'Perform the <name>: <what to do>'")
    for r in routines:
        console.print(Panel(Syntax(r.program, "python", theme="ansi_dark"), title=f"{r.name} (v{getattr(r, 'version', '?')})"))
