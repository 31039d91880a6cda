"""`make_chat_model(spec)`: a LangChain chat model from the one string a user gives (`--llm`,
`HELPER_LLM`). See the package docstring for the specs it takes."""

from __future__ import annotations

import os
from typing import Any

from langchain.chat_models import init_chat_model

from helper_agent.config import SERVER_SCHEMES, get_settings, server_url_problem
from helper_agent.llm.errors import LLMUnavailable
from helper_agent.llm.gguf import LOCAL_MODELS, assemble_local_model
from helper_agent.llm.inprocess import InProcessChatModel
from helper_agent.llm.llama import LlamaCppChatModel
from helper_agent.llm.openvino_chat import OpenVINOChatModel
from helper_agent.llm.openvino_models import default_weights, prepare_openvino_model

_SINGLE_ATTEMPT_PROVIDERS = ("openai", "azure_openai", "anthropic")
"""`init_chat_model` providers whose classes take `max_retries` and `timeout`: they are built with
`max_retries=0`, so that `invoke_with_retry` is the only retry layer. Others keep their defaults."""

LOCAL_RUNTIMES = ("openvino", "llama.cpp")
"""The runtimes of the embedded models, the default first: `local[:SIZE][@RUNTIME]`. OpenVINO was
chosen by measurement (`benchmarks/llm_bench.py`); llama.cpp (the `local-llama` extra, compiled at
install) stays selectable by name."""

DEFAULT_LOCAL_SIZE = "0.5b"

_local_models: dict[tuple[str, str, float, int, int | None, bool, bool], InProcessChatModel] = {}


def make_chat_model(
    spec: str = "local",
    *,
    temperature: float = 0.0,
    max_tokens: int = 384,
    timeout: float | None = None,
    n_ctx: int | None = None,
) -> Any:
    """A chat model from a spec (see the package docstring). Raises `LLMUnavailable` with a reason.

    `timeout` (default `HELPER_LLM_TIMEOUT`) bounds each request to a server; remote clients make
    one attempt per call: retries are `invoke_with_retry`'s. `n_ctx` is a local model's context
    length (default `LlamaCppChatModel`'s; EAI's long prompts need more); a server keeps its own.
    """
    spec = spec.strip()
    local = local_model(spec)
    if local is not None:
        size, runtime = local
        settings = get_settings()
        reuse_prefix, flash_attn = settings.llm_prefix_cache, settings.llm_flash_attn
        # OpenVINO's KV cache grows with the prompt (no context length to set) and has no flash switch.
        weights = default_weights(size) if runtime == "openvino" else ""
        key = (size, runtime, temperature, max_tokens, n_ctx, reuse_prefix, flash_attn) if runtime == "llama.cpp" \
            else (size, f"{runtime}:{weights}", temperature, max_tokens, None, reuse_prefix, False)
        if key not in _local_models:  # one in-process model per setting: loading takes seconds
            if runtime == "openvino":
                _local_models[key] = OpenVINOChatModel(
                    model_dir=str(prepare_openvino_model(size, weights, log=True)),
                    temperature=temperature, max_tokens=max_tokens, reuse_prefix=reuse_prefix)
            else:
                context = {"n_ctx": n_ctx} if n_ctx is not None else {}
                _local_models[key] = LlamaCppChatModel(model_path=str(assemble_local_model(size)),
                                                       temperature=temperature, max_tokens=max_tokens,
                                                       reuse_prefix=reuse_prefix, flash_attn=flash_attn, **context)
        return _local_models[key]
    if timeout is None:
        timeout = get_settings().llm_timeout
    if spec.startswith(SERVER_SCHEMES):
        problem = server_url_problem(spec)
        if problem:  # said before any attempt: `http://` was dialed three times, "did not answer"
            raise LLMUnavailable(f"the server URL {spec!r} (--llm or HELPER_LLM) is malformed: {problem}; "
                                 "write it as http://HOST:PORT/v1")
        return _served_model(spec, temperature=temperature, max_tokens=max_tokens, timeout=timeout)
    extra: dict[str, Any] = {}
    if spec.partition(":")[0] in _SINGLE_ATTEMPT_PROVIDERS:
        extra = {"max_retries": 0, "timeout": timeout}
    try:
        return init_chat_model(spec, temperature=temperature, max_tokens=max_tokens, **extra)
    except (ImportError, ValueError) as exc:
        raise LLMUnavailable(f"cannot make a chat model from {spec!r}: {exc}") from None


def local_model(spec: str) -> tuple[str, str] | None:
    """The embedded model and runtime a `local[:SIZE][@RUNTIME]` spec names, as (size, runtime)
    (None for any other spec); `LLMUnavailable` for a size or runtime there is not. Reading it loads
    nothing, so a command can check `--llm` before its workers each load the weights."""
    spec = spec.strip()
    name, _, runtime = spec.partition("@")
    if name != "local" and not name.startswith("local:"):
        return None
    size = name.split(":", 1)[1] if ":" in name else DEFAULT_LOCAL_SIZE
    if size not in LOCAL_MODELS:
        raise LLMUnavailable(f"unknown local model {size!r}; choose one of {', '.join(LOCAL_MODELS)}")
    runtime = runtime or LOCAL_RUNTIMES[0]
    if runtime not in LOCAL_RUNTIMES:
        raise LLMUnavailable(f"unknown local runtime {runtime!r}; choose one of {', '.join(LOCAL_RUNTIMES)}")
    return size, runtime


def local_model_size(spec: str) -> str | None:
    """The embedded model size a `local[:SIZE][@RUNTIME]` spec names (None for any other spec)."""
    local = local_model(spec)
    return local[0] if local else None


def _served_model(spec: str, *, temperature: float, max_tokens: int, timeout: float) -> Any:
    """The client of an OpenAI-compatible server at `URL[#model-name]`."""
    try:
        # Deferred: langchain-openai is the optional `openai` extra (and takes about a second to import).
        from helper_agent.llm.openai_compatible import OpenAICompatibleChat, deadline_http_client
    except ImportError:
        raise LLMUnavailable("an OpenAI-compatible server needs langchain-openai: pip install 'helper-agent[openai]'") from None
    base_url, _, model = spec.partition("#")
    streamed: dict[str, Any] = {}
    if get_settings().llm_stream:
        streamed = {"streaming": True, "stream_usage": True, "http_client": deadline_http_client()}
    return OpenAICompatibleChat(
        base_url=base_url,
        model=model or "default",
        api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
        temperature=temperature,
        max_tokens=max_tokens,
        max_retries=0,
        timeout=timeout,
        **streamed,
    )
