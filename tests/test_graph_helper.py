"""Every path of the HELPER graph, driven by LangChain's fake chat models (test doubles for the LLM).

The environment, executor, memories (Chroma in a temporary folder) and LangGraph runtime are the
real ones; only the chat model is scripted, and the embeddings are the fast hashing embedder.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.helper import FEEDBACK_QUESTION, HelperConfig, HelperContext, build_graph
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.teach import check_task, default_registry, feedback_from_progress
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state

COFFEE = """mug = InteractionObject("Mug", attributes=["clean"])
mug.clean()
coffee_machine = InteractionObject("CoffeeMachine")
mug.pickup_and_place(coffee_machine)
coffee_machine.toggle_on()"""


def fence(program: str) -> str:
    return f"```python\n{program}\n```"


class ScriptedChat(FakeListChatModel):
    """FakeListChatModel that fails loudly when asked more often than scripted."""

    def _call(self, *args, **kwargs):  # noqa: ANN002, ANN003
        if self.i >= len(self.responses):
            raise AssertionError("the chat model was called more often than scripted")
        return super()._call(*args, **kwargs)


@pytest.fixture()
def memories(tmp_path: Path) -> dict:
    embedder = get_embedder("hash")
    path = tmp_path / "memory"
    return {
        "examples": ExampleMemory(path=path, embedder=embedder),
        "corrections": CorrectionMemory(path=path, embedder=embedder),
        "routines": RoutineMemory(path=path, embedder=embedder),
    }


def kitchen(seed: int = 3, dirty_mugs: bool = True) -> dict:
    """A kitchen whose mugs, plates and apples stand in plain sight on one counter (no search needed)."""
    state = generate_scene(seed, "Kitchen")
    counter = max((o for o in state.objects.values() if o.object_type == "CounterTop"), key=lambda o: -len(o.contents))
    for obj in list(state.objects.values()):
        if obj.object_type in ("Mug", "Plate", "Apple") and obj.parent_id != counter.object_id:
            state.objects[obj.parent_id].contents.remove(obj.object_id)
            obj.parent_id = counter.object_id
            counter.contents.append(obj.object_id)
        if obj.object_type == "Mug" and dirty_mugs:
            obj.is_dirty = True
    return export_state(state)


def run(graph, world: dict, request: str, context: HelperContext, thread: str = "t", user: str | None = None) -> dict:
    """Invoke the graph on a fresh environment at `world`; the output carries that env as `_env`."""
    env = SymbolicEnv()
    env.reset(world)
    context.env = env
    out = graph.invoke({"request": request, "user": user}, {"configurable": {"thread_id": thread}}, context=context)
    return {**out, "_env": env}


def coffee_done(env: SymbolicEnv) -> bool:
    return check_task(default_registry().instantiate("Coffee"), env.objects_metadata()).success


def eval_context(chat, memories: dict, task_name: str = "Coffee", **config) -> HelperContext:
    """An evaluation's context: feedback is the checker's sentence on the live environment."""
    task = default_registry().instantiate(task_name)
    context = HelperContext(chat_model=chat, config=HelperConfig(**config), **memories)
    context.feedback = lambda: feedback_from_progress(check_task(task, context.env.objects_metadata()))
    return context


def test_plan_ok_path(memories: dict) -> None:
    chat = ScriptedChat(responses=[fence(COFFEE)])
    out = run(build_graph(), kitchen(), "make me a coffee please", eval_context(chat, memories))
    assert out["outcome"] == "success"
    assert coffee_done(out["_env"])
    assert [line.split(":")[0] for line in out["log"]] == ["retrieve", "plan", "validate", "execute", "feedback", "memorize"]
    assert out["plan_attempts"] == 1 and out["_env"].steps > 0
    assert "world" not in out  # an evaluation keeps the household out of the state


def test_invalid_program_is_sent_back_and_retried(memories: dict) -> None:
    chat = ScriptedChat(responses=["import os\nos.remove('x')", fence(COFFEE)])
    context = eval_context(chat, memories)
    out = run(build_graph(), kitchen(), "coffee please", context)
    assert out["plan_attempts"] == 2 and out["outcome"] == "success"
    assert any("rejected" in line and "import" in line for line in out["log"])
    # The second planner call saw the parser's message.
    assert context.usage.n_calls == 2


def test_invalid_programs_until_attempts_run_out(memories: dict) -> None:
    chat = ScriptedChat(responses=["while True:\n    pass"] * 2)
    out = run(build_graph(), kitchen(), "coffee please", eval_context(chat, memories, max_plan_attempts=2))
    assert out["outcome"] == "invalid_program" and out["plan_attempts"] == 2


def test_unseen_object_goes_to_the_llm_locator(memories: dict) -> None:
    state = generate_scene(3, "Kitchen")
    cabinet = next(o for o in state.objects.values() if o.object_type == "Cabinet")
    for obj in list(state.objects.values()):
        if obj.object_type == "Mug":  # hide every mug in one closed cabinet
            state.objects[obj.parent_id].contents.remove(obj.object_id)
            obj.parent_id = cabinet.object_id
            cabinet.contents.append(obj.object_id)
            obj.is_dirty = True
    chat = ScriptedChat(responses=[fence(COFFEE), "Cabinet, Fridge"])
    out = run(build_graph(), export_state(state), "make coffee", eval_context(chat, memories))
    labels = [line.split(":")[0] for line in out["log"]]
    assert labels[:6] == ["retrieve", "plan", "validate", "execute", "locate", "execute"]
    assert "locate: Mug found" in out["log"]
    assert out["outcome"] == "success" and coffee_done(out["_env"])


def test_failure_is_diagnosed_and_corrected(memories: dict) -> None:
    program = 'apple = InteractionObject("Apple")\nmicrowave = InteractionObject("Microwave")\napple.pickup_and_place(microwave)'
    correction = '# the microwave is closed: open it first\nmicrowave = InteractionObject("Microwave")\nmicrowave.open()'
    chat = ScriptedChat(responses=[fence(program), fence(correction)])
    context = eval_context(chat, memories, prechecks=False, feedback_rounds=0)
    out = run(build_graph(), kitchen(), "put an apple in the microwave", context)
    labels = [line.split(":")[0] for line in out["log"]]
    assert labels == ["retrieve", "plan", "validate", "execute", "correct", "execute", "execute", "finish"]
    assert "must be open" in out["log"][3]
    assert "open it first" in out["log"][4]
    assert out["log"][5] == "execute: correction done"
    env = out["_env"]
    microwave = next(o for o in env.state.objects.values() if o.object_type == "Microwave")
    assert any(env.state.objects[c].object_type == "Apple" for c in microwave.contents)
    assert out["outcome"] == "done"


# The planner's replan (`missing_parts` off): a correction read into its missing part is
# tests/test_missing_parts.py's and tests/test_eval_requests.py's.
def test_feedback_leads_to_replan_and_success(memories: dict) -> None:
    partial = 'mug = InteractionObject("Mug")\nmug.pickup()'
    chat = ScriptedChat(responses=[fence(partial), fence(COFFEE)])
    context = eval_context(chat, memories, feedback_rounds=1, missing_parts=False)
    out = run(build_graph(), kitchen(), "make me a coffee", context)
    labels = [line.split(":")[0] for line in out["log"]]
    assert labels == ["retrieve", "plan", "validate", "execute", "feedback", "replan", "validate", "execute", "feedback", "memorize"]
    assert "mug" in out["log"][4].lower()  # the checker's unmet condition became the feedback
    assert out["outcome"] == "success" and coffee_done(out["_env"])


def test_a_replan_that_repeats_the_failed_program_is_sent_back_and_sampled_again(memories: dict) -> None:
    partial = 'mug = InteractionObject("Mug")\nmug.pickup()'
    # The greedy replan repeats the failed program (with a comment and other layout): it does not run.
    same = '# pick up the mug\nmug = InteractionObject( "Mug" )\n\nmug.pickup()'
    chat = ScriptedChat(responses=[fence(partial), fence(same), fence(COFFEE)])
    context = eval_context(chat, memories, feedback_rounds=1, missing_parts=False)
    out = run(build_graph(), kitchen(), "make me a coffee", context)
    labels = [line.split(":")[0] for line in out["log"]]
    assert labels == ["retrieve", "plan", "validate", "execute", "feedback", "replan", "replan", "validate", "execute",
                      "feedback", "memorize"]
    assert "attempt 1 repeated the failed program" in out["log"][6]
    assert out["outcome"] == "success" and coffee_done(out["_env"])


def test_replans_stop_repeating_within_the_attempt_budget(memories: dict) -> None:
    partial = 'mug = InteractionObject("Mug")\nmug.pickup()'
    chat = ScriptedChat(responses=[fence(partial)] * 4)  # the plan, then three identical replans
    context = eval_context(chat, memories, feedback_rounds=1, missing_parts=False)
    out = run(build_graph(), kitchen(), "make me a coffee", context)
    repeated = [line for line in out["log"] if "attempt" in line and line.endswith("repeated the failed program")]
    assert len(repeated) == 3 and out["outcome"] == "repeated_program"
    assert [line.split(":")[0] for line in out["log"]].count("execute") == 1  # the repeat never ran
    assert out["log"][-2:] == ["replan: every attempt repeated the failed program; it is not run again",
                               "finish: repeated_program"]


def test_a_repeated_replan_asks_again_while_rounds_remain(memories: dict) -> None:
    """A bare "no" gives the replan nothing to change: the repeat is not run, the person is asked
    again, and the replan from the next answer runs."""
    partial = 'mug = InteractionObject("Mug")\nmug.pickup()'
    chat = ScriptedChat(responses=[fence(partial)] * 4 + [fence(COFFEE)])  # plan, three repeats, then a new program
    context = eval_context(chat, memories, feedback_rounds=2, missing_parts=False)
    out = run(build_graph(), kitchen(), "make me a coffee", context)
    labels = [line.split(":")[0] for line in out["log"]]
    assert labels == ["retrieve", "plan", "validate", "execute", "feedback", "replan", "replan", "replan", "replan",
                      "replan", "feedback", "replan", "validate", "execute", "feedback", "memorize"]
    assert out["log"][9] == "replan: every attempt repeated the failed program; it is not run again; asking what is missing"
    assert labels.count("execute") == 2  # the repeat never ran
    assert out["outcome"] == "success" and coffee_done(out["_env"])


def test_no_feedback_rounds_means_no_replan(memories: dict) -> None:
    partial = 'mug = InteractionObject("Mug")\nmug.pickup()'
    chat = ScriptedChat(responses=[fence(partial)])
    out = run(build_graph(), kitchen(), "make me a coffee", eval_context(chat, memories, feedback_rounds=0))
    assert out["outcome"] == "done" and not coffee_done(out["_env"])


def test_chat_asks_the_person_and_memorizes_the_routine(memories: dict) -> None:
    graph = build_graph(InMemorySaver())
    program = 'plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()'
    env = SymbolicEnv()
    env.reset(kitchen())
    # the plan, then the reading of the person's "yes, thanks"
    context = HelperContext(env=env, chat_model=ScriptedChat(responses=[fence(program), "satisfied"]), keep_snapshots=True,
                            **memories)
    config = {"configurable": {"thread_id": "mary-1"}}
    first = graph.invoke({"request": "Perform the Mary cleaning: wash a plate", "user": "mary"}, config, context=context)
    assert first["__interrupt__"][0].value["question"] == FEEDBACK_QUESTION
    asked = graph.invoke(Command(resume="yes, thanks"), config, context=context)
    # what will be remembered is shown before it is stored
    confirm = asked["__interrupt__"][0].value
    assert confirm["kind"] == "confirm_routine" and confirm["routine"] == "the mary cleaning"
    assert confirm["question"] == "I'll remember the mary cleaning as: the plate clean. Store it?"
    assert memories["routines"].routines(user="mary") == []
    out = graph.invoke(Command(resume="yes"), config, context=context)
    assert out["outcome"] == "success"
    routines = memories["routines"].routines(user="mary")
    assert [r.name for r in routines] == ["the mary cleaning"]
    assert memories["routines"].routines(user="bob") == []


def test_routine_recalled_in_a_new_process(tmp_path: Path) -> None:
    """A routine taught in one process is recalled, without the LLM, in another."""
    memory = tmp_path / "memory"
    script = textwrap.dedent(
        f"""
        import sys
        from langchain_core.language_models.fake_chat_models import FakeListChatModel
        from langgraph.types import Command
        from langgraph.checkpoint.memory import InMemorySaver
        from helper_agent.envs.symbolic import SymbolicEnv
        from helper_agent.graphs.helper import HelperContext, build_graph
        from helper_agent.memory.corrections import CorrectionMemory
        from helper_agent.memory.embeddings import get_embedder
        from helper_agent.memory.examples import ExampleMemory
        from helper_agent.memory.routines import RoutineMemory
        from helper_agent.world.generator import generate_scene
        from helper_agent.world.metadata import export_state
        e = get_embedder("hash")
        mems = dict(examples=ExampleMemory(path={str(memory)!r}, embedder=e), corrections=CorrectionMemory(path={str(memory)!r}, embedder=e),
                    routines=RoutineMemory(path={str(memory)!r}, embedder=e))
        program = 'plate = InteractionObject("Plate", attributes=["clean"])\\nplate.clean()\\nplate.put_down()'
        # the plan (when teaching), then the reading of the person's "yes"
        responses = (["```python\\n" + program + "\\n```"] if sys.argv[1] == "teach" else []) + ["satisfied"]
        env = SymbolicEnv()
        ctx = HelperContext(env=env, chat_model=FakeListChatModel(responses=responses), **mems)
        graph = build_graph(InMemorySaver())
        config = {{"configurable": {{"thread_id": sys.argv[1]}}}}
        request = "Perform the Mary cleaning: wash a plate" if sys.argv[1] == "teach" else "Do the Mary cleaning"
        state = generate_scene(5, "Kitchen")
        for o in state.objects.values():
            if o.object_type == "Plate": o.is_dirty = True
        env.reset(export_state(state))
        graph.invoke({{"request": request, "user": "mary"}}, config, context=ctx)
        out = graph.invoke(Command(resume="yes"), config, context=ctx)
        if out.get("__interrupt__"):  # the routine to store, shown for confirmation
            out = graph.invoke(Command(resume="yes"), config, context=ctx)
        print("CALLS", [call.name for call in ctx.usage.calls])
        print("LOG", " | ".join(out["log"]))
        """
    )
    taught = subprocess.run([sys.executable, "-c", script, "teach"], capture_output=True, text=True, timeout=300)
    assert taught.returncode == 0, taught.stderr[-2000:]
    assert "memorize: routine 'the mary cleaning'" in taught.stdout
    recalled = subprocess.run([sys.executable, "-c", script, "recall"], capture_output=True, text=True, timeout=300)
    assert recalled.returncode == 0, recalled.stderr[-2000:]
    assert "adapt: the mary cleaning, unchanged" in recalled.stdout
    assert "CALLS ['read_feedback']" in recalled.stdout  # no plan: only the person's answer was read


def test_ablation_switches_reach_the_nodes(memories: dict) -> None:
    chat = ScriptedChat(responses=[fence(COFFEE)])
    context = eval_context(chat, memories, memory_augmented=False, k=2)
    out = run(build_graph(), kitchen(), "make me a coffee", context)
    records = sorted(memories["examples"].seed_records(), key=lambda r: (r.task_family, r.id))
    families = sorted({r.task_family for r in records})[:2]
    fixed = [next(r.id for r in records if r.task_family == f) for f in families]
    assert [e["id"] for e in out["examples"]] == fixed
    assert all(e["score"] is None for e in out["examples"])


def test_a_sent_back_replan_carries_the_repeated_program_and_the_reason() -> None:
    from helper_agent.graphs.helper.prompts import replanner_messages

    plain = replanner_messages("make me a coffee", "mug.pickup()", "the mug is not filled", [])
    retry = replanner_messages("make me a coffee", "mug.pickup()", "the mug is not filled", [],
                               error="it is the program that did not finish the task, unchanged", previous="mug.pickup()")
    assert retry[: len(plain)] == plain  # the same prompt, then the repeated answer and why it was sent back
    assert "mug.pickup()" in str(retry[-2].content) and "did not finish the task" in str(retry[-1].content)
