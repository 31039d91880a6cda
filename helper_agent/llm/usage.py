"""`UsageRecorder`: LangChain's token-usage callback plus what a run's record needs besides.

LangChain's `UsageMetadataCallbackHandler` sums `usage_metadata` per model name, and the recorder
is one (`recorder.usage_metadata`, the same totals `get_usage_metadata_callback()` yields). It
lacks what an evaluation reports per episode and per step, which this adds: one record per call
with its seconds and its run name (HELPER's per-step figures and EmbodiedRAG's reasoning calls
select calls by name), the prompt tokens served from a cache, the attempts that failed, and the
token counts of replies that name no model (the handler skips those; scripted chat models in the
benchmarks report usage without a model name) or report usage only in `llm_output`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult


@dataclass
class CallRecord:
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    name: str = ""
    cached_prompt_tokens: int = 0  # prompt tokens served from a cache (the local model's KV cache)


class UsageRecorder(UsageMetadataCallbackHandler):
    """Counts LLM calls, prompt/completion tokens and seconds per call (from usage metadata).

    Compared by identity, so it stays hashable: LangChain merges callback managers as sets of
    handlers, which a node's LLM call does when it keeps the node's manager."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[CallRecord] = []
        self.failed_calls: list[CallRecord] = []  # attempts that raised (not in `calls`)
        self._started: dict[UUID, tuple[float, str]] = {}

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        start, name = self._started.pop(run_id, (time.perf_counter(), ""))
        self.failed_calls.append(CallRecord(0, 0, time.perf_counter() - start, name))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        super().on_llm_end(response, run_id=run_id, **kwargs)
        start, name = self._started.pop(run_id, (time.perf_counter(), ""))
        prompt = completion = cached = 0
        for generations in response.generations:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
                prompt += int(usage.get("input_tokens", 0))
                completion += int(usage.get("output_tokens", 0))
                cached += int((usage.get("input_token_details") or {}).get("cache_read", 0) or 0)
        if not (prompt or completion) and response.llm_output:
            usage = response.llm_output.get("token_usage") or {}
            prompt = int(usage.get("prompt_tokens", 0))
            completion = int(usage.get("completion_tokens", 0))
        self.calls.append(CallRecord(prompt, completion, time.perf_counter() - start, name, cached))

    @property
    def n_calls(self) -> int:
        return len(self.calls)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def cached_prompt_tokens(self) -> int:
        return sum(c.cached_prompt_tokens for c in self.calls)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.calls)

    def summary(self) -> dict[str, float]:
        return {
            "llm_calls": self.n_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "prompt_tokens_cached": self.cached_prompt_tokens,
            "prompt_tokens_evaluated": self.prompt_tokens - self.cached_prompt_tokens,
            "llm_seconds": round(self.seconds, 3),
            "seconds_per_call": round(self.seconds / self.n_calls, 3) if self.calls else 0.0,
        }

    def __repr__(self) -> str:
        return f"UsageRecorder(calls={self.n_calls}, failed={len(self.failed_calls)}, tokens={self.usage_metadata})"
