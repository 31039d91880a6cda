"""A served model writes programs line by line (`decoding.ServedLineClient`): one completion request
per line, each under the grammar of what the program has defined so far, sent as GBNF text in the
field `HELPER_LLM_GRAMMAR` names. Scripted servers stand in for llama.cpp's."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from helper_agent.decoding import FENCE_CLOSE, FENCE_OPEN, ProgramDecoder, ServedLineClient

LINES = ['plate = InteractionObject("Plate")\n', "plate.pickup()\n", FENCE_CLOSE]


class ScriptedCompletions:
    """`openai.OpenAI().completions`, answering one scripted line per request."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self.requests: list[dict[str, Any]] = []

    def create(self, **request: Any) -> SimpleNamespace:
        self.requests.append(request)
        text = self.lines.pop(0)
        return SimpleNamespace(choices=[SimpleNamespace(text=text)], usage=SimpleNamespace(completion_tokens=len(text) // 4))


class WordVocab:
    """A tokenizer that counts words (the decoder only counts prompt tokens with it)."""

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(text.split())))


def test_each_line_is_one_request_under_the_grammar_of_what_is_defined() -> None:
    completions = ScriptedCompletions(LINES)
    client = ServedLineClient(completions, "qwen", "grammar", WordVocab())
    result = ProgramDecoder(client, max_lines=10).decode("PROMPT ", temperature=0.0, seed=7)

    assert result.text == FENCE_OPEN + LINES[0] + LINES[1] + FENCE_CLOSE
    assert result.line_calls == 3 and result.stopped_by == "fence"
    first, second, third = completions.requests
    # The grammar travels as GBNF text in the named field; nothing else carries it.
    assert all(isinstance(r["extra_body"]["grammar"], str) for r in completions.requests)
    assert '"plate."' not in first["extra_body"]["grammar"]  # nothing defined yet: no call can be written
    assert '"plate."' in second["extra_body"]["grammar"]
    assert '"pickup()"' not in third["extra_body"]["grammar"].split('"plate."')[1].split("\n")[0]  # held already
    # Each prompt is the previous one plus the line written, so the server's prefix cache serves it.
    assert second["prompt"] == first["prompt"] + LINES[0]
    assert third["prompt"] == second["prompt"] + LINES[1]
    assert [r["seed"] for r in completions.requests] == [7, 8, 9]
    assert {r["model"] for r in completions.requests} == {"qwen"}


def test_a_reply_without_choices_is_a_bad_reply() -> None:
    class Empty:
        def create(self, **request: Any) -> SimpleNamespace:
            return SimpleNamespace(choices=[], usage=None)

    with pytest.raises(ValueError, match="no choices"):
        ServedLineClient(Empty(), "m", "guided_grammar", WordVocab()).create_completion(
            "p", max_tokens=4, temperature=0.0, seed=0, grammar="root ::= \"a\"")


@pytest.fixture
def served_settings(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    from helper_agent.config import get_settings

    def apply(**env: str) -> None:
        for key in ("HELPER_LLM_GRAMMAR", "HELPER_LLM_TOKENIZER"):
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        get_settings.cache_clear()

    yield apply
    get_settings.cache_clear()


def test_program_decoding_asks_for_lines_only_with_a_grammar_field_and_a_tokenizer(served_settings: Any) -> None:
    pytest.importorskip("langchain_openai")
    from helper_agent.llm import make_chat_model, program_decoding

    chat = make_chat_model("http://127.0.0.1:9/v1#qwen")
    served_settings(HELPER_LLM_GRAMMAR="llama.cpp", HELPER_LLM_TOKENIZER="/models/qwen.gguf")
    assert program_decoding(chat, max_lines=12, seed=3)["program_decoding"] is True
    served_settings(HELPER_LLM_GRAMMAR="llama.cpp")
    whole = program_decoding(chat, max_lines=12, seed=3)
    assert "program_decoding" not in whole and "root" in whole["extra_body"]["grammar"]
    served_settings(HELPER_LLM_TOKENIZER="/models/qwen.gguf")  # no grammar field: nothing to constrain with
    assert "program_decoding" not in program_decoding(chat, max_lines=12, seed=3)


def test_a_tokenizer_that_is_not_a_file_is_named() -> None:
    from helper_agent.llm import LLMUnavailable, served_vocabulary

    with pytest.raises(LLMUnavailable, match="HELPER_LLM_TOKENIZER: /nowhere/x.gguf is not a file"):
        served_vocabulary("/nowhere/x.gguf")


class TemplateVocab(WordVocab):
    """The parts of a vocabulary-only `Llama` that `format_chat` reads."""

    metadata = {"tokenizer.chat_template": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}<|assistant|>"}
    _model = SimpleNamespace(token_get_text=lambda token: "</s>")

    def token_eos(self) -> int:
        return 0

    def token_bos(self) -> int:
        return -1


def test_the_served_chat_model_writes_a_program_line_by_line(served_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the chat model the agents call: requests go to /completions with the chat template
    applied client-side, and the answer is one message with the whole program."""
    pytest.importorskip("langchain_openai")
    pytest.importorskip("llama_cpp")
    import httpx
    from langchain_core.messages import HumanMessage, SystemMessage

    from helper_agent import llm
    from helper_agent.llm import openai_compatible

    lines = list(LINES)
    seen: list[tuple[str, dict[str, Any]]] = []

    def serve(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((request.url.path, body))
        text = lines.pop(0)
        return httpx.Response(200, json={"id": "c", "object": "text_completion", "created": 0, "model": "qwen",
                                         "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
                                         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    served_settings(HELPER_LLM_GRAMMAR="llama.cpp", HELPER_LLM_TOKENIZER="/models/qwen.gguf")
    monkeypatch.setattr(openai_compatible, "served_vocabulary", lambda spec: TemplateVocab())
    chat = openai_compatible.OpenAICompatibleChat(base_url="http://server/v1", model="qwen", api_key="x", max_retries=0,
                                                  http_client=httpx.Client(transport=httpx.MockTransport(serve)))
    reply = chat.invoke([SystemMessage(content="Write programs."), HumanMessage(content="Pick up the plate.")],
                        **llm.program_decoding(chat, max_lines=10))
    assert reply.content == FENCE_OPEN + LINES[0] + LINES[1] + FENCE_CLOSE
    assert reply.response_metadata["line_calls"] == 3
    assert reply.usage_metadata["output_tokens"] == 15
    assert [path for path, _ in seen] == ["/v1/completions"] * 3
    assert seen[0][1]["prompt"].startswith("<|system|>Write programs.\n<|user|>Pick up the plate.\n<|assistant|>" + FENCE_OPEN)
    assert all("grammar" in body for _, body in seen)
