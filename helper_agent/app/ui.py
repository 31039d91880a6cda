"""The page: chat, the home, routines and the trace, as Gradio blocks.

Each browser tab holds its own `Session` (a `gr.State`): its user, thread and household, so two
tabs never mix users. The user and session id are also kept in the browser (`gr.BrowserState`),
so a reloaded page reopens the session from its checkpoints (and, while the app runs, the trace of
its turns). Requests run one at a time (`AgentTurns`: the in-process model answers one prompt at a
time); a request that waits says so in the status line ("waiting for another request to finish")
instead of Gradio's queue counter and estimate, which said "1/1 | 2.2/16.2s" for a wait of 150 s.
The routines and trace panels do not wait on requests, so a long episode in one tab does not
freeze another tab's routine list. Within a tab, a request sent while one runs is refused in words
and its text stays in the box (the page once erased what was typed at every step of the running
request, and dropped a second send without a word); "send" is off until the running one ends.

Whose data a tab sees: only its opened session's user's. Every handler reads the user from the tab's
`gr.State` (kept on the server, empty for a script that never opened a session), never from the user
box a request carries, and no handler is a named API endpoint. On loopback without logins a user name
is not a secret: a local process that opens Mary's session, as the page does, acts as Mary. With
logins (`helper app --auth`, required off loopback) a tab opens only its login's user. Files are
served only from `<home>/app-files` (pictures, exports); the memory and checkpoints are blocked
(`app/launch.py` serves the page).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr
from langchain_core.language_models import BaseChatModel

from helper_agent.app.session import RESUME, SUBGOAL_COLUMNS, Progress, Session, explain_error
from helper_agent.app.trace import COLUMNS as TRACE_COLUMNS
from helper_agent.app.words import local_time, routine_source
from helper_agent.chat_runtime import (
    ChatRuntime,
    RequestTooLong,
    UnknownUser,
    check_request,
    check_user,
    is_users_thread,
)
from helper_agent.graphs.registry import method_names
from helper_agent.memory.errors import MemoryStoreError
from helper_agent.teach.errors import TeachFormatError
from helper_agent.teach.instances import load_instance
from helper_agent.tracing import tracing_enabled
from helper_agent.world.rooms import ROOM_TYPES

PRIVATE: dict[str, Any] = {"api_visibility": "private"}
"""Every event of the page: no named API endpoint (`/list_routines`, `/delete_routine`, ...) that a
script could call without the page; the handlers also refuse a caller without an opened session."""
ROUTINE_COLUMNS = ["name", "version", "versions", "source", "updated", "request"]
TITLE = "helper-agent: a household assistant"
# The "not yet: …" button fills the request box; this puts the cursor at its end, every time (an
# `autofocus` update only works when the box is first drawn, so later clicks left the focus where it was).
FOCUS_REQUEST = ("() => { const box = document.querySelector('#request textarea'); if (box) { box.focus(); "
                 "box.setSelectionRange(box.value.length, box.value.length); } }")
NOT_YET = "not yet:"
BUSY = ("⚠️ a request is running: what you typed stays in the box; send it when this one has finished "
        "(the send button comes back)")
SEND_NOW = "The request has finished: what you typed while it ran is still in the box; press send to ask it."
# The conversation's corner toolbar (clear, copy all) lay over the first bubble when scrolled.
CSS = "#chatbot .top-panel { display: none !important; }"
INTRO = ("Pick a user and open a session; then ask for something in your own words (\"make me a coffee\"). "
         "Teach a routine with *Perform the NAME: what to do* (answer **done** when it is) and recall it with "
         "*Do the NAME*.")


class AgentTurns:
    """One request at a time across the app's tabs, and how long the running one has taken."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since = 0.0

    def acquire(self) -> str | None:
        """Take the turn if it is free (None); else what a waiting tab shows, then wait for it."""
        if self.lock.acquire(blocking=False):
            self.since = time.monotonic()
            return None
        return (f"waiting for another request to finish (it has run {time.monotonic() - self.since:.0f} s; "
                "a request takes up to a few minutes)...")

    def wait(self) -> None:
        self.lock.acquire()
        self.since = time.monotonic()

    def release(self) -> None:
        self.lock.release()


class NoSession(ValueError):
    """A handler that reads or changes a user's data was called without the tab's opened session."""

    def __init__(self) -> None:
        super().__init__("open a session first: type a user name and press open")


def files_folder(runtime: ChatRuntime) -> Path:
    """The only folder the page serves files from: the home pictures and the exports. Never the home
    itself, which holds every user's memory and every conversation's checkpoints."""
    return runtime.home / "app-files"


def build(runtime: ChatRuntime, chat_model: Callable[[], BaseChatModel], llm: str = "local",
          logins: bool = False, files: Path | None = None) -> gr.Blocks:
    """The app's blocks over one chat runtime; `chat_model()` gives the model (built on first use),
    `llm` is its spec (what the other methods' run labels say). With `logins`, a tab opens only the
    sessions of the user it logged in as. `files`: where its pictures and exports go (default
    `files_folder(runtime)`; `launch` gives each run a folder of its own there, removed at stop).

    Every handler that reads or changes a user's data acts only for the tab's opened session (its
    `gr.State`, which lives on the server and is empty for a caller that never opened one), never for
    a user name the request carries; and none of them is a named API endpoint."""

    turns = AgentTurns()
    files = files or files_folder(runtime)
    # Each thread's turns (their traces), kept while the app runs: a reloaded page shows them again.
    traces: dict[str, list[Any]] = {}

    def open_session(user: str, thread: str | None, scene: int = 0, room: str = "Kitchen") -> Session:
        session = Session.open(runtime, chat_model(), user, thread or None, scene=int(scene), room=room,
                               files=files / uuid.uuid4().hex[:8])
        session.turns = traces.setdefault(session.thread, [])
        return session

    def login_user(user: str, request: gr.Request | None) -> str:
        """The user a tab may open: with logins, only the one it logged in as."""
        user = check_user(user)
        login = getattr(request, "username", None) if logins else None
        if logins and user != login:
            raise UnknownUser(f"you are logged in as {login!r}: you can open only {login!r}'s sessions")
        return user

    def session_choices(user: str) -> list[str]:
        return runtime.threads(user) if user else []

    def view(session: Session, progress: Progress | None = None) -> tuple[Any, ...]:
        """chatbot, subgoals, home, log, status, feedback box, question, trace turns, the last turn's
        spans, the answers (done and not yet for the feedback question, yes and no for "Store it?")
        and send (off while the turn runs)."""
        if progress is None:
            question = session.question()
            progress = Progress(session.messages, session.subgoals, session.picture, session.log, "", question, True)
        asking = bool(progress.question) and progress.done
        yes_no = asking and session.confirming()
        turns = [f"{n}. {turn.label}" for n, turn in enumerate(session.turns, 1)]
        return (progress.messages, progress.subgoals or None, str(progress.picture) if progress.picture else None,
                "\n".join(progress.log), progress.status,
                gr.update(visible=asking), f"**{progress.question}**" if asking else "",
                gr.update(choices=turns, value=turns[-1] if turns else None),
                (session.turns[-1].trace.rows() or None) if session.turns else None,
                *[gr.update(visible=asking and not yes_no)] * 2, *[gr.update(visible=yes_no)] * 2,
                gr.update(interactive=progress.done))

    with gr.Blocks(title=TITLE, delete_cache=(3600, 3600)) as demo:
        session_state = gr.State(None)
        saved = gr.BrowserState({"user": "", "thread": ""}, storage_key="helper-app-session")
        gr.Markdown(f"## {TITLE}\n{INTRO}")
        with gr.Row():
            user_box = gr.Textbox(label="user", placeholder="e.g. mary", elem_id="user", scale=2)
            sessions = gr.Dropdown(label="session", choices=[], allow_custom_value=True, elem_id="sessions", scale=3)
            open_button = gr.Button("open", elem_id="open", scale=1)
            new_button = gr.Button("new session", elem_id="new-session", scale=1)
        error = gr.Markdown("", elem_id="error")
        with gr.Tabs():
            with gr.Tab("Chat", id="chat"):
                with gr.Row():
                    with gr.Column(scale=3):
                        # No toolbar over the conversation: its icons covered the first bubble when scrolled
                        # (each message keeps its own copy button).
                        chatbot = gr.Chatbot(label="conversation", show_label=False, elem_id="chatbot", height=460,
                                             buttons=["copy"])
                        status = gr.Markdown("", elem_id="status")
                        with gr.Row():
                            method = gr.Dropdown(method_names(), value="helper", label="method", elem_id="method",
                                                 scale=1, info="helper: the chat; others: one episode")
                            request = gr.Textbox(label="request", placeholder="make me a coffee", elem_id="request",
                                                 scale=5, lines=1)
                            send = gr.Button("send", variant="primary", elem_id="send", scale=1)
                        with gr.Group(visible=False, elem_id="feedback") as feedback_box:
                            question = gr.Markdown("", elem_id="question")
                            with gr.Row():
                                done_button = gr.Button("done", elem_id="answer-done")
                                not_yet = gr.Button("not yet: …", elem_id="answer-not-yet")
                                # a yes/no question ("... Store it?") gets yes and no
                                yes_button = gr.Button("yes", elem_id="answer-yes", visible=False)
                                no_button = gr.Button("no", elem_id="answer-no", visible=False)
                        subgoals = gr.Dataframe(headers=SUBGOAL_COLUMNS, label="subgoals", elem_id="subgoals",
                                                interactive=False, wrap=True)
                    with gr.Column(scale=2):
                        home = gr.Image(label="the home (magenta: what the last step changed)", type="filepath",
                                        elem_id="home", interactive=False)
                        with gr.Row():
                            room = gr.Dropdown(list(ROOM_TYPES), value="Kitchen", label="room", elem_id="room")
                            seed = gr.Number(0, label="seed", precision=0, elem_id="seed")
                            new_home = gr.Button("new home", elem_id="new-home")
                        instance = gr.File(label="load a TEACh instance (its dialogue becomes the request)",
                                           file_types=[".json"], elem_id="instance")
                with gr.Accordion("node log", open=False):
                    log = gr.Textbox(lines=12, show_label=False, elem_id="log")
            with gr.Tab("Routines", id="routines") as routines_tab:
                routines_note = gr.Markdown("", elem_id="routines-note")
                refresh = gr.Button("refresh", elem_id="routines-refresh")
                routine_table = gr.Dataframe(headers=ROUTINE_COLUMNS, label="routines", elem_id="routines",
                                             interactive=False, wrap=True)
                with gr.Row():
                    routine_name = gr.Dropdown(label="routine", choices=[], elem_id="routine-name")
                    routine_version = gr.Dropdown(label="version", choices=[], elem_id="routine-version")
                    delete = gr.Button("delete", variant="stop", elem_id="routine-delete")
                routine_program = gr.Code(label="program", language="python", elem_id="routine-program", lines=6,
                                          max_lines=30, interactive=False)
                with gr.Row():
                    export = gr.Button("export", elem_id="routines-export")
                    exported = gr.File(label="exported routines", elem_id="routines-exported")
                    upload = gr.File(label="import a routines file (JSON Lines)", elem_id="routines-import")
            with gr.Tab("Trace", id="trace"):
                gr.Markdown(_tracing_note(), elem_id="tracing-note")
                turn = gr.Dropdown(label="turn", choices=[], elem_id="turn")
                trace_table = gr.Dataframe(headers=TRACE_COLUMNS, label="spans", elem_id="trace", interactive=False,
                                           wrap=True)

        chat_outputs = [chatbot, subgoals, home, log, status, feedback_box, question, turn, trace_table,
                        done_button, not_yet, yes_button, no_button, send]

        # ------------------------------------------------------------------ sessions
        def on_open(user: str, thread: str | None, scene: int, room_type: str,
                    request: gr.Request | None = None) -> tuple[Any, ...]:
            try:
                user = login_user(user, request)
                if thread and not is_users_thread(thread, user):
                    thread = None  # another user's session is never opened under this name
                session = open_session(user, thread, scene, room_type)
            except UnknownUser as exc:
                return (None, f"⚠️ {exc}", gr.update(), {"user": "", "thread": ""},
                        *[gr.update()] * (len(chat_outputs) + 1))
            except Exception as exc:  # noqa: BLE001 - a store or model that cannot be used: say so in the page
                return (None, f"⚠️ {explain_error(exc)}", gr.update(), {"user": "", "thread": ""},
                        *[gr.update()] * (len(chat_outputs) + 1))
            choices = session_choices(user) or [session.thread]
            if session.thread not in choices:
                choices = [session.thread, *choices]
            return (session, "", gr.update(choices=choices, value=session.thread),
                    {"user": user, "thread": session.thread}, *view(session),
                    gr.update(value=session.env.state.room_type))  # the room the session's household is

        open_outputs = [session_state, error, sessions, saved, *chat_outputs, room]
        open_button.click(on_open, [user_box, sessions, seed, room], open_outputs, **PRIVATE)
        user_box.submit(on_open, [user_box, sessions, seed, room], open_outputs, **PRIVATE)

        def on_new(session: Session | None, user: str, scene: int, room_type: str,
                   request: gr.Request | None = None) -> tuple[Any, ...]:
            if session is None:
                return on_open(user, None, scene, room_type, request)
            return on_open(session.user, session.new_thread(), scene, room_type, request)

        new_button.click(on_new, [session_state, user_box, seed, room], open_outputs, **PRIVATE)

        def on_load(stored: dict[str, str] | None, request: gr.Request | None = None) -> tuple[Any, ...]:
            stored = stored or {}
            if not stored.get("user"):
                # Nothing to reopen: change nothing. A None here, landing late on a busy server, once
                # replaced the session the person had opened meanwhile ("open a session first").
                return tuple(gr.skip() for _ in range(len(open_outputs) + 1))
            return (*on_open(stored["user"], stored.get("thread"), 0, "Kitchen", request), stored["user"])

        demo.load(on_load, [saved], [*open_outputs, user_box], **PRIVATE)

        # ------------------------------------------------------------------ chat
        def run(session: Session | None, text: str, agent: str = "helper", typed: bool = True,
                from_box: bool = True) -> Iterator[tuple[Any, ...]]:
            """A typed request or answer (`typed`: bounded like `helper chat`'s), or a loaded dialogue.
            `from_box`: the text is the request box's (send, Enter), not a button's or a file's.

            One at a time per tab: a send while this tab's request runs (or waits for another tab's)
            is refused in words and leaves the box alone. A turn clears the box once, when it starts
            and only if it took the box's text, and never again: what the person types meanwhile stays."""
            unchanged = [gr.update()] * len(chat_outputs)
            if session is None:
                yield ("⚠️ open a session first: type a user name and press open", text, *unchanged)
                return
            if not session.busy.acquire(blocking=False):
                session.refused = True
                yield (BUSY, gr.update(), *unchanged)
                return
            held = {"busy": True, "turn": False}

            def release() -> None:
                """Free the tab and the turn before the last update goes out: a send right after it is
                not refused."""
                if held["turn"]:
                    held["turn"] = False
                    turns.release()
                if held["busy"]:
                    held["busy"] = False
                    session.busy.release()

            try:
                yield from turn_of(session, text, agent, typed, from_box, held, release)
            finally:
                release()

        def turn_of(session: Session, text: str, agent: str, typed: bool, from_box: bool, held: dict[str, bool],
                    release: Callable[[], None]) -> Iterator[tuple[Any, ...]]:
            unchanged = [gr.update()] * len(chat_outputs)
            text = (text or "").strip()
            kept = text if from_box else gr.update()  # a refused text stays in the box; a button's never goes there
            asking = session.question()
            if not text:
                yield ("⚠️ the request is empty: type what you would like done" if not asking else
                       "⚠️ the answer is empty: press done, or write what is missing", "" if from_box else kept,
                       *unchanged)
                return
            if asking and text.rstrip(" :.…").lower() == NOT_YET.rstrip(":"):
                # A bare "not yet:" was replanned as the correction "# not yet:".
                yield ("⚠️ say what is missing after “not yet:” (e.g. not yet: the mug is still dirty), or press done",
                       kept, *unchanged)
                return
            try:
                if typed:
                    check_request(text)
            except RequestTooLong as exc:
                yield (f"⚠️ {exc}", kept, *unchanged)
                return
            session.refused = False
            waiting = turns.acquire()
            cleared = False  # the error line (and the box, for its own text) are cleared once, when the turn starts

            def box() -> Any:
                return "" if from_box and not cleared else gr.update()

            if waiting is not None:
                yield ("", box(), *[gr.update()] * 4, waiting, *[gr.update()] * (len(chat_outputs) - 6),
                       gr.update(interactive=False))
                cleared = True
                turns.wait()
            held["turn"] = True
            try:
                if session.question():  # asked again: the wait may have changed it
                    turn_progress = session.answer(text)
                elif text == RESUME:
                    turn_progress = session.resume()
                elif agent and agent != "helper":
                    turn_progress = session.run_method(agent, text, llm)
                else:
                    turn_progress = session.ask(text)
                for progress in turn_progress:
                    said: Any = gr.update() if cleared else ""
                    if progress.done:
                        release()
                        said = SEND_NOW if session.refused else said
                        session.refused = False
                    yield (said, box(), *view(session, progress))
                    cleared = True
            except Exception as exc:  # noqa: BLE001 - a model that cannot be built: the page says which
                release()
                yield (f"⚠️ {explain_error(exc)}", box(), *view(session))

        run_outputs = [error, request, *chat_outputs]
        # "multiple": a second send while one runs reaches `run`, which says why it waits; Gradio's
        # default ("once") dropped it in the browser without a word.
        send.click(run, [session_state, request, method], run_outputs, concurrency_limit=None, show_progress="hidden",
                   trigger_mode="multiple", **PRIVATE)
        request.submit(run, [session_state, request, method], run_outputs, concurrency_limit=None,
                       show_progress="hidden", trigger_mode="multiple", **PRIVATE)

        def answer_done(session: Session | None) -> Iterator[tuple[Any, ...]]:
            # "done" answers the feedback question; the page shows yes and no at "... Store it?", where
            # a "done" (a script's, a page drawn before the question changed) still means yes
            yield from run(session, "yes" if session is not None and session.confirming() else "done", from_box=False)

        def answer_yes(session: Session | None) -> Iterator[tuple[Any, ...]]:
            yield from run(session, "yes", from_box=False)

        def answer_no(session: Session | None) -> Iterator[tuple[Any, ...]]:
            yield from run(session, "no", from_box=False)

        for button, answer in ((done_button, answer_done), (yes_button, answer_yes), (no_button, answer_no)):
            button.click(answer, [session_state], run_outputs, concurrency_limit=None, show_progress="hidden",
                         **PRIVATE)
        not_yet.click(lambda: f"{NOT_YET} ", None, [request], **PRIVATE).then(None, None, None, js=FOCUS_REQUEST, **PRIVATE)

        def on_new_home(session: Session | None, scene: int, room_type: str) -> tuple[Any, ...]:
            if session is None:
                return ("⚠️ open a session first", gr.update())
            if turns.acquire() is not None:
                return ("⚠️ a request is running: a new home once it has finished", gr.update())
            try:
                session.new_home(int(scene or 0), room_type)
            finally:
                turns.release()
            return ("", str(session.picture))

        new_home.click(on_new_home, [session_state, seed, room], [error, home], **PRIVATE)

        def on_instance(session: Session | None, upload_path: str | None) -> Iterator[tuple[Any, ...]]:
            if session is None or not upload_path:
                yield ("⚠️ open a session first" if session is None else "", gr.update(),
                       *[gr.update()] * len(chat_outputs))
                return
            try:
                loaded = load_instance(upload_path)
            except (TeachFormatError, ValueError, OSError) as exc:
                yield (f"⚠️ {Path(upload_path).name} is not a TEACh instance: {exc}", gr.update(),
                       *[gr.update()] * len(chat_outputs))
                return
            loaded.start(session.env)
            yield from run(session, loaded.dialogue, typed=False, from_box=False)

        instance.upload(on_instance, [session_state, instance], run_outputs, concurrency_limit=None, show_progress="hidden",
                        **PRIVATE)

        # ------------------------------------------------------------------ routines
        def user_of(session: Session | None) -> str:
            """The tab's opened session's user; never a name the caller sends."""
            if session is None:
                raise NoSession()
            return session.user

        def list_routines(session: Session | None, note: str = "") -> tuple[Any, ...]:
            try:
                who = user_of(session)
                memory = runtime.memories.routines
                versions = memory.list(user=who)
                latest = memory.routines(user=who)
            except (NoSession, MemoryStoreError) as exc:
                return (f"⚠️ {exc}", None, gr.update(choices=[], value=None))
            counts: dict[str, int] = {}
            for r in versions:
                counts[r.key] = counts.get(r.key, 0) + 1
            rows = [[r.name, r.version, counts[r.key], routine_source(r.source), local_time(r.created_at), r.request]
                    for r in latest]
            names = [r.name for r in latest]
            text = note or (f"{len(latest)} routine(s) of {who}" if latest else
                            f"no routines of {who} yet; teach one with *Perform the NAME: what to do*")
            return (text, rows or None, gr.update(choices=names, value=names[0] if names else None))

        routine_outputs = [routines_note, routine_table, routine_name]
        refresh.click(list_routines, [session_state], routine_outputs, **PRIVATE)
        routines_tab.select(list_routines, [session_state], routine_outputs, **PRIVATE)
        session_state.change(list_routines, [session_state], routine_outputs, **PRIVATE)

        def show_routine(session: Session | None, name: str | None, version: str | None = None) -> tuple[Any, ...]:
            if not name:
                return (gr.update(choices=[], value=None), "")
            try:
                versions = runtime.memories.routines.versions(name, user=user_of(session))
            except (NoSession, MemoryStoreError) as exc:
                return (gr.update(choices=[], value=None), f"# {exc}")
            if not versions:
                return (gr.update(choices=[], value=None), "")
            labels = [f"v{r.version} ({routine_source(r.source)}, {local_time(r.created_at)})" for r in versions]
            chosen = labels.index(version) if version in labels else len(labels) - 1
            return (gr.update(choices=labels, value=labels[chosen]), versions[chosen].program)

        routine_name.change(show_routine, [session_state, routine_name], [routine_version, routine_program], **PRIVATE)
        routine_version.input(show_routine, [session_state, routine_name, routine_version],
                              [routine_version, routine_program], **PRIVATE)

        def delete_routine(session: Session | None, name: str | None) -> tuple[Any, ...]:
            if session is None:
                return list_routines(session)
            if not name:
                return list_routines(session, "⚠️ pick a routine to delete")
            removed = runtime.memories.routines.remove(name, user=session.user)
            return list_routines(session, f"deleted {removed} version(s) of {name!r} for {session.user}")

        delete.click(delete_routine, [session_state, routine_name], routine_outputs, **PRIVATE)

        def export_routines(session: Session | None) -> tuple[Any, ...]:
            try:
                who = user_of(session)
            except NoSession as exc:
                return (f"⚠️ {exc}", None)
            exports = files / "exports"
            exports.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(prefix="routines-", dir=exports)) / f"routines-{who}.jsonl"
            n = runtime.memories.routines.export_jsonl(path, user=who)
            return (f"exported {n} routine version(s) of {who}", str(path))

        export.click(export_routines, [session_state], [routines_note, exported], **PRIVATE)

        def import_routines(session: Session | None, path: str | None) -> tuple[Any, ...]:
            if not path:
                return list_routines(session)
            try:
                who = user_of(session)
                n = runtime.memories.routines.import_jsonl(path, user=who)
            except (NoSession, MemoryStoreError, ValueError) as exc:
                # The file's name, not Gradio's temporary path to it (a folder named by 64 hex digits).
                reason = str(exc).replace(str(path), Path(path).name)
                return list_routines(session, f"⚠️ import refused, nothing stored: {reason}")
            return list_routines(session, f"imported {n} routine version(s) for {who} from {Path(path).name}")

        upload.upload(import_routines, [session_state, upload], routine_outputs, **PRIVATE)

        # ------------------------------------------------------------------ trace
        def show_trace(session: Session | None, label: str | None) -> Any:
            if session is None or not label or not session.turns:
                return None
            number = int(label.partition(".")[0]) - 1
            return session.turns[number].trace.rows() or None if 0 <= number < len(session.turns) else None

        turn.input(show_trace, [session_state, turn], [trace_table], **PRIVATE)
    return demo


def _tracing_note() -> str:
    """Where the same records go when LangSmith tracing is on."""
    if tracing_enabled():
        project = os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT") or "default"
        return (f"LangSmith tracing is on: the same runs are in project **{project}** at "
                "[smith.langchain.com](https://smith.langchain.com). The table below needs no account.")
    return ("Each turn's span tree (graph nodes, LLM calls with tokens and seconds, the executor's subgoals, "
            "failures): the records a LangSmith tracer would send, kept in this app. Set "
            "`LANGSMITH_TRACING=true` to send them to LangSmith too.")
