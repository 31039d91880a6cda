"""One vocabulary from words to the household's classes (`understanding/vocabulary.py`): everyday
names by rule, kinds for their class, compound names that do not contradict themselves, and the
mapper by meaning as a question, never a refusal, for a word it cannot name by rule."""

from __future__ import annotations

import pytest

from helper_agent.memory.embeddings import HashEmbedder, LocalEmbedder
from helper_agent.memory.examples import load_seed_examples, load_train_examples
from helper_agent.understanding.absent import named_phrases, refusal_for, unsure_words
from helper_agent.understanding.class_mapping import EmbeddingClassMapper
from helper_agent.understanding.vocabulary import Guess, Vocabulary
from helper_agent.world.catalog import load_catalog

LIVING = ["Television", "Sofa", "RemoteControl", "FloorLamp", "CoffeeTable", "ArmChair", "Pillow"]
KITCHEN = ["Mug", "CoffeeMachine", "Fridge", "SinkBasin", "Faucet", "CounterTop", "Bread", "Toaster", "Plate"]
BEDROOM = ["Bed", "Pillow", "Dresser", "DeskLamp", "SideTable", "AlarmClock"]


@pytest.fixture(scope="module")
def requests() -> list[str]:
    return [e.dialogue for e in [*load_seed_examples(), *load_train_examples()]]


@pytest.fixture(scope="module")
def words(requests) -> Vocabulary:
    return Vocabulary.of(load_catalog(), requests)


@pytest.mark.parametrize(("phrase", "cls"), [
    ("telly", "Television"), ("tv", "Television"), ("settee", "Sofa"), ("couch", "Sofa"), ("fridge", "Fridge"),
    ("worktop", "CounterTop"), ("hob", "StoveBurner"), ("mobile", "CellPhone"), ("dustbin", "GarbageCan"),
])
def test_everyday_names_stand_for_their_class_by_rule(words: Vocabulary, phrase: str, cls: str) -> None:
    assert cls in words.phrase_classes(phrase, set())


def test_the_telly_is_the_television_on_and_off(words: Vocabulary) -> None:
    """Issue 63: "switch the telly on" was refused as "there is no telly", "off" as "no telly off"."""
    for request in ("switch the telly on", "switch the telly off", "can you turn the telly off please"):
        assert "telly" in named_phrases(request)
        assert refusal_for(request, LIVING, words) is None, request


def test_a_compound_name_is_not_a_class_its_last_word_also_names(words: Vocabulary) -> None:
    """"washing machine" is no CoffeeMachine: refused in a kitchen, not planned (it ran 570 steps)."""
    assert "CoffeeMachine" not in words.phrase_classes("washing machine", set(KITCHEN))
    refusal = refusal_for("switch on the washing machine", KITCHEN, words)
    assert refusal is not None
    assert refusal.sentence() == "I can't switch on the washing machine: there is no washing machine in this house."
    assert "CoffeeMachine" in words.phrase_classes("coffee machine", set(KITCHEN))


def test_a_class_is_there_when_a_kind_of_it_is(words: Vocabulary) -> None:
    """"the bedside lamp" is a Lamp; a bedroom whose lamp is a DeskLamp has one."""
    present = words.present_classes(BEDROOM)
    assert "Lamp" in words.phrase_classes("bedside lamp", present)
    assert words.phrase_present("bedside lamp", present)
    assert refusal_for("turn on the bedside lamp", BEDROOM, words) is None


class MeaningOf:
    """A mapper by meaning for tests: a table of (class, score), anything else nothing."""

    min_score = 0.6

    def __init__(self, table: dict[str, tuple[str, float]]) -> None:
        self.table = table

    def __call__(self, name: str) -> tuple[str, float]:
        return self.table.get(name, ("Box", 0.1))


def test_an_unknown_word_near_a_class_there_is_a_question(requests) -> None:
    words = Vocabulary.of(load_catalog(), requests, by_meaning=MeaningOf({"gogglebox": ("Television", 0.7)}))
    guesses = unsure_words("switch the gogglebox on", LIVING, words)
    assert guesses == [Guess("gogglebox", "Television", 0.7)]
    assert guesses[0].question() == "I don't know the word 'gogglebox'. Do you mean the television?"


def test_no_question_about_a_class_the_house_lacks_or_a_weak_match(requests) -> None:
    words = Vocabulary.of(load_catalog(), requests,
                          by_meaning=MeaningOf({"gogglebox": ("Television", 0.7), "thingamajig": ("Sofa", 0.4)}))
    assert unsure_words("switch the gogglebox on", KITCHEN, words) == []  # no television in the kitchen
    assert unsure_words("move the thingamajig", LIVING, words) == []  # under the threshold
    assert unsure_words("switch the television on", LIVING, words) == []  # named by rule: nothing to ask


def test_a_word_named_by_rule_or_a_known_word_is_never_guessed(requests) -> None:
    called: list[str] = []

    def meaning(name: str) -> tuple[str, float]:
        called.append(name)
        return "Television", 0.99

    words = Vocabulary.of(load_catalog(), requests, by_meaning=meaning)
    assert words.guess("telly", set(LIVING)) is None
    assert words.guess("breakfast", set(KITCHEN)) is None
    assert called == []


def test_the_packaged_model_asks_about_a_wardrobe_in_a_bedroom_with_a_dresser(requests) -> None:
    """The real embedding model (all-MiniLM-L6-v2, packaged) as the graph uses it."""
    words = Vocabulary.of(load_catalog(), requests, by_meaning=EmbeddingClassMapper(LocalEmbedder()))
    guesses = unsure_words("put the pillow in the wardrobe", BEDROOM, words)
    assert [(g.phrase, g.cls) for g in guesses] == [("wardrobe", "Dresser")]
    assert 0.6 <= guesses[0].score < 0.9
    assert unsure_words("can you mow the lawn", KITCHEN, words) == []  # nothing near: refused as before


def test_a_hashing_embedder_is_not_a_meaning() -> None:
    assert HashEmbedder.meaningful is False
    assert getattr(LocalEmbedder, "meaningful", True) is True


@pytest.mark.parametrize(("request_", "word", "dish"), [
    ("make me a cheese sandwich", "cheese", "sandwich"),
    ("I'd like a ham sandwich", "ham", "sandwich"),
    ("make a veggie omelette", "veggie", "omelette"),
])
def test_an_unknown_word_before_a_dish_is_asked_about_not_dropped(words: Vocabulary, request_: str, word: str,
                                                                  dish: str) -> None:
    guesses = unsure_words(request_, KITCHEN, words)
    assert guesses == [Guess(word, "", 0.0, dish=dish)]
    assert guesses[0].question() == (f"I don't know the word '{word}', and nothing here is called that. "
                                     f"Shall I make the {dish} without it?")


@pytest.mark.parametrize("request_", [
    "make me a sandwich", "make me a tomato sandwich", "make a lettuce and tomato salad", "make me a plate of toast",
    "put the clean mug in the sink",
])
def test_a_dish_of_things_it_knows_is_not_asked_about(words: Vocabulary, request_: str) -> None:
    assert unsure_words(request_, KITCHEN, words) == []


@pytest.mark.parametrize(("said", "read", "pairs"), [
    ("switch the telly on", "switch the television on", [("telly", "television")]),
    ("put my mobile on the settee", "put my cell phone on the sofa", [("mobile", "cell phone"), ("settee", "sofa")]),
    ("turn off the TV please", "turn off the TV please", []),  # the example requests say "TV"
    ("can I have some toast", "can I have some toast", []),  # and "toast"
    ("put the mug in the sink", "put the mug in the sink", []),  # shares a word with SinkBasin: as said
    ("open the fridge", "open the fridge", []),
])
def test_everyday_names_are_read_as_the_households_names(words: Vocabulary, said: str, read: str,
                                                          pairs: list[tuple[str, str]]) -> None:
    present = words.present_classes([*LIVING, *KITCHEN, "CellPhone"])
    assert words.everyday_names(said, present) == (read, pairs)


def test_an_everyday_name_of_a_class_the_house_lacks_is_left_as_said(words: Vocabulary) -> None:
    assert words.everyday_names("switch the telly on", words.present_classes(KITCHEN)) == ("switch the telly on", [])


def test_an_everyday_name_inside_a_longer_phrase_still_names_its_class(words: Vocabulary) -> None:
    """"keys" is the KeyChain's everyday name, not its head ("chain"): a phrase read around it
    ("keys always get") cannot contradict it, as "washing machine" contradicts the CoffeeMachine."""
    house = ["KeyChain", "Box", "Sofa", "CoffeeTable", "Mug", "CoffeeMachine"]
    assert refusal_for("my keys always get lost, drop them in the box", house, words) is None
    assert words.phrase_classes("keys always get", words.present_classes(house)) == {"KeyChain"}
    assert refusal_for("switch on the washing machine", house, words) is not None


def test_only_what_the_examples_make_is_a_dish(words: Vocabulary) -> None:
    """"the zorblax mug next to the television" reads a phrase ending in "next": a known word, but
    nothing the example requests ask to make, so "zorblax" is no ingredient to ask about."""
    assert {"sandwich", "salad", "coffee"} <= words.made_words
    assert "next" not in words.made_words
    assert unsure_words("put the zorblax mug next to the television", KITCHEN, words) == []
