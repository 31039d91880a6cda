"""The chat-model factory and the usage recorder (no real model: doubles and fake chunk packages)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from helper_agent import llm
from helper_agent.llm import (
    LLMUnavailable,
    LocalModel,
    UsageRecorder,
    assemble_local_model,
    invoke_with_retry,
    make_chat_model,
)
from helper_agent.llm.retry import _transient


def _fake_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: list[bytes], prefix: str) -> None:
    for n, chunk in enumerate(data, 1):
        package = tmp_path / f"{prefix}{n}"
        package.mkdir(parents=True)
        (package / "part.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "import os\ndef get_part_path():\n    return os.path.join(os.path.dirname(__file__), 'part.bin')\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))


def test_assembles_chunks_and_verifies_the_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    _fake_chunks(tmp_path / "pkgs", monkeypatch, data, "fakemodel_part")
    digest = hashlib.sha256(b"".join(data)).hexdigest()
    monkeypatch.setitem(llm.LOCAL_MODELS, "test", LocalModel("test", "test.gguf", "fakemodel_part", 3, digest, "pip install x"))
    path = assemble_local_model("test", cache_dir=tmp_path / "cache")
    assert path.read_bytes() == b"".join(data)
    assert assemble_local_model("test", cache_dir=tmp_path / "cache") == path  # reused, not rebuilt


def test_a_corrupt_chunk_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = [b"GGUF" + b"a" * 100, b"b" * 50]
    _fake_chunks(tmp_path / "pkgs", monkeypatch, data, "badmodel_part")
    monkeypatch.setitem(llm.LOCAL_MODELS, "bad", LocalModel("bad", "bad.gguf", "badmodel_part", 2, "0" * 64, "pip install x"))
    with pytest.raises(LLMUnavailable, match="SHA-256"):
        assemble_local_model("bad", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache" / "bad.gguf").exists()


def test_missing_chunk_package_names_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(llm.LOCAL_MODELS, "gone", LocalModel("gone", "gone.gguf", "nosuchpkg_part", 2, None, "pip install 'helper-agent[local]'"))
    with pytest.raises(LLMUnavailable, match=r"nosuchpkg-part1.*helper-agent\[local\]"):
        assemble_local_model("gone", cache_dir=tmp_path)


def test_unknown_specs_get_clear_errors() -> None:
    with pytest.raises(LLMUnavailable, match="unknown local model"):
        make_chat_model("local:70b")
    with pytest.raises(LLMUnavailable, match="cannot make a chat model from 'nosuchprovider:model'"):
        make_chat_model("nosuchprovider:model")
    if "langchain_openai" not in sys.modules:
        try:
            import langchain_openai  # noqa: F401
        except ImportError:
            with pytest.raises(LLMUnavailable, match="langchain-openai"):
                make_chat_model("http://127.0.0.1:9/v1")


def test_usage_recorder_counts_calls_and_tokens() -> None:
    reply = AIMessage(content="x", usage_metadata={"input_tokens": 120, "output_tokens": 7, "total_tokens": 127})
    chat = FakeMessagesListChatModel(responses=[reply, reply])
    recorder = UsageRecorder()
    chat.invoke("hi", config={"callbacks": [recorder]})
    chat.invoke("again", config={"callbacks": [recorder]})
    summary = recorder.summary()
    assert summary["llm_calls"] == 2 and summary["prompt_tokens"] == 240 and summary["completion_tokens"] == 14
    assert summary["seconds_per_call"] >= 0


class Flaky:
    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def invoke(self, messages, config=None):  # noqa: ANN001
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return AIMessage(content="ok")


def test_transient_errors_are_retried_then_reported() -> None:
    flaky = Flaky(2, ConnectionError("connection refused"))
    assert invoke_with_retry(flaky, "hi", attempts=3, initial_delay=0.0).content == "ok"
    assert flaky.calls == 3
    down = Flaky(5, ConnectionError("connection refused"))
    with pytest.raises(LLMUnavailable, match="did not answer after 3 attempts"):
        invoke_with_retry(down, "hi", attempts=3, initial_delay=0.0)
    broken = Flaky(1, ValueError("bad request"))
    with pytest.raises(ValueError, match="bad request"):
        invoke_with_retry(broken, "hi", attempts=3, initial_delay=0.0)
    assert broken.calls == 1


def test_failures_are_classified_for_retry() -> None:
    from langchain_core.exceptions import ModelInvalidRequestError, ModelRateLimitError, ModelTimeoutError

    class StatusError(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(f"HTTP {status}")
            self.status_code = status

    assert _transient(ModelRateLimitError("429")) and _transient(ModelTimeoutError("slow"))
    assert not _transient(ModelInvalidRequestError("400"))
    assert [_transient(StatusError(s)) for s in (400, 401, 404, 408, 429, 500, 503)] == [
        False, False, False, True, True, True, True,
    ]
    assert _transient(TimeoutError("timed out")) and not _transient(ValueError("bad"))
    assert not _transient(llm.LLMBadResponse("empty"))


def test_the_default_attempts_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_LLM_RETRIES", "4")
    get_settings.cache_clear()
    try:
        down = Flaky(10, ConnectionError("connection refused"))
        with pytest.raises(LLMUnavailable, match="after 5 attempts"):
            invoke_with_retry(down, "hi", initial_delay=0.0)
        assert down.calls == 5
    finally:
        get_settings.cache_clear()


def test_init_chat_model_providers_make_one_attempt_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    chat = make_chat_model("openai:gpt-4o", max_tokens=100, timeout=9.0)
    assert chat.max_retries == 0 and chat.request_timeout == 9.0 and chat.max_tokens == 100


# ------------------------------------------------------------------------------ the LLM budget
class Slow:
    """A chat double that takes `seconds` per call."""

    def __init__(self, seconds: float, failures: int = 0) -> None:
        self.seconds = seconds
        self.failures = failures
        self.calls = 0

    def invoke(self, messages, config=None):  # noqa: ANN001
        import time

        self.calls += 1
        time.sleep(self.seconds)
        if self.calls <= self.failures:
            raise TimeoutError("timed out")
        return AIMessage(content="ok")


def test_budget_accounts_and_refuses_once_spent() -> None:
    budget = llm.LLMBudget(0.25)
    chat = Slow(0.1)
    while not budget.exceeded:
        invoke_with_retry(chat, "hi", budget=budget)
    # Each call takes 0.1 s or more (more on a busy machine): the budget is crossed after 3 calls or fewer.
    calls = chat.calls
    assert 1 <= calls <= 3 and budget.spent >= 0.25 and budget.remaining == 0.0
    with pytest.raises(llm.LLMBudgetExceeded, match=r"budget of 0.25 s is spent \(\d+\.\d s used\)") as caught:
        invoke_with_retry(chat, "hi", budget=budget)
    assert chat.calls == calls  # no call started
    assert isinstance(caught.value, llm.LLMError)


def test_budget_without_limit_only_accounts() -> None:
    budget = llm.LLMBudget(None)
    invoke_with_retry(Slow(0.05), "hi", budget=budget)
    assert budget.spent >= 0.05 and budget.remaining == float("inf") and not budget.exceeded
    with pytest.raises(ValueError, match="positive"):
        llm.LLMBudget(0)


def test_budget_stops_retries_and_backoff() -> None:
    # The first attempt fails after 0.1 s; the 1 s backoff would cross the 0.5 s budget.
    chat = Slow(0.1, failures=5)
    budget = llm.LLMBudget(0.5)
    with pytest.raises(llm.LLMBudgetExceeded, match="waiting 1 s to retry.*TimeoutError") as caught:
        invoke_with_retry(chat, "hi", attempts=3, initial_delay=1.0, budget=budget)
    assert chat.calls == 1 and isinstance(caught.value.__cause__, TimeoutError)
    assert budget.spent < 0.5


def test_budget_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_LLM_BUDGET_SECONDS", "42")
    get_settings.cache_clear()
    try:
        assert llm.LLMBudget.from_settings().seconds == 42.0
        monkeypatch.delenv("HELPER_LLM_BUDGET_SECONDS")
        get_settings.cache_clear()
        assert llm.LLMBudget.from_settings().seconds is None  # unset: no limit
    finally:
        get_settings.cache_clear()


def test_the_active_budget_reaches_calls_in_langgraph_nodes() -> None:
    """`with budget:` around a graph run charges the calls its nodes make (context variables)."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        a: str
        b: str

    chat = Slow(0.05)

    def node_a(state: State) -> State:
        return {"a": str(invoke_with_retry(chat, "hi").content)}

    def node_b(state: State) -> State:
        return {"b": str(invoke_with_retry(chat, "hi").content)}

    graph = StateGraph(State)
    graph.add_node("a", node_a)
    graph.add_node("b", node_b)
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")  # a and b run in parallel, on LangGraph's executor threads
    graph.add_edge("a", END)
    graph.add_edge("b", END)
    app = graph.compile()

    budget = llm.LLMBudget(10)
    assert llm.current_budget() is None
    with budget:
        assert llm.current_budget() is budget
        assert app.invoke({}) == {"a": "ok", "b": "ok"}
    assert llm.current_budget() is None
    assert chat.calls == 2 and budget.spent >= 0.1

    spent = llm.LLMBudget(0.01)
    spent.charge(1.0)
    with spent, pytest.raises(llm.LLMBudgetExceeded):
        app.invoke({})
    assert chat.calls == 2


@pytest.mark.parametrize(("setting", "field"), [("none", None), ("llama.cpp", "grammar"), ("vllm", "guided_grammar")])
def test_a_served_model_gets_the_grammar_in_the_field_the_setting_names(
        monkeypatch: pytest.MonkeyPatch, setting: str, field: str | None) -> None:
    from helper_agent.config import get_settings
    from helper_agent.program.grammar import program_grammar

    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("HELPER_LLM_GRAMMAR", setting)
    get_settings.cache_clear()
    try:
        served = make_chat_model("openai:gpt-4o", max_tokens=100, timeout=9.0)
        step = llm.grammar_decoding(served, 'root ::= "done()"', temperature=0.7, seed=3)
        program = llm.program_decoding(served, max_lines=4, temperature=0.2, seed=1)
        assert step.pop("extra_body", None) == ({field: 'root ::= "done()"'} if field else None)
        expected = {field: program_grammar(max_statements=4)} if field else None
        assert program.pop("extra_body", None) == expected
        assert step == {"temperature": 0.7, "seed": 3} and program == {"temperature": 0.2, "seed": 1}
        # Any other provider gets nothing: its answers are parsed and checked as usual.
        other = FakeMessagesListChatModel(responses=[AIMessage(content="done()")])
        assert llm.grammar_decoding(other, "root ::= x") == {} == llm.program_decoding(other, max_lines=4)
    finally:
        get_settings.cache_clear()
