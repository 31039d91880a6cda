"""Odd characters and encodings: each is a ProgramError with the line, the column, and what to write.

Python itself would accept some of these silently (a byte-order mark, form feeds in indentation,
full-width identifiers, which it NFKC-normalises to ASCII) and reject others with messages a planner
cannot act on; the program language is ASCII code, UTF-8 text, spaces and tabs for indentation.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helper_agent.program import LimitError, ProgramError, SemanticError, parse_program
from helper_agent.program.characters import check_code_characters, describe_character

MUG = 'mug = InteractionObject("Mug")\n'


@pytest.mark.parametrize(
    ("text", "line", "col", "expected"),
    [
        ("\ufeff" + MUG + "mug.pickup()", 1, None, "starts with a byte-order mark (U+FEFF); send the program as plain text"),
        (MUG + "for i in range(2):\n\x0cmug.pickup()", 3, None,
         "the indentation contains a form feed (U+000C); indent with spaces only"),
        (MUG + "for i in range(2):\n  \x0b  mug.pickup()", 3, 3, "vertical tab (U+000B); indent with spaces only"),
        (MUG + "for i in range(2):\n\u00a0\u00a0mug.pickup()", 3, None,
         "U+00A0 (NO-BREAK SPACE); indent with spaces only"),
        (MUG + "for i in range(2):\n    \u3000mug.pickup()", 3, 5, "U+3000 (IDEOGRAPHIC SPACE); indent with spaces only"),
        # full-width letters: Python would read 'ｍｕｇ' as 'mug'
        (MUG + "\uff4d\uff55\uff47.pickup()", 2, None,
         "'ｍ' (U+FF4D FULLWIDTH LATIN SMALL LETTER M) is not allowed in a name; write names with plain ASCII"),
        (MUG + "mug.\uff50ickup()", 2, 5, "FULLWIDTH LATIN SMALL LETTER P) is not allowed in a name"),
        ("tasse_\u00e0_caf\u00e9 = InteractionObject('Mug')", 1, 7, "'à' (U+00E0 LATIN SMALL LETTER A WITH GRAVE)"),
        ("\u043cug = InteractionObject('Mug')", 1, None, "U+043C CYRILLIC SMALL LETTER EM) is not allowed in a name"),
        ("mug = InteractionObject(\u201cMug\u201d)", 1, 25,
         "(U+201C LEFT DOUBLE QUOTATION MARK) is not a Python quote; write class names in straight quotes"),
        (MUG + "mug.pickup()\u200b", 2, 13, "U+200B (ZERO WIDTH SPACE) is not allowed in code; use a plain space"),
        (MUG + "mug.pickup(\u00a0)", 2, 12, "U+00A0 (NO-BREAK SPACE) is not allowed in code; use a plain space"),
        (MUG + "mug\ufeff.pickup()", 2, 4, "U+FEFF (ZERO WIDTH NO-BREAK SPACE) is not allowed in code"),
        (MUG + "mug.pickup() \x0c", 2, 14, "a form feed (U+000C) is not allowed in code"),
        (MUG + "mug.pickup() \u2192 done", 2, 14, "'→' (U+2192 RIGHTWARDS ARROW) is not allowed outside quotes and comments"),
        (MUG + "mug.pickup()\ud800", 2, 13, "lone surrogate (U+D800)"),
        # dedented code: the column is that of the answer as written
        ("Here it is:\n```python\n    mug = InteractionObject('Mug')\n    \uff4dug.pickup()\n```", 4, 5,
         "is not allowed in a name"),
    ],
)
def test_odd_characters_are_named_located_and_explained(text: str, line: int, col: int | None, expected: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program(text)
    err = info.value
    assert type(err) is ProgramError  # not a semantic error: outside the language
    assert expected in err.reason
    assert err.line == line
    if col is not None:
        assert err.col == col
        assert str(err).startswith(f"line {line}, col {col}: ")
    assert "\n" not in str(err)
    # invisible characters are named, never copied into the message
    assert not any(c in str(err) for c in "\ufeff\u200b\u00a0\u3000\x0b\x0c")


@pytest.mark.parametrize(
    ("data", "line", "col", "expected"),
    [
        (b"\xef\xbb\xbf" + MUG.encode(), 1, None, "UTF-8 byte-order mark (EF BB BF)"),
        (MUG.encode() + b"mug.pickup()\xff\n", 2, 13, "not valid UTF-8 (byte 0xFF: invalid start byte)"),
        (MUG.encode() + "# café\n".encode() + b"x = '\xc3'", 3, 6, "not valid UTF-8 (byte 0xC3"),
        ("é".encode() + b"\xe2\x82", 1, 2, "not valid UTF-8 (byte 0xE2: unexpected end of data)"),
        (b"mug = InteractionObject('Mug')\xed\xa0\x80", 1, 31, "not valid UTF-8 (byte 0xED"),  # encoded surrogate
    ],
)
def test_bytes_must_be_utf8(data: bytes, line: int, col: int | None, expected: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program(data)
    assert expected in info.value.reason
    assert "send the program as" in info.value.reason
    assert info.value.line == line
    if col is not None:
        assert info.value.col == col


@pytest.mark.parametrize(
    "text",
    [
        MUG + "for i in range(2):\n\tmug.go_to()\n",  # tabs indent
        MUG + "mug.pickup()  # café, 咖啡 → the counter\n",  # anything in comments
        '"""Caf\u00e9 \u2014 coffee."""\n' + MUG + "mug.pickup()\n",  # and in strings
        MUG + "mug.pickup()\n\n\n",
        "   \n" + MUG + "mug.pickup()",
    ],
)
def test_allowed_characters(text: str) -> None:
    assert [a.method for a in parse_program(text).actions][-1:] in (["pickup"], ["go_to"])


def test_non_ascii_class_names_are_rejected_as_class_names() -> None:
    with pytest.raises(ProgramError, match="'Tasse\u0301' is not an object class name"):
        parse_program('mug = InteractionObject("Tasse\u0301")\nmug.pickup()')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("for i in range(10**100):\n    pass\n", "range() takes integer literals only"),
        ("for i in range(" + "1" + "0" * 100 + "):\n    pass\n", "repeats far too often; a loop may repeat at most 20"),
        ("for i in range(-" + "1" + "0" * 30 + ", 0):\n    pass\n", "repeats far too often"),
        ("for i in range(0, " + "1" + "0" * 40 + ", -1):\n    pass\n", None),  # empty: fine
        ("for i in range(" + "9" * 30 + ", 0, -" + "1" + "0" * 29 + "):\n    pass\n", None),  # 10 iterations
        ("for i in range(0, 10**30, 10**29):\n    pass\n", "range() takes integer literals only"),
        ("for i in range(25):\n    pass\n", "repeats 25 times; a loop may repeat at most 20 times: write range(n) with n <= 20"),
        ("for i in range(" + "9" * 5000 + "):\n    pass\n", "an integer in the program is too long"),
    ],
)
def test_huge_loops_are_clean_errors(text: str, expected: str | None) -> None:
    text = text + MUG + "mug.pickup()\n"
    if expected is None:
        assert [a.method for a in parse_program(text).actions] == ["pickup"]
        return
    with pytest.raises(ProgramError) as info:
        parse_program(text)
    assert expected in info.value.reason
    assert info.value.line == 1


def test_check_is_total_over_any_text() -> None:
    @settings(max_examples=300, deadline=None)
    @given(st.text(max_size=60))
    def check(code: str) -> None:
        err = check_code_characters(code)
        if err is not None:
            assert err.line is not None and 1 <= err.line <= code.count("\n") + 1
            assert err.col is not None and err.col >= 1

    check()


@given(st.characters())
def test_every_character_has_a_description(char: str) -> None:
    text = describe_character(char)
    assert f"U+{ord(char):04X}" in text


def test_error_kinds() -> None:
    assert issubclass(SemanticError, ProgramError) and issubclass(LimitError, ProgramError)
    with pytest.raises(SemanticError, match="'cup' is not defined yet"):
        parse_program("cup.pickup()")
    with pytest.raises(LimitError, match="too many objects"):
        parse_program("for i in range(20):\n    for j in range(11):\n        o = InteractionObject('Mug')\n")
