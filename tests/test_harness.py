"""The one episode harness: any agent on any environment, scored by `teach/`.

The HELPER graph runs through the same harness on the symbolic world and on `ThorEnv` over the
fake AI2-THOR controller; the harness, not the agent, decides success; oracles alone see the
reference; and teaching a routine needs an explicit phrasing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from test_envs_thor import MUG, TABLE, FakeController

from helper_agent.envs.base import can_snapshot
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.envs.thor import ThorEnv
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.agents import GoldAgent, OracleGraphAgent
from helper_agent.evals.engine.harness import run_instance
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.helper import HelperConfig
from helper_agent.graphs.helper.agent import HelperAgent, Memories
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.teach import default_registry
from helper_agent.teach.formats import Game, TfdInstance
from helper_agent.teach.instances import LoadedInstance, load_instance
from helper_agent.understanding.requests import is_unchanged_recall, teach_request

PUT_MUG_ON_TABLE = 'mug = InteractionObject("Mug")\ntable = InteractionObject("DiningTable")\nmug.pickup_and_place(table)'


def fence(program: str) -> str:
    return f"```python\n{program}\n```"


@pytest.fixture()
def memories(tmp_path: Path) -> Memories:
    embedder = get_embedder("hash")
    path = tmp_path / "memory"
    return Memories(ExampleMemory(path=path, embedder=embedder), CorrectionMemory(path=path, embedder=embedder),
                    RoutineMemory(path=path, embedder=embedder))


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("bench")
    generate_benchmark(data, seed=3, sizes={"valid_unseen": 4})
    return data


class FloorPlanInstance(LoadedInstance):
    """A TfD instance whose game starts in the fake controller's floor plan."""

    def initial_state(self) -> str:  # type: ignore[override]
        return "FloorPlan12"


def thor_instance() -> FloorPlanInstance:
    game = Game.model_validate({"tasks": [{"task_id": 0, "task_name": "Put All X On Y", "task_params": ["Mug", "on", "DiningTable"],
                                           "episodes": [{"episode_id": "e", "world": "FloorPlan12", "world_type": "Kitchen",
                                                         "interactions": []}]}]})
    instance = TfdInstance.model_validate({"game_id": "thor", "instance_id": "thor.tfd", "driver_actions_future": [],
                                           "dialog_history": [["Commander", "put the mug on the dining table"]]})
    task = default_registry().instantiate("Put All X On Y", ("Mug", "on", "DiningTable"))
    return FloorPlanInstance(Path("thor.tfd.json"), "tfd", instance, game, task, "<Commander> put the mug on the dining table")


def test_the_helper_graph_runs_on_thor_through_the_harness(memories: Memories) -> None:
    fake = FakeController()
    env = ThorEnv(controller=fake)
    agent = HelperAgent(FakeListChatModel(responses=[fence(PUT_MUG_ON_TABLE)]), memories, HelperConfig(feedback_rounds=1))
    record, result = run_instance(thor_instance(), agent, env)
    labels = [line.split(":")[0] for line in result.log]
    assert labels == ["retrieve", "plan", "validate", "execute", "feedback", "memorize"], result.log
    assert record["success"] == 1 and record["agent"] == "helper"
    mug = next(o for o in env.objects_metadata() if o["objectId"] == MUG)
    assert TABLE in (mug.get("parentReceptacles") or [])
    assert record["steps"] == env.steps > 0
    # THOR cannot restore a household exactly: the graph keeps no snapshot of it.
    assert not can_snapshot(env) and can_snapshot(SymbolicEnv())


def test_the_harness_scores_and_the_agent_does_not(bench: Path, memories: Memories) -> None:
    path = sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[0]
    loaded = load_instance(path)
    # An agent that claims success but does nothing is scored as a failure.
    class Boaster:
        name, oracle = "boaster", False

        def run(self, setup: EpisodeSetup):  # noqa: ANN201
            from helper_agent.graphs.base import AgentResult

            assert setup.reference is None  # non-oracles never see the gold program
            return AgentResult(outcome="success")

    record, _ = run_instance(loaded, Boaster(), SymbolicEnv())
    assert record["success"] == 0 and record["outcome"] == "success"
    gold, _ = run_instance(loaded, GoldAgent(), SymbolicEnv())
    assert gold["success"] == 1


def test_oracles_are_handed_the_reference_and_the_helper_is_not(bench: Path, memories: Memories) -> None:
    loaded = load_instance(sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[1])
    record, result = run_instance(loaded, OracleGraphAgent(memories), SymbolicEnv())
    assert record["success"] == 1 and result.usage["llm_calls"] >= 1  # the fake chat model is counted
    seen: list[object] = []
    helper = HelperAgent(FakeListChatModel(responses=["no program"]), memories, HelperConfig(max_plan_attempts=1))
    original = helper.run
    helper.run = lambda setup: seen.append(setup.reference) or original(setup)  # type: ignore[method-assign]
    record, result = run_instance(loaded, helper, SymbolicEnv())
    assert seen == [None] and result.outcome == "invalid_program" and record["success"] == 0


def test_edh_history_replay_skips_actions_that_do_not_act(bench: Path) -> None:
    edh = sorted((bench / "edh_instances" / "valid_unseen").glob("*.json"))
    loaded = next(li for li in map(load_instance, edh) if li.instance.driver_action_history)
    env = SymbolicEnv()
    loaded.start(env)
    assert env.steps == 0 and env.failures == 0  # the history is given, not the agent's trajectory
    assert loaded.dialogue.startswith("<")


@pytest.mark.parametrize(
    ("request_text", "name"),
    [
        ("Perform the Mary cleaning: wash two plates in the sink", "the mary cleaning"),
        ("please do the Sunday breakfast: toast and coffee", "the sunday breakfast"),
        ("Remember this as the Maya tidy-up: put the remote on the sofa", "the maya tidy-up"),
        ("Make me a coffee: the mug is in the cabinet", None),
        ("Do this: make a coffee", None),
        ("Make me a coffee, the mug is in the cabinet", None),
        ("do the same: slice the bread", None),
    ],
)
def test_teaching_needs_an_explicit_phrasing(request_text: str, name: str | None) -> None:
    taught = teach_request(request_text)
    assert (taught.name if taught else None) == name


@pytest.mark.parametrize(
    ("request_text", "unchanged"),
    [
        ("Do the Mary cleaning", True),
        ("the mary cleaning, please", True),
        ("Perform the Mary cleaning: wash two plates in the sink", True),  # the teaching request itself
        ("Do the Mary cleaning but with bowls", False),
        ("Do the Mary cleaning twice", False),
        ("Do the Mary cleaning and make coffee", False),
    ],
)
def test_unchanged_recall_is_an_exact_match(request_text: str, unchanged: bool) -> None:
    assert is_unchanged_recall(request_text, "the mary cleaning", "Perform the Mary cleaning: wash two plates in the sink") is unchanged


def test_an_episode_out_of_llm_time_is_scored_with_what_was_done(bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.llm import LLMBudgetExceeded

    class Slow:
        name, oracle = "slow", False

        def run(self, setup: EpisodeSetup):  # noqa: ANN201
            setup.env.step("MoveAhead")
            raise LLMBudgetExceeded("the episode's LLM budget of 1 s is spent")

    loaded = load_instance(sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[0])
    record, result = run_instance(loaded, Slow(), SymbolicEnv())
    assert record["ended_by"] == "llm_budget" and record["steps"] == 1 and record["success"] == 0


def test_subgoals_are_child_spans_of_execute(bench: Path, memories: Memories) -> None:
    from langchain_core.tracers.base import BaseTracer

    class Collect(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list = []

        def _persist_run(self, run) -> None:  # noqa: ANN001
            self.runs.append(run)

    def walk(run, out):  # noqa: ANN001, ANN202
        out.append(run)
        for child in run.child_runs:
            walk(child, out)
        return out

    collector = Collect()
    loaded = load_instance(sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[0])
    agent = OracleGraphAgent(memories)
    original = agent.helper.graph.invoke
    agent.helper.graph.invoke = lambda payload, config, context: original(  # type: ignore[method-assign]
        payload, {**config, "callbacks": [collector]}, context=context)
    record, result = run_instance(loaded, agent, SymbolicEnv())
    runs = walk(collector.runs[0], [])
    execute = next(r for r in runs if r.name == "execute")
    children = [c.name for c in execute.child_runs if c.run_type == "tool"]
    assert children == [t[0] for t in result.trace][: len(children)] and children
    assert all("world" not in (r.inputs or {}) and "world" not in (r.outputs or {}) for r in runs)
