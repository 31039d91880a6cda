"""Which characters a program may contain, checked before Python's parser sees the code.

Python accepts more than the program language does: it reads a byte-order mark, indents with form
feeds, and NFKC-normalises identifiers, so `ｍｕｇ.pickup()` (full-width letters) silently means
`mug.pickup()`. Other characters it rejects with messages a planner cannot act on ("invalid
non-printable character U+00A0"). Here each such character gets one sentence that names it, says
where it is and what to write instead. The rules:

* given bytes, they must be UTF-8 (strict); text must not start with a byte-order mark, and must not
  contain NUL characters or lone surrogates;
* indentation is spaces and tabs only;
* outside string literals and comments, code is printable ASCII (plus tabs); inside them anything
  goes, since a comment may well say "café" and a class name in quotes is checked later anyway.
"""

from __future__ import annotations

import codecs
import unicodedata

from helper_agent.program import api
from helper_agent.program.errors import ProgramError

MAX_RAW_CHARS = 4 * api.MAX_PROGRAM_CHARS  # the whole answer, prose and fences included

_QUOTE_LIKE = frozenset("\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2032\u2033\u2039\u203a\uff02\uff07")
_CONTROL_NAMES = {
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\x1b": "an escape character",
    "\x7f": "a delete character",
}


def describe_character(char: str) -> str:
    """A readable name for any character: "a form feed (U+000C)", "U+FF4D FULLWIDTH LATIN SMALL
    LETTER M". Invisible characters are named, never shown, so the message itself stays clean."""
    code = f"U+{ord(char):04X}"
    if char in _CONTROL_NAMES:
        return f"{_CONTROL_NAMES[char]} ({code})"
    name = unicodedata.name(char, "")
    if not name:
        return f"the control character {code}" if ord(char) < 0x20 else f"the character {code}"
    visible = char.isprintable() and not char.isspace() and unicodedata.category(char) not in {"Cf", "Zs"}
    return f"'{char}' ({code} {name})" if visible else f"{code} ({name})"


def decode_program(text: str | bytes) -> str:
    """The program text as a `str` with "\\n" line ends, or a `ProgramError` saying what is wrong."""
    if isinstance(text, bytes | bytearray | memoryview):
        text = _decode_bytes(bytes(text))
    if not isinstance(text, str):
        raise ProgramError(f"the program must be text, not {type(text).__name__}")
    if len(text) > MAX_RAW_CHARS:
        raise ProgramError(f"the answer is too long ({len(text)} characters); write at most "
                           f"{api.MAX_PROGRAM_CHARS} characters of code")
    if "\x00" in text:
        line, col = _position(text, text.index("\x00"))
        raise ProgramError("the program contains NUL characters (U+0000); remove them", line=line, col=col)
    if text.startswith("\ufeff"):
        raise ProgramError("the text starts with a byte-order mark (U+FEFF); send the program as plain "
                           "text without it", line=1)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for i, char in enumerate(text):
        if 0xD800 <= ord(char) <= 0xDFFF:
            line, col = _position(text, i)
            raise ProgramError(f"the text contains a lone surrogate (U+{ord(char):04X}), which is not a "
                               "character; send valid Unicode text", line=line, col=col)
    return text


def _decode_bytes(data: bytes) -> str:
    if len(data) > MAX_RAW_CHARS * 4:
        raise ProgramError(f"the answer is too long ({len(data)} bytes); write at most "
                           f"{api.MAX_PROGRAM_CHARS} characters of code")
    if data.startswith(codecs.BOM_UTF8):
        raise ProgramError("the text starts with a UTF-8 byte-order mark (EF BB BF); send the program "
                           "as plain UTF-8 text without it", line=1)
    try:
        return data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[start:exc.start].decode("utf-8", errors="replace")) + 1
        raise ProgramError(f"the text is not valid UTF-8 (byte 0x{data[exc.start]:02X}: {exc.reason}); "
                           "send the program as UTF-8 text", line=line, col=col) from None


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def check_code_characters(code: str, indent: dict[int, int] | None = None) -> ProgramError | None:
    """The first character `code` may not contain, as a `ProgramError`, or None if all are allowed.

    `indent` maps a 1-based line to the columns removed from it by dedenting, so the column in the
    message is the column in the text as submitted.
    """
    shift = indent or {}
    line, col, i, n = 1, 0, 0, len(code)
    in_indent = True
    while i < n:
        char = code[i]
        if char == "\n":
            line, col, i, in_indent = line + 1, 0, i + 1, True
            continue
        if in_indent:
            if char in " \t":
                i, col = i + 1, col + 1
                continue
            in_indent = False
            if char.isspace() or unicodedata.category(char) in {"Cf", "Zs"}:
                return _error(f"the indentation contains {describe_character(char)}; indent with spaces only",
                              line, col + 1 + shift.get(line, 0))
        if char == "#":
            end = code.find("\n", i)
            end = n if end < 0 else end
            col += end - i
            i = end
            continue
        if char in "'\"":
            end = _string_end(code, i)
            text = code[i:end]
            newlines = text.count("\n")
            if newlines:
                line += newlines
                col = len(text) - text.rfind("\n") - 1
            else:
                col += len(text)
            i = end
            continue
        if not (char.isascii() and (char.isprintable() or char == "\t")):
            return _error(_reason(char), line, col + 1 + shift.get(line, 0))
        i, col = i + 1, col + 1
    return None


def _string_end(code: str, start: int) -> int:
    """The index just past the string literal opening at `start` (or where an unterminated one stops)."""
    quote = code[start] * 3 if code.startswith(code[start] * 3, start) else code[start]
    j, n = start + len(quote), len(code)
    while j < n:
        if code[j] == "\\":
            j += 2
            continue
        if code.startswith(quote, j):
            return j + len(quote)
        if len(quote) == 1 and code[j] == "\n":
            return j
        j += 1
    return n


def _reason(char: str) -> str:
    what = describe_character(char)
    if char in _QUOTE_LIKE:
        return f"{what} is not a Python quote; write class names in straight quotes, e.g. \"Mug\""
    category = unicodedata.category(char)
    if category in {"Zs", "Cf"} or char.isspace():
        return f"{what} is not allowed in code; use a plain space"
    if category[0] in "LN" or char == "\uff3f":
        return (f"{what} is not allowed in a name; write names with plain ASCII letters, digits and "
                "underscores, e.g. coffee_mug")
    if char.isascii():
        return f"{what} is not allowed in code; use plain spaces and new lines"
    return f"{what} is not allowed outside quotes and comments; write plain ASCII code"


def _error(reason: str, line: int, col: int) -> ProgramError:
    return ProgramError(reason, line=line, col=col)
