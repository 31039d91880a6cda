"""The chat model for OpenAI-compatible servers (vLLM, Ollama, llama.cpp's `llama-server`,
`python -m llama_cpp.server`), and the watchdog that bounds a streamed reply.

This module needs langchain-openai (the `openai` extra); `make_chat_model` imports it only for a
server URL, so the package works without the extra.
"""

from __future__ import annotations

import heapq
import threading
import time
import weakref
from typing import Any

import httpx
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai.chat_models.base import BaseChatOpenAI

from helper_agent.config import get_settings
from helper_agent.decoding import ProgramDecoder, ServedLineClient, format_chat
from helper_agent.llm.clients import GRAMMAR_FIELDS
from helper_agent.llm.errors import LLMBadResponse, LLMError, ReplyTimeout, clip
from helper_agent.llm.gguf import served_vocabulary
from helper_agent.llm.inprocess import chat_messages, usage_metadata

MAX_REPLY_CHARS = 65_536
"""Replies from a server longer than this are cut here and marked `finish_reason="length"`. A reply
within the token cap is far shorter (384 tokens are a few KB); only a server that ignores the cap
sends more."""


class OpenAICompatibleChat(BaseChatOpenAI):
    """A chat model over an OpenAI-compatible server (vLLM, Ollama, llama.cpp's servers).

    It is langchain-openai's `BaseChatOpenAI`, which sends `max_tokens` in the request body (its
    subclass `ChatOpenAI` renames it `max_completion_tokens`, which llama-cpp-python's server and
    older vLLM and Ollama releases ignore, so their replies ran to the context limit). Replies that
    are not chat completions (non-JSON, no choices), or whose message is empty, raise
    `LLMBadResponse`; a reply longer than `max_reply_chars` is cut with `finish_reason="length"`.
    """

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
                f"{type(exc).__name__}: {clip(str(exc))}"
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
        settings = get_settings()
        vocab = served_vocabulary(settings.llm_tokenizer or "")
        client = ServedLineClient(self.root_client.completions, self.model_name,
                                  GRAMMAR_FIELDS[settings.llm_grammar], vocab)
        decoder = ProgramDecoder(client, max_lines=int(kwargs.get("max_lines", 40)),
                                 agent_moves=bool(kwargs.get("agent_moves", False)))
        try:
            result = decoder.decode(format_chat(vocab, chat_messages(messages)),
                                    temperature=float(kwargs.get("temperature", self.temperature or 0.0)),
                                    seed=int(kwargs.get("seed", self.seed or 0)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LLMBadResponse(f"the server at {self.openai_api_base} did not answer with a completion: "
                                 f"{type(exc).__name__}: {clip(str(exc))}") from exc
        message = AIMessage(
            content=result.text,
            usage_metadata=usage_metadata(result.prompt_tokens, result.completion_tokens, None),  # type: ignore[arg-type]
            response_metadata={"model": self.model_name, "finish_reason": "stop",
                               "line_calls": result.line_calls, "stopped_by": result.stopped_by},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


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
        with self._cv:
            self._count += 1
            heapq.heappush(self._heap, (time.monotonic() + seconds, self._count, weakref.ref(response)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="llm-deadlines", daemon=True)
                self._thread.start()
            self._cv.notify()

    def _run(self) -> None:
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


def deadline_http_client() -> httpx.Client:
    """An httpx client whose streamed responses are closed when the request's read timeout has
    passed since their headers came (`_Deadlines`): `HELPER_LLM_TIMEOUT` bounds the whole reply."""

    def close_at_deadline(response: httpx.Response) -> None:
        seconds = (response.request.extensions.get("timeout") or {}).get("read")
        if isinstance(seconds, int | float) and seconds > 0:
            _deadlines.add(float(seconds), response)

    return httpx.Client(event_hooks={"response": [close_at_deadline]})
