"""The API section of the planner's prompts, kept as a data file (`helper_agent/prompts/api.md`).

The file is a `string.Template`: limits that the parser enforces (`$max_loop_length`) are filled in
from `api.py`, so the text cannot promise more than the parser accepts. The examples in it are
extracted by `api_examples()`, and the tests check that the parser and the decoding grammar
(`grammar.py`) both accept them, and that every method of the API appears in the text and in the
grammar: the prompt, the grammar and the interpreter describe one language.
"""

from __future__ import annotations

import functools
import re
import textwrap
from importlib import resources
from string import Template

from helper_agent.program import api

_PACKAGE = "helper_agent.prompts"
_RESOURCE = "api.md"
_BLOCK_INDENT = 8
_CONTINUATION_INDENT = 20  # a method-table row continued on the next line, under its example column
_INLINE_EXAMPLE = re.compile(r"\s([a-z_][a-z0-9_]*\.[a-z_]+\([a-z_]*\))\s*$")


@functools.lru_cache(maxsize=1)
def api_documentation() -> str:
    """The text that describes the action API to the LLM (read once per process)."""
    raw = resources.files(_PACKAGE).joinpath(_RESOURCE).read_text(encoding="utf-8")
    text = Template(raw).substitute(max_loop_length=api.MAX_LOOP_LENGTH)
    return text.strip() + "\n"


def api_examples() -> list[str]:
    """The example code in the API text, one program per item: each block of lines indented by 8 to
    19 spaces (dedented), then each one-call example ending a line of the method table."""
    blocks: list[list[str]] = []
    inline: list[str] = []
    previous_in_block = False
    for line in api_documentation().split("\n"):
        width = len(line) - len(line.lstrip(" "))
        in_block = bool(line.strip()) and _BLOCK_INDENT <= width < _CONTINUATION_INDENT
        if in_block:
            if not previous_in_block:
                blocks.append([])
            blocks[-1].append(line)
        elif width >= _CONTINUATION_INDENT and line.strip():
            inline.append(line.strip() + "\n")
        elif (m := _INLINE_EXAMPLE.search(line)) is not None:
            inline.append(m.group(1) + "\n")
        previous_in_block = in_block
    return [textwrap.dedent("\n".join(block)) + "\n" for block in blocks] + inline
