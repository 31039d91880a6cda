"""The in-process model keeps one llama.cpp context per prompt kind, so alternating kinds (the
planner and the locator) do not evict each other's cached prefix. Checked with a scripted context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from helper_agent.llm import LlamaCppChatModel, grammar_decoding, program_decoding, prompt_kind


class ScriptedContext:
    """Stands in for `llama_cpp.Llama`: records the prompts it was given."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.prompts: list[str] = []

    def create_chat_completion(self, messages: list[dict[str, str]], **_: Any) -> dict[str, Any]:
        self.prompts.append(messages[-1]["content"])
        return {"choices": [{"message": {"content": f"from {self.name}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}}


class ScriptedModel(LlamaCppChatModel):
    """A `LlamaCppChatModel` that loads scripted contexts instead of the model file."""

    def _new_context(self) -> Any:
        made = self.__dict__.setdefault("made", [])
        made.append(ScriptedContext(f"context{len(made)}"))
        return made[-1]


def _ask(model: LlamaCppChatModel, text: str, kind: str | None) -> str:
    kwargs = prompt_kind(model, kind) if kind else {}
    return str(model.invoke([SystemMessage(content="sys"), HumanMessage(content=text)], **kwargs).content)


def test_each_kind_gets_its_own_context_and_keeps_it() -> None:
    model = ScriptedModel(model_path="unused.gguf")
    assert _ask(model, "plan 1", "plan") == "from context0"
    assert _ask(model, "where is the mug", "locate") == "from context1"
    assert _ask(model, "plan 2", "plan") == "from context0"
    made = model.__dict__["made"]
    assert [c.prompts for c in made] == [["plan 1", "plan 2"], ["where is the mug"]]


def test_a_call_without_a_kind_uses_the_first_context() -> None:
    model = ScriptedModel(model_path="unused.gguf")
    assert _ask(model, "hello", None) == "from context0"
    assert len(model.__dict__["made"]) == 1


def test_kinds_beyond_the_cap_share_the_first_context() -> None:
    model = ScriptedModel(model_path="unused.gguf", prompt_kinds=2)
    assert _ask(model, "a", "plan") == "from context0"
    assert _ask(model, "b", "locate") == "from context1"
    assert _ask(model, "c", "correct") == "from context0"
    assert _ask(model, "d", None) == "from context0"
    assert len(model.__dict__["made"]) == 2


def test_an_injected_client_serves_every_kind() -> None:
    client = ScriptedContext("mine")
    model = LlamaCppChatModel(model_path="unused.gguf", client=client)
    assert _ask(model, "a", "plan") == "from mine"
    assert _ask(model, "b", "locate") == "from mine"
    assert client.prompts == ["a", "b"]


def test_other_models_get_no_kind_argument() -> None:
    fake = GenericFakeChatModel(messages=iter([]))
    assert prompt_kind(fake, "plan") == {}
    assert program_decoding(fake, max_lines=5, kind="plan") == {}
    assert grammar_decoding(fake, "root ::= \"a\"", kind="plan") == {}
    local = ScriptedModel(model_path="unused.gguf")
    assert program_decoding(local, max_lines=5, kind="plan")["prompt_kind"] == "plan"
    assert grammar_decoding(local, "root ::= \"a\"", kind="step")["prompt_kind"] == "step"
    assert "prompt_kind" not in grammar_decoding(local, "root ::= \"a\"")


class ResettableContext(ScriptedContext):
    """A scripted context that, like `llama_cpp.Llama`, keeps the last prompt's tokens until reset:
    `prompts_whole` counts the prompts it had to evaluate from the first token."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.kept = False
        self.prompts_whole = 0

    def reset(self) -> None:
        self.kept = False

    def create_chat_completion(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
        self.prompts_whole += not self.kept
        self.kept = True
        return super().create_chat_completion(messages, **kwargs)


@pytest.mark.parametrize(("reuse_prefix", "whole"), [(True, 1), (False, 3)])
def test_without_prefix_reuse_every_prompt_is_evaluated_whole(reuse_prefix: bool, whole: int) -> None:
    client = ResettableContext("mine")
    model = LlamaCppChatModel(model_path="unused.gguf", client=client, reuse_prefix=reuse_prefix)
    for text in ("a", "b", "c"):
        _ask(model, text, "plan")
    assert client.prompts == ["a", "b", "c"]
    assert client.prompts_whole == whole


def test_the_local_model_follows_the_prefix_cache_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent import llm
    from helper_agent.config import get_settings
    from helper_agent.llm import factory

    monkeypatch.setattr(factory, "assemble_local_model", lambda size: Path(f"/models/{size}.gguf"))
    monkeypatch.setattr(llm.LlamaCppChatModel, "_new_context", lambda self: ResettableContext("loaded"))
    monkeypatch.setattr(factory, "_local_models", {})
    try:
        get_settings.cache_clear()
        warm = llm.make_chat_model("local@llama.cpp")
        monkeypatch.setenv("HELPER_LLM_PREFIX_CACHE", "false")
        get_settings.cache_clear()
        cold = llm.make_chat_model("local@llama.cpp")
        monkeypatch.delenv("HELPER_LLM_PREFIX_CACHE")
        get_settings.cache_clear()
        again = llm.make_chat_model("local@llama.cpp")
    finally:
        get_settings.cache_clear()
    assert warm.reuse_prefix and not cold.reuse_prefix
    assert cold is not warm and again is warm


def test_the_local_model_follows_the_flash_attention_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent import llm
    from helper_agent.config import get_settings
    from helper_agent.llm import factory

    monkeypatch.setattr(factory, "assemble_local_model", lambda size: Path(f"/models/{size}.gguf"))
    monkeypatch.setattr(llm.LlamaCppChatModel, "_new_context", lambda self: ResettableContext("loaded"))
    monkeypatch.setattr(factory, "_local_models", {})
    try:
        get_settings.cache_clear()
        plain = llm.make_chat_model("local@llama.cpp")
        monkeypatch.setenv("HELPER_LLM_FLASH_ATTN", "true")
        get_settings.cache_clear()
        flash = llm.make_chat_model("local@llama.cpp")
    finally:
        get_settings.cache_clear()
    assert not plain.flash_attn and flash.flash_attn and flash is not plain


def test_a_loaded_context_gets_the_flash_attention_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_new_context` hands `flash_attn` to llama-cpp-python's `Llama` (checked with a stand-in module)."""
    import sys
    import types

    made: list[dict[str, Any]] = []
    fake = types.ModuleType("llama_cpp")
    fake.Llama = lambda **kwargs: made.append(kwargs) or ResettableContext("loaded")  # type: ignore[attr-defined]
    fake.LlamaRAMCache = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    LlamaCppChatModel(model_path="unused.gguf", flash_attn=True)
    LlamaCppChatModel(model_path="unused.gguf")
    assert [m["flash_attn"] for m in made] == [True, False]
    assert made[0]["model_path"] == "unused.gguf"


def test_the_usage_recorder_keeps_langchains_totals_and_its_own_per_call_records() -> None:
    """`UsageRecorder` is LangChain's `UsageMetadataCallbackHandler` (totals per model name, which
    the in-process model now reports) plus the per-call records the run's figures come from."""
    from langchain_core.callbacks import UsageMetadataCallbackHandler

    from helper_agent.llm import UsageRecorder

    model = LlamaCppChatModel(model_path="models/qwen.gguf", client=ScriptedContext("mine"))
    recorder = UsageRecorder()
    for name in ("plan", "locate"):
        model.invoke([HumanMessage(content="hi")], config={"callbacks": [recorder], "run_name": name})
    assert isinstance(recorder, UsageMetadataCallbackHandler)
    totals = recorder.usage_metadata["qwen.gguf"]
    assert (totals["input_tokens"], totals["output_tokens"], totals["total_tokens"]) == (6, 4, 10)
    assert [(c.name, c.prompt_tokens, c.completion_tokens) for c in recorder.calls] == [("plan", 3, 2), ("locate", 3, 2)]
    assert recorder.summary()["prompt_tokens"] == 6 and len({recorder}) == 1  # hashable (merged as a set)
