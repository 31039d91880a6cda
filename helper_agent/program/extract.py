"""Pull the code out of what an LLM wrote, and parse it with `ast` (never executed).

Small models wrap programs in fences and prose. The rules for finding the code:

* Fenced blocks: if the text has ``` (or ~~~) fences, the code is the content of the blocks tagged
  python/py/python3 or untagged (all blocks if none is so tagged), in order; an unterminated last
  fence runs to the end of the text. Everything outside the blocks is ignored.
* Prose without fences: if the whole text does not parse, the lines before the first line that
  looks like code are ignored ("Here is the program:"), and then also everything from the first
  prose line at column 0 after the last column-0 code line ("This makes coffee."). The first of
  (whole text, without leading prose, without leading and trailing prose) whose characters are
  allowed (`characters.py`) and that parses is used; if none does, the error of the last is reported.
* Ignored lines are blanked, not removed, so line numbers in messages are those of the text as
  submitted. Code indented as a whole is dedented (and columns in messages are shifted back).
"""

from __future__ import annotations

import ast
import re
import textwrap
import unicodedata
import warnings
from dataclasses import dataclass, field

from helper_agent.program import api
from helper_agent.program.characters import check_code_characters
from helper_agent.program.errors import LimitError, ProgramError, clip

_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*([A-Za-z0-9_+\-]*)")
_CODE_LINE = re.compile(
    r"""^\s*(?:
        \#|@|["']|\)|\]
      | (?:for|def|async|if|while|import|from|class|with|try|return|pass|print|elif|else)\b
      | [^\W\d]\w*\s*(?:=|\(|\.\s*[^\W\d])
    )""",
    re.VERBOSE,
)
_CODE_TAGS = {"", "python", "py", "python3", "py3"}
_INTEGER_TOO_LONG = "an integer in the program is too long: write small integer literals such as 3"


def _looks_like_code(line: str) -> bool:
    """Whether a line is code rather than prose, judged on its plain form (full-width letters as
    ASCII, invisible format characters removed, any whitespace a space), so a line of code with odd
    characters stays code and gets the character's message instead of being dropped as prose
    (`mug.<U+000B>pickup()` as the last line was once dropped and the rest accepted)."""
    plain = "".join(c for c in unicodedata.normalize("NFKC", line) if unicodedata.category(c) != "Cf")
    plain = "".join(" " if c.isspace() else c for c in plain)  # U+000B, U+000C, U+00A0: spaces here
    return _CODE_LINE.match(plain) is not None


@dataclass
class ExtractedCode:
    """The code found in an answer: same lines as the answer, ignored ones blanked."""

    text: str
    indent: dict[int, int] = field(default_factory=dict)  # 1-based line -> columns removed by dedenting
    notes: list[str] = field(default_factory=list)


def _dedent(lines: list[str], rows: list[int]) -> tuple[dict[int, str], int]:
    block = "\n".join(lines[i] for i in rows)
    dedented = textwrap.dedent(block).split("\n")
    removed = 0
    for original, new in zip((lines[i] for i in rows), dedented, strict=True):
        if new.strip():
            removed = len(original) - len(new)
            break
    return dict(zip(rows, dedented, strict=True)), removed


def _fenced(lines: list[str]) -> list[tuple[str, list[int]]] | None:
    blocks: list[tuple[str, list[int]]] = []
    current: list[int] | None = None
    tag = ""
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            if current is None:
                current, tag = [], m.group(1).lower()
            else:
                blocks.append((tag, current))
                current = None
            continue
        if current is not None:
            current.append(i)
    if current is not None:
        blocks.append((tag, current))
    return blocks or None


def _assemble(lines: list[str], blocks: list[list[int]], notes: list[str]) -> ExtractedCode:
    out = [""] * len(lines)
    indent: dict[int, int] = {}
    for rows in blocks:
        if not rows:
            continue
        new, removed = _dedent(lines, rows)
        for i in rows:
            out[i] = new[i]
            indent[i + 1] = removed
    return ExtractedCode("\n".join(out), indent, notes)


def candidates(text: str) -> list[ExtractedCode]:
    """The readings of `text` to try, in order (see the module docstring)."""
    lines = text.split("\n")
    blocks = _fenced(lines)
    if blocks is not None:
        chosen = [rows for tag, rows in blocks if tag in _CODE_TAGS] or [rows for _, rows in blocks]
        note = "took the code from the fenced block" + ("s" if len(chosen) > 1 else "")
        return [_assemble(lines, chosen, [note])]

    every = list(range(len(lines)))
    code_rows = [i for i, line in enumerate(lines) if line.strip() and _looks_like_code(line)]
    result = [_assemble(lines, [every], [])]
    if not code_rows:
        result.append(ExtractedCode("\n".join("" for _ in lines), {}, ["ignored prose"]))
        return result
    first = code_rows[0]
    if first > 0 and any(lines[i].strip() for i in range(first)):
        rows = list(range(first, len(lines)))
        result.append(_assemble(lines, [rows], [f"ignored prose on lines 1-{first}"]))
    else:
        first = 0
    last_code_at_col0 = max((i for i in code_rows if not lines[i][:1].isspace()), default=first)
    tail = next(
        (
            i
            for i in range(last_code_at_col0 + 1, len(lines))
            if lines[i].strip() and not lines[i][:1].isspace() and not _looks_like_code(lines[i])
        ),
        None,
    )
    if tail is not None:
        rows = list(range(first, tail))
        notes = [f"ignored prose on lines 1-{first}"] if first else []
        notes.append(f"ignored prose from line {tail + 1} on")
        result.append(_assemble(lines, [rows], notes))
    return result


def syntax_error(exc: BaseException, code: ExtractedCode) -> ProgramError:
    """The LLM-facing form of an exception `ast.parse` raised on `code`."""
    if isinstance(exc, SyntaxError):
        line = exc.lineno
        msg = exc.msg or "invalid syntax"
        if "null bytes" in msg:
            return ProgramError("the program contains NUL characters")
        if "digits" in msg and "limit" in msg.lower():
            return ProgramError(_INTEGER_TOO_LONG, line=exc.lineno)
        text_lines = code.text.split("\n")
        snippet = None
        if line is not None and 1 <= line <= len(text_lines):
            snippet = clip(text_lines[line - 1].strip())
        col = None
        if exc.offset is not None and line is not None:
            col = exc.offset + code.indent.get(line, 0)
        reason = f"syntax error ({msg})"
        if snippet:
            reason += f" in '{snippet}'"
        reason += ": write plain Python statements"
        return ProgramError(reason, line=line, col=col, snippet=snippet)
    if isinstance(exc, RecursionError | MemoryError):
        return LimitError("the program is nested too deeply")
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return ProgramError(_INTEGER_TOO_LONG)
    return ProgramError(f"the program could not be parsed ({type(exc).__name__}: {clip(str(exc))})")


def parse_code(text: str) -> tuple[ast.Module, ExtractedCode]:
    """The AST of the first reading of `text` that is allowed and parses, with that reading."""
    readings = candidates(text)
    last: ProgramError | None = None
    for code in readings:
        if len(code.text) - code.text.count("\n") > api.MAX_PROGRAM_CHARS:
            raise LimitError(
                f"the program is too long ({len(code.text.strip())} characters; the limit is "
                f"{api.MAX_PROGRAM_CHARS})"
            )
        bad = check_code_characters(code.text, code.indent)
        if bad is not None:
            last = bad
            continue
        try:
            with warnings.catch_warnings():  # e.g. "invalid escape sequence": not the LLM's problem
                warnings.simplefilter("ignore")
                return ast.parse(code.text, mode="exec"), code
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
            last = syntax_error(exc, code)
    assert last is not None
    raise last
