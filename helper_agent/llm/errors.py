"""The errors a chat-model call made through `helper_agent.llm` ends with.

Every failure is an `LLMError`, so a caller (the harness, the CLI, the app) catches one type and
tells the person what happened: no model or no answer (`LLMUnavailable`), an answer that is not a
chat completion (`LLMBadResponse`), or the episode's time budget spent (`LLMBudgetExceeded`).
"""

from __future__ import annotations


class LLMError(RuntimeError):
    """The base of every error a chat-model call made through this package ends with."""


class LLMUnavailable(LLMError):
    """The requested model cannot be used here, or its server did not answer after every retry; the
    message says why and what to install or set."""


class LLMBadResponse(LLMError):
    """The server answered, but not with a usable chat completion: not JSON, no choices, an empty
    message. Not retried: a server that answers like that will answer like that again."""


class ReplyTimeout(TimeoutError):
    """A streamed reply was not finished within its timeout and was cancelled (retried as transient)."""


class LLMBudgetExceeded(LLMError):
    """The episode's LLM time budget (`LLMBudget`) is spent; no further call is started."""


def clip(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters: an error message quotes a server's reply or
    exception, which can be a whole HTML page."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
