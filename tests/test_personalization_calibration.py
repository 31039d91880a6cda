"""The calibration suite (`evals/studies/data/personalization_calibration.json`): the second suite, on which
every choice of routine adaptation was made. It must stay a fair test: its seeds follow the scene
rule, its gold programs score 100, and the unmodified routine passes only the original requests."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from helper_agent.evals.studies import personalization as P

CALIBRATION = Path(P.__file__).parent / "data" / "personalization_calibration.json"


@pytest.fixture(scope="module")
def suite() -> P.PersonalizationSuite:
    return P.load_suite(CALIBRATION)


def test_calibration_suite_differs_from_the_packaged_one(suite: P.PersonalizationSuite) -> None:
    packaged = P.load_suite()
    assert len(suite.routines) >= 5 and len(suite.requests) >= 40
    # the first forty, ten per category, and ten more (compound changes without commas, new objects
    # with contents) added when those were read from the logs; then four routines, eight requests each
    # (two per category) for the ordinary ways of phrasing a change; then four more routines, eight
    # requests each, for substitution verbs, new things put on named places and three changes joined otherwise
    assert Counter(q.category for q in suite.requests) == {"original": 26, "one": 28, "two": 30, "three": 30}
    assert len(suite.routines) == 13
    assert not {r.user for r in suite.routines} & {r.user for r in packaged.routines}
    assert not {r.name for r in suite.routines} & {r.name for r in packaged.routines}
    assert not {q.text for q in suite.requests} & {q.text for q in packaged.requests}


def test_calibration_seeds_follow_the_scene_rule(suite: P.PersonalizationSuite) -> None:
    for q in suite.requests:
        assert q.scene.seed is not None and P.scene_problems(q) == [], q.id


def test_calibration_baselines(suite: P.PersonalizationSuite) -> None:
    assert P.table3(P.run_suite(P.gold_planner, suite=suite)) == {
        "original": 1.0, "one": 1.0, "two": 1.0, "three": 1.0, "overall": 1.0}
    unmodified = P.table3(P.run_suite(P.routine_planner, suite=suite))
    assert unmodified == {"original": 1.0, "one": 0.0, "two": 0.0, "three": 0.0, "overall": 26 / 114}


@pytest.mark.parametrize(("flag", "expected"), [("--routine-edits", True), ("--whole-program", False)])
def test_cli_switches_between_edits_and_whole_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      flag: str, expected: bool) -> None:
    """`helper eval personalization --whole-program` runs the earlier design (the before of a
    before/after comparison); the switch reaches the agent's configuration and results.json."""
    import json

    from typer.testing import CliRunner

    from helper_agent import llm
    from helper_agent.cli import app
    from helper_agent.commands import eval as eval_cmd
    from helper_agent.evals.engine import agents

    seen: list[bool] = []

    class RecordingAgent:
        def __init__(self, chat: object, memories: object, config: object) -> None:
            seen.append(config.routine_edits)  # type: ignore[attr-defined]
            self.gold = agents.ProgramAgent("gold", lambda setup: P.load_suite(CALIBRATION).request(setup.instance_id).program)

        def __getattr__(self, name: str) -> object:
            return getattr(self.gold, name)

    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: object())
    monkeypatch.setattr(eval_cmd, "HelperAgent", RecordingAgent)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "personalization", "--suite", str(CALIBRATION), "--limit", "2",
                                      "--out", str(out), flag], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert seen == [expected]
    assert json.loads((out / "results.json").read_text())["routine_edits"] is expected
