"""Issue 12: every bad input gets a one-line answer, every input gets bounded work.

Each table below is the cases tried for one command. A case passes when the command exits non-zero
with one `error:` line that names the file and field (or the server and the setting), no traceback,
within a time bound. `classify` is also what the hardening report counts (one-line / traceback / slow).
"""

from __future__ import annotations

import copy
import json
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from helper_agent.cli import app
from helper_agent.commands.errors import GuardedGroup, describe, one_line

SECONDS = 30.0  # "bounded work": every case answers well within this


@dataclass
class Outcome:
    exit_code: int
    output: str
    exception: BaseException | None
    seconds: float

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.output.splitlines() if line.startswith("error:")]

    @property
    def kind(self) -> str:
        """one-line | traceback | slow | ok | other (what the report counts)."""
        if self.exception is not None and not isinstance(self.exception, SystemExit):
            return "traceback"
        if self.seconds > SECONDS:
            return "slow"
        if self.exit_code == 0:
            return "ok"
        return "one-line" if len(self.error_lines) == 1 else "other"


def invoke(args: list[str], env: dict[str, str] | None = None) -> Outcome:
    started = time.perf_counter()
    result = CliRunner().invoke(app, args, env={"HELPER_EMBEDDINGS": "hash:32", **(env or {})})
    return Outcome(result.exit_code, result.output, result.exception, time.perf_counter() - started)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Case:
    """One bad input: `make(folder)` writes it and returns the command's arguments."""

    name: str
    make: Callable[[Path], list[str]]
    fragments: tuple[str, ...]
    exit_code: int = 2
    env: dict[str, str] = field(default_factory=dict)


def check(outcome: Outcome, case: Case) -> None:
    assert outcome.kind == "one-line", (outcome.kind, outcome.output, outcome.exception)
    assert outcome.exit_code == case.exit_code, outcome.output
    line = outcome.error_lines[0]
    for fragment in case.fragments:
        assert fragment in line, (fragment, line)


# ---------------------------------------------------------------------------- helper run --instance
@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    result = CliRunner().invoke(
        app, ["bench", "generate", "--out", str(out), "--train", "0", "--valid-seen", "0", "--valid-unseen", "1"]
    )
    assert result.exit_code == 0, result.output
    return out


GAME = "games/valid_unseen/valid_unseen_0000.game.json"
TFD = "tfd_instances/valid_unseen/valid_unseen_0000.tfd.json"
INITIAL = "tasks[0].episodes[0].initial_state"


def _objects(game: dict) -> list[dict]:
    return game["tasks"][0]["episodes"][0]["initial_state"]["objects"]


def game_case(name: str, change: Callable[[dict], object] | None, fragments: tuple[str, ...], raw: bytes | None = None, directory: bool = False) -> Case:
    def make(folder: Path) -> list[str]:
        bench_dir = folder.parent / "bench_src"
        data = folder / "data"
        (data / GAME).parent.mkdir(parents=True)
        (data / TFD).parent.mkdir(parents=True)
        shutil.copy(bench_dir / TFD, data / TFD)
        if directory:
            (data / GAME).mkdir()
        elif raw is not None:
            (data / GAME).write_bytes(raw)
        elif change is not None:
            game = json.loads((bench_dir / GAME).read_text())
            change(game)
            (data / GAME).write_text(json.dumps(game))
        return ["run", "--llm", "nonsense:model", "--out", str(folder / "out"), "--instance", str(data / TFD)]

    return Case(name, make, (GAME.split("/")[-1], *fragments))


def _set(index: int, **fields: object) -> Callable[[dict], None]:
    return lambda game: _objects(game)[index].update(fields)


RUN_CASES = [
    game_case("binary game", None, ("not UTF-8 text", "binary"), raw=bytes(range(256)) * 8),
    game_case("game is a directory", None, ("is a directory",), directory=True),
    game_case("game not UTF-8", None, ("not UTF-8 text (byte 0xfc",), raw='{"world": "K\u00fcche"}'.encode("latin-1")),
    game_case("empty game", None, ("invalid JSON",), raw=b""),
    game_case("truncated game", None, ("invalid JSON",), raw=b'{"tasks": [{"task_id": 1, '),
    game_case("deeply nested", None, ("nested too deeply",), raw=b"[" * 100_000),
    game_case("missing game", None, ("no such file",)),
    game_case("duplicate objectId", lambda g: _objects(g)[1].update(objectId=_objects(g)[0]["objectId"]), (f"{INITIAL}.objects[1].objectId", "duplicate objectId")),
    game_case("unknown objectType", _set(3, objectType="Spaceship"), (f"{INITIAL}.objects[3].objectType", "unknown object type 'Spaceship'")),
    game_case("position as a string", _set(2, position="1, 2, 3"), (f"{INITIAL}.objects[2].position'", "valid dictionary", "'1, 2, 3'")),
    game_case("position NaN", _set(2, position={"x": float("nan"), "y": 0, "z": 0}), (f"{INITIAL}.objects[2].position.x", "finite")),
    game_case("position 100 km away", _set(2, position={"x": 1e5, "y": 0, "z": 0}), (f"{INITIAL}.objects[2].position.x", "1000")),
    game_case("flag as a string", _set(2, isOpen="no"), (f"{INITIAL}.objects[2].isOpen", "true or false")),
    game_case("objectId not a string", _set(0, objectId=7), (f"{INITIAL}.objects[0]", "objectId")),
    game_case("unknown parent", _set(5, simbotDirectParent="Nope|1|2|3"), (f"{INITIAL}.objects[5].simbotDirectParent", "unknown object")),
    game_case("20,000 objects", lambda g: _objects(g).extend({**_objects(g)[0], "objectId": f"Mug|{i}", "objectType": "Mug", "simbotDirectParent": None} for i in range(20_000)), (f"{INITIAL}.objects", "the limit is 2000", "HELPER_MAX_SCENE_OBJECTS")),
    game_case("grid of 10^12 cells", lambda g: g["helper_agent"]["grid"].update(width=10**6, depth=10**6), ("helper_agent.grid", "HELPER_MAX_GRID_CELLS")),
    game_case("blocked cell outside the grid", lambda g: g["helper_agent"]["grid"]["blocked"].append([999, 999]), ("helper_agent.grid.blocked", "outside")),
    game_case("agent position a string", lambda g: g["tasks"][0]["episodes"][0]["initial_state"]["agents"][1].update(position="here"), (f"{INITIAL}.agents[1].position", "valid dictionary")),
    game_case("objects not a list", lambda g: g["tasks"][0]["episodes"][0]["initial_state"].update(objects={"a": 1}), (f"{INITIAL}.objects", "valid list")),
    game_case("time_start infinite", lambda g: g["tasks"][0]["episodes"][0]["interactions"][0].update(time_start=float("inf")), ("time_start", "finite")),
]


def instance_case(name: str, write: Callable[[Path], object], fragments: tuple[str, ...], names_file: bool = True) -> Case:
    def make(folder: Path) -> list[str]:
        data = folder / "data"
        shutil.copytree(folder.parent / "bench_src", data)
        (data / TFD).unlink()
        write(data / TFD)
        return ["run", "--llm", "nonsense:model", "--out", str(folder / "out"), "--instance", str(data / TFD)]

    return Case(name, make, (TFD.split("/")[-1], *fragments) if names_file else fragments)


RUN_CASES += [
    instance_case("instance is binary", lambda p: p.write_bytes(bytes(range(128, 256))), ("not UTF-8 text",)),
    instance_case("instance is a directory", lambda p: p.mkdir(), ("is a directory",)),
    instance_case("instance misses dialog_history", lambda p: p.write_text('{"game_id": "valid_unseen_0000", "driver_actions_future": []}'), ("dialog_history", "field required")),
    instance_case("instance names no game", lambda p: p.write_text('{"game_id": "nope", "dialog_history": [], "driver_actions_future": []}'), ("games/valid_unseen/nope.game.json", "no such file"), names_file=False),
]


@pytest.fixture
def run_folder(tmp_path: Path, bench: Path) -> Path:
    shutil.copytree(bench, tmp_path / "bench_src")
    folder = tmp_path / "case"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_run_instance_with_a_bad_game(case: Case, run_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `helper run` prints this error with its own Rich console, which wraps at the terminal width;
    # a wide terminal shows the one line whole.
    from helper_agent.commands import agent

    monkeypatch.setattr(agent.console, "width", 2000)
    check(invoke(case.make(run_folder)), case)


# -------------------------------------------------------------------------- helper world scene --alfred
def _layout(folder: Path) -> None:
    xs, zs = np.meshgrid(np.arange(0, 1.5, 0.25), np.arange(0, 1.5, 0.25))
    np.save(folder / "FloorPlan7-layout.npy", np.stack([xs.ravel(), zs.ravel()], axis=1))
    (folder / "FloorPlan7-objects.json").write_text(json.dumps(["Fridge", "CounterTop", "Mug"]))
    (folder / "FloorPlan7-openable.json").write_text(json.dumps({"Fridge|-00.25|+00.00|+00.50": [0, 0.5, 90, 0]}))


def alfred_case(name: str, file: str, write: Callable[[Path], object], fragments: tuple[str, ...]) -> Case:
    def make(folder: Path) -> list[str]:
        _layout(folder)
        (folder / file).unlink()
        write(folder / file)
        return ["world", "scene", "--alfred", str(folder), "--floorplan", "7", "--out", str(folder / "out.json")]

    return Case(name, make, (file, *fragments))


LAYOUT = "FloorPlan7-layout.npy"
SCENE_CASES = [
    alfred_case("layout is a directory", LAYOUT, lambda p: p.mkdir(), ("is a directory",)),
    alfred_case("layout holds strings", LAYOUT, lambda p: np.save(p, np.array([["a", "b"], ["c", "d"]])), ("expected numbers", "<U1")),
    alfred_case("layout holds inf", LAYOUT, lambda p: np.save(p, np.array([[0.0, 0.0], [np.inf, 0.25]])), ("row 1", "x = inf", "not a finite number")),
    alfred_case("layout holds nan", LAYOUT, lambda p: np.save(p, np.array([[0.0, np.nan]])), ("row 0", "z = nan")),
    alfred_case("point 10^5 m away", LAYOUT, lambda p: np.save(p, np.array([[0.0, 0.0], [1e5, 0.0]])), ("row 1", "x = 100000", "farther than 1000 m")),
    alfred_case("layout spans 900 m", LAYOUT, lambda p: np.save(p, np.array([[0.0, 0.0], [900.0, 900.0]])), ("3603 x 3603 cells", "HELPER_MAX_GRID_CELLS")),
    alfred_case("layout wrong shape", LAYOUT, lambda p: np.save(p, np.zeros((4, 3))), ("expected an (N, 2) array", "(4, 3)")),
    alfred_case("layout empty file", LAYOUT, lambda p: p.write_bytes(b""), ("not a numeric .npy array",)),
    alfred_case("layout is text", LAYOUT, lambda p: p.write_text("0 0\n"), ("not a numeric .npy array",)),
    alfred_case("layout pickled objects", LAYOUT, lambda p: np.save(p, np.array([{}], dtype=object), allow_pickle=True), ("allow_pickle=False",)),
    alfred_case("layout missing", LAYOUT, lambda p: None, ("no such file",)),
    alfred_case("objects binary", "FloorPlan7-objects.json", lambda p: p.write_bytes(bytes(range(256))), ("not UTF-8 text",)),
    alfred_case("objects not a list", "FloorPlan7-objects.json", lambda p: p.write_text("{}"), ("expected a list of object type names",)),
    alfred_case("openable is a directory", "FloorPlan7-openable.json", lambda p: p.mkdir(), ("is a directory",)),
    alfred_case("openable bad id position", "FloorPlan7-openable.json", lambda p: p.write_text('{"Cabinet|+1.2.3|+0|+1": []}'), ("Cabinet|+1.2.3|+0|+1", "not x|y|z numbers")),
    Case("--alfred folder missing", lambda f: ["world", "scene", "--alfred", str(f / "absent"), "--out", str(f / "o.json")], ("absent", "no such directory")),
]


@pytest.mark.parametrize("case", SCENE_CASES, ids=[c.name for c in SCENE_CASES])
def test_world_scene_with_a_bad_alfred_layout(case: Case, tmp_path: Path) -> None:
    check(invoke(case.make(tmp_path)), case)


def test_world_scene_with_a_good_layout_still_works(tmp_path: Path) -> None:
    _layout(tmp_path)
    outcome = invoke(["world", "scene", "--alfred", str(tmp_path), "--floorplan", "7", "--out", str(tmp_path / "s.json")])
    assert outcome.kind == "ok", outcome.output
    assert json.loads((tmp_path / "s.json").read_text())["sceneName"] == "FloorPlan7"


# ------------------------------------------------------------------------------- helper world show
def state_case(name: str, content: bytes | str | None, fragments: tuple[str, ...], env: dict[str, str] | None = None, names_file: bool = True) -> Case:
    def make(folder: Path) -> list[str]:
        path = folder / "state.json"
        if content is None:
            path.mkdir()
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return ["world", "show", str(path), "--png", str(folder / "s.png")]

    return Case(name, make, ("state.json", *fragments) if names_file else fragments, env=env or {})


MUG = {"objectId": "a", "objectType": "Mug", "position": {"x": 0, "y": 0, "z": 0}}
SHOW_CASES = [
    state_case("binary", bytes(range(256)), ("not UTF-8",)),
    state_case("directory", None, ("is a directory",)),
    state_case("not JSON", "{objects", ("invalid JSON at line 1",)),
    state_case("duplicate objectId", json.dumps({"objects": [MUG, MUG]}), ("objects[1].objectId", "duplicate")),
    state_case("unknown objectType", json.dumps({"objects": [{**MUG, "objectType": "Mugg"}]}), ("objects[0].objectType", "did you mean 'Mug'")),
    state_case("position a string", json.dumps({"objects": [{**MUG, "position": "here"}]}), ("objects[0].position", "valid dictionary")),
    state_case("containment cycle", json.dumps({"objects": [{**MUG, "simbotDirectParent": "a"}]}), ("objects[0].simbotDirectParent", "cycle")),
    state_case("20,000 objects", json.dumps({"objects": [{**MUG, "objectId": f"m{i}"} for i in range(20_000)]}), ("'objects'", "20000 objects", "HELPER_MAX_SCENE_OBJECTS")),
    state_case("limit from the environment", json.dumps({"objects": [{**MUG, "objectId": f"m{i}"} for i in range(5)]}), ("5 objects; the limit is 3",), env={"HELPER_MAX_SCENE_OBJECTS": "3"}),
    state_case("file over the byte limit", json.dumps({"objects": [MUG]}), ("the limit is 10 bytes", "HELPER_MAX_INPUT_BYTES"), env={"HELPER_MAX_INPUT_BYTES": "10"}),
    state_case("grid of 10^12 cells", json.dumps({"objects": [MUG], "grid": {"width": 10**6, "depth": 10**6, "origin": {"x": 0, "z": 0}, "blocked": []}}), ("'grid'", "HELPER_MAX_GRID_CELLS")),
    state_case("bad setting value", json.dumps({"objects": [MUG]}), ("HELPER_MAX_SCENE_OBJECTS='many'", "valid integer"), env={"HELPER_MAX_SCENE_OBJECTS": "many"}, names_file=False),
]


@pytest.mark.parametrize("case", SHOW_CASES, ids=[c.name for c in SHOW_CASES])
def test_world_show_with_a_bad_state(case: Case, tmp_path: Path) -> None:
    check(invoke(case.make(tmp_path), env=case.env), case)


# --------------------------------------------------------------------- helper routines, server down
ROUTINE_COMMANDS = [
    ["routines", "list", "--user", "mary"],
    ["routines", "add", "the Mary cleaning", "-p", "# wash\ndo_nothing()\n", "--user", "mary"],
    ["routines", "show", "the Mary cleaning", "--user", "mary"],
    ["routines", "remove", "the Mary cleaning", "--user", "mary"],
    ["routines", "export", "{folder}/out.jsonl", "--user", "mary"],
    ["routines", "import", "{folder}/in.jsonl", "--user", "mary"],
]


@pytest.mark.parametrize("args", ROUTINE_COMMANDS, ids=[a[1] for a in ROUTINE_COMMANDS])
def test_routines_with_the_chroma_server_down(args: list[str], tmp_path: Path) -> None:
    port = closed_port()
    (tmp_path / "in.jsonl").write_text(json.dumps({"user": "mary", "name": "x", "program": "# x\ndo_nothing()\n"}) + "\n")
    args = [a.replace("{folder}", str(tmp_path)) for a in args]
    case = Case(
        "server down",
        lambda f: args,
        (f"http://127.0.0.1:{port}", "HELPER_CHROMA_HOST", "HELPER_CHROMA_PORT"),
        exit_code=1,
    )
    check(invoke(args, env={"HELPER_CHROMA_HOST": "127.0.0.1", "HELPER_CHROMA_PORT": str(port)}), case)


def routines_case(name: str, content: bytes | None, fragments: tuple[str, ...], exit_code: int = 1) -> Case:
    def make(folder: Path) -> list[str]:
        path = folder / "in.jsonl"
        if content is None:
            path.mkdir()
        else:
            path.write_bytes(content)
        return ["routines", "import", str(path), "--user", "mary", "--memory-dir", str(folder / "m")]

    return Case(name, make, ("in.jsonl", *fragments), exit_code=exit_code)


ROUTINE_IMPORT_CASES = [
    routines_case("binary", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), ("in.jsonl:1", "not UTF-8")),
    routines_case("control characters", bytes(range(10)), ("in.jsonl:1", "invalid JSON")),
    routines_case("directory", None, ("cannot read",)),
    routines_case("not JSON", b"{nope\n", ("in.jsonl:1", "invalid JSON")),
    routines_case("another memory's file", b'{"_format": "helper-agent-memory", "memory": "examples", "schema_version": 1}\n', ("holds 'examples' records",)),
    routines_case("missing field", b'{"user": "mary", "name": "x"}\n', ("in.jsonl:1", "field 'program'")),
    routines_case("wrong type", b'{"user": "mary", "name": "x", "program": 3}\n', ("in.jsonl:1", "field 'program'")),
    routines_case("value over the limit", json.dumps({"user": "m", "name": "x", "program": "x" * 300_000}).encode() + b"\n", ("HELPER_MAX_VALUE_BYTES",)),
]


@pytest.mark.parametrize("case", ROUTINE_IMPORT_CASES, ids=[c.name for c in ROUTINE_IMPORT_CASES])
def test_routines_import_with_a_bad_file(case: Case, tmp_path: Path) -> None:
    check(invoke(case.make(tmp_path)), case)


@pytest.mark.parametrize(
    ("setting", "value", "fragment"),
    [("HELPER_CHROMA_PORT", "abc", "HELPER_CHROMA_PORT='abc'"), ("HELPER_CHROMA_PORT", "70000", "less than or equal to 65535"), ("HELPER_ROUTINE_IMPORT_BATCH", "0", "HELPER_ROUTINE_IMPORT_BATCH='0'")],
)
def test_a_bad_setting_names_the_variable(setting: str, value: str, fragment: str, tmp_path: Path) -> None:
    case = Case("bad setting", lambda f: [], (fragment, "environment or .env"))
    check(invoke(["routines", "list", "--user", "mary", "--memory-dir", str(tmp_path)], env={setting: value}), case)


# ------------------------------------------------------------------------------ helper program check
PROGRAM_CASES = [
    Case("missing", lambda f: ["program", "check", str(f / "absent.py")], ("absent.py", "no such file")),
    Case("directory", lambda f: ["program", "check", str(f)], ("is a directory",)),
    Case("binary", lambda f: [(f / "p.py").write_bytes(b"\xff\xfe\x00"), "program", "check", str(f / "p.py")][1:], ("p.py", "not UTF-8")),
]


@pytest.mark.parametrize("case", PROGRAM_CASES, ids=[c.name for c in PROGRAM_CASES])
def test_program_check_with_an_unreadable_file(case: Case, tmp_path: Path) -> None:
    check(invoke(case.make(tmp_path)), case)


# ------------------------------------------------------------------------- the boundary's own rules
def test_debug_shows_the_traceback_of_a_known_failure(tmp_path: Path) -> None:
    args = ["world", "show", str(tmp_path / "absent.json")]
    assert invoke(args).kind == "one-line"
    for outcome in (invoke(["--debug", *args]), invoke(args, env={"HELPER_DEBUG": "1"})):
        assert outcome.kind == "traceback"
        assert "absent.json: no such file" in str(outcome.exception)


def _guarded(exc: BaseException) -> typer.Typer:
    sub = typer.Typer(cls=GuardedGroup)

    @sub.command()
    def fail() -> None:
        raise exc

    @sub.command()
    def other() -> None:
        """A second command, so that `fail` is a sub-command."""

    return sub


def test_unknown_exceptions_keep_their_traceback() -> None:
    result = CliRunner().invoke(_guarded(KeyError("a bug")), ["fail"])
    assert isinstance(result.exception, KeyError)


@pytest.mark.parametrize(
    ("exc", "status", "text"),
    [
        ("llm", 1, "no model here (choose another model with --llm or HELPER_LLM)"),
        (FileNotFoundError(2, "No such file or directory", "/x/y.json"), 2, "/x/y.json: No such file or directory"),
        ("teach", 2, "g.json: key 'a.b': bad"),
        ("memory", 1, "store; broke"),
    ],
)
def test_known_failures_are_one_line_with_their_status(exc: object, status: int, text: str) -> None:
    from helper_agent.llm import LLMUnavailable
    from helper_agent.memory.errors import MemoryStoreError
    from helper_agent.teach.errors import TeachFormatError

    made = {
        "llm": LLMUnavailable("no model here"),
        "teach": TeachFormatError("g.json", "a.b", "bad"),
        "memory": MemoryStoreError("store\nbroke"),
    }.get(exc, exc)  # type: ignore[arg-type]
    assert describe(made) == (text, status)  # type: ignore[arg-type]
    result = CliRunner().invoke(_guarded(made), ["fail"])  # type: ignore[arg-type]
    assert result.exit_code == status and result.output == f"error: {text}\n"


def test_one_line_joins_foreign_multi_line_messages() -> None:
    assert one_line("first\n\n  second  \n") == "first; second"
    assert describe(RuntimeError("not ours")) is None
    assert describe(copy.copy(ConnectionRefusedError(111, "refused", "host"))) is None


def test_debug_from_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HELPER_DEBUG", raising=False)
    args = ["world", "show", str(tmp_path / "absent.json")]
    assert invoke(args).kind == "one-line"
    (tmp_path / ".env").write_text("HELPER_DEBUG=1\n")
    assert invoke(args).kind == "traceback"
