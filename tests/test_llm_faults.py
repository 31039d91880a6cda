"""Calls to a misbehaving OpenAI-compatible server end with a clear error in bounded time.

A fake server on 127.0.0.1 (benchmarks/llm_faults_bench.py's, an ephemeral port) answers in one
failure mode per test; calls go through `make_chat_model(URL)` and `invoke_with_retry` as the
agents' calls do. Retried failures take at most attempts*timeout + delay*(2**(attempts-1) - 1).
"""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import HumanMessage
from scripts import load_script

pytest.importorskip("langchain_openai")

from helper_agent.llm import (  # noqa: E402 - after the importorskip
    LLMBadResponse,
    LLMBudget,
    LLMBudgetExceeded,
    LLMError,
    LLMUnavailable,
    UsageRecorder,
    invoke_with_retry,
    make_chat_model,
)

bench = load_script("benchmarks/llm_faults_bench.py")
FakeOpenAIServer = bench.FakeOpenAIServer

TIMEOUT = 1.0
ATTEMPTS = 3
DELAY = 0.05
BOUND = bench.bound_seconds(TIMEOUT, ATTEMPTS - 1, DELAY)  # 3*1 + 0.05*3 = 3.15 s
SLACK = 1.5  # scheduling on a shared 2-core machine
PROMPT = [HumanMessage(content="make coffee")]


# ------------------------------------------------------------------------------ the token cap
def test_the_token_cap_goes_out_as_max_tokens() -> None:
    with FakeOpenAIServer("ok", reply="a b c d e f g h i j k l m n o p q r s t") as server:
        chat = make_chat_model(f"{server.base_url}#qwen", max_tokens=16, timeout=TIMEOUT)
        reply = invoke_with_retry(chat, PROMPT, attempts=1)
        chat.invoke(PROMPT, max_tokens=4)  # a per-call cap goes the same way
    first, second = server.requests
    assert first["max_tokens"] == 16 and "max_completion_tokens" not in first
    assert first["model"] == "qwen" and first["temperature"] == 0.0
    assert first["messages"] == [{"role": "user", "content": "make coffee"}]
    assert second["max_tokens"] == 4 and "max_completion_tokens" not in second
    assert reply.content == "a b c d e f g h i j k l m n o p"  # the fake server honours max_tokens
    assert reply.usage_metadata["output_tokens"] == 16
    assert reply.response_metadata["finish_reason"] == "length"


def test_chatopenai_itself_would_send_max_completion_tokens() -> None:
    """Why the base-URL branch does not use ChatOpenAI: its body carries a field llama.cpp ignores."""
    from langchain_openai import ChatOpenAI

    with FakeOpenAIServer("ok") as server:
        ChatOpenAI(base_url=server.base_url, api_key="x", model="m", max_tokens=16, max_retries=0).invoke(PROMPT)
    assert server.requests[0].get("max_completion_tokens") == 16 and "max_tokens" not in server.requests[0]


def test_one_retry_layer_and_the_timeout_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_LLM_TIMEOUT", "7.5")
    monkeypatch.setenv("HELPER_LLM_RETRIES", "1")
    get_settings.cache_clear()
    try:
        with FakeOpenAIServer("500") as server:
            chat = make_chat_model(server.base_url)
            assert chat.max_retries == 0 and chat.request_timeout == 7.5
            with pytest.raises(LLMUnavailable, match="after 2 attempts"):
                invoke_with_retry(chat, PROMPT, initial_delay=0.0)
        assert len(server.requests) == 2  # HELPER_LLM_RETRIES=1: two attempts, no client-side retries
    finally:
        get_settings.cache_clear()


def test_usage_of_server_calls_is_recorded() -> None:
    recorder = UsageRecorder()
    with FakeOpenAIServer("ok", reply="one two three") as server:
        chat = make_chat_model(server.base_url, max_tokens=16, timeout=TIMEOUT)
        invoke_with_retry(chat, PROMPT, config={"callbacks": [recorder]}, attempts=1)
    assert recorder.summary()["llm_calls"] == 1
    assert recorder.prompt_tokens == 12 and recorder.completion_tokens == 3


# ------------------------------------------------------------------------------ the fault matrix
@pytest.mark.parametrize(
    ("mode", "error", "match", "requests"),
    [
        ("500", LLMUnavailable, "did not answer after 3 attempts: .*500", ATTEMPTS),
        ("429", LLMUnavailable, "did not answer after 3 attempts: .*429", ATTEMPTS),
        ("junk", LLMBadResponse, "did not answer with a chat completion: JSONDecodeError", 1),
        ("html", LLMBadResponse, "did not answer with a chat completion: .*502 Bad Gateway", 1),
        ("empty_body", LLMBadResponse, "did not answer with a chat completion", 1),
        ("empty", LLMBadResponse, "answered with an empty message", 1),
        ("hang", LLMUnavailable, "did not answer after 3 attempts: .*[Tt]imed? ?out", ATTEMPTS),
    ],
)
def test_a_failing_server_ends_the_call_with_a_clear_error_in_bounded_time(
    mode: str, error: type[LLMError], match: str, requests: int
) -> None:
    with FakeOpenAIServer(mode) as server:
        # The client is built before the clock starts: importing and setting up the OpenAI client
        # can take seconds on a loaded machine, and it is not what this test is about.
        chat = make_chat_model(f"{server.base_url}#fake", max_tokens=16, timeout=TIMEOUT)
        start = time.monotonic()
        with pytest.raises(error, match=match) as caught:
            invoke_with_retry(chat, PROMPT, attempts=ATTEMPTS, initial_delay=DELAY)
        elapsed = time.monotonic() - start
    assert isinstance(caught.value, LLMError)
    assert len(server.requests) == requests  # retried by invoke_with_retry only, never by the client too
    assert elapsed < BOUND + SLACK
    if mode == "hang":
        assert elapsed >= ATTEMPTS * TIMEOUT  # it did wait out each timeout
    else:
        assert elapsed < ATTEMPTS * TIMEOUT  # it did not wait the timeouts out, as a hang does


def test_a_200_kb_reply_is_cut_not_waited_on() -> None:
    with FakeOpenAIServer("huge") as server:
        chat = make_chat_model(f"{server.base_url}#fake", max_tokens=16, timeout=TIMEOUT)
        start = time.monotonic()
        reply = invoke_with_retry(chat, PROMPT, attempts=ATTEMPTS, initial_delay=DELAY)
        elapsed = time.monotonic() - start
    assert elapsed < ATTEMPTS * TIMEOUT  # read as it came, never waited out
    assert len(server.requests) == 1
    assert len(reply.content) == 65_536 < bench.HUGE_CHARS
    assert reply.response_metadata["finish_reason"] == "length"
    assert reply.response_metadata["truncated_from_chars"] == bench.HUGE_CHARS


def test_an_unreachable_server_is_reported_after_the_retries() -> None:
    with FakeOpenAIServer("ok") as server:
        url = server.base_url
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match="after 3 attempts: .*Connection"):
        invoke_with_retry(make_chat_model(url, timeout=TIMEOUT), PROMPT, attempts=3, initial_delay=DELAY)
    assert time.monotonic() - start < BOUND + SLACK


# ------------------------------------------------------------------------------ the budget
def test_the_budget_cuts_a_hanging_request_short() -> None:
    """A request to a server that never answers times out when the episode's budget runs out, not
    after the (longer) request timeout."""
    with FakeOpenAIServer("hang") as server:
        chat = make_chat_model(server.base_url, timeout=30.0)
        budget = LLMBudget(1.0)
        start = time.monotonic()
        with budget, pytest.raises(LLMBudgetExceeded, match="budget of 1 s is spent.*Timeout") as caught:
            invoke_with_retry(chat, PROMPT, attempts=3, initial_delay=DELAY)
        elapsed = time.monotonic() - start
    assert 1.0 <= elapsed < 1.0 + SLACK
    assert len(server.requests) == 1
    assert budget.exceeded and budget.spent == pytest.approx(elapsed, abs=0.2)
    assert caught.value.__cause__ is not None  # the timeout that spent it
    with pytest.raises(LLMBudgetExceeded):  # the next call of the episode does not start
        invoke_with_retry(chat, PROMPT, budget=budget)
    assert len(server.requests) == 1


# ------------------------------------------------------------------------------ streamed replies
@pytest.fixture()
def streaming(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_LLM_STREAM", "true")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_a_streamed_reply_is_read_whole_with_its_usage(streaming) -> None:  # noqa: ANN001
    recorder = UsageRecorder()
    with FakeOpenAIServer("ok", reply="one two three") as server:
        chat = make_chat_model(server.base_url, max_tokens=16, timeout=TIMEOUT)
        reply = invoke_with_retry(chat, PROMPT, config={"callbacks": [recorder]}, attempts=1)
    assert server.requests[0]["stream"] is True
    assert reply.content == "one two three"
    assert recorder.summary()["llm_calls"] == 1 and recorder.completion_tokens == 3


def test_a_request_past_its_timeout_is_cancelled_on_the_server_not_left_queued(streaming) -> None:  # noqa: ANN001
    """The first request waits for a busy model (the server only sends keep-alive pings, so no read
    timeout fires): at its timeout the client closes it, the server sees the disconnect at once, and
    the retry (after a backoff) is answered."""
    with FakeOpenAIServer("ok", reply="a b c", stall_first=10 * TIMEOUT) as server:
        chat = make_chat_model(f"{server.base_url}#fake", max_tokens=16, timeout=TIMEOUT)
        start = time.monotonic()
        reply = invoke_with_retry(chat, PROMPT, attempts=ATTEMPTS, initial_delay=DELAY)
        elapsed = time.monotonic() - start
        time.sleep(0.3)
    assert reply.content == "a b c"
    assert len(server.requests) == 2  # the stalled request and one retry
    assert len(server.disconnects) == 1  # the stalled request was closed, not left running
    assert server.disconnects[0] - start < TIMEOUT + 0.5 + SLACK
    assert TIMEOUT <= elapsed < TIMEOUT + DELAY + SLACK


def test_a_streamed_reply_cut_at_every_attempt_says_it_was_cancelled(streaming) -> None:  # noqa: ANN001
    with FakeOpenAIServer("ok", reply="a b c", stall_first=10 * TIMEOUT) as server:
        chat = make_chat_model(f"{server.base_url}#fake", max_tokens=16, timeout=TIMEOUT)
        with pytest.raises(LLMUnavailable, match="after 1 attempts: ReplyTimeout: .*within 1 s; the request was cancelled"):
            invoke_with_retry(chat, PROMPT, attempts=1)
