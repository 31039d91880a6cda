"""A request about nothing the household has is refused with the reason; one about things it has
(or about what the agent was shown how to make) is planned (`understanding/absent.py`).

Both ways over the embedded world's generated rooms: the household is the real generator's, the
vocabulary the packaged catalog and example requests the graph uses. The false-refusal side also
runs every held-out paraphrase of the packaged examples (written by others, for retrieval) in a
household holding the classes its example's program uses, and every request wording of the built-in
benchmark in households prepared for its task.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.dialogue import request_sentences
from helper_agent.evals.benchmark.episodes import prepared_scenes
from helper_agent.evals.benchmark.families import FAMILIES
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.facts import request_facts
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory, load_seed_examples, load_train_examples
from helper_agent.understanding.absent import Vocabulary, named_phrases, phrase_roles, refusal_for
from helper_agent.world.catalog import load_catalog

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")
EXAMPLES = Path(__file__).resolve().parents[1] / "helper_agent" / "prompts" / "examples"


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary.of(load_catalog(), [e.dialogue for e in [*load_seed_examples(), *load_train_examples()]])


def household(room: str, seed: int = 0) -> list[str]:
    env = SymbolicEnv()
    env.reset(seed, room_type=room)
    return [str(o["objectType"]) for o in env.objects_metadata()]


# Things no generated room holds and the catalog has no class for, each asked in a few ways.
IMPOSSIBLE = [
    ("can you mow the lawn", "lawn"),
    ("please mow the lawn with the lawn mower", "lawn"),
    ("feed the cat", "cat"),
    ("could you feed my cats?", "cats"),
    ("walk the dog please", "dog"),
    ("Hey, wash the car.", "car"),
    ("water the garden", "garden"),
    ("I want you to feed the goldfish", "goldfish"),
    ("fix the roof", "roof"),
    ("can you paint the fence", "fence"),
]


@pytest.mark.parametrize("room", ROOMS)
@pytest.mark.parametrize(("request_", "thing"), IMPOSSIBLE)
def test_a_request_about_nothing_here_is_refused_with_the_reason(vocabulary, room, request_, thing) -> None:
    refusal = refusal_for(request_, household(room), vocabulary)
    assert refusal is not None, request_
    sentence = refusal.sentence()
    assert sentence.startswith("I can't ") and f"no {thing}" in sentence and sentence.endswith(" in this house.")
    # the person's words, without the politeness around them
    assert not re.search(r"\b(can you|could you|please|hey|i want you to)\b", sentence, re.I), sentence


def test_the_sentence_reads_like_a_person_said_it(vocabulary) -> None:
    assert refusal_for("can you mow the lawn", household("Kitchen"), vocabulary).sentence() == \
        "I can't mow the lawn: there is no lawn in this house."
    assert refusal_for("feed the cat", household("Bedroom"), vocabulary).sentence() == \
        "I can't feed the cat: there is no cat in this house."


# Catalog things a room does not hold: refused there, planned where they are.
ABSENT_HERE = [
    ("turn on the TV", "LivingRoom", "Kitchen"),
    ("make the bed", "Bedroom", "Kitchen"),
    ("slice the tomato", "Kitchen", "Bedroom"),
    ("wash the dishes", "Kitchen", "LivingRoom"),
]


@pytest.mark.parametrize(("request_", "has_it", "lacks_it"), ABSENT_HERE)
def test_the_household_decides_for_catalog_things(vocabulary, request_, has_it, lacks_it) -> None:
    assert refusal_for(request_, household(has_it), vocabulary) is None
    assert refusal_for(request_, household(lacks_it), vocabulary) is not None


# Requests the person typed, and other everyday phrasings: all planned in a kitchen.
KITCHEN_REQUESTS = [
    "make me a coffee",
    "can you make me a coffee please?",
    "make breakfast",
    "make me a breakfast",
    "clean up",
    "clean up the kitchen",
    "slice a tomato and put a slice on a clean plate",
    "a slice of toast on a plate",
    "the toast in the bowl is right, but you didn't make the coffee",
    "no, I wanted my coffee made in a cup",
    "no, there's still no coffee",
    "make me a sandwich",
    "Can you make a salad?",
    "boil an egg",
    "microwave a potato",
    "water the plant",
    "wash the dirty mugs",
    "put the apple in the fridge",
    "Perform the Kim breakfast: make a coffee in the mug and put a slice of toast on a plate",
    "hi, what should I do today?",
    "thanks, that's all",
    "put the mugg in the sink",  # a misspelling the compiler would map too
]


@pytest.mark.parametrize("request_", KITCHEN_REQUESTS)
def test_everyday_kitchen_requests_are_planned(vocabulary, request_) -> None:
    for seed in range(3):
        assert refusal_for(request_, household("Kitchen", seed), vocabulary) is None, (request_, seed)


def test_a_word_for_a_class_matches_the_one_the_room_has(vocabulary) -> None:
    """"lamp" is a FloorLamp or a DeskLamp, whichever is there (the browser's failure in the issue)."""
    living = household("LivingRoom")
    assert "Lamp" not in living and {"FloorLamp", "DeskLamp"} & set(living)
    assert refusal_for("turn on the lamp and put the remote on the sofa", living, vocabulary) is None
    assert refusal_for("turn on the lamp", living, vocabulary) is None


def test_one_present_thing_is_enough_to_plan(vocabulary) -> None:
    assert refusal_for("put the mug on the lawn", household("Kitchen"), vocabulary) is None


def test_a_thing_acted_on_that_the_household_lacks_is_refused_whatever_else_is_there(vocabulary) -> None:
    """Rule 5: "the TV" in a kitchen is a class the room lacks; the sink there does not make it one
    to plan. The forks: refused in a kitchen without one, planned in one with forks."""
    kitchen = household("Kitchen")
    assert "Television" not in kitchen and "SinkBasin" in kitchen
    assert refusal_for("turn on the TV and put the mug in the sink", kitchen, vocabulary).sentence() == \
        "I can't turn on the TV and put the mug in the sink: there is no TV in this house."
    assert refusal_for("can you switch on the TV", kitchen, vocabulary) is not None
    assert refusal_for("put all the forks in the drawer", household("Kitchen", 0), vocabulary).missing == ("forks",)
    assert refusal_for("put all the forks in the drawer", household("Kitchen", 1), vocabulary) is None


def test_nothing_acted_on_is_there_is_refused(vocabulary) -> None:
    """Rule 6: what the request acts on is not there; what it gives or where it puts it is."""
    kitchen = household("Kitchen")
    assert "cat" in refusal_for("give the cat its dinner", kitchen, vocabulary).missing
    assert refusal_for("give the cat a bowl", kitchen, vocabulary).missing == ("cat",)
    assert refusal_for("feed the dog with the food in the bowl", kitchen, vocabulary).missing == ("dog",)
    # The same shapes about things the household has are planned.
    assert refusal_for("could you give the plant a drink", household("Kitchen", 1), vocabulary) is None
    assert refusal_for("fill the mug with the water in the sink", kitchen, vocabulary) is None


def test_a_place_or_a_purpose_is_not_what_the_request_acts_on(vocabulary) -> None:
    kitchen = household("Kitchen")
    assert refusal_for("I'm in the mood for a salad", kitchen, vocabulary) is None
    assert refusal_for("make a coffee for my husband", kitchen, vocabulary) is None


def test_roles_of_the_phrases() -> None:
    roles = {p.text: p.acted_on for p in phrase_roles("put the remote on the sofa")}
    assert roles == {"remote": True, "sofa": False}
    assert [p.acted_on for p in phrase_roles("can you turn on the lamp")] == [True]  # a particle
    assert [p.acted_on for p in phrase_roles("the knife is on the stool")] == [True, False]
    assert [(p.text, p.acted_on) for p in phrase_roles("give the plant a drink")] == [("plant", True), ("drink", False)]
    head, lettuce = phrase_roles("slice a head of lettuce")
    assert head.group == lettuce.group and head.acted_on and lettuce.acted_on
    assert [p.acted_on for p in phrase_roles("wash the plate and the bowl")] == [True, True]


def test_what_a_request_names() -> None:
    assert named_phrases("can you mow the lawn") == ["lawn"]
    assert named_phrases("put the dirty mug in the sink, then make a coffee") == ["dirty mug", "sink", "coffee"]
    assert named_phrases("make breakfast") == []
    assert named_phrases("slice a head of lettuce") == ["head", "lettuce"]


def _paraphrases() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (EXAMPLES / "paraphrases_heldout.jsonl").read_text().splitlines() if line.strip()]
    return [(row["example_id"], row["query"]) for row in rows]


def test_no_held_out_paraphrase_is_refused_where_its_things_are(vocabulary) -> None:
    """Each paraphrase in a household of the classes its example's program declares and what the
    generated rooms hold (a rag is rinsed by a bathtub the program does not name)."""
    programs = {e.id: e.program for e in load_seed_examples()}
    rooms = {t for room in ROOMS for t in household(room)}
    refused = []
    paraphrases = _paraphrases()
    assert len(paraphrases) >= 40
    for example_id, query in paraphrases:
        classes = re.findall(r'InteractionObject\("(\w+)"', programs[example_id])
        if refusal_for(query, [*classes, *rooms], vocabulary) is not None:
            refused.append(query)
    assert refused == []


# ------------------------------------------------------------------ through the graph


class NoChat(FakeListChatModel):
    def _call(self, *args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("a refused request must not reach the planner")


def _graph_run(tmp_path: Path, request: str, config: HelperConfig | None = None) -> tuple[dict, SymbolicEnv]:
    env = SymbolicEnv()
    env.reset(3, room_type="Kitchen")
    context = HelperContext(env=env, chat_model=NoChat(responses=[]), config=config or HelperConfig(),
                            examples=ExampleMemory(path=tmp_path / "memory", embedder=get_embedder("hash")))
    out = build_graph().invoke({"request": request}, {"configurable": {"thread_id": "t"}}, context=context)
    return out, env


def test_the_graph_refuses_before_planning_and_acts_on_nothing(tmp_path: Path) -> None:
    out, env = _graph_run(tmp_path, "can you mow the lawn")
    assert out["outcome"] == "refused"
    assert env.steps == 0
    facts = request_facts(out, env.steps, env.failures)
    assert facts.reply() == "I can't mow the lawn: there is no lawn in this house."
    assert not facts.succeeded


def test_the_switch_off_plans_it(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="must not reach the planner"):
        _graph_run(tmp_path, "can you mow the lawn", HelperConfig(refuse_absent=False))


def test_a_household_in_another_vocabulary_is_not_judged(vocabulary) -> None:
    """VirtualHome's objects ("kitchencounter", "mug") are not catalog classes: nothing is refused."""
    assert refusal_for("feed the cat", ["kitchencounter", "coffeepot", "cat_food"], vocabulary) is None


def test_i_would_like_you_to_is_politeness(vocabulary) -> None:
    assert refusal_for("I'd like you to mow the lawn", household("Kitchen"), vocabulary).sentence() == \
        "I can't mow the lawn: there is no lawn in this house."


def test_no_request_of_the_built_in_benchmark_is_refused_in_its_household(vocabulary) -> None:
    """Every request wording of every task family, both phrasing pools (the unseen pool is held out
    from the examples), in two households prepared for that family: none is refused."""
    checked, refused = 0, []
    for family in sorted(FAMILIES):
        for scene in prepared_scenes(family, 2):
            types = [o.object_type for o in scene.state.objects.values()]
            for phrasing in ("seen", "unseen"):
                for sentence in sorted(request_sentences(scene.instance, phrasing)):
                    checked += 1
                    if refusal_for(sentence, types, vocabulary) is not None:
                        refused.append((family, sentence))
    assert checked > 500
    assert refused == []
