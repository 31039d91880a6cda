"""Line-by-line program decoding: the grammar of each next line, from what the lines so far define.

The grammars are compiled by llama.cpp's own parser (through llama-cpp-python, when installed) and
checked with a scripted client standing in for the model: a line the grammar offers is appended,
and the program the decoder returns parses and compiles.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from helper_agent.decoding import DecodeState, ProgramDecoder, decl_tail_grammar, line_grammar
from helper_agent.program import compile_program


def state_of(*lines: str) -> DecodeState:
    state = DecodeState()
    for line in lines:
        state.add(line, lambda cls: cls)
    return state


def offered(grammar: str, rule_prefix: str) -> str:
    return "\n".join(line for line in grammar.splitlines() if line.startswith(rule_prefix))


def test_calls_are_offered_only_on_defined_names_and_never_on_themselves() -> None:
    state = state_of('mug = InteractionObject("Mug")', 'coffee_machine = InteractionObject("CoffeeMachine")')
    grammar = line_grammar(state, max_lines=30)
    calls = offered(grammar, "call")
    assert '"mug." ' in calls and '"coffee_machine." ' in calls
    assert '"pickup_and_place(" "coffee_machine" ")"' in calls
    assert '"mug.pickup_and_place(" "mug"' not in calls and 'pickup_and_place(" "mug"' not in calls
    machine = next(line for line in calls.splitlines() if line.startswith("call0"))
    assert "pickup()" not in machine and "toggle_on()" in machine  # a CoffeeMachine cannot be carried
    assert "pan." not in grammar  # nothing undefined can be called


def test_the_same_call_is_not_offered_twice_in_a_row_and_put_down_needs_the_object_held() -> None:
    state = state_of('knife = InteractionObject("Knife")', "knife.pickup()")
    calls = offered(line_grammar(state, max_lines=30), "call")
    assert '"pickup()"' not in calls and '"put_down()"' in calls
    state.add("knife.put_down()", lambda cls: cls)
    calls = offered(line_grammar(state, max_lines=30), "call")
    assert '"put_down()"' not in calls and '"pickup()"' in calls


def test_loops_take_an_indented_body_and_the_fence_ends_only_after_an_action() -> None:
    assert '"```"' not in line_grammar(state_of('plate = InteractionObject("Plate")'), max_lines=30)
    head = line_grammar(state_of('plate = InteractionObject("Plate")', "for i in range(2):"), max_lines=30)
    assert head.splitlines()[0] == 'root ::= "    " stmt'
    done = line_grammar(state_of('plate = InteractionObject("Plate")', "plate.pickup()"), max_lines=30)
    assert '"```"' in done.splitlines()[0]


def test_the_line_cap_leaves_only_the_fence() -> None:
    state = state_of('plate = InteractionObject("Plate")', "plate.pickup()")
    assert line_grammar(state, max_lines=2).splitlines()[0] == 'root ::= "```"'


def test_a_block_written_three_times_is_repetition() -> None:
    lines = ['potato = InteractionObject("Potato")', 'pot = InteractionObject("Pot")']
    lines += ["potato.pickup_and_place(pot)", 'potato = InteractionObject("Potato")'] * 3
    assert state_of(*lines).repeating()
    assert not state_of(*lines[:4]).repeating()
    state = state_of(*lines)
    assert state.drop_repeats() == lines[:4]  # one copy of the block is kept


def test_the_object_stays_held_while_the_robot_goes_somewhere_with_it() -> None:
    """`pot.pickup(); pot.go_to(); pot.pickup(); ...` was a 0.5B loop: going to what you hold does
    not empty your hands, so a second pickup is not offered; a macro (clean) may leave them empty."""
    state = state_of('pot = InteractionObject("Pot")', "pot.pickup()", "pot.go_to()")
    calls = offered(line_grammar(state, max_lines=30), "call")
    assert '"pickup()"' not in calls and '"put_down()"' in calls
    state.add("pot.clean()", lambda cls: cls)
    assert '"pickup()"' in offered(line_grammar(state, max_lines=30), "call")


def test_every_grammar_compiles_with_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    states = (DecodeState(), state_of('mug = InteractionObject("Mug")'),
              state_of('mug = InteractionObject("Mug")', "for i in range(3):"),
              state_of('mug = InteractionObject("Mug")', 'sink = InteractionObject("SinkBasin")', "mug.pickup()"))
    for state in states:
        for moves in (False, True):
            grammar = line_grammar(state, max_lines=30, allow_agent_moves=moves)
            # llama.cpp's own parser (no model needed): NULL means the grammar was rejected
            sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.encode("utf-8"), b"root")
            assert sampler, grammar
            llama_cpp.llama_sampler_free(sampler)
    for cls in ("CounterTop", "Mug", "BreadSliced", "Potato"):
        sampler = llama_cpp.llama_sampler_init_grammar(None, decl_tail_grammar(cls).encode("utf-8"), b"root")
        assert sampler, cls
        llama_cpp.llama_sampler_free(sampler)
    assert not llama_cpp.llama_sampler_init_grammar(None, b"root ::= undefined-rule", b"root")


def test_a_declaration_is_offered_only_the_end_states_its_class_can_reach() -> None:
    assert "attributes" not in decl_tail_grammar("CounterTop")  # a counter is never washed or cooked
    mug = decl_tail_grammar("Mug")
    assert '"\\"clean\\""' in mug and "cooked" not in mug and "sliced" not in mug
    assert "cooked" in decl_tail_grammar("Potato") and "sliced" in decl_tail_grammar("Potato")


class ScriptedClient:
    """Stands in for `llama_cpp.Llama`: answers each line from a script and checks it is offered."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(text.split())))

    def create_completion(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
        self.prompts.append(prompt)
        piece = self.lines.pop(0)
        return {"choices": [{"text": piece}], "usage": {"completion_tokens": len(piece.split())}}


def test_the_decoder_writes_a_program_that_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    import llama_cpp

    monkeypatch.setattr(llama_cpp.LlamaGrammar, "from_string", classmethod(lambda cls, text, verbose=False: text))
    # a declaration is one call: its class and the keywords that class allows
    script = ["# make coffee\n", 'mug = InteractionObject("Mug", attributes=["clean"])\n', "mug.clean()\n",
              'coffee_machine = InteractionObject("CoffeeMachine")\n', "mug.pickup_and_place(coffee_machine)\n",
              "coffee_machine.toggle_on()\n", "```"]
    client = ScriptedClient(script)
    result = ProgramDecoder(client, max_lines=30).decode("PROMPT")
    assert result.stopped_by == "fence" and result.line_calls == 7
    assert all(p.startswith("PROMPT```python\n") for p in client.prompts)  # each line extends the last prompt
    compiled = compile_program(result.text)
    assert [s.kind.value for s in compiled.subgoals][-1] == "ToggleOn"
    assert re.fullmatch(r"```python\n(.+\n)+```", result.text, re.S)
    assert 'mug = InteractionObject("Mug", attributes=["clean"])\n' in result.text


def test_a_declaration_is_one_line_with_only_its_class_keywords() -> None:
    """A declaration is written in one call, so its line ends after its keywords: a grammar that
    stopped at the class once put `, landmark=...` on a second line, then split `")` into tokens the
    model never writes and let it drift to another class. Each class gets only its attributes."""
    from helper_agent.program.grammar import matches_program_grammar

    grammar = line_grammar(state_of('pot = InteractionObject("Pot")'), max_lines=30)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["stmt"].startswith("(decl | ")
    assert all('"\\n"' in option for option in rules["stmt"].strip("()").split(" | ")[1:])
    pot_group = next(body for key, body in rules.items() if _declares(key, body, "Pot"))
    assert pot_group.endswith('")\\n"') and "attr" in pot_group
    counter_group = next(body for key, body in rules.items() if _declares(key, body, "CounterTop"))
    assert "attributes" not in counter_group  # a counter is never washed or cooked
    attr_rule = re.search(r"attr\d+", pot_group).group(0)
    assert '"\\"filled\\""' in rules[attr_rule] and "cooked" not in rules[attr_rule]
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp accepts it
    assert matches_program_grammar('pot = InteractionObject("Pot", landmark="StoveBurner", attributes=["filled"])\n'
                                   "pot.clean()\n", fence=False)


def test_a_class_is_one_of_the_catalog_names_not_any_capitalised_word() -> None:
    """The 0.5B model wrote `InteractionObject("PotatoSlicedSlicedSliced...")` to the length cap
    when any capitalised word was a class; now the class and the landmark are catalog names."""
    from helper_agent.program.grammar import default_class_names

    rules = dict(line.split(" ::= ", 1) for line in line_grammar(DecodeState(), max_lines=30).splitlines())
    names = list(default_class_names())
    groups = [key for key, body in rules.items() for name in names if _declares(key, body, name)]
    assert len(groups) == len(names)  # every catalog class is declared by exactly one group
    assert not any(_declares(key, body, "PotatoSlicedSliced") for key, body in rules.items())
    tail = dict(line.split(" ::= ", 1) for line in decl_tail_grammar("Pot").splitlines())
    landmark = re.compile(_trie_regex(tail["landmark"].split('=\\"" ', 1)[1].rsplit(' "\\""', 1)[0]))
    assert all(landmark.fullmatch(name) for name in names) and not landmark.fullmatch("Counter")


def _trie_regex(expr: str) -> str:
    """The GBNF of `_trie` (literals, groups, `|`, `?`) as a Python regex, to check its language."""
    out, i = [], 0
    while i < len(expr):
        char = expr[i]
        if char == '"':
            end = expr.index('"', i + 1)
            out.append("(?:" + re.escape(expr[i + 1:end]) + ")")
            i = end + 1
            continue
        out.append({"(": "(?:", " ": ""}.get(char, char))
        i += 1
    return "".join(out)


def _declares(key: str, body: str, cls: str) -> bool:
    """Whether the declaration group `key` (`declN ::= <classes> "\\"" ...`) takes class `cls`."""
    if not re.fullmatch(r"decl\d+", key):
        return False
    return bool(re.fullmatch(_trie_regex(body.split(' "\\""', 1)[0]), cls))


@pytest.mark.parametrize("words", [
    ["Pot", "Potato", "PotatoSliced"], ["Apple", "AppleSliced", "ArmChair", "Bed"], ["CD"], ["A", "AB", "ABC", "B"],
])
def test_a_prefix_tree_grammar_derives_exactly_its_words(words: list[str]) -> None:
    from helper_agent.decoding import _trie

    pattern = re.compile(_trie_regex(_trie(words)))
    assert all(pattern.fullmatch(w) for w in words)
    near_misses = {w + "x" for w in words} | {w[:-1] for w in words if len(w) > 1} | {"PotSliced", "Ap"}
    assert not any(pattern.fullmatch(w) for w in near_misses - set(words))


def test_the_catalog_prefix_tree_derives_exactly_the_catalog() -> None:
    from helper_agent.decoding import _trie
    from helper_agent.program.grammar import default_class_names

    names = list(default_class_names())
    pattern = re.compile(_trie_regex(_trie(names)))
    assert all(pattern.fullmatch(n) for n in names)
    assert not pattern.fullmatch("PotatoSlicedSliced") and not pattern.fullmatch("Pota")
