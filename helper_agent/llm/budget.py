"""The per-episode LLM time budget, which LangChain has no counterpart for.

A budget is active for a context (`with budget:`), so it reaches the LLM calls of LangGraph nodes
on the executor's threads without being passed down through every graph (context variables are
copied into them).
"""

from __future__ import annotations

import math
import threading
from contextvars import ContextVar

from helper_agent.config import get_settings
from helper_agent.llm.errors import LLMBudgetExceeded


class LLMBudget:
    """The LLM wall-clock seconds one episode may use, shared by every call made under it.

    `invoke_with_retry` uses the budget passed to it, else the one active in the current context:
    it starts no call once the budget is spent (`LLMBudgetExceeded`), caps the timeout of each
    request to an OpenAI-compatible server at what is left, sleeps no backoff past it, and charges
    each call's time (retries and backoff included). A call to an in-process model cannot be
    interrupted, so it may overrun the budget by one call.

        budget = LLMBudget(300)      # None: no limit, only accounting
        with budget:                 # active for the LLM calls of this context, LangGraph nodes included
            agent.run(setup)
        budget.spent, budget.exceeded
    """

    def __init__(self, seconds: float | None) -> None:
        if seconds is not None and not seconds > 0:
            raise ValueError(f"an LLM budget must be a positive number of seconds or None, not {seconds!r}")
        self.seconds = seconds
        self._spent = 0.0
        self._lock = threading.Lock()
        self._tokens = threading.local()

    @classmethod
    def from_settings(cls) -> LLMBudget:
        """A budget of `HELPER_LLM_BUDGET_SECONDS` (unset: no limit)."""
        return cls(get_settings().llm_budget_seconds)

    @property
    def spent(self) -> float:
        return self._spent

    @property
    def remaining(self) -> float:
        """Seconds left (`math.inf` without a limit; never negative)."""
        return math.inf if self.seconds is None else max(self.seconds - self._spent, 0.0)

    @property
    def exceeded(self) -> bool:
        return self.seconds is not None and self._spent >= self.seconds

    def charge(self, seconds: float) -> None:
        with self._lock:
            self._spent += max(seconds, 0.0)

    def check(self) -> None:
        """Raise `LLMBudgetExceeded` if the budget is spent."""
        if self.exceeded:
            raise LLMBudgetExceeded(
                f"the episode's LLM time budget of {self.seconds:g} s is spent ({self._spent:.1f} s used)"
            )

    def __enter__(self) -> LLMBudget:
        stack = self._tokens.__dict__.setdefault("stack", [])
        stack.append(_active_budget.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        _active_budget.reset(self._tokens.stack.pop())

    def __repr__(self) -> str:
        return f"LLMBudget(seconds={self.seconds!r}, spent={self._spent:.3f})"


_active_budget: ContextVar[LLMBudget | None] = ContextVar("helper_llm_budget", default=None)


def current_budget() -> LLMBudget | None:
    """The budget active in this context (`with budget:`), if any."""
    return _active_budget.get()
