"""EAI action sequencing: the sequence grammar and parser built from VirtualHome's vocabulary, the
cross-task example memory, and HELPER's open and closed loop (its graph, `graphs/helper/sequence`, on
the one harness) scored by EAI's own evaluator with a scripted chat model."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from helper_agent.envs.virtualhome import VirtualHomeEnv  # noqa: E402
from helper_agent.evals.studies.eai.memory import GoldExamples, GoldMemory  # noqa: E402
from helper_agent.evals.studies.eai.peers import peer_models, peer_outputs, score_outputs  # noqa: E402
from helper_agent.evals.studies.eai.runner import EaiRunSpec, check_spec, responses, run_tasks  # noqa: E402
from helper_agent.evals.studies.eai.tasks import gold_steps, load_tasks, select_tasks  # noqa: E402
from helper_agent.graphs.action_sequences import (  # noqa: E402
    parse_steps,
    problems,
    render,
    sequence_grammar,
    sequence_rules,
)
from helper_agent.graphs.helper.sequence.prompts import build_prompt  # noqa: E402
from helper_agent.memory.embeddings import HashEmbedder  # noqa: E402
from helper_agent.program.cfg_match import Matcher  # noqa: E402
from helper_agent.program.cfg_sample import Sampler  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

# Three tasks EAI's evaluator keeps whose gold programs repeat an action name or differ from the
# packaged gold lines once written as JSON, and which together have node, edge and action goals
# (the evaluator divides by each kind's count).
IDS = ["11_1", "478_1", "1027_2"]


def _tasks():
    return select_tasks(ids=IDS)


def _vocabulary(task):
    """What VirtualHome offers on `task` (EAI's actions, the task's objects): the grammar's source."""
    return VirtualHomeEnv(task.identifier).action_vocabulary()


def test_tasks_come_from_eai_in_its_order():
    tasks = load_tasks()
    assert len(tasks) == 342 and tasks[0].identifier == "27_2"
    first = tasks[0]
    assert "washing_machine" in first.arguments and "character" not in first.arguments
    assert first.goal_text.startswith("Node goals are:") and "washing_machine is CLOSED" in first.goal_text
    assert len(peer_models()) == 15
    assert [o["identifier"] for o in peer_outputs("gpt-4o-2024-05-13", IDS)] == IDS


def test_llama_cpp_parses_every_task_grammar():
    llama_cpp = pytest.importorskip("llama_cpp")
    for task in _tasks():
        text = sequence_grammar(_vocabulary(task), max_steps=5)
        sampler = llama_cpp.llama_sampler_init_grammar(None, text.encode("utf-8"), b"root")
        assert sampler, f"llama.cpp rejected the grammar of {task.identifier}"
        llama_cpp.llama_sampler_free(sampler)
    broken = sequence_grammar(_vocabulary(_tasks()[0])).replace("obj ::=", "objx ::=")
    assert not llama_cpp.llama_sampler_init_grammar(None, broken.encode("utf-8"), b"root")


def test_everything_the_grammar_derives_parses_and_passes_eais_checks():
    for task in _tasks():
        vocabulary = _vocabulary(task)
        sampler = Sampler(sequence_rules(vocabulary, max_steps=8), random.Random(task.identifier))
        for _ in range(60):
            text = sampler.sample()
            steps = parse_steps(text)
            assert 1 <= len(steps) <= 8 and problems(steps, vocabulary) == [], text
            assert render(steps) == text  # the parser loses nothing
            pairs = json.loads(text, object_pairs_hook=list)  # valid JSON, as EAI's evaluator reads it
            assert [k for k, _ in pairs] == [a for a, _ in steps]


def test_grammar_accepts_the_gold_answer_and_refuses_others():
    task = _tasks()[0]
    vocabulary = _vocabulary(task)
    matcher = Matcher(sequence_rules(vocabulary, max_steps=6))
    gold = gold_steps(task.identifier)
    accepted = render(gold)
    assert parse_steps(accepted) == gold and problems(gold, vocabulary) == []
    assert matcher.matches(accepted)
    assert not matcher.matches(accepted.replace("floor_lamp", "unicorn"))
    assert not matcher.matches(accepted.replace('"WALK"', '"FLY"'))
    assert not matcher.matches(render([("WALK", ("character",))]))  # EAI: never the robot itself
    assert not matcher.matches(render(gold * 2))  # more than max_steps
    assert problems([("FLY", ("floor_lamp",))], vocabulary) == ["FLY is not a supported action"]
    assert problems([("WALK", ())], vocabulary) == ["WALK takes 1 object(s), not 0"]
    assert problems([("WALK", ("unicorn",))], vocabulary) == ["'unicorn' is not one of the relevant objects"]


def test_memory_is_cross_task():
    tasks = list(load_tasks()[:12])
    memory = GoldMemory(embedder=HashEmbedder(64))  # tasks 101-342 (tests/test_eai_pool.py: the rule)
    for task in tasks:
        hits = memory.retrieve(task, k=3)
        assert len(hits) == 3
        assert task.identifier not in [h.task.identifier for h in hits]
    lent = GoldExamples(tasks, memory)(tasks[0].identifier, tasks[0].goal_text, 2)
    assert [e.request for e in lent] == [h.task.goal_text for h in memory.retrieve(tasks[0], 2)]
    prompt = build_prompt(tasks[0].prompt, lent)
    assert prompt.count("Example ") == 2 and prompt.endswith(tasks[0].prompt[tasks[0].prompt.rfind("\nInput:\n"):])
    assert prompt.index("Example 1") < prompt.rindex("Input:")


def test_gold_answers_score_success_and_wrong_ones_do_not(tmp_path):
    tasks = _tasks()
    gold = [render(gold_steps(t.identifier)) for t in tasks]
    chat = FakeListChatModel(responses=gold)
    records = run_tasks(EaiRunSpec(k=0), chat, tmp_path / "gold", tasks=tasks)
    assert [r["identifier"] for r in records] == IDS
    assert all(r["sequence_success"] for r in records)
    score = score_outputs("gold", responses(records), tmp_path / "gold")
    assert score["summary"]["goal_evaluation"]["task_success_rate"] == 100.0
    assert score["summary"]["trajectory_evaluation"]["execution_success_rate"] == 100.0

    wrong = [render(list(reversed(gold_steps(t.identifier)))) for t in tasks]
    records = run_tasks(EaiRunSpec(k=0), FakeListChatModel(responses=wrong), tmp_path / "wrong", tasks=tasks)
    score = score_outputs("wrong", responses(records), tmp_path / "wrong")
    assert score["summary"]["goal_evaluation"]["task_success_rate"] == 0.0
    assert score["summary"]["trajectory_evaluation"]["runtime_error"]["missing_step"] > 0
    assert not any(r["sequence_success"] for r in records)


def test_a_run_folder_given_relative_to_here_is_scored(tmp_path, monkeypatch):
    """EAI's evaluator runs inside the run's work folder: a relative run folder (`eai-table
    results/eai100/...`) must still lead it to the responses (it once missed them)."""
    tasks = _tasks()
    records = run_tasks(EaiRunSpec(k=0), FakeListChatModel(responses=[render(gold_steps(t.identifier)) for t in tasks]),
                        tmp_path / "gold", tasks=tasks)
    monkeypatch.chdir(tmp_path)
    score = score_outputs("gold", responses(records), Path("gold"))
    assert score["summary"]["goal_evaluation"]["task_success_rate"] == 100.0
    assert (tmp_path / "gold" / "scores" / "gold.json").exists()


def test_run_is_resumable_and_refuses_other_settings(tmp_path):
    tasks = _tasks()
    chat = FakeListChatModel(responses=[render(gold_steps(t.identifier)) for t in tasks])
    run_tasks(EaiRunSpec(k=0), chat, tmp_path, tasks=tasks[:1])
    records = run_tasks(EaiRunSpec(k=0), chat, tmp_path, tasks=tasks)
    assert len(records) == 3 and len((tmp_path / "results.jsonl").read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="other settings"):
        run_tasks(EaiRunSpec(k=5), chat, tmp_path, tasks=tasks)


def test_unparsable_answer_gets_one_bounded_retry(tmp_path):
    task = _tasks()[0]
    good = render(gold_steps(task.identifier))
    chat = FakeListChatModel(responses=['{"FLY": ["moon"]}', good])
    record = run_tasks(EaiRunSpec(k=0), chat, tmp_path / "retried", tasks=[task])[0]
    assert record["attempts"] == 2 and record["problems"] == [] and record["llm_output"] == good
    assert [tuple(s[:1]) + (tuple(s[1]),) for s in record["steps"]] == gold_steps(task.identifier)
    chat = FakeListChatModel(responses=["nonsense", "still nonsense"])
    record = run_tasks(EaiRunSpec(k=0), chat, tmp_path / "refused", tasks=[task])[0]
    assert record["attempts"] == 2 and record["problems"] == ["the answer has no actions"]
    assert record["llm_output"] == "still nonsense" and not record["sequence_success"]


def test_closed_loop_corrects_after_a_failure(tmp_path):
    task = select_tasks(ids=["11_1"])[0]
    gold = gold_steps("11_1")
    first = render([("SWITCHON", ("floor_lamp",))])  # fails: not near the lamp (missing step)
    chat = FakeListChatModel(responses=[first, render(gold)])
    records = run_tasks(EaiRunSpec(mode="closed-loop", k=0), chat, tmp_path, tasks=[task])
    record = records[0]
    assert record["replans"] == 1 and "missing_step" in record["failures"][0]
    assert [tuple(s[:1]) + (tuple(s[1]),) for s in record["steps"]] == gold
    assert record["sequence_success"] is True
    assert json.loads(record["llm_output"])["SWITCHON"] == ["floor_lamp"]


def test_closed_loop_that_never_executes_hands_eai_the_step_it_tried(tmp_path):
    """`{}` would be filed by EAI's evaluator under "parsing"; the failed step files it under its error."""
    tasks = _tasks()
    answers = [render(list(reversed(gold_steps(t.identifier)))) for t in tasks for _ in range(3)]
    records = run_tasks(EaiRunSpec(mode="closed-loop", k=0), FakeListChatModel(responses=answers), tmp_path, tasks=tasks)
    never = [r for r in records if not r["steps"]]
    assert never, "a reversed gold sequence should fail at its first step somewhere"
    for record in never:
        first = list(reversed(gold_steps(record["identifier"])))[0]
        assert record["replans"] == 2 and json.loads(record["llm_output"]) == json.loads(render([first]))
    score = score_outputs("closed", responses(records), tmp_path)
    trajectory = score["summary"]["trajectory_evaluation"]
    assert trajectory["grammar_error"]["parsing"] == 0.0
    assert sum(trajectory["runtime_error"].values()) > 0


def test_unknown_methods_and_modes_are_refused_not_substituted():
    with pytest.raises(ValueError, match="--agent takes"):
        check_spec(EaiRunSpec(agent="react"))
    with pytest.raises(ValueError, match="--mode"):
        check_spec(EaiRunSpec(mode="half-loop"))
    with pytest.raises(ValueError, match="only --mode closed-loop"):
        check_spec(EaiRunSpec(agent="prag"))


def test_cli_runs_resumes_and_refuses_a_mode_a_method_lacks(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from helper_agent import llm
    from helper_agent.cli import app

    tasks = select_tasks(2)
    replies = [render(gold_steps(t.identifier)) for t in tasks]
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: FakeListChatModel(responses=replies))
    out = tmp_path / "run"
    args = ["eval", "eai", "--limit", "2", "--k", "0", "--no-peers", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "not scored by EAI's evaluator" in result.output  # two tasks lack edge/action goals for its rates
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["identifier"] for line in lines] == [t.identifier for t in tasks]
    assert CliRunner().invoke(app, args).exit_code == 0  # resumed: nothing new
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    refused = CliRunner().invoke(app, ["eval", "eai", "--agent", "prag", "--out", str(tmp_path / "p")])
    assert refused.exit_code == 2 and "only --mode closed-loop" in refused.output
