"""The step-wise methods' `refuse_futile` and P-RAG's `answer=thought` on EAI (the registry's graphs,
`graphs/named_steps.py`), with scripted models,
and `--skip` (the calibration split after the first 100 tasks).

`refuse_futile=on` leaves out of a step's grammar the steps already taken from the same simulator
state (VirtualHome's simulator is deterministic: they would end as they ended). Checked on the
grammar's whole language, on the prompts and on the records of real VirtualHome episodes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from helper_agent.envs.base import ActionVocabulary  # noqa: E402
from helper_agent.envs.virtualhome import VirtualHomeEnv  # noqa: E402
from helper_agent.evals.studies.eai.grammar import action_arities  # noqa: E402
from helper_agent.evals.studies.eai.runner import EaiRunSpec, check_spec, run_tasks  # noqa: E402
from helper_agent.evals.studies.eai.tasks import select_tasks  # noqa: E402
from helper_agent.graphs import named_actions  # noqa: E402
from helper_agent.graphs.named_steps import NamedEpisode, refused_here, tried_here  # noqa: E402
from helper_agent.program.cfg import Alt, Grammar, Lit, Ref, Seq  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(autouse=True)
def hashed_memories(monkeypatch, tmp_path):
    """The registry's graphs open their memories with the settings' embedder: the hash one the tests'
    `HashEmbedder()` is (256 dimensions), and no shared memory folder."""
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:256")
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()

OBJECTS = ["kitchen", "sink", "cup"]
VOCABULARY = ActionVocabulary(actions=action_arities(), objects=tuple(OBJECTS))


def step_rules(objects, **kw):
    return named_actions.step_rules(VOCABULARY, objects, **kw)


def react_rules(objects, **kw):
    return named_actions.react_rules(VOCABULARY, objects, **kw)


def state_key(env):
    return env.state_key()


def language(grammar: Grammar, expr: Any = None) -> set[str]:
    """Every string a finite grammar (literals, sequences, alternatives, rules) accepts."""
    expr = grammar.rules[grammar.root] if expr is None else expr
    if isinstance(expr, Lit):
        return {expr.text}
    if isinstance(expr, Ref):
        return language(grammar, grammar.rules[expr.name])
    if isinstance(expr, Alt):
        return set().union(*(language(grammar, o) for o in expr.options))
    if isinstance(expr, Seq):
        return {"".join(parts) for parts in itertools.product(*(sorted(language(grammar, i)) for i in expr.items))}
    raise TypeError(f"not finite here: {expr!r}")


def _all_steps() -> list[tuple[str, tuple[str, ...]]]:
    return [(name, args) for name, n in action_arities().items() for args in itertools.product(OBJECTS, repeat=n)]


def _text(step: tuple[str, tuple[str, ...]]) -> str:
    return f"Action: {step[0]}({', '.join(step[1])})"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(_all_steps()), max_size=8))
def test_the_grammar_leaves_out_exactly_the_refused_steps(refused):
    everything = language(step_rules(OBJECTS))
    allowed = language(step_rules(OBJECTS, refuse=refused))
    assert allowed == everything - {_text(s) for s in refused}
    assert "Action: done()" in allowed


def test_the_thought_grammar_takes_the_same_refusals():
    rules = react_rules(OBJECTS, refuse=[("WALK", ("kitchen",)), ("PUTBACK", ("cup", "sink"))])
    actions = language(Grammar({"root": rules.rules["action"], **{k: v for k, v in rules.rules.items() if k != "root"}}))
    assert "WALK(kitchen)" not in actions and "PUTBACK(cup, sink)" not in actions
    assert {"WALK(sink)", "PUTBACK(sink, cup)", "PUTBACK(cup, kitchen)", "done()"} <= actions


def test_tried_here_is_what_was_taken_from_this_state_and_never_done():
    history = [{"state": "a", "action": "WALK(sink)"}, {"state": "b", "action": "GRAB(cup)"},
               {"state": "a", "action": "WALK(sink)"}, {"state": "a", "action": "done()"},
               {"state": "a", "action": "(none)"}, {"state": "a", "action": "GRAB(cup)"}]
    assert tried_here(history, "a", VOCABULARY) == [("WALK", ("sink",)), ("GRAB", ("cup",))]
    assert tried_here(history, "c", VOCABULARY) == []


def test_refused_here_keeps_to_the_nameable_objects_and_counts_what_it_withheld():
    history = [{"state": "a", "action": "WALK(sink)"}, {"state": "a", "action": "GRAB(cup)"}]
    episode = NamedEpisode()
    assert refused_here(False, history, "a", VOCABULARY, episode) == [] and "refused_steps" not in episode.extra
    assert refused_here(True, history, "a", VOCABULARY, episode) == [("WALK", ("sink",)), ("GRAB", ("cup",))]
    assert refused_here(True, history, "a", VOCABULARY, episode, nameable=["cup"]) == [("GRAB", ("cup",))]
    assert refused_here(True, history, "b", VOCABULARY, episode) == []
    assert episode.extra["refused_steps"] == 3


# Task 11_1 ("floor_lamp is ON"; objects floor_lamp, bedroom, dining_room): the robot starts far from
# the lamp, so GRAB(floor_lamp) fails and changes nothing; WALK(bedroom) moves it.
FAR = "GRAB(floor_lamp)"


def test_the_state_key_changes_with_the_state_and_only_then():
    env, twin = VirtualHomeEnv("11_1"), VirtualHomeEnv("11_1")
    before = state_key(env)
    assert before == state_key(twin)
    assert not env.step("GRAB", "floor_lamp").result.success and state_key(env) == before
    assert env.step("WALK", "bedroom").result.success and state_key(env) != before


def _prag(answers: list[str], **config: Any) -> tuple[Any, list[str]]:
    prompts: list[str] = []

    class Recording(FakeListChatModel):
        def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
            prompts.append("\n".join(str(m.content) for m in messages))
            return super()._call(messages, stop, run_manager, **kwargs)

    task = select_tasks(ids=["11_1"])[0]
    options = {k: ("on" if v is True else str(v)) for k, v in config.items()}
    record = run_tasks(EaiRunSpec(agent="prag", mode="closed-loop", agent_options=options),
                       Recording(responses=answers), _run_dir(), tasks=[task])[0]
    return record, prompts


def _run_dir():
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp(prefix="eai-switches-"))


def test_prag_with_refuse_futile_is_not_offered_a_failed_step_again():
    """A step that failed leaves the state as it was: the next prompt says it is not allowed, and an
    answer naming it anyway (a model without grammar decoding) is sent back with the reason."""
    step = f"Action: {FAR}"
    episode, prompts = _prag([step, step, "Action: done()", "Action: done()"], refuse_futile=True, max_steps=5)
    trajectory = episode["trajectory"]
    assert trajectory[0]["action"] == FAR and trajectory[0]["observation"].startswith("failed")
    assert f"not allowed now): {FAR}" in prompts[1]
    assert "already done from this same state" in prompts[2]  # the refused repeat came back with the reason
    assert [s["action"] for s in trajectory] == [FAR, "done()"]
    assert episode["refused_steps"] == 1 and episode["outcome"] == "done"
    # off (the paper's agent): the same answers repeat the failed step
    episode, prompts = _prag([step, step, "Action: done()"], max_steps=5)
    assert [s["action"] for s in episode["trajectory"]] == [FAR, FAR, "done()"]
    assert "not allowed now" not in "".join(prompts) and "refused_steps" not in episode


def test_prag_answer_thought_asks_for_a_thought_and_keeps_it():
    episode, prompts = _prag(["Thought: nothing to do yet\nAction: done()"], answer="thought")
    assert "Thought: <what you do next and why, one line>" in prompts[0]
    assert episode["outcome"] == "done" and episode["trajectory"][0]["action"] == "done()"
    _, plain = _prag(["Action: done()"])
    assert "Thought:" not in plain[0] and "Answer exactly one line:\nAction:" in plain[0]


def test_embodiedrag_with_refuse_futile_leaves_the_failed_step_out():
    task = select_tasks(ids=["11_1"])[0]
    step = f"Thought: grab it\nAction: {FAR}"
    spec = EaiRunSpec(agent="embodiedrag", mode="closed-loop",
                      agent_options={"graph": "full", "refuse_futile": "on", "max_steps": "4"})
    episode = run_tasks(spec, FakeListChatModel(responses=[step, step, "Thought: stop\nAction: done()"]), _run_dir(),
                        tasks=[task])[0]
    actions = [s["action"] for s in episode["trajectory"]]
    assert actions == [FAR, "done()"] and episode["trajectory"][0]["observation"].startswith("failed")
    assert episode["refused_steps"] == 1


def test_the_switches_are_checked():
    """The methods' own registry options, checked before the run (`graphs/registry.check_agent_options`)."""
    def check(agent, options):
        check_spec(EaiRunSpec(agent=agent, mode="closed-loop", agent_options=options))

    check("prag", {"answer": "thought", "refuse_futile": "on"})
    check("embodiedrag", {"refuse_futile": "off"})
    with pytest.raises(ValueError, match="refuse_futile='maybe'"):
        check("prag", {"refuse_futile": "maybe"})
    with pytest.raises(ValueError, match="answer"):
        check("embodiedrag", {"answer": "thought"})
    with pytest.raises(ValueError, match="answer='why'"):
        check("prag", {"answer": "why"})


def test_skip_gives_the_tasks_after_the_evaluation_rows_and_a_run_keeps_it(tmp_path):
    """`--skip 100 --limit 2` runs tasks 101-102 (a calibration split); a folder run with one skip
    does not resume with another."""
    from helper_agent.evals.studies.eai.oracle import gold_replies
    from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks
    from helper_agent.evals.studies.eai.tasks import load_tasks

    every = [t.identifier for t in load_tasks()]
    assert [t.identifier for t in select_tasks(2, skip=100)] == every[100:102]
    assert [t.identifier for t in select_tasks(skip=340)] == every[340:]
    spec = EaiRunSpec(agent="llm-planner", mode="open-loop", k=0, limit=2, skip=100)
    records = run_tasks(spec, FakeListChatModel(responses=gold_replies("llm-planner", select_tasks(2, skip=100))), tmp_path)
    assert [r["identifier"] for r in records] == every[100:102]
    with pytest.raises(ValueError, match="other settings"):
        run_tasks(EaiRunSpec(agent="llm-planner", mode="open-loop", k=0, limit=2), FakeListChatModel(responses=["x"]),
                  tmp_path)


def test_the_cli_refuses_skip_where_it_has_no_meaning(tmp_path):
    from typer.testing import CliRunner

    from helper_agent.cli import app

    result = CliRunner().invoke(app, ["eval", "progressive", "--skip", "100", "--data", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--benchmark eai" in result.output
    result = CliRunner().invoke(app, ["eval", "eai", "--skip", "-1", "--out", str(tmp_path / "e")])
    assert result.exit_code == 2 and not (tmp_path / "e").exists()


def test_the_runs_spec_records_the_step_cap_the_graphs_default_to():
    """`spec.json` names a step-wise run's k and step cap (`runner.acting`); they are the defaults of
    the registry graphs' loops where they act by names, so a run without switches says what it ran."""
    from helper_agent.evals.studies.eai.methods import stepwise_setting
    from helper_agent.graphs.embodiedrag.named import NamedEmbodiedRAGConfig
    from helper_agent.graphs.prag.named import NamedPRAGConfig

    for config in (NamedPRAGConfig(), NamedEmbodiedRAGConfig()):
        assert (stepwise_setting({}, "k"), stepwise_setting({}, "max_steps")) == (config.k, config.max_steps)
