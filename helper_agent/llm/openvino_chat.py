"""The default in-process chat model: the local model as an OpenVINO folder (made from its GGUF file,
`openvino_models`) run by OpenVINO GenAI's `LLMPipeline`, behind LangChain's chat-model interface.

Why OpenVINO and not llama.cpp (`benchmarks/llm_bench.py` has the figures): on this project's
2-core AVX-512 machines its int8 kernels evaluate prompts about four times faster than llama.cpp's
Q4_K_M build, it generates faster too, it installs as a prebuilt wheel (llama-cpp-python compiles for
about seven minutes), and it constrains decoding with xgrammar, which takes our GBNF grammars as they
are and costs little per token.

The decoding contract the agents rely on is the one `LlamaCppChatModel` keeps (`InProcessChatModel`):

- grammars per call (`grammar=`), and programs written line by line (`program_decoding=True`,
  `helper_agent.decoding.ProgramDecoder`), each line one generation under its own grammar;
- KV-cache prefix reuse: a stateful pipeline keeps the tokens of its last call in its KV cache and
  evaluates only what a new prompt adds after the common prefix; prompt kinds that alternate
  (HELPER's planner, locator, corrector) get a pipeline each (`prompt_kinds`), over the same
  memory-mapped weights (a second pipeline costs about 80 MB, not a second copy of the weights);
- greedy determinism at temperature 0; a retry samples with its own seed;
- a per-call deadline (`HELPER_LLM_TIMEOUT`, and the episode's remaining `LLMBudget`): generation
  is stopped at the next token past it and the call ends in `ReplyTimeout` (llama.cpp's calls
  cannot be interrupted);
- usage metadata: prompt, completion and cached prompt tokens.

openvino-genai is part of the `local` extra; it is imported when a model is loaded.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from helper_agent.config import get_settings
from helper_agent.decoding import ProgramDecoder
from helper_agent.llm.budget import current_budget
from helper_agent.llm.errors import LLMUnavailable, ReplyTimeout
from helper_agent.llm.inprocess import InProcessChatModel, chat_messages, usage_metadata

FLUSH_PROMPT = "\n"
"""What a context evaluates to forget its cached prefix when prefixes are not reused: the pipeline
keeps the common prefix of consecutive prompts, and a one-token prompt no chat prompt starts with
leaves none."""


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class OpenVINOContext:
    """One stateful `LLMPipeline` (its own KV cache) over an OpenVINO model folder, with the calls
    `ProgramDecoder` makes (`tokenize`, `create_completion`) and the chat template (`chat_prompt`).

    Prompts go in as token ids and answers come back as token ids, so it knows exactly which tokens
    its KV cache holds after each call (`history`: the prompt's and the answer's). The prompt tokens a
    call serves from the cache are the common prefix of its prompt with them: the same rule the
    pipeline applies when it trims its cache to a new prompt. Every prompt is tokenized whole, never
    as the cached ids plus the new text, so an answer never depends on what was cached before it. `processed` counts the tokens it evaluated, as
    llama.cpp's context counter does, which is what `ProgramDecoder` reads.
    """

    grammar_as_text = True  # ProgramDecoder hands grammars over as GBNF text (xgrammar compiles them)

    def __init__(self, folder: Path, n_threads: int, pipeline: Any = None) -> None:
        if pipeline is None:
            try:
                import openvino_genai  # deferred: the optional `local` extra (a large native package)
            except ImportError:
                raise LLMUnavailable("openvino-genai is not installed: pip install 'helper-agent[local]'") from None
            pipeline = openvino_genai.LLMPipeline(str(folder), "CPU", INFERENCE_NUM_THREADS=n_threads)
        self.pipeline = pipeline
        self.tokenizer = pipeline.get_tokenizer()
        self.history: list[int] = []
        self.processed = 0  # tokens evaluated so far (prompt tokens beyond the cache, and generated ones)
        self.deadline: float | None = None  # time.monotonic() past which generation stops
        self.lock = threading.Lock()  # one generation at a time on one KV cache

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        encoded = self.tokenizer.encode(text.decode("utf-8"), add_special_tokens=add_bos)
        return [int(t) for t in encoded.input_ids.data[0]]

    def chat_prompt(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The prompt text the model's own chat template makes of `messages`, ready for the answer."""
        return str(self.tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=True))

    def forget(self) -> None:
        """Drop the cached prefix: the next prompt is evaluated whole."""
        self.create_completion(FLUSH_PROMPT, max_tokens=1, temperature=0.0, seed=0)

    def create_completion(self, prompt: str, *, max_tokens: int, temperature: float, seed: int,
                          grammar: str | None = None, stop: list[str] | None = None) -> dict[str, Any]:
        """One generation after `prompt` (no chat template applied), llama-cpp-python's reply shape:
        `choices[0].text` and `.finish_reason`, `usage` with prompt, completion and cached tokens."""
        import openvino_genai  # deferred: the optional `local` extra (loaded already by the pipeline)

        config = openvino_genai.GenerationConfig()
        config.max_new_tokens = int(max_tokens)
        config.apply_chat_template = False  # prompts come formatted (`chat_prompt`)
        if temperature > 0:
            config.do_sample = True
            config.temperature = float(temperature)
            config.rng_seed = int(seed)
        else:
            config.do_sample = False
        if stop:
            config.stop_strings = set(stop)
        if grammar:
            structured = openvino_genai.StructuredOutputConfig()
            structured.grammar = grammar
            config.structured_output_config = structured
        timed_out = False

        def streamer(_: str) -> Any:
            nonlocal timed_out
            if self.deadline is not None and time.monotonic() > self.deadline:
                timed_out = True
                return openvino_genai.StreamingStatus.STOP
            return openvino_genai.StreamingStatus.RUNNING

        with self.lock:
            prompt_ids = self.tokenize(prompt.encode("utf-8"))
            cached = _common_prefix(prompt_ids, self.history)
            result = self.pipeline.generate(self._tokenized(prompt_ids), config, streamer)
            completion_ids = [int(t) for t in result.tokens[0]]
            text = self.tokenizer.decode(completion_ids) if completion_ids else ""
            self.history = prompt_ids + completion_ids
            self.processed += len(prompt_ids) - cached + len(completion_ids)
        if timed_out:
            raise ReplyTimeout("the local model did not finish its reply in time; generation was stopped")
        finish = "length" if len(completion_ids) >= max_tokens else "stop"
        return {"choices": [{"text": text, "finish_reason": finish}],
                "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": len(completion_ids),
                          "cached_tokens": cached}}

    @staticmethod
    def _tokenized(ids: list[int]) -> Any:
        """Token ids as the pipeline's input: it then compares exactly these ids, and the ids it wrote,
        with the next prompt's (a prompt given as text would be tokenized again on its side)."""
        # deferred: the optional `local` extra (loaded already by the pipeline)
        import openvino as ov
        import openvino_genai

        array = np.array([ids], dtype=np.int64)
        return openvino_genai.TokenizedInputs(ov.Tensor(array), ov.Tensor(np.ones_like(array)))


class OpenVINOChatModel(InProcessChatModel):
    """A LangChain chat model over an OpenVINO model folder run in-process (see the module doc).

    `model_dir` is a folder `optimum-cli export openvino` wrote (the local models' folders are
    made once from their GGUF files by `helper_agent.llm.openvino_models`). Per call it takes what
    `InProcessChatModel` documents. `reuse_prefix=False` (`HELPER_LLM_PREFIX_CACHE=false`) makes every
    call evaluate its whole prompt, to time the case of a server without prefix caching.
    """

    model_dir: str
    temperature: float = 0.0
    max_tokens: int = 512
    n_threads: int | None = None
    seed: int = 0
    stop: list[str] | None = None
    prompt_kinds: int = 4
    reuse_prefix: bool = True
    timeout: float | None = None  # seconds one call may take (None: HELPER_LLM_TIMEOUT)
    client: Any = None  # the first context (tests inject a fake one)
    _kind_clients: dict[str, Any] = PrivateAttr(default_factory=dict)
    _owns_client: bool = PrivateAttr(default=False)

    model_config = {"arbitrary_types_allowed": True}

    def model_post_init(self, __context: Any) -> None:
        if self.client is None:
            self.client = self._new_context()
            self._owns_client = True

    def _new_context(self) -> OpenVINOContext:
        return OpenVINOContext(Path(self.model_dir), self.n_threads or max(os.cpu_count() or 1, 1))

    def context_for(self, kind: str | None) -> Any:
        """The context that serves prompts of `kind`: the first kind named takes the first context,
        each further kind one of its own up to `prompt_kinds`; other calls share the first."""
        if not kind or not self._owns_client or self.prompt_kinds <= 1:
            return self.client
        if kind not in self._kind_clients:
            if not self._kind_clients:
                self._kind_clients[kind] = self.client
            elif len(self._kind_clients) >= self.prompt_kinds:
                return self.client
            else:
                self._kind_clients[kind] = self._new_context()
        return self._kind_clients[kind]

    @property
    def _llm_type(self) -> str:
        return "openvino"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_dir": self.model_dir, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _response_metadata(self, **extra: Any) -> dict[str, Any]:
        # `model_name` is the key LangChain's `UsageMetadataCallbackHandler` groups token usage by.
        name = Path(self.model_dir).name
        return {"model": name, "model_name": name, **extra}

    def _deadline(self) -> float:
        """When this call must end: its timeout, or the episode's LLM budget if less is left."""
        seconds = self.timeout if self.timeout is not None else get_settings().llm_timeout
        budget = current_budget()
        if budget is not None:
            seconds = min(seconds, budget.remaining)
        return time.monotonic() + seconds

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        client = self.context_for(kwargs.get("prompt_kind"))
        if not self.reuse_prefix:
            client.forget()
        client.deadline = self._deadline()
        try:
            if kwargs.get("program_decoding"):
                return self._decode_program(client, messages, **kwargs)
            reply = client.create_completion(
                client.chat_prompt(chat_messages(messages)),
                max_tokens=int(kwargs.get("max_tokens", self.max_tokens)),
                temperature=float(kwargs.get("temperature", self.temperature)),
                seed=int(kwargs.get("seed", self.seed)),
                grammar=kwargs.get("grammar"),
                stop=stop or self.stop,
            )
        finally:
            client.deadline = None
        usage = reply["usage"]
        message = AIMessage(
            content=reply["choices"][0]["text"],
            usage_metadata=usage_metadata(usage["prompt_tokens"], usage["completion_tokens"],  # type: ignore[arg-type]
                                          usage["prompt_tokens"] - usage["cached_tokens"]),
            response_metadata=self._response_metadata(finish_reason=reply["choices"][0]["finish_reason"]),
        )
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output={"token_usage": usage})

    def _decode_program(self, client: Any, messages: list[BaseMessage], **kwargs: Any) -> ChatResult:
        """A program written line by line (`helper_agent.decoding`); one LLM call to callers and
        callbacks."""
        decoder = ProgramDecoder(client, max_lines=int(kwargs.get("max_lines", 40)),
                                 agent_moves=bool(kwargs.get("agent_moves", False)))
        result = decoder.decode(client.chat_prompt(chat_messages(messages)),
                                temperature=float(kwargs.get("temperature", self.temperature)),
                                seed=int(kwargs.get("seed", self.seed)), evaluated=lambda: client.processed)
        message = AIMessage(
            content=result.text,
            usage_metadata=usage_metadata(result.prompt_tokens, result.completion_tokens,  # type: ignore[arg-type]
                                          result.prompt_tokens_evaluated),
            response_metadata=self._response_metadata(finish_reason="stop", line_calls=result.line_calls,
                                                      stopped_by=result.stopped_by),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
