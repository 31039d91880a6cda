"""An in-process chat model: a GGUF model run by llama.cpp (llama-cpp-python) behind LangChain's
chat-model interface, with per-call grammars and line-by-line program decoding.

llama-cpp-python is the `local` extra: it is imported when a model is loaded, so the rest of the
package (and every remote provider) works without it.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from helper_agent.decoding import ProgramDecoder, format_chat
from helper_agent.llm.errors import LLMUnavailable
from helper_agent.llm.inprocess import InProcessChatModel, chat_messages, usage_metadata


class LlamaCppChatModel(InProcessChatModel):
    """A LangChain chat model over an in-process llama.cpp model (llama-cpp-python).

    It reports `usage_metadata` (prompt/completion tokens) on every message, so callbacks and
    LangSmith see the same token counts as the remote providers report; the prompt tokens served
    from the KV cache instead of being evaluated are `input_token_details["cache_read"]`.

    Per call, `invoke(..., grammar=GBNF_TEXT)` constrains decoding to a grammar, and
    `temperature=` / `seed=` override the defaults (a retry samples instead of repeating the
    greedy answer). llama.cpp reuses the longest common token prefix of consecutive prompts, so every
    prompt starts with its fixed part (system text and API). `reuse_prefix=False` (setting
    `HELPER_LLM_PREFIX_CACHE=false`) clears the context before each call instead: every prompt token is
    evaluated, as on a server without prefix caching, which is what a timing against such a server needs.

    Prompt kinds that alternate (HELPER's planner, its locator and its corrector) would evict each
    other's prefix from one context, so `invoke(..., prompt_kind="locate")` runs on a context of its
    own: up to `prompt_kinds` llama.cpp contexts over the same memory-mapped weights, each keeping
    its kind's last prompt. The first kind named takes the context loaded first; a kind beyond that
    number, and a call that names none, use that context too. A RAM cache of saved states (`state_cache_bytes`, off by default) is the other way to
    keep several prefixes, but each call then copies the whole context state (llama-cpp-python copies
    its logits buffer too), which costs more here than a second context.

    `flash_attn=True` (setting `HELPER_LLM_FLASH_ATTN`) evaluates attention with llama.cpp's
    flash-attention kernels, which llama-cpp-python leaves off: prompt evaluation is faster, the more
    so the longer the prompt (`benchmarks/llm_bench.py`), but the sums are taken in another order, so
    a greedy answer can differ where two tokens are nearly tied.
    """

    model_path: str
    temperature: float = 0.0
    max_tokens: int = 512
    n_ctx: int = 4096
    n_threads: int | None = None
    seed: int = 0
    stop: list[str] | None = None
    state_cache_bytes: int = 0
    prompt_kinds: int = 4
    reuse_prefix: bool = True
    flash_attn: bool = False
    client: Any = None
    _kind_clients: dict[str, Any] = PrivateAttr(default_factory=dict)
    _owns_client: bool = PrivateAttr(default=False)

    model_config = {"arbitrary_types_allowed": True}

    def model_post_init(self, __context: Any) -> None:
        if self.client is None:
            self.client = self._new_context()
            self._owns_client = True

    def _new_context(self) -> Any:
        """A llama.cpp context over the model file (the weights are memory-mapped, so a second
        context shares them and costs its KV cache and buffers only)."""
        try:
            # Deferred: llama-cpp-python is the optional `local` extra.
            from llama_cpp import Llama, LlamaRAMCache
        except ImportError:
            raise LLMUnavailable("llama-cpp-python is not installed: pip install 'helper-agent[local]'") from None
        client = Llama(
            model_path=self.model_path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads or max(os.cpu_count() or 1, 1),
            seed=self.seed,
            flash_attn=self.flash_attn,
            verbose=False,
        )
        if self.state_cache_bytes > 0:
            client.set_cache(LlamaRAMCache(capacity_bytes=self.state_cache_bytes))
        return client

    def context_for(self, kind: str | None) -> Any:
        """The llama.cpp context that serves prompts of `kind` (see the class docstring). An injected
        client (tests, a caller's own `Llama`) serves every kind: only a model this object loaded
        can be loaded again."""
        if not kind or not self._owns_client or self.prompt_kinds <= 1:
            return self.client
        if kind not in self._kind_clients:
            if not self._kind_clients:
                self._kind_clients[kind] = self.client  # the first kind takes the loaded context
            elif len(self._kind_clients) >= self.prompt_kinds:
                return self.client
            else:
                self._kind_clients[kind] = self._new_context()
        return self._kind_clients[kind]

    def _fresh(self, client: Any) -> Any:
        """`client`, cleared first when prefixes are not reused (its next prompt is evaluated whole)."""
        if not self.reuse_prefix:
            client.reset()
        return client

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _response_metadata(self, **extra: Any) -> dict[str, Any]:
        # `model_name` is the key LangChain's `UsageMetadataCallbackHandler` groups token usage by.
        name = Path(self.model_path).name
        return {"model": name, "model_name": name, **extra}

    @staticmethod
    def _prompt_tokens_evaluated(client: Any) -> int | None:
        """A context's running count of prompt tokens it evaluated (None when it cannot be read)."""
        try:
            import llama_cpp  # deferred: the optional `local` extra (a fake client in tests has none)

            return int(llama_cpp.llama_perf_context(client._ctx.ctx).n_p_eval)
        except Exception:  # noqa: BLE001 - a fake client in tests, or another llama-cpp-python version
            return None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        if kwargs.get("program_decoding"):
            return self._decode_program(messages, **kwargs)
        grammar_text = kwargs.get("grammar")
        client = self._fresh(self.context_for(kwargs.get("prompt_kind")))
        before = self._prompt_tokens_evaluated(client)
        reply = client.create_chat_completion(
            messages=chat_messages(messages),
            temperature=float(kwargs.get("temperature", self.temperature)),
            max_tokens=kwargs.get("max_tokens", self.max_tokens),
            stop=stop or self.stop,
            seed=int(kwargs.get("seed", self.seed)),
            grammar=_llama_grammar(grammar_text) if grammar_text else None,
        )
        after = self._prompt_tokens_evaluated(client)
        text = reply["choices"][0]["message"]["content"] or ""
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        evaluated = after - before if before is not None and after is not None else None
        message = AIMessage(
            content=text,
            usage_metadata=usage_metadata(prompt_tokens, int(usage.get("completion_tokens", 0)), evaluated),  # type: ignore[arg-type]
            response_metadata=self._response_metadata(finish_reason=reply["choices"][0].get("finish_reason")),
        )
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output={"token_usage": usage})

    def _decode_program(self, messages: list[BaseMessage], **kwargs: Any) -> ChatResult:
        """Write a program line by line under grammars that know what it has defined
        (`helper_agent.decoding`); one LLM call as far as callers and callbacks can tell."""
        client = self._fresh(self.context_for(kwargs.get("prompt_kind")))
        prompt = format_chat(client, chat_messages(messages))
        decoder = ProgramDecoder(client, max_lines=int(kwargs.get("max_lines", 40)),
                                 agent_moves=bool(kwargs.get("agent_moves", False)))
        result = decoder.decode(prompt, temperature=float(kwargs.get("temperature", self.temperature)),
                                seed=int(kwargs.get("seed", self.seed)),
                                evaluated=functools.partial(self._prompt_tokens_evaluated, client))
        message = AIMessage(
            content=result.text,
            usage_metadata=usage_metadata(result.prompt_tokens, result.completion_tokens,  # type: ignore[arg-type]
                                  result.prompt_tokens_evaluated),
            response_metadata=self._response_metadata(finish_reason="stop", line_calls=result.line_calls,
                                                      stopped_by=result.stopped_by),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


@functools.lru_cache(maxsize=32)
def _llama_grammar(text: str) -> Any:
    """A compiled llama.cpp grammar (compiling one takes milliseconds; prompts reuse a few)."""
    from llama_cpp import LlamaGrammar  # deferred: the optional `local` extra

    return LlamaGrammar.from_string(text, verbose=False)
