"""The OpenVINO chat model's decoding contract, on a scripted pipeline (the real model: the opt-in
`test_real_model_*` below, `HELPER_TEST_LLM=1`): kinds get contexts of their own, cached prompt tokens
are reported, a call past its deadline is stopped and reported as a timeout, prefixes can be
forgotten, and programs are written line by line under the grammars `decoding` makes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from helper_agent.llm import (
    InProcessChatModel,
    LLMUnavailable,
    OpenVINOChatModel,
    ReplyTimeout,
    local_model,
    program_decoding,
    prompt_kind,
)
from helper_agent.llm.openvino_chat import OpenVINOContext
from helper_agent.llm.openvino_models import STAMP, is_prepared, openvino_model_dir, prepare_openvino_model

openvino_genai = pytest.importorskip("openvino_genai")


class _Ids:
    def __init__(self, ids: list[int]) -> None:
        self.data = [ids]


class _Encoded:
    def __init__(self, ids: list[int]) -> None:
        self.input_ids = _Ids(ids)


class FakeTokenizer:
    """One token per character; a chat template that joins the turns."""

    def encode(self, text: str, add_special_tokens: bool = False) -> _Encoded:
        return _Encoded([ord(c) for c in text])

    def decode(self, ids: list[int]) -> str:
        return "".join(map(chr, ids))

    def apply_chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return "".join(f"<{m['role']}>{m['content']}\n" for m in messages) + "<assistant>"


@dataclass
class _Result:
    tokens: list[list[int]]


@dataclass
class FakePipeline:
    """Answers each prompt with `answer(prompt, config)`, one streamer call per character (a token),
    `delay` seconds apart; records every prompt and config."""

    answer: Callable[[str, Any], str]
    delay: float = 0.0
    prompts: list[str] = field(default_factory=list)
    configs: list[Any] = field(default_factory=list)

    def get_tokenizer(self) -> FakeTokenizer:
        return FakeTokenizer()

    def generate(self, inputs: Any, config: Any, streamer: Any = None) -> _Result:
        prompt = "".join(map(chr, inputs.input_ids.data[0]))
        self.prompts.append(prompt)
        self.configs.append(config)
        text = self.answer(prompt, config)[: config.max_new_tokens]
        out = ""
        for char in text:
            time.sleep(self.delay)
            out += char
            if streamer is not None and streamer(char) == openvino_genai.StreamingStatus.STOP:
                break
        return _Result([[ord(c) for c in out]])


def model_with(pipeline: FakePipeline, **fields: Any) -> OpenVINOChatModel:
    return OpenVINOChatModel(model_dir="/nonexistent/qwen-int8",
                             client=OpenVINOContext(Path("/nonexistent"), 1, pipeline=pipeline), **fields)


def test_specs_name_a_size_and_a_runtime_with_openvino_the_default() -> None:
    assert local_model("local") == ("0.5b", "openvino")
    assert local_model("local:1.5b") == ("1.5b", "openvino")
    assert local_model("local@llama.cpp") == ("0.5b", "llama.cpp")
    assert local_model("local:1.5b@llama.cpp") == ("1.5b", "llama.cpp")
    assert local_model("openai:gpt-4o") is None
    with pytest.raises(LLMUnavailable, match="unknown local runtime 'vulkan'"):
        local_model("local@vulkan")


def test_it_takes_the_in_process_decoding_arguments() -> None:
    chat = model_with(FakePipeline(lambda p, c: "ok"))
    assert isinstance(chat, InProcessChatModel)
    assert prompt_kind(chat, "plan") == {"prompt_kind": "plan"}
    assert program_decoding(chat, max_lines=5)["program_decoding"] is True


def test_a_reply_reports_prompt_completion_and_cached_tokens_and_is_greedy_by_default() -> None:
    pipeline = FakePipeline(lambda p, c: "apple")
    chat = model_with(pipeline)
    system = SystemMessage(content="You answer with one word.")
    first = chat.invoke([system, HumanMessage(content="Name a fruit.")])
    second = chat.invoke([system, HumanMessage(content="Name a colour.")])
    assert first.content == "apple"
    prompt = len(chat.client.chat_prompt([{"role": "system", "content": system.content},
                                          {"role": "user", "content": "Name a colour."}]))
    assert second.usage_metadata["input_tokens"] == prompt
    assert second.usage_metadata["output_tokens"] == 5
    # the shared system turn (and the common start of the user turn) came from the cache, no more
    shared = len("<system>You answer with one word.\n<user>Name a ")
    assert second.usage_metadata["input_token_details"]["cache_read"] == shared
    assert first.usage_metadata["input_token_details"]["cache_read"] == 0
    config = pipeline.configs[0]
    assert config.do_sample is False and config.apply_chat_template is False


def test_a_retry_samples_with_its_own_seed_and_a_grammar_reaches_the_pipeline() -> None:
    pipeline = FakePipeline(lambda p, c: "yes")
    chat = model_with(pipeline)
    chat.invoke([HumanMessage(content="Done?")], temperature=0.7, seed=11, grammar='root ::= "yes" | "no"')
    config = pipeline.configs[-1]
    assert config.do_sample is True and config.rng_seed == 11 and config.temperature == pytest.approx(0.7)
    assert config.structured_output_config.grammar == 'root ::= "yes" | "no"'


def test_prompt_kinds_keep_contexts_of_their_own_up_to_the_limit() -> None:
    made: list[FakePipeline] = []

    class Counting(OpenVINOChatModel):
        def _new_context(self) -> OpenVINOContext:
            made.append(FakePipeline(lambda p, c: "x"))
            return OpenVINOContext(Path("/nonexistent"), 1, pipeline=made[-1])

    chat = Counting(model_dir="/nonexistent/m", prompt_kinds=2)
    plan, locate, third = chat.context_for("plan"), chat.context_for("locate"), chat.context_for("feedback")
    assert plan is chat.client and locate is not plan and third is chat.client
    assert chat.context_for("locate") is locate and len(made) == 2


def test_a_call_past_its_deadline_is_stopped_and_reported_as_a_timeout() -> None:
    pipeline = FakePipeline(lambda p, c: "a" * 200, delay=0.01)
    chat = model_with(pipeline, timeout=0.05, max_tokens=200)
    started = time.monotonic()
    with pytest.raises(ReplyTimeout):
        chat.invoke([HumanMessage(content="Talk.")])
    assert time.monotonic() - started < 1.0  # stopped at the deadline, not after 200 tokens
    assert chat.client.deadline is None


def test_without_prefix_reuse_every_prompt_is_evaluated_whole() -> None:
    pipeline = FakePipeline(lambda p, c: "ok")
    chat = model_with(pipeline, reuse_prefix=False)
    messages = [HumanMessage(content="Same question.")]
    chat.invoke(messages)
    again = chat.invoke(messages)
    assert again.usage_metadata["input_token_details"]["cache_read"] == 0


def test_a_program_is_written_line_by_line_under_grammars_that_know_the_names() -> None:
    lines = iter(['# make coffee\n', 'mug = InteractionObject("Mug")\n', 'mug.pickup()\n', "```"])
    pipeline = FakePipeline(lambda p, c: next(lines))
    chat = model_with(pipeline)
    reply = chat.invoke([HumanMessage(content="Pick up the mug.")],
                        **program_decoding(chat, max_lines=10, kind="plan"))
    assert reply.content == '```python\n# make coffee\nmug = InteractionObject("Mug")\nmug.pickup()\n```'
    grammars = [c.structured_output_config.grammar for c in pipeline.configs]
    assert len(grammars) == 4
    assert '"mug."' not in grammars[1] and '"mug."' in grammars[2]  # a call on `mug` once it is defined
    assert reply.response_metadata["line_calls"] == 4
    # each line's prompt is the last one plus the line written: only the first is evaluated
    assert reply.usage_metadata["input_token_details"]["cache_read"] == 0
    assert all(pipeline.prompts[k + 1].startswith(pipeline.prompts[k]) for k in range(3))


def test_a_model_folder_is_ready_only_with_the_stamp_of_the_current_gguf(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HELPER_CONVERTER_DIR", str(tmp_path / "no-converter"))
    folder = openvino_model_dir("0.5b", "int8")
    folder.mkdir(parents=True)
    assert not is_prepared("0.5b", "int8")  # a folder a killed conversion left: made again
    (folder / STAMP).write_text('{"gguf": "other.gguf"}')
    assert not is_prepared("0.5b", "int8")
    import helper_agent.llm.openvino_models as models

    monkeypatch.setattr(models, "assemble_local_model", lambda size: tmp_path / "m.gguf")
    with pytest.raises(LLMUnavailable, match="make install-converter"):
        prepare_openvino_model("0.5b", "int8")


@pytest.mark.llm
@pytest.mark.skipif(os.environ.get("HELPER_TEST_LLM") != "1", reason="set HELPER_TEST_LLM=1 to run the real local LLM")
def test_real_model_is_deterministic_and_reuses_its_prefix() -> None:
    from helper_agent.llm import make_chat_model

    chat = make_chat_model("local", max_tokens=8)
    system = SystemMessage(content="You answer with one word. " * 20)
    first = chat.invoke([system, HumanMessage(content="Name a fruit.")])
    again = chat.invoke([system, HumanMessage(content="Name a fruit.")])
    assert first.content == again.content
    assert again.usage_metadata["input_token_details"]["cache_read"] > 100


def test_the_factory_builds_one_openvino_model_per_setting_and_follows_the_prefix_setting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent import llm
    from helper_agent.config import get_settings
    from helper_agent.llm import factory

    monkeypatch.setattr(factory, "prepare_openvino_model", lambda size, weights, log=False: Path(f"/models/{size}-{weights}"))
    monkeypatch.setattr(OpenVINOChatModel, "_new_context",
                        lambda self: OpenVINOContext(Path(self.model_dir), 1, pipeline=FakePipeline(lambda p, c: "x")))
    monkeypatch.setattr(factory, "_local_models", {})
    try:
        get_settings.cache_clear()
        plain = llm.make_chat_model("local")
        assert llm.make_chat_model("local", n_ctx=8192) is plain  # no context length to set: the same model
        assert llm.make_chat_model("local:1.5b").model_dir == "/models/1.5b-gguf"
        assert plain.model_dir == "/models/0.5b-q8"  # each model's own weights (openvino_models.DEFAULT_WEIGHTS)
        monkeypatch.setenv("HELPER_LLM_PREFIX_CACHE", "false")
        get_settings.cache_clear()
        cold = llm.make_chat_model("local")
    finally:
        get_settings.cache_clear()
    assert isinstance(plain, OpenVINOChatModel) and plain.reuse_prefix and not cold.reuse_prefix
