"""Keyword arguments for `chat.invoke` that constrain or route a call, for the models that can take
them: a prompt's kind (which in-process context keeps its prefix), a grammar, a program decoded line
by line. Each returns {} for a model that cannot take them, whose answers are parsed and checked as
usual, so a caller writes one call for every provider."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helper_agent.config import get_settings
from helper_agent.llm.clients import GRAMMAR_FIELDS, is_openai_client
from helper_agent.llm.inprocess import InProcessChatModel
from helper_agent.program.grammar import program_grammar


def prompt_kind(chat: Any, kind: str) -> dict[str, Any]:
    """Keyword arguments for `chat.invoke` that name the prompt's kind ("plan", "locate", ...), so
    the in-process model keeps that kind's prefix in a context of its own; {} for other models."""
    return {"prompt_kind": kind} if isinstance(chat, InProcessChatModel) else {}


def program_decoding(chat: Any, *, max_lines: int, temperature: float = 0.0, seed: int = 0,
                     agent_moves: bool = False, kind: str | None = None) -> dict[str, Any]:
    """Keyword arguments for `chat.invoke` that constrain an answer to a program, for the models
    that can take them; {} for the others, which keep validate-and-retry.

    - the in-process model writes the program line by line under grammars that know what it has
      defined (`helper_agent.decoding`);
    - an OpenAI-compatible server writes it line by line too when `HELPER_LLM_TOKENIZER` names the
      GGUF file it serves (`served_line_decoding`); otherwise it gets the whole-program grammar
      when `HELPER_LLM_GRAMMAR` says which field it reads: `llama.cpp` (llama.cpp's and
      llama-cpp-python's servers: `grammar`) or
      `vllm` (`guided_grammar`); and the temperature and seed of the attempt;
    - any other provider: nothing (its own defaults).

    `kind` names the prompt's kind for the in-process model (see `prompt_kind`).
    """
    if isinstance(chat, InProcessChatModel):
        return {"program_decoding": True, "max_lines": max_lines, "agent_moves": agent_moves,
                "temperature": temperature, "seed": seed, **(prompt_kind(chat, kind) if kind else {})}
    if served_line_decoding(chat):
        return {"program_decoding": True, "max_lines": max_lines, "agent_moves": agent_moves,
                "temperature": temperature, "seed": seed}
    return _served_grammar(chat, lambda: program_grammar(max_statements=max_lines), temperature, seed)


def grammar_decoding(chat: Any, grammar: str, *, temperature: float = 0.0, seed: int = 0,
                     kind: str | None = None) -> dict[str, Any]:
    """Keyword arguments for `chat.invoke` that constrain an answer to a GBNF `grammar` (any
    grammar: a plan, one step's action), for the models that can take one; {} for the others.

    The in-process model decodes under it (llama.cpp's `grammar=`); an OpenAI-compatible server gets
    it in the field `HELPER_LLM_GRAMMAR` names (`llama.cpp`: `grammar`, `vllm`: `guided_grammar`),
    with the attempt's temperature and seed; other providers get nothing and their answers are
    parsed and checked as usual. Methods other than HELPER use this; HELPER's programs use
    `program_decoding`, which also knows what a program has defined so far. `kind` names the
    prompt's kind for the in-process model (see `prompt_kind`).
    """
    if isinstance(chat, InProcessChatModel):
        return {"grammar": grammar, "temperature": temperature, "seed": seed,
                **(prompt_kind(chat, kind) if kind else {})}
    return _served_grammar(chat, lambda: grammar, temperature, seed)


def _served_grammar(chat: Any, grammar: Callable[[], str], temperature: float, seed: int) -> dict[str, Any]:
    """For an OpenAI-compatible server: the attempt's temperature and seed, and the grammar in the
    request field `HELPER_LLM_GRAMMAR` names (none: no grammar is sent); {} for any other provider.
    `grammar` is called only when a grammar is sent, since a program grammar takes time to build."""
    if not is_openai_client(chat):
        return {}
    kwargs: dict[str, Any] = {"temperature": temperature, "seed": seed}
    field_name = GRAMMAR_FIELDS.get(get_settings().llm_grammar)
    if field_name:
        kwargs["extra_body"] = {field_name: grammar()}
    return kwargs


def served_line_decoding(chat: Any) -> bool:
    """Whether `chat` (an OpenAI-compatible server) writes programs line by line: the server takes
    grammars (`HELPER_LLM_GRAMMAR`) and the client knows the served file's template and tokenizer
    (`HELPER_LLM_TOKENIZER`)."""
    settings = get_settings()
    if not settings.llm_tokenizer or settings.llm_grammar not in GRAMMAR_FIELDS:
        return False
    return is_openai_client(chat)
