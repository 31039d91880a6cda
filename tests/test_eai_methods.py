"""LLM-Planner, P-RAG and EmbodiedRAG on EAI with scripted chat models: each acts through the
VirtualHome environment and is scored by EAI's evaluator; P-RAG's database holds only its own
trajectories; a task's own gold sequence never reaches a prompt."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from helper_agent.envs.virtualhome import VirtualHomeEnv  # noqa: E402
from helper_agent.envs.virtualhome_scene import compact_scene, graph_entities  # noqa: E402
from helper_agent.evals.studies.eai.grammar import render  # noqa: E402
from helper_agent.evals.studies.eai.memory import GoldMemory  # noqa: E402
from helper_agent.evals.studies.eai.oracle import gold_replies  # noqa: E402
from helper_agent.evals.studies.eai.peers import score_outputs  # noqa: E402
from helper_agent.evals.studies.eai.progressive import EaiProgressiveSpec, run_eai_progressive  # noqa: E402
from helper_agent.evals.studies.eai.report import our_extras  # noqa: E402
from helper_agent.evals.studies.eai.runner import (  # noqa: E402
    EaiRunSpec,
    acting,
    check_spec,
    load_results,
    responses,
    run_tasks,
)
from helper_agent.evals.studies.eai.steps import (  # noqa: E402
    copies_a_list,
    meanings,
    vocabulary_text,
)
from helper_agent.evals.studies.eai.tasks import gold_steps, load_tasks, select_tasks  # noqa: E402
from helper_agent.graphs import named_actions  # noqa: E402
from helper_agent.graphs.llm_planner.named.plans import parse_plan, plan_rules, plan_text  # noqa: E402
from helper_agent.graphs.named_actions import step_text  # noqa: E402
from helper_agent.graphs.named_actions import vocabulary_text as shown_vocabulary  # noqa: E402
from helper_agent.memory.embeddings import HashEmbedder  # noqa: E402
from helper_agent.memory.experience import ExperienceMemory  # noqa: E402
from helper_agent.program.cfg_sample import Sampler  # noqa: E402

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

# Tasks EAI's evaluator keeps that together have node, edge and action goals (its rates divide by each).
IDS = ["11_1", "478_1", "1027_2"]


class RecordingChat(FakeListChatModel):
    """Scripted answers, and every prompt it was sent (all messages, joined)."""

    prompts: list[str] = []

    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop, run_manager, **kwargs)


def _tasks():
    return select_tasks(ids=IDS)


def _gold(task):
    return gold_steps(task.identifier)


@pytest.mark.parametrize(("agent", "mode", "options"), [
    ("llm-planner", "open-loop", {}),
    ("llm-planner", "closed-loop", {}),
    ("prag", "closed-loop", {}),
    ("embodiedrag", "closed-loop", {"graph": "subgraph"}),
    ("embodiedrag", "closed-loop", {"graph": "full"}),
])
def test_each_adapter_acts_and_is_scored_by_eais_evaluator(tmp_path, agent, mode, options):
    tasks = _tasks()
    chat = RecordingChat(responses=gold_replies(agent, tasks, graph=options.get("graph", "subgraph")))
    spec = EaiRunSpec(agent=agent, mode=mode, k=0, agent_options=options)
    check_spec(spec)
    records = run_tasks(spec, chat, tmp_path, tasks=tasks)
    assert [r["identifier"] for r in records] == IDS
    for record, task in zip(records, tasks, strict=True):
        assert record["sequence_success"], (agent, task.identifier, record["failures"])
        assert json.loads(record["llm_output"]) == json.loads(render(_gold(task)))
        assert record["usage"]["llm_calls"] >= 1 and record["decisions"] >= 1
    score = score_outputs(spec.row_name, responses(records), tmp_path)
    assert score["summary"]["goal_evaluation"]["task_success_rate"] == 100.0
    if agent == "embodiedrag":
        shown = [r["entities_shown_per_step"] for r in records]
        if options["graph"] == "full":
            assert min(shown) > 250  # the whole scene graph of scene 1
        else:
            assert max(shown) < 60  # the retrieved subgraph


def test_a_failed_action_is_observed_and_the_step_wise_agent_goes_on(tmp_path):
    task = _tasks()[0]
    gold = _gold(task)
    wrong = gold[-1]  # SWITCHON floor_lamp before walking there: a missing step
    replies = [f"Action: {step_text(wrong)}", *(f"Action: {step_text(s)}" for s in gold), "Action: done()"]
    chat = RecordingChat(responses=replies)
    record = run_tasks(EaiRunSpec(agent="prag", mode="closed-loop"), chat, tmp_path, tasks=[task])[0]
    assert record["failures"] and record["failures"][0].startswith(step_text(wrong))
    assert record["trajectory"][0]["observation"].startswith("failed: missing_step")
    assert "(65)" not in record["trajectory"][0]["observation"]  # ids dropped
    assert record["sequence_success"] and record["decisions"] == len(gold) + 2
    assert "failed: missing_step" in chat.prompts[1]  # the next step's prompt shows the failure


def test_llm_planner_replans_from_what_is_completed_and_visible(tmp_path):
    task = _tasks()[0]
    gold = _gold(task)
    broken = [gold[0], gold[-1]]  # WALK bedroom, SWITCHON floor_lamp: not close to it yet
    chat = RecordingChat(responses=[plan_text(broken), plan_text(gold[1:])])
    record = run_tasks(EaiRunSpec(agent="llm-planner", mode="closed-loop", k=0), chat, tmp_path, tasks=[task])[0]
    assert record["replans"] == 1 and record["sequence_success"]
    replan_prompt = chat.prompts[1]
    assert f"Completed plans: {plan_text(gold[:1])}" in replan_prompt and "Visible objects are" in replan_prompt


def test_a_tasks_own_gold_sequence_never_reaches_a_prompt(tmp_path):
    """Checked on every prompt of every method. Other tasks' gold plans are LLM-Planner's examples (its
    k nearest): one may begin with the task's whole sequence (478_1's is the start of 430_2's), and
    one may be the same sequence, which then appears as that example's answer."""
    tasks = _tasks()
    pool = GoldMemory(embedder=HashEmbedder())
    for agent, options in (("llm-planner", {}), ("prag", {}), ("embodiedrag", {"graph": "full"})):
        spec = EaiRunSpec(agent=agent, mode="closed-loop", k=3, agent_options=options)
        for task in tasks:
            chat = RecordingChat(responses=gold_replies(agent, [task], graph="full"))
            record = run_tasks(spec, chat, tmp_path / agent, tasks=[task], memory=pool)[0]
            assert chat.prompts and task.identifier not in record["examples"]
            gold = _gold(task)
            same = [e for e in record["examples"] if gold_steps(e) == gold]
            for prompt in chat.prompts:
                assert task.identifier not in prompt
                if not same:  # neither as a whole plan (an example's answer is a line) nor as EAI's JSON
                    assert plan_text(gold) not in prompt.splitlines() and render(gold) not in prompt, (agent, task.identifier)
    examples = pool.retrieve(tasks[0], 3)
    assert len(examples) == 3 and all(e.task.identifier != tasks[0].identifier for e in examples)


def test_prag_database_holds_only_its_own_trajectories(tmp_path):
    tasks = _tasks()
    # Not the gold: each task's sequence without its last step (some fail), then done().
    replies = []
    for task in tasks:
        replies += [f"Action: {step_text(s)}" for s in _gold(task)[:-1]] + ["Action: done()"]
    chat = RecordingChat(responses=replies)
    spec = EaiProgressiveSpec(out=str(tmp_path / "prog"), iterations=2, agent_options={"max_steps": "12"})
    metrics = run_eai_progressive(spec, chat, tasks=tasks, embedder=HashEmbedder())
    assert [r["iteration"] for r in metrics["iterations"]] == [0, 1]
    assert metrics["iterations"][1]["database_records"] == len(tasks)
    own = {r["identifier"]: r for r in load_results(tmp_path / "prog" / "iter_0" / "run")}
    database = ExperienceMemory(path=str(tmp_path / "prog" / "iter_1" / "database"), embedder=HashEmbedder())
    stored = database.list()
    assert sorted(r.id for r in stored) == sorted(f"r0:{t.identifier}" for t in tasks)
    for record in stored:
        mine = own[record.info["task"]]
        assert [s.action for s in record.steps] == [s["action"] for s in mine["trajectory"]]
        assert [s.scene_graph for s in record.steps] == [s["scene_graph"] for s in mine["trajectory"]]
        assert record.done == mine["sequence_success"]
        assert record.goal == next(t.goal_text for t in tasks if t.identifier == record.info["task"])
        gold_last = step_text(_gold(next(t for t in tasks if t.identifier == record.info["task"]))[-1])
        assert gold_last not in [s.action for s in record.steps]  # what it never did is not there
    # Iteration 1's prompts show iteration 0's episodes, with the environment's done flag.
    later = chat.prompts[-1]
    assert "Past episodes:" in later and "(none yet)" not in later
    assert (tmp_path / "prog" / "sr_by_iteration.png").exists() and (tmp_path / "prog" / "report.md").exists()


def test_the_vocabulary_is_grouped_and_not_in_eais_list_order():
    text = vocabulary_text()
    assert text == shown_vocabulary(VirtualHomeEnv(_tasks()[0].identifier).action_vocabulary())  # what every method shows
    one = next(line for line in text.splitlines() if line.startswith("- with one object"))
    names = [part.split(" (")[0] for part in one.removeprefix("- with one object: ").split("; ")]
    assert names == sorted(names) and "WALK" in names and "PUTBACK" not in names
    eai_order = list(meanings())
    assert eai_order[:4] == ["CLOSE", "DRINK", "FIND", "WALK"]  # EAI's own list, which the 0.5B copied
    assert names[:4] != eai_order[:4] and names.index("WALK") > names.index("GRAB")
    assert "Supported Actions List" not in text and ": (1, [[" not in text
    # The report counts answers that begin with a listed order (the copying failure), not plans.
    assert copies_a_list(["CLOSE", "DRINK", "FIND", "WALK", "GRAB"]) and copies_a_list(["SLEEP", "STANDUP", "WAKEUP", "CLOSE"])
    assert not any(copies_a_list([a for a, _ in gold_steps(t.identifier)]) for t in load_tasks())
    assert our_extras([{"steps": [["CLOSE", ["x"]], ["DRINK", ["x"]], ["FIND", ["x"]], ["WALK", ["x"]]]},
                       {"steps": [["WALK", ["x"]]]}])["copied_list_order"] == 50.0


def test_every_answer_the_grammars_derive_parses():
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    task = _tasks()[0]
    objects = list(task.arguments)
    vocabulary = VirtualHomeEnv(task.identifier).action_vocabulary()
    assert list(vocabulary.objects) == objects
    rng = random.Random(0)
    for rules, parse in ((plan_rules(vocabulary, objects, 6), lambda t: parse_plan(t, vocabulary, objects)),
                         (named_actions.step_rules(vocabulary, objects),
                          lambda t: named_actions.parse_step_answer(t, vocabulary, objects)),
                         (named_actions.react_rules(vocabulary, objects),
                          lambda t: named_actions.parse_react_answer(t, vocabulary, objects))):
        sampler = Sampler(rules, rng)
        for _ in range(80):
            parse(sampler.sample())
    with pytest.raises(ValueError, match="not an object"):
        named_actions.parse_step_answer("Action: WALK(unicorn)", vocabulary, objects)
    with pytest.raises(ValueError, match="takes 2"):
        parse_plan("PUTBACK soap", vocabulary, objects)


def test_scene_views_come_from_the_live_graph():
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    task = load_tasks()[0]
    env = VirtualHomeEnv(task.identifier)
    text = compact_scene(env)
    assert "washing_machine: clean, closed, off, plugged_in" in text and text.endswith("You are in bathroom")
    env.step("WALK", "soap")
    assert "close to soap" in compact_scene(env)
    entities, edges = graph_entities(env)
    assert len(entities) > 250 and any(e["id"] == "washing_machine" for e in entities)
    assert ("clothes_jacket", "inside", "washing_machine") in edges


def test_modes_and_switches_are_checked():
    with pytest.raises(ValueError, match="only --mode closed-loop"):
        check_spec(EaiRunSpec(agent="prag", mode="open-loop"))
    with pytest.raises(ValueError, match="'embodiedrag' has no option retrieval"):
        check_spec(EaiRunSpec(agent="embodiedrag", mode="closed-loop", agent_options={"retrieval": "goal"}))
    with pytest.raises(ValueError, match="choose from subgraph, full"):
        check_spec(EaiRunSpec(agent="embodiedrag", mode="closed-loop", agent_options={"graph": "half"}))
    assert EaiRunSpec(agent="prag", mode="closed-loop", agent_options={"retrieval": "goal"}).row_name == \
        "ours-prag-closed-loop-local-retrieval=goal"


def test_cli_runs_a_method_and_writes_one_table_with_the_peers(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from helper_agent import llm
    from helper_agent.cli import app
    from helper_agent.commands import eval_eai

    tasks = _tasks()
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: RecordingChat(responses=gold_replies("prag", tasks)))
    monkeypatch.setattr(eval_eai, "select_tasks", lambda limit=None, ids=None, skip=0: tasks)
    run = tmp_path / "prag"
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "prag", "--mode", "closed-loop", "--no-peers",
                                      "--out", str(run)])
    assert result.exit_code == 0, result.output
    assert len(load_results(run)) == len(tasks)
    refused = CliRunner().invoke(app, ["eval", "eai", "--agent", "prag", "--out", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "only --mode closed-loop" in refused.output
    # The peers' scoring is `test_eai_sequencing`'s; here the table of our runs (two: another --out
    # over the same tasks), and a run over other tasks refused.
    other = tmp_path / "prag-goal"
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: RecordingChat(responses=gold_replies("prag", tasks)))
    assert CliRunner().invoke(app, ["eval", "eai", "--agent", "prag", "--mode", "closed-loop", "--no-peers",
                                    "-o", "retrieval=goal", "--out", str(other)]).exit_code == 0
    table = CliRunner().invoke(app, ["eval", "eai-table", str(run), str(other), "--no-peers", "--out", str(tmp_path / "table")])
    assert table.exit_code == 0, table.output
    rows = json.loads((tmp_path / "table" / "report.json").read_text())
    assert sorted(r["name"] for r in rows) == ["ours-prag-closed-loop-local", "ours-prag-closed-loop-local-retrieval=goal"]
    assert all(r["task_success"] == 100.0 and r["prompt_tokens_per_step"] >= 0 for r in rows)
    assert (tmp_path / "table" / "eai_table.png").stat().st_size > 1000


def test_a_stepwise_runs_spec_records_the_cap_that_stopped_it_and_old_folders_still_resume(tmp_path):
    """P-RAG stops at its own `max_steps` switch (default 20), takes `k` from its switches and never
    re-plans: spec.json says so, not the whole-plan methods' 40. A folder written before recorded
    the runner's unused 40, 3 and 2; it resumes, and a folder with another cap does not."""
    task = _tasks()[0]
    chat = FakeListChatModel(responses=gold_replies("prag", [task]))
    spec = EaiRunSpec(agent="prag", mode="closed-loop", agent_options={"max_steps": "7"})
    run_tasks(spec, chat, tmp_path / "capped", tasks=[task])
    stored = json.loads((tmp_path / "capped" / "spec.json").read_text())
    assert (stored["max_steps"], stored["k"], stored["max_replans"]) == (7, 3, 0)
    default = EaiRunSpec(agent="embodiedrag", mode="closed-loop", agent_options={"k": "5"})
    run_tasks(default, FakeListChatModel(responses=gold_replies("embodiedrag", [task])), tmp_path / "erag", tasks=[task])
    stored = json.loads((tmp_path / "erag" / "spec.json").read_text())
    assert (stored["max_steps"], stored["k"], stored["max_replans"]) == (20, 5, 0)
    old = tmp_path / "old"
    old.mkdir()
    (old / "spec.json").write_text(json.dumps({**stored, "agent": "prag", "agent_options": {}, "k": 3, "max_steps": 40,
                                               "max_replans": 2, "retired_field": 1}))
    records = run_tasks(EaiRunSpec(agent="prag", mode="closed-loop"), FakeListChatModel(responses=gold_replies("prag", [task])),
                        old, tasks=[task])
    assert len(records) == 1 and json.loads((old / "spec.json").read_text())["max_steps"] == 20
    with pytest.raises(ValueError, match="other settings"):
        run_tasks(EaiRunSpec(agent="prag", mode="closed-loop", agent_options={"max_steps": "8"}), chat, old, tasks=[task])
    # HELPER's cap is the runner's: unchanged
    assert acting(EaiRunSpec(k=3)) == EaiRunSpec(k=3) and EaiRunSpec(k=3).max_steps == 40
    assert acting(EaiRunSpec(k=0)).pool == "none"  # retrieves no gold example


@pytest.mark.parametrize("flag", [["--k", "5"], ["--max-replans", "1"]])
def test_cli_refuses_a_setting_a_stepwise_method_would_ignore(tmp_path, flag):
    from typer.testing import CliRunner

    from helper_agent.cli import app

    for agent in ("prag", "embodiedrag"):
        out = tmp_path / agent
        result = CliRunner().invoke(app, ["eval", "eai", "--agent", agent, "--mode", "closed-loop", *flag, "--out", str(out)])
        assert result.exit_code == 2 and "--agent-option" in result.output, result.output
        assert not out.exists()


def test_runs_too_few_for_eais_rates_still_get_a_table_of_our_columns(tmp_path, monkeypatch):
    """11_1 alone lacks a kind of goal EAI's rates divide by: its columns stay empty (not zero), our
    own columns and the full-sequence success are there, the peers are left out, and the notes say why."""
    from typer.testing import CliRunner

    from helper_agent import llm
    from helper_agent.cli import app
    from helper_agent.commands import eval_eai

    tasks = select_tasks(ids=["11_1"])
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: RecordingChat(responses=gold_replies("prag", tasks)))
    monkeypatch.setattr(eval_eai, "select_tasks", lambda limit=None, ids=None, skip=0: tasks)
    run = tmp_path / "prag"
    result = CliRunner().invoke(app, ["eval", "eai", "--agent", "prag", "--mode", "closed-loop", "--out", str(run)])
    assert result.exit_code == 0, result.output
    for folder in (run, tmp_path / "table"):
        if folder != run:
            table = CliRunner().invoke(app, ["eval", "eai-table", str(run), "--out", str(folder)])
            assert table.exit_code == 0, table.output
            assert "peers are left out" in table.output
            # the CLI prints the report's own title and notes, not a sentence of its own
            printed = " ".join(table.output.split())
            assert "full-sequence success (EAI's goal check, ours)" in printed
            assert "EAI's columns are empty: EAI's evaluator cannot score 1 task(s)" in printed
        [row] = json.loads((folder / "report.json").read_text())  # ours only: no peer rows
        assert row["name"] == "ours-prag-closed-loop-local" and row["tasks"] == 1
        assert all(row[c] is None for c in ("kept", "task_success", "execution_success", "missing_step"))
        assert row["full_sequence_success"] == 100.0 and row["llm_calls_per_task"] >= 1
        report = (folder / "report.md").read_text()
        assert "- EAI's columns are empty: EAI's evaluator cannot score 1 task(s)" in report
        assert "None" not in report
    assert (tmp_path / "table" / "eai_table.png").stat().st_size > 1000
