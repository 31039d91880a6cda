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


def _chat_model(llm: str) -> Any:
    from helper_agent.llm import LLMUnavailable, make_chat_model

    try:
        return make_chat_model(llm)
    except LLMUnavailable as exc:
        console.print(f"[red]cannot load the chat model:[/red] {exc}")
        raise typer.Exit(2) from None


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
    llm: str = typer.Option("local", help="Chat model spec (local, local:1.5b, openai:gpt-4o, or a base URL)."),
    out: Path = typer.Option(Path("out/run"), help="Folder for the top-down pictures."),
) -> None:
    """Plan and act on one request in the embedded world; print the program, subgoals and verdict."""
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.evals.agents import EpisodeSetup, HelperAgent, Memories
    from helper_agent.evals.harness import run_instance
    from helper_agent.graphs.helper import HelperConfig
    from helper_agent.teach.errors import TeachFormatError
    from helper_agent.teach.instances import load_instance

    env = SymbolicEnv()
    loaded = None
    if instance is not None:
        try:
            loaded = load_instance(instance)
        except (TeachFormatError, FileNotFoundError) as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
        loaded.start(env)
        request = loaded.dialogue
    elif not request.strip():
        raise typer.BadParameter("give a request, or --instance FILE")
    else:
        env.reset(scene, room_type=room)
    # Feedback comes from the checker when the task is known; a plain request has nobody to ask.
    agent = HelperAgent(_chat_model(llm), Memories.at(), HelperConfig(feedback_rounds=1 if loaded else 0))
    out.mkdir(parents=True, exist_ok=True)
    env.render(out / "before.png")
    console.print(Panel(request, title="request"))
    if loaded is not None:
        record, result = run_instance(loaded, agent, env, tags=["run"])
    else:
        record, result = None, agent.run(EpisodeSetup(env=env, request=request, tags=["run"]))
    console.print(Syntax(result.program, "python", theme="ansi_dark", line_numbers=True))
    _print_trace({"execution": {"trace": result.trace}})
    for line in result.log:
        console.print(f"[dim]{line}[/dim]")
    picture = env.render(out / "after.png")
    if record is not None:
        verdict = "[green]task done[/green]" if record["success"] else "[red]task not done[/red]"
        console.print(f"checker: {verdict}, goal conditions {record['completed_goal_conditions']}/{record['total_goal_conditions']}")
    usage = result.usage
    console.print(f"steps {env.steps}, failed actions {env.failures}, outcome {result.outcome}")
    console.print(f"LLM: {usage.get('llm_calls', 0)} calls, {usage.get('prompt_tokens', 0)} prompt + "
                  f"{usage.get('completion_tokens', 0)} completion tokens, {usage.get('llm_seconds', 0)} s")
    console.print(f"pictures: {out / 'before.png'}  {picture}")


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
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    from helper_agent.config import get_settings
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.evals.agents import Memories
    from helper_agent.graphs.helper import FEEDBACK_QUESTION, HelperConfig, HelperContext, build_graph

    settings = get_settings()
    own_home = home is not None
    home = home or settings.home
    home.mkdir(parents=True, exist_ok=True)
    # With a Chroma server configured the memories live on it, in the shared collections that
    # `helper routines` reads (what a person teaches reaches the shared store); else in the memory
    # folder of --home, or the settings' memory folder.
    memories = Memories.at(str(home / "memory") if own_home and not settings.chroma_host else None)
    env = SymbolicEnv()
    # A person answers the feedback question (no feedback source); the household goes into every
    # checkpoint, so a chat killed mid-task resumes in the household it left.
    context = HelperContext(env=env, chat_model=_chat_model(llm), examples=memories.examples,
                            corrections=memories.corrections, routines=memories.routines,
                            config=HelperConfig(feedback_rounds=1), keep_snapshots=True, tags=["chat", f"user:{user}"])
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
    if snapshot.values.get("world"):
        env.restore(snapshot.values["world"])
    else:
        env.reset(scene, room_type=room)
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
        if text == "/state":
            _print_state(env)
            continue
        if text == "/map":
            console.print(f"map: {env.render(home / f'map-{uuid.uuid4().hex[:6]}.png')}")
            continue
        if text == "/routines":
            _print_routines(memories.routines, user)
            continue
        if text.startswith("/"):
            console.print(HELP)
            continue
        drive({"request": text, "user": user})
    connection.close()


def _print_state(env: Any) -> None:
    state = env.state
    held = state.objects[state.held_id].object_type if state.held_id else "nothing"
    console.print(f"{state.scene_name}: agent at cell {state.agent.cell}, facing {state.agent.rotation}, holding {held}; "
                  f"{env.steps} steps so far")
    changed = [o for o in state.objects.values() if o.is_toggled or o.is_open or o.simbot_is_cooked or o.is_filled_with_liquid]
    for obj in changed[:20]:
        flags = [n for n, v in (("on", obj.is_toggled), ("open", obj.is_open), ("cooked", obj.simbot_is_cooked),
                                (f"filled with {obj.fill_liquid}", obj.is_filled_with_liquid)) if v]
        console.print(f"  {obj.object_type}: {', '.join(flags)}")


def _print_routines(routines: Any, user: str) -> None:
    found = routines.routines(user=user)
    if not found:
        console.print("no routines yet; teach one with 'Perform the <name>: <what to do>'")
    for r in found:
        console.print(Panel(Syntax(r.program, "python", theme="ansi_dark"), title=f"{r.name} (v{getattr(r, 'version', '?')})"))
