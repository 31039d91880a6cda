"""P-RAG's action layer can do every task: replaying each family's gold interactions through it
(grammar, refusals, executor) completes the task, walking back to objects seen earlier and searching
for ones not seen yet. Without the memory of what was seen, some families cannot be done at all."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.episodes import SceneTask, prepared_scenes, run_program
from helper_agent.evals.benchmark.families import FAMILIES
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.prag import scene as prag_scene
from helper_agent.graphs.prag.actions import out_of_view, parse_step, step_cfg
from helper_agent.graphs.prag.agent import PRAGAgent, config_from_options
from helper_agent.graphs.prag.prompts import render_remembered
from helper_agent.program.cfg_match import Matcher
from helper_agent.teach import check_task, default_registry

STEP_NAMES = {"Pickup": "pickup", "Place": "put", "Open": "open", "Close": "close", "ToggleOn": "toggle_on",
              "ToggleOff": "toggle_off", "Slice": "slice", "Pour": "pour"}
REMEMBERED = re.compile(r"^Seen before, out of view \(goto only\): (.*)$", re.M)


def expand(line: str) -> list[str]:
    """The ids of a `render_remembered` line (`Mug_1, BreadSliced_2-4`)."""
    ids = []
    for part in line.split(", "):
        cls, _, numbers = part.rpartition("_")
        first, _, last = numbers.partition("-")
        ids += [f"{cls}_{n}" for n in range(int(first), int(last or first) + 1)]
    return ids


class GoldReplayer(BaseChatModel):
    """Answers with the next gold interaction on the object the gold program used, read from the
    prompt: act on it when it is in view, `goto` it when the prompt lists it as seen before, else
    `search` its class. An object the agent never sees (the gold program found another plate than
    the one in view) is stood in for by a seen one of its class that the plan does not use. The
    episode's alias table (`world`, set by `replay`) is the test's window on which short id is
    which environment object."""

    plan: list[Any] = []
    world: Any = None
    pos: int = 0
    searched: int = 0
    stand_in: dict[str, str] = {}

    @property
    def _llm_type(self) -> str:
        return "gold-replayer"

    def _next(self, user: str) -> str:
        if self.pos >= len(self.plan):
            return "done()"
        graph = user.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
        held = user.split("Holding: ", 1)[1].split("\n", 1)[0]
        in_view = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M) + ([held] if held != "nothing" else [])
        seen = [m for line in REMEMBERED.findall(user) for m in expand(line)]
        name, oid = self.plan[self.pos]
        oid = self.stand_in.get(oid, oid)
        alias = self.world.alias.get(oid)
        if alias is None and self.searched:
            object_type = self.world.executor.env_type(oid)
            used = {o for _, o in self.plan} | set(self.stand_in.values())
            spare = [e for e, a in self.world.alias.items() if self.world.type_of[a] == object_type and e not in used]
            if spare:
                self.stand_in[oid] = spare[0]
                alias = self.world.alias[spare[0]]
        if alias in in_view:
            self.pos += 1
            self.searched = 0
            return f"{name}({alias})"
        if alias in seen and not self.searched:
            self.searched += 1
            return f"goto({alias})"
        self.searched += 1
        return f"search({self.world.executor.env_type(oid)})"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = "Action: " + self._next(str(messages[1].content))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def replay(scene: SceneTask, **options: str) -> tuple[bool, list[str], GoldReplayer]:
    """Run the gold program, then P-RAG on the same start with the gold interactions replayed."""
    gold = run_program(copy.deepcopy(scene.state), scene.instance.program, scene.instance.task_name,
                       scene.instance.params)
    assert gold.success
    plan = [(STEP_NAMES[a], oid) for a, oid, ok in gold.actions if oid and ok and a in STEP_NAMES]
    env = SymbolicEnv()
    env.reset(copy.deepcopy(scene.state))
    chat = GoldReplayer(plan=plan, stand_in={})

    class Bound(PRAGAgent):
        def run(self, setup: EpisodeSetup) -> Any:
            original_init = prag_scene.EpisodeWorld.__init__

            def init(world: Any, *args: Any, **kwargs: Any) -> None:
                original_init(world, *args, **kwargs)
                chat.world = world

            prag_scene.EpisodeWorld.__init__ = init  # type: ignore[method-assign]
            try:
                return super().run(setup)
            finally:
                prag_scene.EpisodeWorld.__init__ = original_init  # type: ignore[method-assign]

    agent = Bound(chat, config_from_options({"max_steps": str(4 * len(plan) + 20), **options}))
    result = agent.run(EpisodeSetup(env=env, request=scene.instance.task_name))
    task = default_registry().instantiate(scene.instance.task_name, scene.instance.params)
    return check_task(task, env.objects_metadata()).success, result.log, chat


Runner = Callable[..., dict[str, Any]]


@pytest.fixture
def episode(tmp_path: Path) -> Runner:
    """Runs P-RAG on one generated episode: `episode(out, answers_or_model, max_steps=..., **options)`."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from helper_agent.evals.benchmark import generate_benchmark
    from helper_agent.evals.engine.runner import run_episode
    from helper_agent.evals.engine.spec import EvalSpec

    bench = tmp_path / "bench"
    generate_benchmark(bench, seed=0, sizes={"valid_unseen": 1})
    instance = str(next((bench / "tfd_instances" / "valid_unseen").glob("*.json")))

    def run(out: str, chat: list[str] | BaseChatModel, max_steps: int = 3, **options: str) -> dict[str, Any]:
        model = FakeListChatModel(responses=chat) if isinstance(chat, list) else chat
        spec = EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / out), planner="prag", feedback=0,
                        agent_options={"max_steps": str(max_steps), **options})
        return run_episode(spec, instance, model)

    return run


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_can_be_done_with_the_step_actions(family: str) -> None:
    for scene in prepared_scenes(family, 2):
        done, log, chat = replay(scene)
        assert done, f"{family} seed {scene.seed}: replayed {chat.pos} of {len(chat.plan)}\n" + "\n".join(log[-8:])
        assert not [line for line in log if "rejected" in line or "failed:" in line], log
        assert chat.pos == len(chat.plan)


def test_without_the_memory_of_what_was_seen_objects_walked_away_from_are_lost() -> None:
    # Cleaning every pot: after the first one the agent stands at the sink; what it saw elsewhere is
    # out of view, `search` looks only for what it has not seen, and only `goto` from memory goes back.
    results = [replay(scene, remembered="0")[0] for family in ("clean_all_x", "boil_x", "coffee")
               for scene in prepared_scenes(family, 2)]
    assert not any(results)


# ------------------------------------------------------------------------------------ the remembered ids
@pytest.mark.parametrize(("ids", "line"), [
    (["Mug_1"], "Mug_1"),
    (["BreadSliced_3", "BreadSliced_2", "Plate_1", "BreadSliced_4", "BreadSliced_9"], "BreadSliced_2-4, BreadSliced_9, Plate_1"),
    (["Cabinet_2", "Mug_10", "Cabinet_1", "Mug_11"], "Cabinet_1-2, Mug_10-11"),
])
def test_remembered_ids_are_listed_with_ranges(ids: list[str], line: str) -> None:
    assert render_remembered(ids) == line


@given(st.lists(st.tuples(st.sampled_from(["Mug", "BreadSliced", "StoveKnob"]), st.integers(1, 30)), min_size=1,
                unique=True))
def test_a_remembered_line_names_exactly_its_ids(pairs: list[tuple[str, int]]) -> None:
    ids = [f"{cls}_{n}" for cls, n in pairs]
    assert sorted(expand(render_remembered(ids))) == sorted(ids)


def test_an_object_out_of_view_may_only_be_walked_to() -> None:
    refusals = out_of_view(["Mug_2"])
    assert "goto(Mug_2)" not in refusals
    assert refusals["pickup(Mug_2)"] == "pickup(Mug_2): Mug_2 is out of view; goto(Mug_2) first"
    matcher = Matcher(step_cfg(["Mug_1", "Mug_2"], ["Mug"], list(refusals)))
    assert matcher.matches("Action: goto(Mug_2)") and matcher.matches("Action: pickup(Mug_1)")
    assert not matcher.matches("Action: pickup(Mug_2)") and not matcher.matches("Action: open(Mug_2)")
    assert parse_step("Action: goto(Mug_2)", ["Mug_1", "Mug_2"], ["Mug"]).arg == "Mug_2"


def test_a_model_without_a_grammar_is_told_to_walk_first(episode: Runner) -> None:
    def ids(graph: str) -> list[str]:
        return re.findall(r"^([A-Za-z]+_\d+)", graph, re.M)

    # Walk to the farthest object the look-around showed; some of the others go out of view.
    first = ids(episode("a", ["Action: done()"])["subgoals"][0][2])
    walked = episode("b", [f"Action: goto({first[-1]})", "Action: done()"])
    gone = [i for i in first if i not in ids(walked["subgoals"][1][2]) and i != first[-1]]
    assert gone
    record = episode("c", [f"Action: goto({first[-1]})", f"Action: pickup({gone[0]})", "Action: done()"])
    assert f"step 2 rejected: pickup({gone[0]}): {gone[0]} is out of view; goto({gone[0]}) first" in record["log"]
    assert [s[0] for s in record["subgoals"]] == [f"goto({first[-1]})", "done()"]


@pytest.mark.parametrize(("value", "ok"), [("0", True), ("12", True), ("-1", False), ("x", False)])
def test_the_remembered_switch_is_checked(value: str, ok: bool) -> None:
    if ok:
        assert config_from_options({"remembered": value}).max_remembered == int(value)
    else:
        with pytest.raises(ValueError, match="remembered"):
            config_from_options({"remembered": value})


# ------------------------------------------------------------------------------------ pacing between places
def _step(action: str, before: str, changed: bool | None = True, state: str | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"action": action, "before": before}
    if changed is not None:
        step["changed"] = changed
    if state is not None:
        step["state"] = state
    return step


def test_an_action_taken_before_from_the_same_known_state_would_go_round_the_loop_again() -> None:
    from helper_agent.graphs.object_actions import recurrent_actions

    # Toaster on, toaster off: everything the agent knows is as it was (K0) before it switched it on.
    loop = [_step("toggle_on(Toaster_1)", "F0", state="K0"), _step("toggle_off(Toaster_1)", "F1", state="K1")]
    assert recurrent_actions(loop, "K0") == ["toggle_on(Toaster_1)"]
    assert recurrent_actions(loop, "K1") == ["toggle_off(Toaster_1)"]
    assert recurrent_actions(loop, "K2") == []  # anything changed: everything is offered again
    # Walking there and back is the same loop; ending the episode, or an unparsable answer, is never refused.
    walks = [_step("goto(A_1)", "F0", state="K0"), _step("goto(B_1)", "F1", state="K1"),
             _step("done()", "F0", state="K0"), _step("(none)", "F0", changed=None, state="K0")]
    assert recurrent_actions(walks, "K0") == ["goto(A_1)"]


def test_known_states_differ_by_pose_hands_and_what_is_known() -> None:
    from types import SimpleNamespace

    from helper_agent.graphs.object_actions import known_state_fingerprint
    from helper_agent.perception.tracker import TrackedObject

    def obs(pose: tuple[int, ...] = (1, 1, 0, 0), held: str | None = None) -> Any:
        return SimpleNamespace(pose=pose, held_id=held)

    toaster = TrackedObject("T1", "Toaster", (1.0, 0.9, 1.0), attributes={"on": False})
    base = known_state_fingerprint(obs(), [toaster])
    assert base == known_state_fingerprint(obs(), [TrackedObject("T1", "Toaster", (1.0, 0.9, 1.0), attributes={"on": False})])
    on = TrackedObject("T1", "Toaster", (1.0, 0.9, 1.0), attributes={"on": True})
    mug = TrackedObject("M1", "Mug", (2.0, 0.9, 1.0))
    others = {known_state_fingerprint(obs((1, 2, 0, 0)), [toaster]), known_state_fingerprint(obs(held="M1"), [toaster]),
              known_state_fingerprint(obs(), [on]), known_state_fingerprint(obs(), [toaster, mug])}
    assert base not in others and len(others) == 4


def test_a_search_that_found_nothing_is_not_repeated_until_something_changes() -> None:
    from helper_agent.graphs.object_actions import failed_searches

    failed = {"action": "search(Potato)", "before": "F0", "changed": True,
              "observation": "no Potato found that you have not seen; hands empty"}
    found = {**failed, "action": "search(Pot)", "observation": "found Pot_2; hands empty"}
    assert failed_searches([failed, _step("goto(A_1)", "F1")]) == ["search(Potato)"]
    assert failed_searches([found, _step("goto(A_1)", "F1")]) == []  # it found one: another may be found
    # Other searches since do not make one; slicing makes new objects: after it, the search may find one.
    assert failed_searches([failed, _step("search(Pot)", "F1"), _step("goto(A_1)", "F2")]) == ["search(Potato)"]
    assert failed_searches([failed, _step("slice(Potato_1)", "F1")]) == []


STEPS = st.builds(_step, st.sampled_from(["goto(A_1)", "search(Mug)", "open(C_1)", "done()", "(none)"]),
                  st.sampled_from(["F0", "F1"]), st.sampled_from([True, False, None]),
                  st.sampled_from(["K0", "K1", "K2"]))


@given(st.lists(STEPS, max_size=12), st.sampled_from(["K0", "K1", "K2", "K3"]))
def test_only_actions_taken_from_the_same_state_are_refused(history: list[dict[str, Any]], state: str) -> None:
    from helper_agent.graphs.object_actions import recurrent_actions

    refused = recurrent_actions(history, state)
    assert len(refused) == len(set(refused)) and "done()" not in refused and "(none)" not in refused
    assert set(refused) == {s["action"] for s in history if s["state"] == state} - {"done()", "(none)"}


class Pacer(BaseChatModel):
    """Walks back and forth between two objects; once refused, says done()."""

    places: list[str] = []
    walks: int = 0

    @property
    def _llm_type(self) -> str:
        return "pacer"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if "Your last answer was rejected" in str(messages[-1].content):
            text = "Action: done()"
        else:
            text = f"Action: goto({self.places[self.walks % 2]})"
            self.walks += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_pacing_between_two_places_is_refused_once_it_repeats(episode: Runner) -> None:
    shown = re.findall(r"^([A-Za-z]+_\d+)", episode("a", ["Action: done()"])["subgoals"][0][2], re.M)
    places = [shown[-1], shown[0]]  # the farthest and the nearest object of the first view
    record = episode("b", Pacer(places=places), max_steps=12)
    actions = [s[0] for s in record["subgoals"]]
    assert actions[-1] == "done()" and len(actions) < 12, actions
    assert any("was done before when everything you know was as it is now" in line for line in record["log"]), \
        record["log"]
    # With the refusal off it paces until the step cap.
    off = episode("c", Pacer(places=places), max_steps=12, refuse_futile="off")
    assert off["outcome"] == "max_steps" and all(s[0].startswith("goto(") for s in off["subgoals"])


def test_a_second_search_for_what_is_not_there_is_refused(episode: Runner) -> None:
    absent = next(cls for cls in ("Television", "Pillow", "Laptop", "Towel", "Candle")
                  if episode(cls, [f"Action: search({cls})", "Action: done()"])["subgoals"][0][1].startswith("no "))
    record = episode("again", [f"Action: search({absent})", f"Action: search({absent})", "Action: done()"])
    assert [s[0] for s in record["subgoals"]] == [f"search({absent})", "done()"]
    assert f"step 2 rejected: search({absent}) found nothing, and you have only walked or searched since" in \
        "\n".join(record["log"])


def test_a_failed_search_names_what_was_seen_of_the_class(episode: Runner) -> None:
    # The 1.5B searched for the potato it had been shown; with none left unseen the search says
    # where the ones it saw are, instead of only "no Potato found".
    shown = re.findall(r"^(([A-Za-z]+)_\d+)", episode("look", ["Action: done()"], max_steps=2)["subgoals"][0][2], re.M)
    for cls in dict.fromkeys(c for _, c in shown):
        text = episode(cls, [f"Action: search({cls})", "Action: done()"], max_steps=2)["subgoals"][0][1]
        if text.startswith("no "):
            break
    else:
        raise AssertionError("every class shown had another object not seen yet")
    seen = ", ".join(i for i, c in shown if c == cls)
    assert text.startswith(f"no {cls} found that you have not seen (seen before: {seen}; goto one)"), text
