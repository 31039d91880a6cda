"""program layer of helper-agent (see docs/architecture.md): the action API the LLM writes against, the
validating parser (LLM output is parsed with `ast` and interpreted, never executed), the semantic
checks, the compiler from programs to the subgoals the executor runs, and the grammar (GBNF) that
constrains an LLM to the language."""

from helper_agent.program.classes import CatalogView, ClassMapper, LexicalClassMapper
from helper_agent.program.compiler import CompiledProgram, compile_program, subgoal_signature
from helper_agent.program.docs import api_documentation
from helper_agent.program.errors import LimitError, ProgramError, SemanticError
from helper_agent.program.grammar import DEFAULT_MAX_STATEMENTS, matches_program_grammar, program_grammar
from helper_agent.program.parser import Action, ObjectDecl, ParsedProgram, parse_program
from helper_agent.program.render import render_program
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind

__all__ = [
    "DEFAULT_MAX_STATEMENTS",
    "Action",
    "CatalogView",
    "ClassMapper",
    "CompiledProgram",
    "LexicalClassMapper",
    "LimitError",
    "ObjectDecl",
    "ObjectRef",
    "ParsedProgram",
    "ProgramError",
    "SemanticError",
    "Subgoal",
    "SubgoalKind",
    "api_documentation",
    "compile_program",
    "matches_program_grammar",
    "parse_program",
    "program_grammar",
    "render_program",
    "subgoal_signature",
]
