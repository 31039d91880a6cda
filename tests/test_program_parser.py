"""The parser: extraction of code from LLM answers, the accepted grammar, and its error messages."""

from __future__ import annotations

import pytest

from helper_agent.program import Action, ObjectDecl, ProgramError, parse_program

COFFEE = """mug = InteractionObject("Mug")
machine = InteractionObject("CoffeeMachine")
mug.pickup_and_place(machine)
machine.toggle_on()"""


def calls(text: str) -> list[tuple[str, str | None, str | None]]:
    """(method, object class, argument class) for each action."""
    p = parse_program(text)
    cls = {o.index: o.object_class for o in p.objects}
    return [(a.method, cls.get(a.obj), cls.get(a.arg)) for a in p.actions]


COFFEE_CALLS = [("pickup_and_place", "Mug", "CoffeeMachine"), ("toggle_on", "CoffeeMachine", None)]


# ---------------------------------------------------------------------------------- extraction


def test_plain_program() -> None:
    p = parse_program(COFFEE)
    assert [o.object_class for o in p.objects] == ["Mug", "CoffeeMachine"]
    assert calls(COFFEE) == COFFEE_CALLS
    assert p.notes == []
    assert p.source == COFFEE


@pytest.mark.parametrize("tag", ["python", "py", "Python", ""])
def test_fenced_block(tag: str) -> None:
    text = f"Here you go:\n```{tag}\n{COFFEE}\n```\nThat is all.\n"
    p = parse_program(text)
    assert calls(text) == COFFEE_CALLS
    assert "fenced block" in p.notes[0]
    # blanked, not removed: the code sits on the same lines as in the answer
    assert p.source.split("\n")[2] == 'mug = InteractionObject("Mug")'


def test_fenced_other_tags_ignored_when_python_present() -> None:
    text = f"```text\nmug.explode()\n```\n```python\n{COFFEE}\n```\n"
    assert calls(text) == COFFEE_CALLS


def test_several_fenced_blocks_are_concatenated() -> None:
    first, second = COFFEE.split("mug.pickup_and_place")
    text = f"```python\n{first}```\nthen\n```python\nmug.pickup_and_place{second}\n```"
    assert calls(text) == COFFEE_CALLS


def test_unterminated_fence_runs_to_end() -> None:
    assert calls(f"```python\n{COFFEE}\n") == COFFEE_CALLS


def test_error_lines_refer_to_the_answer_as_written() -> None:
    text = "Sure!\n\n```python\nmug = InteractionObject(\"Mug\")\nmug.explode()\n```\n"
    with pytest.raises(ProgramError) as info:
        parse_program(text)
    assert info.value.line == 5
    assert str(info.value).startswith("line 5: 'mug.explode()'")


def test_leading_prose_without_fences() -> None:
    text = "Here is the program for the task:\nPlan:\n" + COFFEE
    p = parse_program(text)
    assert calls(text) == COFFEE_CALLS
    assert any("ignored prose on lines 1-2" in n for n in p.notes)


def test_trailing_prose_without_fences() -> None:
    text = COFFEE + "\nThis program makes a coffee.\nEnjoy it."
    p = parse_program(text)
    assert calls(text) == COFFEE_CALLS
    assert any("from line 5" in n for n in p.notes)


def test_leading_and_trailing_prose() -> None:
    text = "Output program:\n" + COFFEE + "\nDone, the coffee is ready."
    assert calls(text) == COFFEE_CALLS


def test_prose_in_the_middle_is_a_syntax_error_at_its_line() -> None:
    text = "Here it is:\nmug = InteractionObject(\"Mug\")\nnow pick it up\nmug.pickup()"
    with pytest.raises(ProgramError) as info:
        parse_program(text)
    assert info.value.line == 3
    assert "syntax error" in str(info.value)


def test_indented_program_is_dedented() -> None:
    text = "\n".join("    " + line for line in COFFEE.split("\n"))
    assert calls(text) == COFFEE_CALLS


def test_windows_newlines() -> None:
    assert calls(COFFEE.replace("\n", "\r\n")) == COFFEE_CALLS
    assert calls(COFFEE.replace("\n", "\r")) == COFFEE_CALLS


def test_utf8_bytes_are_text() -> None:
    assert calls(COFFEE.encode("utf-8")) == COFFEE_CALLS
    assert calls(("# café crème\n" + COFFEE).encode("utf-8")) == COFFEE_CALLS


# ---------------------------------------------------------------------------------- no wrappers

BODY = "\n".join("    " + line for line in COFFEE.split("\n"))


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        (f"def main():\n{BODY}\n\nif __name__ == \"__main__\":\n    main()\n", 1,
         "'def main():' is not allowed: functions cannot be defined; write the steps at top level without 'def'"),
        (f"def make_coffee():\n{BODY}\n\nmake_coffee()\n", 1, "functions cannot be defined"),
        (f"async def main():\n{BODY}\n", 1, "async functions are not part of the API"),
        # a wrapper may not shadow what the API or the language means
        (f"def range():\n{BODY}\n", 1, "functions cannot be defined"),
        (f"def InteractionObject():\n{BODY}\n", 1, "functions cannot be defined"),
        (f"def print():\n    pass\n{COFFEE}", 1, "functions cannot be defined"),
        (f"{COFFEE}\ndef main():\n    pass\n", 5, "functions cannot be defined"),
        ("for i in range(2):\n    def step():\n        pass\n", 2, "functions cannot be defined"),
        (f'if __name__ == "__main__":\n{BODY}\n', 1, "without 'if __name__ == \"__main__\":'"),
        ("mug = InteractionObject('Mug')\nreturn\n", 2, "'return' is not allowed"),
    ],
)
def test_functions_and_script_guards_are_rejected(text: str, line: int, expected: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program(text)
    assert info.value.line == line
    assert expected in info.value.reason
    assert str(info.value).startswith(f"line {line}")


# ---------------------------------------------------------------------------------- grammar


def test_constructor_arguments() -> None:
    p = parse_program(
        'a = InteractionObject("Mug", "CounterTop", ["clean", "filled"])\n'
        'b = InteractionObject(object_class="Plate", landmark=None, attributes=("washed",))\n'
        'c = InteractionObject("Bread", attributes="sliced")\n'
        "d = InteractionObject(\"Knife\", landmark=a)\n"
        "a.go_to()\n"
    )
    a, b, c, d = p.objects
    assert (a.object_class, a.landmark, a.attributes, a.variable) == ("Mug", "CounterTop", ("clean", "filled"), "a")
    assert (b.landmark, b.attributes) == (None, ("clean",))
    assert c.attributes == ("sliced",)
    assert d.landmark == "Mug"


def test_attribute_synonyms_and_repeats() -> None:
    p = parse_program('x = InteractionObject("Mug", attributes=["Cleaned", "clean", "full", "toast"])\nx.go_to()')
    assert p.objects[0].attributes == ("clean", "filled", "toasted")


def test_every_construction_is_a_new_object() -> None:
    p = parse_program('a = InteractionObject("Plate")\nb = InteractionObject("Plate")\na.place(b)')
    assert len(p.objects) == 2
    assert p.actions[0].obj == 0 and p.actions[0].arg == 1


def test_alias_binds_the_same_object() -> None:
    p = parse_program('a = InteractionObject("Mug")\nb = a\nb.pickup()')
    assert len(p.objects) == 1 and p.actions[0].obj == 0


def test_rebinding_a_name_in_a_loop_makes_new_objects() -> None:
    p = parse_program('for c in ["Mug", "Cup", "Bowl"]:\n    o = InteractionObject(c)\n    o.clean()')
    assert [o.object_class for o in p.objects] == ["Mug", "Cup", "Bowl"]
    assert [a.obj for a in p.actions] == [0, 1, 2]


def test_range_loops() -> None:
    text = "for i in range(1, 7, 2):\n    s = InteractionObject(\"TomatoSliced\")\n    s.pickup()\n"
    assert len(parse_program(text).objects) == 3
    assert len(parse_program("for i in range(20):\n    pass\nm = InteractionObject('Mug')\nm.go_to()").actions) == 1
    assert parse_program("for i in range(3, 0, -1):\n    m = InteractionObject('Mug')").objects[2].object_class == "Mug"


def test_nested_loops_within_limits() -> None:
    text = "for i in range(3):\n    for c in ['Mug', 'Cup']:\n        o = InteractionObject(c)\n        o.go_to()\n"
    assert len(parse_program(text).actions) == 6


def test_empty_loop_body_is_still_checked() -> None:
    with pytest.raises(ProgramError, match="'import os' is not allowed"):
        parse_program("for i in range(0):\n    import os\nm = InteractionObject('Mug')\nm.go_to()")
    with pytest.raises(ProgramError, match="'wash' is not an InteractionObject method"):
        parse_program("for c in []:\n    o = InteractionObject(c)\n    o.wash()")


def test_empty_loop_binds_nothing() -> None:
    with pytest.raises(ProgramError, match="'o' is not defined"):
        parse_program("for c in []:\n    o = InteractionObject(c)\no.pickup()")


def test_loop_variable_persists_after_loop_like_python() -> None:
    p = parse_program("for c in ['Mug', 'Cup']:\n    pass\no = InteractionObject(c)\no.go_to()")
    assert p.objects[0].object_class == "Cup"


def test_agent_corrective_forms() -> None:
    text = (
        "target_agent = AgentCorrective()\n"
        "target_agent.move_back()\n"
        "move_closer()\n"
        "AgentCorrective().move_alternate_viewpoint()\n"
        "do_nothing()\n"
    )
    assert [a.method for a in parse_program(text).actions] == [
        "move_back", "move_closer", "move_alternate_viewpoint", "do_nothing",
    ]
    assert all(a.obj is None for a in parse_program(text).actions)


def test_anonymous_objects_and_string_receptacles() -> None:
    p = parse_program(
        'InteractionObject("Mug").pickup()\n'
        'mug = InteractionObject("Mug")\n'
        'mug.place(InteractionObject("SinkBasin"))\n'
        'mug.pickup_and_place("CounterTop")\n'
        'mug.pour(target="HousePlant")\n'
    )
    assert [o.object_class for o in p.objects] == ["Mug", "Mug", "SinkBasin", "CounterTop", "HousePlant"]
    assert any("treated 'CounterTop' as InteractionObject('CounterTop')" in n for n in p.notes)


def test_noops_are_accepted() -> None:
    text = '"""Docstring."""\n# comment\npass\n...\n' + COFFEE + "  # inline comment"
    assert calls(text) == COFFEE_CALLS


def test_print_is_not_part_of_the_api() -> None:
    with pytest.raises(ProgramError) as info:
        parse_program('print("making coffee")\n' + COFFEE)
    assert info.value.line == 1
    assert "print() is not part of the API" in info.value.reason and "# comment" in info.value.reason


def test_constant_fstring_is_a_plain_string() -> None:
    assert parse_program('m = InteractionObject(f"Mug")\nm.go_to()').objects[0].object_class == "Mug"


def test_steps_are_in_execution_order() -> None:
    p = parse_program('m = InteractionObject("Mug")\nm.pickup()\nc = InteractionObject("Cup")\nc.go_to()')
    kinds = [type(s).__name__ for s in p.steps]
    assert kinds == ["ObjectDecl", "Action", "ObjectDecl", "Action"]
    assert isinstance(p.steps[0], ObjectDecl) and isinstance(p.steps[1], Action)
    assert [s.line for s in p.steps] == [1, 2, 3, 4]


# ---------------------------------------------------------------------------------- errors


def test_error_fields() -> None:
    with pytest.raises(ProgramError) as info:
        parse_program('mug = InteractionObject("Mug")\nmug.pickup()\nimport os')
    e = info.value
    assert (e.line, e.col, e.snippet) == (3, 1, "import os")
    assert e.reason == "'import os' is not allowed: programs may only create InteractionObject(...) values and call their methods"
    assert str(e) == f"line 3: {e.reason}"
    assert isinstance(e, ValueError)


def test_column_counts_characters_not_bytes() -> None:
    with pytest.raises(ProgramError) as info:
        parse_program('"café crème" ; x = 1')
    assert info.value.col == 16
    assert "'x = 1'" in str(info.value)


def test_long_snippets_are_clipped() -> None:
    with pytest.raises(ProgramError) as info:
        parse_program("import " + ", ".join(f"module{i}" for i in range(40)))
    assert info.value.snippet is not None and info.value.snippet.endswith("...")
    assert len(info.value.snippet) <= 70


def test_limits_on_objects() -> None:
    text = "for i in range(20):\n    for j in range(11):\n        o = InteractionObject('Mug')\n"
    with pytest.raises(ProgramError, match="too many objects"):
        parse_program(text)


def test_method_suggestion_for_typos() -> None:
    with pytest.raises(ProgramError, match="did you mean 'toggle_on'"):
        parse_program("m = InteractionObject('Lamp')\nm.toggleon()")
    with pytest.raises(ProgramError, match="did you mean InteractionObject"):
        parse_program("m = InteractionObjects('Lamp')")
