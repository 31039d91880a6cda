"""program layer of helper-agent (see DESIGN.md): the action API the LLM writes against, the
validating parser (LLM output is parsed with `ast` and interpreted, never executed), and the
compiler from programs to the subgoals the executor runs."""

from helper_agent.program.classes import CatalogView, ClassMapper, LexicalClassMapper
from helper_agent.program.compiler import CompiledProgram, compile_program, subgoal_signature
from helper_agent.program.docs import api_documentation
from helper_agent.program.errors import LimitError, ProgramError, SemanticError
from helper_agent.program.parser import Action, ObjectDecl, ParsedProgram, parse_program
from helper_agent.program.render import render_program
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind

__all__ = [
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
    "parse_program",
    "render_program",
    "subgoal_signature",
]
