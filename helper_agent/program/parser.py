"""Parse and validate LLM programs: decode the text, extract the code, `ast.parse` it, interpret it.

Nothing here executes the program. The steps live in their own modules:

* `characters.py`: which characters a program may contain (UTF-8, no byte-order mark, ASCII code
  outside quotes and comments, indentation of spaces and tabs);
* `extract.py`: finding the code in an answer with fences and prose, and parsing it with `ast`;
* `interpreter.py`: walking the AST against the API (the language is documented there and in
  `prompts/api.md`), binding names, unrolling loops, recording the calls.

`parse_program` chains them. The result types are in `parsed.py` and re-exported here, so
`from helper_agent.program.parser import ParsedProgram` keeps working.
"""

from __future__ import annotations

import ast

from helper_agent.program.characters import decode_program
from helper_agent.program.errors import LimitError, ProgramError, SemanticError
from helper_agent.program.extract import parse_code
from helper_agent.program.interpreter import Interpreter
from helper_agent.program.parsed import Action, ObjectDecl, ParsedProgram, Step

__all__ = ["Action", "ObjectDecl", "ParsedProgram", "Step", "parse_program"]

_NO_PROGRAM = (
    "no program found: write Python statements such as mug = InteractionObject(\"Mug\") and mug.pickup()"
)


def _is_noop(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
    )


def parse_program(text: str | bytes) -> ParsedProgram:
    """Validate `text` and interpret it into objects and steps; raise `ProgramError` if rejected.

    `text` is what the LLM answered (fences and prose around the code are allowed), as a `str` or
    as UTF-8 bytes.
    """
    text = decode_program(text)
    tree, code = parse_code(text)
    if all(_is_noop(s) for s in tree.body):
        # only comments (or docstrings) is a program in the language that says nothing
        commented = any(line.lstrip().startswith("#") for line in code.text.split("\n")) or tree.body
        raise (SemanticError if commented else ProgramError)(_NO_PROGRAM)
    interp = Interpreter(code)
    try:
        interp.run(tree)
    except RecursionError:
        raise LimitError("the program is nested too deeply") from None
    return ParsedProgram(text=text, source=code.text, objects=interp.objects, steps=interp.steps,
                         notes=interp.notes)
