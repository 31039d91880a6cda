"""The issue's scenario through HELPER's graph: "slice a tomato and put a slice on a clean plate" sliced
the tomato and stopped; the correction's replan wrote the whole program again, `tomato.slice()`
included. The replanned program finishes without a search (no locate, no locator call) and without
cutting anything again. With the missing part read from the person's words (the default), the
replan asks no model at all and writes only the placement. The chat model is scripted; everything
else is real.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory

SLICE_ONLY = 'tomato = InteractionObject("Tomato")\ntomato.slice()\n'
WHOLE_REQUEST = (
    'tomato = InteractionObject("Tomato")\n'
    "tomato.slice()\n"
    'tomato_slice = InteractionObject("TomatoSliced")\n'
    'plate = InteractionObject("Plate")\n'
    "tomato_slice.pickup_and_place(plate)\n"
)


class ScriptedChat(FakeListChatModel):
    """Fails loudly when asked more often than scripted (a locator call would be one too many)."""

    def _call(self, *args, **kwargs):  # noqa: ANN002, ANN003
        if self.i >= len(self.responses):
            raise AssertionError("the chat model was called more often than scripted")
        return super()._call(*args, **kwargs)


def _context(tmp_path: Path, env: SymbolicEnv, responses: list[str], answers: list[str], **config: object) -> HelperContext:
    said = iter(answers)
    embedder = get_embedder("hash")
    return HelperContext(
        env=env, chat_model=ScriptedChat(responses=[f"```python\n{r}```" for r in responses]),
        examples=ExampleMemory(path=tmp_path / "memory", embedder=embedder),
        corrections=CorrectionMemory(path=tmp_path / "memory", embedder=embedder),
        feedback=lambda: next(said), config=HelperConfig(feedback_rounds=1, **config))  # type: ignore[arg-type]


def _on_plates(env: SymbolicEnv) -> list[object]:
    return [o for o in env.state.objects.values() if o.object_type == "TomatoSliced" and o.parent_id
            and env.state.objects[o.parent_id].object_type == "Plate"]


def test_a_first_plan_gets_the_placement_its_words_ask_for(tmp_path: Path) -> None:
    """The issue's first plan sliced and stopped; the placement the words ask for is added to it
    (`scoping.completed`), on a washed plate, with no second model call and no correction."""
    env = SymbolicEnv()
    env.reset(0, room_type="Kitchen")
    context = _context(tmp_path, env, [SLICE_ONLY], ["", ""])
    out = build_graph().invoke({"request": "slice a tomato and put a slice on a clean plate"},
                               {"configurable": {"thread_id": "t"}}, context=context)
    log = "\n".join(out["log"])
    assert out["outcome"] == "success", log
    assert "added 1 TomatoSliced on/in the Plate, as the request asks" in log
    assert "added clean to the Plate, as the request asks" in log
    ran = out["program"]
    assert ran.startswith(SLICE_ONLY) and "plate.clean()" in ran and "pickup_and_place(plate)" in ran
    assert _on_plates(env) and "locate:" not in log


def test_the_missing_placement_is_written_from_the_persons_words_without_a_model(tmp_path: Path) -> None:
    env = SymbolicEnv()
    env.reset(0, room_type="Kitchen")
    # One scripted program: a replan that asked the model would fail the test (ScriptedChat). The
    # request is only the slicing: a first plan of "... and put a slice on a clean plate" would get the
    # placement already (the test above), and the correction is what this test hears.
    context = _context(tmp_path, env, [SLICE_ONLY], ["no, you didn't put the tomato slice on the plate", ""])
    out = build_graph().invoke({"request": "slice a tomato"},
                               {"configurable": {"thread_id": "t"}}, context=context)
    log = "\n".join(out["log"])
    assert out["outcome"] == "success", log
    assert "replan: the missing part, read from the feedback: place TomatoSliced in Plate" in log
    assert out["program"] == 'plate = InteractionObject("Plate")\ntomato_slice = InteractionObject("TomatoSliced")\n' \
                             "tomato_slice.pickup_and_place(plate)\n"
    assert [row[0] for row in out["execution"]["trace"]].count("Slice(Tomato)") == 1  # cut once, in the first round
    assert _on_plates(env) and "locate:" not in log
    assert [p.strip() for p in out["ran_programs"]] == [SLICE_ONLY.strip()]


def test_the_replanned_slice_is_done_without_a_search(tmp_path: Path) -> None:
    env = SymbolicEnv()
    env.reset(0, room_type="Kitchen")
    answers = iter(["you didn't put a tomato slice on the plate", ""])
    embedder = get_embedder("hash")
    context = HelperContext(
        env=env,
        chat_model=ScriptedChat(responses=[f"```python\n{SLICE_ONLY}```", f"```python\n{WHOLE_REQUEST}```"]),
        examples=ExampleMemory(path=tmp_path / "memory", embedder=embedder),
        corrections=CorrectionMemory(path=tmp_path / "memory", embedder=embedder),
        feedback=lambda: next(answers),
        config=HelperConfig(feedback_rounds=1, missing_parts=False),  # the planner writes the replan
    )
    out = build_graph().invoke({"request": "slice a tomato and put a slice on a clean plate"},
                               {"configurable": {"thread_id": "t"}}, context=context)
    log = "\n".join(out["log"])
    assert out["outcome"] == "success", log
    assert "locate:" not in log
    trace = out["execution"]["trace"]
    slices = [row for row in trace if row[0].startswith("Slice(")]
    # [subgoal, status, actions]: the first round's slice acted, the replan's took no action at all
    assert len(slices) == 2 and slices[0][2] > 0 and slices[1][1:] == ["done", 0], trace
    on_plates = [o for o in env.state.objects.values() if o.object_type == "TomatoSliced" and o.parent_id
                 and env.state.objects[o.parent_id].object_type == "Plate"]
    assert on_plates
    assert env.steps < 400
