"""What the in-process chat models share, whatever runtime runs them (OpenVINO, llama.cpp).

The agents ask one thing of an in-process model: that it take the keyword arguments of
`decoding_args` (a prompt's kind, a grammar, a program written line by line) on `invoke`. Both
runtimes subclass `InProcessChatModel`, so `decoding_args` tells them apart from remote providers
with one `isinstance`, and both report usage the same way (`usage_metadata`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage


class InProcessChatModel(BaseChatModel):
    """A chat model whose weights run in this process and that takes, per call:

    - `grammar=GBNF_TEXT`: decode under a grammar;
    - `program_decoding=True` (with `max_lines`, `agent_moves`): write a program line by line under
      grammars that know what it has defined (`helper_agent.decoding.ProgramDecoder`);
    - `prompt_kind="plan"`: keep that kind's prompt prefix in a KV cache of its own;
    - `temperature=`, `seed=`: the attempt's sampling (a retry samples instead of repeating itself).

    Every message carries `usage_metadata` with the prompt tokens served from the KV cache as
    `input_token_details["cache_read"]`.
    """


def chat_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages as the role/content dicts chat templates take."""
    return [{"role": _role(m), "content": str(m.content)} for m in messages]


def _role(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, AIMessage):
        return "assistant"
    return "user"


def usage_metadata(prompt_tokens: int, completion_tokens: int, evaluated: int | None) -> dict[str, Any]:
    """A message's `usage_metadata`; the prompt tokens served from the KV cache (not evaluated)
    are `input_token_details["cache_read"]` when the runtime could tell how many it evaluated."""
    usage: dict[str, Any] = {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if evaluated is not None:
        usage["input_token_details"] = {"cache_read": max(prompt_tokens - evaluated, 0)}
    return usage
