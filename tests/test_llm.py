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
