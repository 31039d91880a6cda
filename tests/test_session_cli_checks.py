"""The smaller things a person met: one-line refusals before any work, the final household of
`helper run`, program line numbers that match the planner's notes, and the dialogue in `helper trace`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_chat_cli import COFFEE, DRIVER, fenced

from helper_agent.commands import program_syntax
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.program import compile_program

ENV = {**os.environ, "HELPER_EMBEDDINGS": "hash", "COLUMNS": "200"}


def helper(*args: str, tmp_path: Path, responses: list[str] | None = None) -> subprocess.CompletedProcess:
    """A real `helper` process (with a scripted fake chat model when `responses` are given)."""
    env = {**ENV, "HELPER_HOME": str(tmp_path / "home")}
    if responses is None:
        command = [sys.executable, "-m", "helper_agent.cli", *args]
    else:
        command = [sys.executable, "-c", DRIVER, json.dumps(responses), "0", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def test_an_unknown_room_is_refused_in_one_line(tmp_path: Path) -> None:
    for args in (["run", "make coffee", "--room", "Garage"], ["chat", "--user", "mary", "--room", "Garage"]):
        result = helper(*args, tmp_path=tmp_path, responses=["unused"])
        assert result.returncode == 2, result.stdout + result.stderr
        # one plain line, not click's five-line box (what a pipe or a log got before)
        assert result.stderr.strip().splitlines() == [
            "error: --room: unknown room 'Garage'; choose Kitchen, LivingRoom, Bedroom, Bathroom"]
        assert "Traceback" not in result.stdout + result.stderr


def test_an_unknown_agent_option_is_refused_before_the_run(tmp_path: Path) -> None:
    generate_benchmark(tmp_path / "bench", seed=2, sizes={"valid_unseen": 1})
    result = helper("eval", "tfd", "--data", str(tmp_path / "bench"), "-o", "foo=bar", "--out", str(tmp_path / "run"),
                    tmp_path=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "agent 'helper' has no option foo" in result.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()
    bad_value = helper("eval", "tfd", "--data", str(tmp_path / "bench"), "--agent", "prag", "-o", "k=zero",
                       "--out", str(tmp_path / "run"), tmp_path=tmp_path)
    assert bad_value.returncode == 2 and "k='zero': expected a whole number" in bad_value.stderr


def test_helper_run_writes_the_final_household(tmp_path: Path) -> None:
    result = helper("run", "make me a coffee", "--scene", "3", "--out", str(tmp_path / "out"), tmp_path=tmp_path,
                    responses=[fenced(COFFEE), "Cabinet"])
    assert result.returncode == 0, result.stderr[-3000:]
    household = tmp_path / "out" / "household.json"
    assert f"final household: {household}" in result.stdout.replace("\n", "")
    shown = helper("world", "show", str(household), "--png", str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    coffee = [o for o in json.loads(household.read_text())["objects"] if o["objectType"] == "CoffeeMachine"]
    assert coffee and coffee[0]["isToggled"]  # what the run did is in the file


def test_program_line_numbers_match_the_planner_notes() -> None:
    reply = 'Here is the program:\n```python\n\nmug = InteractionObject("Mug")\nmug.pickup()\nx = InteractionObject("Sinkk")\n```'
    compiled = compile_program(reply)
    (note,) = [n for n in compiled.notes if "Sinkk" in n]
    line = int(note.split(":")[0].removeprefix("line "))
    syntax = program_syntax(compiled.source)
    shown = syntax.code.splitlines()
    assert shown[line - syntax.start_line].strip() == 'x = InteractionObject("Sinkk")'
    assert shown[0].startswith("mug = ")  # no blank lines shown before the program


def test_trace_shows_the_dialogue(tmp_path: Path) -> None:
    generate_benchmark(tmp_path / "bench", seed=2, sizes={"valid_unseen": 1})
    run = helper("eval", "tfd", "--data", str(tmp_path / "bench"), "--planner", "gold", "--out", str(tmp_path / "run"),
                 tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    shown = helper("trace", str(tmp_path / "run"), record["instance_id"], tmp_path=tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "─ dialogue ─" in shown.stdout
    first_words = " ".join(record["dialogue"].split()[:4])
    assert first_words in " ".join(shown.stdout.split())


def test_map_labels_never_overlap_and_every_small_object_is_listed(tmp_path: Path) -> None:
    from PIL import Image

    from helper_agent.world.generator import generate_scene
    from helper_agent.world.render import LabelSpace, render_top_down

    space = LabelSpace()
    assert space.place((0, 0, 10, 10)) and not space.place((5, 5, 15, 15)) and space.place((10, 0, 20, 10))
    state = generate_scene(0, "Kitchen")
    counter = next(o for o in state.objects.values() if o.object_type == "CounterTop")
    for obj in list(state.objects.values()):  # crowd every small object onto one counter
        if not obj.cells and obj.parent_id and obj.parent_id != counter.object_id:
            state.objects[obj.parent_id].contents.remove(obj.object_id)
            obj.parent_id = counter.object_id
            counter.contents.append(obj.object_id)
    small = sum(1 for oid, o in state.objects.items() if not o.cells and oid != state.held_id)
    picture = render_top_down(state, tmp_path / "map.png")
    width, height = Image.open(picture).size
    assert height >= state.depth * 28 + 40 + 150 + 14 * (small // max(1, (width - 40) // 160))
