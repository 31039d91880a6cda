"""`invoke_with_retry`: the one retry layer for LLM calls, and what makes a failure worth retrying.

The clients `make_chat_model` builds make a single attempt (`max_retries=0`), each request bounded
by `HELPER_LLM_TIMEOUT` seconds; this retries transient failures (timeouts, connection errors, 429,
5xx) `HELPER_LLM_RETRIES` times with exponential backoff, within the episode's `LLMBudget`.

Why not LangChain's `Runnable.with_retry`: it runs the attempts under a chain run of its own and
drops the caller's `run_name` from the model's run, so every trace would change shape (the app's
trace table, LangSmith, the node -> LLM-call spans tests and `UsageRecorder` read by name), and it
passes the same keyword arguments to every attempt, so it cannot cap each attempt's request
timeout at the budget left, nor decline a backoff that would sleep past it. What it would share
with this loop is a dozen lines.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from helper_agent.config import get_settings
from helper_agent.llm.budget import LLMBudget, current_budget
from helper_agent.llm.clients import is_openai_client
from helper_agent.llm.errors import LLMBudgetExceeded, LLMError, LLMUnavailable, clip

try:
    from langchain_core.exceptions import ModelError
except ImportError:  # pragma: no cover - langchain-core < 1.7 has no classified model errors
    ModelError = None  # type: ignore[assignment,misc]  # noqa: N816


def invoke_with_retry(
    chat: Any,
    messages: Sequence[BaseMessage] | str,
    *,
    attempts: int | None = None,
    config: dict | None = None,
    initial_delay: float = 1.0,
    budget: LLMBudget | None = None,
) -> AIMessage:
    """Invoke a chat model, the one retry layer for LLM calls.

    Transient errors (timeouts, connection errors, HTTP 408/409/429/5xx) are retried up to
    `attempts` times in all (default `HELPER_LLM_RETRIES` + 1) with backoff `initial_delay`, doubled
    each time; a server still failing after that raises `LLMUnavailable`. Other errors are raised at
    once (`LLMBadResponse` for a reply that is not a usable completion). With a `budget` (default: the
    `LLMBudget` active in this context) no attempt starts once it is spent (`LLMBudgetExceeded`),
    requests to OpenAI-compatible servers time out when it runs out, and no backoff sleeps past it.

    Time bound of one call to a server built by `make_chat_model` (A = attempts, t = its timeout,
    d = `initial_delay`): A*t + d*(2**(A-1) - 1), plus the time the server takes to send a reply once
    it starts (each read waits at most t). With a budget of B seconds left: about min(that, B).
    """
    if attempts is None:
        attempts = get_settings().llm_retries + 1
    attempts = max(int(attempts), 1)
    budget = budget if budget is not None else current_budget()
    timeout = _request_timeout(chat) if budget is not None and budget.seconds is not None else None
    delay = initial_delay
    mark = time.monotonic()

    def charge() -> None:
        nonlocal mark
        now = time.monotonic()
        if budget is not None:
            budget.charge(now - mark)
        mark = now

    try:
        for attempt in range(1, attempts + 1):
            if budget is not None:
                budget.check()
            kwargs: dict[str, Any] = {}
            if timeout is not None and budget is not None and budget.remaining < timeout:
                kwargs["timeout"] = max(budget.remaining, 0.05)
            try:
                return chat.invoke(messages, config=config, **kwargs)
            except LLMError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                if not _transient(exc):
                    raise
                charge()
                if budget is not None and budget.exceeded:
                    raise LLMBudgetExceeded(
                        f"the episode's LLM time budget of {budget.seconds:g} s is spent "
                        f"({budget.spent:.1f} s used); last error: {type(exc).__name__}: {clip(str(exc))}"
                    ) from exc
                if attempt == attempts:
                    raise LLMUnavailable(
                        f"the model server did not answer after {attempts} attempts: "
                        f"{type(exc).__name__}: {clip(str(exc))}"
                    ) from exc
                if budget is not None and budget.remaining <= delay:
                    raise LLMBudgetExceeded(
                        f"the episode's LLM time budget of {budget.seconds:g} s would be spent waiting "
                        f"{delay:g} s to retry; last error: {type(exc).__name__}: {clip(str(exc))}"
                    ) from exc
                time.sleep(delay)
                delay *= 2
    finally:
        charge()
    raise AssertionError("unreachable")


def _request_timeout(chat: Any) -> float | None:
    """The per-request timeout of an OpenAI-style client (one that takes `timeout=` per call)."""
    model = chat
    while hasattr(model, "bound"):  # RunnableBinding: .bind(...), .with_config(...)
        model = model.bound
    if not is_openai_client(model):
        return None
    value = getattr(model, "request_timeout", None)
    return float(value) if isinstance(value, int | float) else None


_RETRIED_STATUS = (408, 409, 429)


def _transient(exc: Exception) -> bool:
    if isinstance(exc, LLMError):
        return False
    if ModelError is not None and isinstance(exc, ModelError):
        return bool(exc.is_retryable)  # rate limit, 5xx, connection, timeout
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRIED_STATUS or status >= 500
    name = type(exc).__name__.lower()
    text = str(exc).lower()
    return any(k in name for k in ("timeout", "connection", "ratelimit", "apiconnection", "serviceunavailable")) or any(
        k in text for k in ("connection refused", "timed out", "temporarily unavailable", "rate limit")
    )
