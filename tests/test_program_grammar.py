"""The decoding grammar: llama.cpp accepts it, it accepts every seed and documented program, what it
derives is in the language (only semantic or size errors remain), and what is outside is refused."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helper_agent.memory.corrections import load_seed_corrections
from helper_agent.memory.examples import load_seed_examples
from helper_agent.program import LimitError, ProgramError, SemanticError, compile_program, parse_program
from helper_agent.program import api as program_api
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.cfg_sample import Sampler
from helper_agent.program.docs import api_documentation, api_examples
from helper_agent.program.grammar import (
    FENCE_CLOSE,
    FENCE_OPEN,
    build_program_grammar,
    matches_program_grammar,
    program_grammar,
    program_grammar_rules,
    reserved_names,
)

SEED_PROGRAMS = [e.program for e in load_seed_examples()] + [c.program for c in load_seed_corrections()]
SAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def bare(text: str, **kwargs) -> bool:
    return matches_program_grammar(text, fence=False, **kwargs)


# ---------------------------------------------------------------------------------- llama.cpp


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"fence": False}, {"max_statements": 1}, {"max_statements": 2, "fence": False},
     {"classes": ["Mug", "CoffeeMachine", "Sink Basin"]}],
)
def test_llama_cpp_parses_the_grammar(kwargs: dict) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    text = program_grammar(**kwargs)
    grammar = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
    assert grammar is not None
    # from_string only stores the text; llama.cpp's own parser runs when a sampler is made (no model
    # or vocabulary is needed to parse): NULL means the grammar was rejected
    sampler = llama_cpp.llama_sampler_init_grammar(None, text.encode("utf-8"), b"root")
    assert sampler, "llama.cpp rejected the grammar"
    llama_cpp.llama_sampler_free(sampler)


def test_llama_cpp_rejects_a_broken_grammar() -> None:
    """The check above can fail: a grammar with an undefined rule gives NULL."""
    llama_cpp = pytest.importorskip("llama_cpp")
    broken = program_grammar().replace("program ::= first-40", "program ::= first-400")
    assert not llama_cpp.llama_sampler_init_grammar(None, broken.encode("utf-8"), b"root")


# ---------------------------------------------------------------------------------- what it accepts


@pytest.mark.parametrize("program", SEED_PROGRAMS)
def test_every_seed_program_is_accepted(program: str) -> None:
    assert bare(program)
    assert matches_program_grammar(FENCE_OPEN + program + FENCE_CLOSE)


def test_the_fenced_form_is_the_planners_few_shot_answer_form() -> None:
    program = 'mug = InteractionObject("Mug")\nmug.pickup()'
    answer = f"```python\n{program.strip()}\n```"  # graphs/helper/prompts.py shows examples this way
    assert matches_program_grammar(answer)
    assert not matches_program_grammar(answer + "\nThis picks up the mug.")
    assert not bare(answer)


@pytest.mark.parametrize("example", api_examples())
def test_documented_examples_are_accepted_by_grammar_and_parser(example: str) -> None:
    assert bare(example), example
    try:
        compile_program(example)
    except SemanticError as exc:  # the one-line examples name objects defined elsewhere
        assert len(example.strip().split("\n")) == 1
        assert "not defined yet" in str(exc) or "does nothing" in str(exc)


def test_documented_programs_compile() -> None:
    programs = [e for e in api_examples() if len(e.strip().split("\n")) > 1]
    assert len(programs) >= 3
    for program in programs:
        assert compile_program(program).subgoals


def test_every_api_method_is_in_the_docs_and_the_grammar() -> None:
    doc = api_documentation()
    text = program_grammar()
    rule = text.split("\nobject-call ::= ", 1)[1].split("\n", 1)[0]
    for name, spec in program_api.OBJECT_METHODS.items():
        assert re.search(rf"\b{name}\(", doc), name
        assert (f'"{name}(" obj-name ")"' if spec.param else f'"{name}()"') in rule, name
        example = f"x = InteractionObject(\"Mug\")\nx.{name}({'x' if spec.param else ''})\n"
        assert bare(example)
    for move in program_api.AGENT_METHODS:
        assert f"{move}()" in doc and bare(f"{move}()\n") and bare(f"a = AgentCorrective()\na.{move}()\n")
    for attribute in program_api.ATTRIBUTE_METHODS:
        assert f'"{attribute}"' in doc and bare(f'm = InteractionObject("Mug", attributes=["{attribute}"])\n')
    n = program_api.MAX_LOOP_LENGTH
    assert bare(f"for i in range({n}):\n    move_back()\n")
    assert not bare(f"for i in range({n + 1}):\n    move_back()\n")
    assert bare("for c in [" + ", ".join(['"Mug"'] * n) + "]:\n    move_back()\n")
    assert not bare("for c in [" + ", ".join(['"Mug"'] * (n + 1)) + "]:\n    move_back()\n")


def test_grammar_is_generated_from_the_api_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = program_api.MethodSpec("wave_at", program_api.SubgoalKind.DO_NOTHING, "target")
    monkeypatch.setitem(program_api.OBJECT_METHODS, "wave_at", extra)
    monkeypatch.setitem(program_api.AGENT_METHODS, "spin_around", program_api.SubgoalKind.DO_NOTHING)
    monkeypatch.setattr(program_api, "MAX_LOOP_LENGTH", 3)
    grammar = Matcher(build_program_grammar(5, ["Mug"], fence=False))
    assert grammar.matches('m = InteractionObject("Mug")\nm.wave_at(m)\nspin_around()\n')
    assert grammar.matches("for i in range(3):\n    spin_around()\n")
    assert not grammar.matches("for i in range(4):\n    spin_around()\n")


@pytest.mark.parametrize(
    "program",
    [
        'coffee_mug = InteractionObject("Mug")\ncoffee_mug.pickup()\n',
        "fo = AgentCorrective()\nfor_ = AgentCorrective()\nformat = AgentCorrective()\nmove_backs = AgentCorrective()\n",
        "x1 = AgentCorrective()\nx1.do_nothing()\n\n# done\n",
        'for landmark in ["CounterTop", "DiningTable"]:\n    cup = InteractionObject("Cup", landmark=landmark)\n'
        "    # take it\n    cup.pickup()\n\nmove_back()\n",
        'for kind in ["Mug", "Cup"]:\n    x = InteractionObject(kind, attributes=["clean", "filled"])\n',
        'p = InteractionObject("Plate")\nm = InteractionObject("Mug", landmark=p)\n',
        "# " + "x" * 118 + "\nmove_back()\n",
        "#\nmove_back()\n",
    ],
)
def test_canonical_programs_are_accepted(program: str) -> None:
    assert bare(program)


@pytest.mark.parametrize(
    "program",
    [
        "import os\n",
        "from os import system\n",
        "def main():\n    move_back()\n",
        "async def main():\n    move_back()\n",
        "while True:\n    move_back()\n",
        "if x:\n    move_back()\n",
        'mug = InteractionObject("Mug")\nmug.object_class\n',
        'mug = InteractionObject("Mug")\nx = mug.object_class\n',
        'mug = InteractionObject("Mug")\nmug.__class__()\n',
        'mug = InteractionObject("Mug")\nmug.pickup().place(mug)\n',
        'print("hello")\n',
        "x = 1\n",
        'mug = "Mug"\n',
        'mug = InteractionObject("Spaceship")\n',  # not a catalog class
        "mug = InteractionObject('Mug')\n",  # canonical quotes only
        'mug = InteractionObject("Mug",landmark="Sink")\n',
        'mug = InteractionObject("Mug", attributes=["shiny"])\n',
        'mug = InteractionObject("Mug", attributes=[])\n',
        'mug = InteractionObject(object_class="Mug")\n',
        'mug = InteractionObject(kind)\n',  # a loop variable only stands for a class in a list loop
        'mug = InteractionObject("Mug")\nmug.pickup(mug)\n',
        'mug = InteractionObject("Mug")\nmug.place()\n',
        'mug = InteractionObject("Mug")\nmug.move_left()\n',
        "for = AgentCorrective()\n",
        "range = AgentCorrective()\n",
        "move_back = AgentCorrective()\n",
        "Mug = AgentCorrective()\n",
        "_x = AgentCorrective()\n",
        "x" * 33 + " = AgentCorrective()\n",
        "mug\u00a0= AgentCorrective()\n",
        "for i in range(0):\n    move_back()\n",
        "for i in range(2):\nmove_back()\n",
        "for i in range(2):\n\tmove_back()\n",
        "for i in range(2):\n    for j in range(2):\n        move_back()\n",
        "for i in range(2):\n    # only a comment\n",
        "for i in [1, 2]:\n    move_back()\n",
        "move_back()",  # every line ends with a new line
        "\nmove_back()\n",  # a program does not start with a blank line
        "",
        "# " + "x" * 120 + "\nmove_back()\n",
        "move_back()\nThis moves back.\n",
        "lambda: 0\n",
        "[move_back() for i in range(2)]\n",
    ],
)
def test_programs_outside_the_language_are_refused(program: str) -> None:
    assert not bare(program)
    assert not matches_program_grammar(FENCE_OPEN + program + FENCE_CLOSE)


def test_class_names_can_be_restricted() -> None:
    program = 'm = InteractionObject("Mug", landmark="CoffeeMachine")\n'
    assert bare(program, classes=["Mug", "CoffeeMachine"])
    assert not bare('p = InteractionObject("Plate")\n', classes=["Mug", "CoffeeMachine"])
    assert program_grammar(classes=["Mug", "CoffeeMachine"]) is program_grammar(classes=("CoffeeMachine", "Mug"))
    assert '"Plate"' not in program_grammar(classes=["Mug"]) and '"Plate"' in program_grammar()
    with pytest.raises(ValueError, match="not an object class name"):
        program_grammar(classes=['Mug"; import os; "'])
    with pytest.raises(ValueError, match="at least one"):
        program_grammar(classes=[])
    with pytest.raises(ValueError, match="at least 1"):
        program_grammar(max_statements=0)


def test_grammar_text_is_cached() -> None:
    assert program_grammar() is program_grammar()
    assert program_grammar_rules(fence=False) is program_grammar_rules(fence=False)
    assert program_grammar(12) != program_grammar(13)


# ---------------------------------------------------------------------------------- the cap


@pytest.mark.parametrize("cap", [1, 2, 3, 7, 40])
def test_statement_cap_counts_every_line(cap: int) -> None:
    line = "move_back()\n"
    assert bare(line * cap, max_statements=cap)
    assert not bare(line * (cap + 1), max_statements=cap)
    loop = "for i in range(3):\n" + "    move_back()\n" * (cap - 1)
    assert bare(loop, max_statements=cap) == (cap >= 2)
    assert not bare(loop + "# one more\n", max_statements=cap)
    assert not bare("# c\n" * cap + "\n", max_statements=cap)


def test_reserved_names() -> None:
    names = reserved_names()
    assert {"for", "import", "range", "print", "move_back", "do_nothing"} <= names
    assert "mug" not in names and "InteractionObject" not in names


# ---------------------------------------------------------------------------------- random derivations


def _kinds(exc: ProgramError) -> bool:
    return isinstance(exc, SemanticError | LimitError)


@SAMPLES
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_random_derivations_are_in_the_language(seed: int, fence: bool) -> None:
    """Whatever the grammar lets a model write parses and compiles, or fails only for a reason a
    context-free grammar cannot see (an unbound name, a senseless call, a size limit)."""
    grammar = program_grammar_rules(fence=fence)
    text = Sampler(grammar, random.Random(seed)).sample()
    assert Matcher(grammar).matches(text)
    try:
        parse_program(text)
        compile_program(text)
    except ProgramError as exc:
        assert _kinds(exc), f"{type(exc).__name__}: {exc}\n{text}"


class Bindings:
    """Chooses names the way a program binds them, so sampled programs use only defined names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.env: dict[str, str] = {}
        self.pending: tuple[str, str] | None = None
        self.unbound = 0

    def pick(self, *kinds: str) -> Callable[[], str | None]:
        def choose() -> str | None:
            names = sorted(n for n, k in self.env.items() if k in kinds)
            if not names:
                self.unbound += 1
                return None
            return self.rng.choice(names)

        return choose

    def seen(self, rule: str, text: str) -> None:
        kind = {"obj-def-name": "obj", "agent-def-name": "agent", "range-var": "int", "list-var": "text"}.get(rule)
        if kind in ("obj", "agent"):
            self.pending = (text, kind)  # bound once its statement is complete
        elif kind is not None:
            self.env[text] = kind
        elif rule in ("stmt", "stmt-in-list") and self.pending:
            name, kind = self.pending
            self.env[name] = kind
            self.pending = None

    def sampler(self, grammar) -> Sampler:
        choose = {
            "obj-name": self.pick("obj"),
            "agent-name": self.pick("agent"),
            "class-var": self.pick("text"),
            "landmark-name": self.pick("obj", "text"),
        }
        return Sampler(grammar, self.rng, choose=choose, seen=self.seen)


def test_random_programs_with_bound_names_parse() -> None:
    """With names bound before use (what a context-free grammar cannot enforce), every derivation
    parses; compiling fails only on affordances or size."""
    grammar = program_grammar_rules()
    matcher = Matcher(grammar)
    parsed = 0
    for seed in range(300):
        bindings = Bindings(random.Random(seed))
        text = bindings.sampler(grammar).sample()
        assert matcher.matches(text)
        if bindings.unbound:
            continue
        try:
            parse_program(text)
        except LimitError:
            continue
        except SemanticError as exc:
            assert "no program found" in str(exc), f"{exc}\n{text}"
            continue
        parsed += 1
        try:
            compile_program(text)
        except ProgramError as exc:
            assert _kinds(exc) and "not defined" not in str(exc), f"{exc}\n{text}"
    assert parsed >= 60
