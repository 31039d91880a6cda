"""benchmarks/llm_bench.py: the arithmetic of its ratios and the flat figures it writes (no build,
no model: the worker's measures are given)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripts import load_script

bench = load_script("benchmarks/llm_bench.py")

LIMITS = {"bandwidth_gb_s": 20.0, "matmul_f32_gflop_s": 100.0, "matmul_int8_gop_s": 400.0}


def _row(runtime: str, model: str = "0.5b", free_sha: str = "aaa") -> dict:
    return {
        "runtime": runtime, "model": model, "backend": "libggml-cpu.so", "libraries": [],
        "model_bytes": 400_000_000, "n_params": 500_000_000, "n_vocab": 100_000, "n_embd": 1000, "n_layer": 10,
        "prompt_tok_s": {"600": 150.0, "2400": 120.0},
        "gen_free_tok_s": 25.0, "gen_grammar_tok_s": 20.0, "gen_free_sha": free_sha, "gen_grammar_sha": "bbb",
        "first_token_cached_ms": 120.04, "peak_rss_mb": 900.0, "first_line_s": 1.234, "first_subgoal_s": None,
    }


def test_parse_build_names_a_folder_and_rejects_what_is_not_name_equals_dir() -> None:
    assert bench.parse_build("avx512=/work/builds/lib") == ("avx512", Path("/work/builds/lib"), False)
    assert bench.parse_build("fa=/work/builds/lib,fa") == ("fa", Path("/work/builds/lib"), True)
    for bad in ("avx512", "=/x", "a=", "a b=/x", "a=/x,gpu"):
        with pytest.raises(ValueError, match="--build"):
            bench.parse_build(bad)


def test_prompt_flops_count_weights_outside_the_embedding_and_attention_over_the_prompt() -> None:
    # 2 x (500M - 100k x 1000) = 800M for the weights; 2 x 10 layers x 1000 wide x 600 tokens = 12M.
    assert bench.prompt_flops_per_token(500_000_000, 100_000, 1000, 10, 600) == 812_000_000


def test_ratios_are_the_share_of_each_limit() -> None:
    # 400 MB a token at 25 tokens/s is 10 GB/s: half of 20 GB/s.
    assert bench.generation_ratio(400e6, 25.0, 20.0) == pytest.approx(0.5)
    # 812 MFLOP a token at 150 tokens/s is 121.8 GFLOP/s: 0.3045 of 400.
    assert bench.prompt_ratio(812e6, 150.0, 400.0) == pytest.approx(0.3045)


def test_figures_are_flat_keyed_by_runtime_and_model_with_their_ratios(tmp_path: Path) -> None:
    out = bench.figures(LIMITS, [_row("llama.cpp"), _row("openvino", free_sha="ccc"),
                                 {"runtime": "llama.cpp-broken", "model": "0.5b", "error": "no libllama.so"}],
                        default_runtime="openvino")
    assert out["default_runtime"] == "openvino"
    assert out["bandwidth_gb_s"] == 20.0
    assert out["llama.cpp:0.5b:prompt_tps:600"] == 150.0
    assert out["llama.cpp:0.5b:prompt_of_int8:600"] == pytest.approx(0.304, abs=1e-3)
    assert out["llama.cpp:0.5b:prompt_of_f32:600"] == pytest.approx(1.218, abs=1e-3)
    assert "llama.cpp:0.5b:prompt_of_bf16:600" not in out  # no bf16 limit was measured
    assert out["openvino:0.5b:gen_tps"] == 25.0 and out["openvino:0.5b:gen_grammar_tps"] == 20.0
    assert out["llama.cpp:0.5b:gen_of_bandwidth"] == 0.5
    assert out["llama.cpp:0.5b:gen_grammar_of_bandwidth"] == 0.4
    assert out["llama.cpp:0.5b:first_token_cached_ms"] == 120.0
    assert out["llama.cpp:0.5b:first_line_s"] == 1.23
    assert "llama.cpp:0.5b:first_subgoal_s" not in out  # a program with no acting line has no such time
    assert out["llama.cpp-broken:0.5b:error"] == "no libllama.so"
    assert all(not isinstance(v, (dict, list)) for v in out.values())
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(out))
    assert json.loads(path.read_text()) == out


def test_table_says_which_runtime_wrote_other_greedy_output() -> None:
    out = bench.figures(LIMITS, [_row("llama.cpp"), _row("same"), _row("openvino", free_sha="ccc")],
                        default_runtime="openvino")
    lines = bench.table(out, ["llama.cpp", "same", "openvino"], ["0.5b"], [600, 2400]).splitlines()
    assert lines[0].startswith("| runtime | model") and lines[1].startswith("| --- |")
    assert lines[2].startswith("| llama.cpp | 0.5b") and lines[2].endswith("yes |")
    assert lines[3].endswith("yes |")
    assert lines[4].startswith("| openvino") and lines[4].endswith("NO |")


def test_qwen2_parameters_are_counted_from_the_config() -> None:
    # Qwen2.5-0.5B's config: 494,032,768 parameters (its model card's 0.49B).
    config = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "vocab_size": 151936,
              "num_attention_heads": 14, "num_key_value_heads": 2, "tie_word_embeddings": True}
    assert bench._qwen2_params(config) == 494_032_768


def test_the_decoder_says_when_the_first_line_and_the_first_acting_line_were_written() -> None:
    """`DecodeResult.first_line_seconds` / `first_action_seconds` (issue 64's "Enter to first line /
    subgoal"): measured as each line ends, the acting line after the line that names the object."""
    import time as clock

    from helper_agent.decoding import ProgramDecoder

    lines = iter(['target = InteractionObject("Mug")\n', "target.pickup()\n", "```"])

    class Scripted:
        grammar_as_text = True

        def tokenize(self, text: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
            return list(range(len(text) // 4))

        def create_completion(self, prompt: str, **kwargs: object) -> dict:
            clock.sleep(0.05)
            return {"choices": [{"text": next(lines)}], "usage": {"completion_tokens": 5}}

    result = ProgramDecoder(Scripted()).decode("prompt")
    assert result.stopped_by == "fence" and result.line_calls == 3
    assert result.first_line_seconds is not None and result.first_action_seconds is not None
    assert 0.05 <= result.first_line_seconds < result.first_action_seconds <= result.seconds
