"""`subgoals=on` on the embedded world: the request's open parts (`understanding/parts.py`), read
from the dialogue and checked against the household, each acted out by the shared executor; the
step-wise methods choose among them (`graphs/declarations.choose_part`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from episodes import family_episode
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_episode
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.declarations import (
    Aids,
    choose_part,
    open_parts,
    part_rules,
    refuse_declared_aids,
    run_part,
)
from helper_agent.program.cfg_match import Matcher
from helper_agent.teach.instances import load_instance
from helper_agent.tools.executor import Executor
from helper_agent.understanding.asked import Asked
from helper_agent.understanding.outcome import Lack
from helper_agent.understanding.parts import part_of

LISTED = re.compile(r"^Subgoals you can take now[^:]*\): (.+)$", re.M)


class LastListed(BaseChatModel):
    """Chooses the last part the prompt lists (so the order is the model's, not the list's), with a
    thought when the prompt is a ReAct one; `done()` when none is listed. Records the prompts."""

    prompts: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "last-listed-part"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text)
        found = LISTED.findall(text)
        action = f"subgoal({found[-1].split('; ')[-1].strip()})" if found else "done()"
        content = f"Thought: that one\nAction: {action}" if "Thought:" in text else f"Action: {action}"
        message = AIMessage(content=content, usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench")
    generate_benchmark(path, seed=0, sizes={"valid_unseen": 8})
    return path


def _started(bench: Path, family: str) -> tuple[SymbolicEnv, str]:
    loaded = load_instance(family_episode(bench, family))
    env = SymbolicEnv()
    loaded.start(env)
    return env, loaded.dialogue


def test_a_salads_parts_are_read_from_the_dialogue_and_close_when_acted_out(bench: Path) -> None:
    env, dialogue = _started(bench, "salad")
    offered = open_parts(env, dialogue)
    assert len(offered.parts) >= 2 and offered.unmet
    assert any(p.label.startswith("put ") and "plate" in p.label for p in offered.parts)
    executor = Executor(env)
    for part in offered.parts:
        assert run_part(executor, part).startswith("done: "), part.program
    after = open_parts(env, dialogue)
    assert after.unmet == [] and after.parts == []


def test_what_no_program_makes_gets_no_part_and_the_method_takes_its_own_step(bench: Path) -> None:
    env, dialogue = _started(bench, "coffee")
    offered = open_parts(env, dialogue)
    assert "There is no coffee in a mug or a cup." in offered.unmet
    assert not any("coffee" in p.label for p in offered.parts)
    asked: list[str] = []
    if not offered.parts:
        assert choose_part(env, dialogue, [], 2, lambda *_: asked.append("x") or "") is None
    assert asked == []


def test_a_lone_part_is_taken_without_asking_and_done_follows_when_nothing_is_open(bench: Path) -> None:
    env, dialogue = _started(bench, "sliced_x")
    asked: list[str] = []
    choice = choose_part(env, dialogue, [], 2, lambda *_: asked.append("x") or "")
    assert choice is not None and asked == []
    assert choice.action.startswith("subgoal(slice the ") and "slice()" in choice.program
    assert run_part(Executor(env), open_parts(env, dialogue).parts[0]).startswith("done")
    done = choose_part(env, dialogue, [choice.action], 2, lambda *_: asked.append("x") or "")
    assert done is not None and done.action == "done()" and asked == []


def test_a_refused_answer_is_asked_again_with_the_labels_and_two_refusals_choose_nothing(bench: Path) -> None:
    env, dialogue = _started(bench, "salad")
    offered = open_parts(env, dialogue)
    last = offered.parts[-1]
    answers = iter(["Action: goto(Plate_1)", f"Action: subgoal({last.label})"])
    reasons: list[str | None] = []

    def ask(_offered: Any, reason: str | None, _attempt: int) -> str:
        reasons.append(reason)
        return next(answers)

    choice = choose_part(env, dialogue, [], 2, ask)
    assert choice is not None and choice.action == f"subgoal({last.label})" and choice.program == last.program
    assert reasons[0] is None and reasons[1] is not None and last.label in reasons[1]
    nothing = choose_part(env, dialogue, [], 2, lambda *_: "Action: done()")
    assert nothing is not None and nothing.action == "(none)" and "subgoal(" in nothing.rejected


def test_the_grammar_accepts_exactly_the_open_parts(bench: Path) -> None:
    env, dialogue = _started(bench, "salad")
    offered = open_parts(env, dialogue)
    matcher = Matcher(part_rules(offered.parts))
    for part in offered.parts:
        assert matcher.matches(f"Action: subgoal({part.label})")
    assert not matcher.matches("Action: done()")
    assert not matcher.matches("Action: subgoal(put the mug on the moon)")
    react = Matcher(part_rules(offered.parts, thought=True))
    assert react.matches(f"Thought: plate first\nAction: subgoal({offered.parts[0].label})")


def test_what_a_request_makes_is_served_as_made() -> None:
    """A toast to put on a plate is a toasted slice (made now when none is), not any bread slice."""
    part = part_of(Lack("The bread slice is not on the plate.", ("serve", "BreadSliced", "Plate", "toast")),
                   Asked(), {"BreadSliced", "Plate"})
    assert part is not None and 'attributes=["toasted"]' in part.program and part.label == "put the bread slice on the plate"


def test_the_embedded_world_takes_subgoals_and_still_refuses_the_other_declarations() -> None:
    refuse_declared_aids(Aids(subgoals=True), SymbolicEnv())
    with pytest.raises(ValueError, match="goal_steps=on"):
        refuse_declared_aids(Aids(goal_steps=True, subgoals=True), SymbolicEnv())


@pytest.mark.parametrize("planner", ["prag", "embodiedrag"])
def test_a_step_wise_method_does_a_salad_by_its_parts_in_its_models_order(bench: Path, tmp_path: Path,
                                                                        planner: str) -> None:
    chat = LastListed(prompts=[])
    spec = EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / "run"), planner=planner, feedback=0,
                    agent_options={"subgoals": "on"})
    record = run_episode(spec, str(family_episode(bench, "salad")), chat)
    actions = record["program"].splitlines()  # the actions taken, one a line (both methods)
    assert record["success"] == 1, record["log"]
    assert actions[-1] == "done()" and all(a.startswith("subgoal(") for a in actions[:-1])
    choices = [p for p in chat.prompts if "Subgoals you can take now" in p]
    assert choices and "Goals not met yet: " in choices[0]
    # the model chose the last listed part first: the list's order was not the one taken
    first_listed = LISTED.findall(choices[0])[-1].split("; ")
    assert actions[0] == f"subgoal({first_listed[-1]})" != f"subgoal({first_listed[0]})"
    without = run_episode(EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / "off"), planner=planner,
                                   feedback=0, agent_options={"max_steps": "2"}), str(family_episode(bench, "salad")),
                          LastListed(prompts=[]))
    assert without["program"] and "subgoal(" not in without["program"]


def _bowls(*dirty: bool) -> list[dict[str, Any]]:
    return [{"objectId": f"Bowl|{i}", "objectType": "Bowl", "isDirty": d, "parentReceptacles": []}
            for i, d in enumerate(dirty)]


@pytest.mark.parametrize(("words", "every"), [
    ("all the bowls are dirty, please clean them", ("Bowl",)),
    ("find all the bowls. wash them in the sink", ("Bowl",)),
    ("wash each of the bowls", ("Bowl",)),
    ("wash the bowl", ()),
    ("wash a bowl and all the mugs", ("Mug",)),
])
def test_the_words_quantify_over_all_of_a_kind(words: str, every: tuple[str, ...]) -> None:
    from helper_agent.understanding.asked import asked

    assert asked(words, {"Bowl", "Mug", "SinkBasin"}).every == every


def test_every_one_placed_when_the_words_say_every() -> None:
    from collections import Counter

    from helper_agent.understanding.asked import asked

    reading = asked("place every loaf of bread on a single plate", {"Bread", "Plate"}, Counter({"Bread": 3, "Plate": 1}))
    assert [(p.placed, p.where, p.count) for p in reading.placements] == [("Bread", "Plate", 3)]


def test_a_step_asked_of_all_of_a_kind_is_unmet_until_each_one_has_it() -> None:
    from helper_agent.understanding.outcome import lacks, unmet

    some_clean = _bowls(False, True, True)
    assert unmet("wash the bowl", some_clean) == []  # one is enough when the words say one
    found = lacks("all the bowls are dirty, please clean them", some_clean)
    assert [(lack.sentence, lack.want) for lack in found] == [("Not every bowl is clean.", ("every", "clean", "Bowl", "2"))]
    assert unmet("all the bowls are dirty, please clean them", _bowls(False, False)) == []
    part = part_of(found[0], Asked(), {"Bowl"})
    assert part is not None and part.label == "clean every bowl"
    assert "for i in range(2):" in part.program and 'attributes=["clean"]' in part.program
    assert part.program.rstrip().endswith("thing.put_down()")


def test_the_no_model_benchmark_takes_the_parts_in_the_listed_order(bench: Path, tmp_path: Path) -> None:
    from scripts import load_script

    first_listed = load_script("benchmarks/tfd_subgoal_order_bench.py").FirstListedPart()
    env, dialogue = _started(bench, "salad")
    listed = [p.label for p in open_parts(env, dialogue).parts]
    spec = EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / "run"), planner="prag", feedback=0,
                    agent_options={"subgoals": "on"})
    record = run_episode(spec, str(family_episode(bench, "salad")), first_listed)
    actions = record["program"].splitlines()
    assert record["success"] == 1 and actions[-1] == "done()"
    assert actions[0] == f"subgoal({listed[0]})"
