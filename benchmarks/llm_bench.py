"""The local model's runtimes against this machine's limits, side by side, both local models.

The candidates (`--runtime`): `openvino` (OpenVINO GenAI on a folder made from the GGUF file,
`helper models prepare`, in each `--weight-format`; the default behind `--llm local`) and `llama.cpp` (the installed
llama-cpp-python, or each `--build NAME=DIR` of llama.cpp's shared libraries, named `llama.cpp-NAME`).
For each candidate and model a subprocess loads the model (a llama.cpp build through
`LLAMA_CPP_LIB_PATH`, `LD_LIBRARY_PATH` and the working folder, where ggml looks for its dynamically
loaded CPU variants) and measures:

- prompt evaluation, tokens/s, at the prompt sizes our methods send (600, 2400, 4500 tokens by
  default: HELPER's planner with its examples is about 1,250, EAI's about 2,400 before examples,
  P-RAG's step prompts with experience several thousand). The tokens are HELPER's planner prompt
  (system text, API, packaged train examples as turns) cut to the largest size; one pass is timed at
  each size's boundary, so the figure for N is the mean rate over the first N tokens, which is what
  evaluating an N-token prompt costs;
- generation, tokens/s, after HELPER's real planner prompt (3 packaged examples), once free (greedy,
  up to 96 tokens) and under the program grammar the in-process model writes with
  (`decoding.ProgramDecoder`, one GBNF grammar per line): the second decoding of the prompt, whose
  line grammars the first compiled (`gen_grammar_cold_tps` is the first's rate, compilation included);
  the prompt is evaluated before the timing, so these are the tokens the model writes, grammar and
  sampling included;
- the first-token time of HELPER's planner prompt after the same prompt with another request was
  evaluated: what a second call of one kind costs with its prefix cached;
- the process's peak RSS;
- which CPU backend library the process mapped (`/proc/self/maps`), so every row names its build.

With `--install` it also times installing each runtime into a fresh venv (pip's cache warm, as on a
second machine of a cluster; llama-cpp-python compiled without its wheel cache), and with `--convert`
the conversion of each model to OpenVINO into a temporary folder (`helper models prepare`).

The machine's limits are measured in the same run: memory bandwidth (a large numpy array copied by
one thread per core; bytes read plus bytes written), and matrix-multiply rates: numpy float32
(OpenBLAS), and, when torch is installed, int8 (`torch._int_mm`, int32 accumulate) and bfloat16.
The ratios printed:

- generation: model bytes per token (all weights are read once per token; the output layer is the
  tied embedding, so it is read too) x tokens/s / bandwidth;
- prompt: floating-point operations per token x tokens/s / matmul rate, where a token costs
  2 x (parameters - embedding table) (the table is a lookup for prompt tokens; logits are computed
  for the last token only) plus attention, 2 x layers x width x N for the mean over an N-token
  prompt. llama.cpp multiplies Q4/Q5/Q6 weights by int8 activations, so the int8 rate is the
  nearer limit; the float32 one is given beside it.

Run (an LLM job: alone on the machine, or under the LLM lock):

    python benchmarks/llm_bench.py --runtime openvino --runtime llama.cpp --model 0.5b --model 1.5b \\
        --json runs/llm-bench.json

`--json` writes a flat object: `default_runtime` (the runtime `--llm local` uses), the machine's limits,
and per runtime R and model M `R:M:prompt_tps:N`, `R:M:prompt_of_int8:N`, `R:M:gen_tps` (free),
`R:M:gen_grammar_tps` (and `R:M:gen_grammar_cold_tps`), `R:M:first_token_cached_ms`, `R:M:first_line_s`,
`R:M:first_subgoal_s`, `R:M:peak_rss_mb`, `R:M:gen_sha` (and with
`--install`/`--convert`, `R:install_s` and `openvino-F:M:convert_s`).

`--weight-format F` (repeatable: `q8`, `gguf`, `int8`, `int4`; default the models' own,
`openvino_models.DEFAULT_WEIGHTS`) gives an OpenVINO row per format, `openvino-F`, its folder made first when missing
(`helper_agent.llm.openvino_models`; the seconds are printed, not counted in the row). Before issue 64
the rows were named `openvino` (int8) and `openvino-int4`.

`NAME=DIR,fa` runs that build with flash attention on (llama-cpp-python's default is off).
Without `--build`, the `llama.cpp` row is the installed llama-cpp-python's own libraries.
`--llama-bench PATH` also runs that `llama-bench` binary on each build's libraries (pp512, tg64).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from helper_agent.decoding import ProgramDecoder, format_chat
from helper_agent.graphs.helper.prompts import planner_messages
from helper_agent.llm.factory import LOCAL_RUNTIMES
from helper_agent.llm.gguf import assemble_local_model, model_cache_dir
from helper_agent.llm.inprocess import chat_messages
from helper_agent.llm.openvino_models import (
    DEFAULT_WEIGHTS,
    WEIGHT_FORMATS,
    openvino_model_dir,
    prepare_openvino_model,
)
from helper_agent.memory.examples import TRAIN_PROGRAMS_FILE

MODELS = {
    "0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "1.5b": "qwen2.5-coder-1.5b-instruct.gguf",
}
ROOT = Path(__file__).resolve().parent.parent
PROMPT_SIZES = (600, 2400, 4500)
FREE_TOKENS = 96
PLANNER_EXAMPLES = 3


# ---------------------------------------------------------------------------------------------------
# Pure parts: arithmetic and the figures (tested without any build).


def parse_build(text: str) -> tuple[str, Path, bool]:
    """`NAME=DIR[,fa]` (a folder with libllama.so; `,fa`: with flash attention, which
    llama-cpp-python turns off by default) as (name, folder, flash attention)."""
    name, sep, rest = text.partition("=")
    folder, _, option = rest.partition(",")
    if not sep or not name or not folder or option not in ("", "fa"):
        raise ValueError(f"--build {text!r}: expected NAME=DIR or NAME=DIR,fa")
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"--build {text!r}: the name may use letters, digits, '-' and '_' only")
    return name, Path(folder), option == "fa"


def prompt_flops_per_token(n_params: int, n_vocab: int, n_embd: int, n_layer: int, n_tokens: int) -> float:
    """Mean floating-point operations per prompt token over an `n_tokens` prompt: the weight
    matmuls (2 per parameter outside the embedding table) plus causal attention (Q.K and A.V,
    2 x width each per earlier token, over N/2 earlier tokens on average)."""
    weights = 2.0 * (n_params - n_vocab * n_embd)
    attention = 2.0 * n_layer * n_embd * n_tokens
    return weights + attention


def generation_ratio(model_bytes: float, tokens_per_s: float, bandwidth_gb_s: float) -> float:
    """The share of the measured memory bandwidth that generating at `tokens_per_s` uses."""
    return model_bytes * tokens_per_s / (bandwidth_gb_s * 1e9)


def prompt_ratio(flops_per_token: float, tokens_per_s: float, rate_gflop_s: float) -> float:
    """The share of a measured matmul rate that evaluating prompt tokens at `tokens_per_s` uses."""
    return flops_per_token * tokens_per_s / (rate_gflop_s * 1e9)


def figures(limits: dict[str, float], rows: Sequence[dict[str, Any]], default_runtime: str) -> dict[str, Any]:
    """The flat figures of a run: `default_runtime`, the limits, then per row (`runtime`, `model` and
    the worker's measures) its rates and their ratios to the limits, keyed `RUNTIME:MODEL:figure`."""
    out: dict[str, Any] = {"default_runtime": default_runtime, **limits}
    for row in rows:
        key = f"{row['runtime']}:{row['model']}"
        if row.get("error"):
            out[f"{key}:error"] = row["error"]
            continue
        out[f"{key}:backend"] = row["backend"]
        for size, rate in row["prompt_tok_s"].items():
            out[f"{key}:prompt_tps:{size}"] = round(rate, 1)
            flops = prompt_flops_per_token(row["n_params"], row["n_vocab"], row["n_embd"], row["n_layer"], int(size))
            for limit in ("matmul_f32_gflop_s", "matmul_int8_gop_s", "matmul_bf16_gflop_s"):
                if limits.get(limit):
                    name = limit.removeprefix("matmul_").split("_")[0]
                    out[f"{key}:prompt_of_{name}:{size}"] = round(prompt_ratio(flops, rate, limits[limit]), 3)
        for kind, name in (("free", "gen_tps"), ("grammar", "gen_grammar_tps")):
            rate = row[f"gen_{kind}_tok_s"]
            out[f"{key}:{name}"] = round(rate, 1)
            out[f"{key}:{name.replace('_tps', '')}_of_bandwidth"] = round(
                generation_ratio(row["model_bytes"], rate, limits["bandwidth_gb_s"]), 3)
        if "gen_grammar_cold_tok_s" in row:
            out[f"{key}:gen_grammar_cold_tps"] = round(row["gen_grammar_cold_tok_s"], 1)
        out[f"{key}:gen_sha"] = row["gen_free_sha"]
        out[f"{key}:gen_grammar_sha"] = row["gen_grammar_sha"]
        for name in ("first_token_cached_ms", "peak_rss_mb", "convert_s"):
            if name in row:
                out[f"{key}:{name}"] = round(row[name], 1)
        for name in ("first_line_s", "first_subgoal_s"):
            if row.get(name) is not None:
                out[f"{key}:{name}"] = round(row[name], 2)
        for name, value in row.get("llama_bench", {}).items():
            out[f"{key}:llama_bench_{name}_tps"] = round(value, 1)
    return out


def table(out: dict[str, Any], runtimes: Sequence[str], models: Sequence[str], sizes: Sequence[int]) -> str:
    """The figures as a Markdown table, one row per runtime and model; the last column says whether
    the row wrote the same greedy text as the first row of its model."""
    head = ["runtime", "model", "backend", *(f"pp{n} t/s (of int8)" for n in sizes),
            "gen free t/s (bw)", "gen grammar t/s (bw)", "1st token, cached (ms)", "Enter to 1st line (s)",
            "Enter to 1st subgoal (s)", "peak RSS MB", "same output"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    first: dict[str, tuple[str, str]] = {}
    for runtime in runtimes:
        for model in models:
            key = f"{runtime}:{model}"
            if f"{key}:error" in out:
                lines.append(f"{runtime} | {model} | error: {out[f'{key}:error']}" + " | -" * (len(head) - 3))
                continue
            cells = [runtime, model, out[f"{key}:backend"]]
            for n in sizes:
                cells.append(f"{out[f'{key}:prompt_tps:{n}']} ({out.get(f'{key}:prompt_of_int8:{n}', '-')})")
            cells.append(f"{out[f'{key}:gen_tps']} ({out[f'{key}:gen_of_bandwidth']})")
            cells.append(f"{out[f'{key}:gen_grammar_tps']} ({out[f'{key}:gen_grammar_of_bandwidth']})")
            cells.append(str(out.get(f"{key}:first_token_cached_ms", "-")))
            cells.append(str(out.get(f"{key}:first_line_s", "-")))
            cells.append(str(out.get(f"{key}:first_subgoal_s", "-")))
            cells.append(str(out.get(f"{key}:peak_rss_mb", "-")))
            shas = (out[f"{key}:gen_sha"], out[f"{key}:gen_grammar_sha"])
            same = first.setdefault(model, shas) == shas
            cells.append("yes" if same else "NO")
            lines.append(" | ".join(str(c) for c in cells))
    return "\n".join(f"| {line} |" for line in lines)


# ---------------------------------------------------------------------------------------------------
# The machine's limits.


def memory_bandwidth_gb_s(megabytes: int = 512, threads: int | None = None, repeats: int = 5) -> float:
    """The best of `repeats` copies of a `megabytes` float64 array, one slice per thread (numpy
    releases the GIL while it copies), as GB/s of bytes read plus bytes written."""
    threads = threads or os.cpu_count() or 1
    n = megabytes * 2**20 // 8
    src = np.ones(n)
    dst = np.zeros(n)
    bounds = [(n * k // threads, n * (k + 1) // threads) for k in range(threads)]

    def copy(bound: tuple[int, int]) -> None:
        np.copyto(dst[bound[0]:bound[1]], src[bound[0]:bound[1]])

    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            started = time.perf_counter()
            list(pool.map(copy, bounds))
            best = min(best, time.perf_counter() - started)
    return 2 * n * 8 / best / 1e9


def matmul_rates(n: int = 2048, repeats: int = 5) -> dict[str, float]:
    """The best of `repeats` n x n matrix multiplications: numpy float32 (GFLOP/s), and with torch
    int8 x int8 -> int32 (`torch._int_mm`, GOP/s) and bfloat16 (GFLOP/s)."""

    def best_rate(fn: Any) -> float:
        fn()  # warm up (thread pools, packing buffers)
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - started)
        return 2 * n**3 / best / 1e9

    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    rates = {"matmul_f32_gflop_s": round(best_rate(lambda: a @ a), 1)}
    try:
        import torch  # deferred: optional (the `dev` extra's CPU build); only for the int8/bf16 limits
    except ImportError:
        return rates
    q = torch.randint(-128, 127, (n, n), dtype=torch.int8)
    try:
        rates["matmul_int8_gop_s"] = round(best_rate(lambda: torch._int_mm(q, q)), 1)
    except RuntimeError:
        pass
    h = torch.randn(n, n, dtype=torch.bfloat16)
    rates["matmul_bf16_gflop_s"] = round(best_rate(lambda: h @ h), 1)
    return rates


def measure_limits() -> dict[str, float]:
    return {"cores": float(os.cpu_count() or 1), "load_1min": round(os.getloadavg()[0], 2),
            "bandwidth_gb_s": round(memory_bandwidth_gb_s(), 2), **matmul_rates()}


# ---------------------------------------------------------------------------------------------------
# One build x model, in its own process.


def _mapped_libraries() -> list[str]:
    """The llama.cpp/ggml shared libraries this process has mapped."""
    seen: list[str] = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        name = Path(path).name
        if (name.startswith("libggml") or name.startswith("libllama")) and path not in seen:
            seen.append(path)
    return seen


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _shots() -> list[dict[str, Any]]:
    path = resources.files("helper_agent.prompts").joinpath("examples", TRAIN_PROGRAMS_FILE)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _planner_messages(examples: int, request: int | None = None) -> list[dict[str, str]]:
    """HELPER's planner prompt's messages, with the first `examples` packaged train examples as turns
    and the dialogue of example `request` (default: the next one) as the request."""
    shots = _shots()
    return chat_messages(planner_messages(shots[examples if request is None else request]["dialogue"], shots[:examples]))


def _planner_prompt(llm: Any, examples: int, request: int | None = None) -> str:
    """HELPER's planner prompt, chat-formatted by llama.cpp's template reader."""
    return format_chat(llm, _planner_messages(examples, request))


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(model_path: str, sizes: Sequence[int], n_threads: int, flash_attn: bool = False) -> dict[str, Any]:
    """The measures of one model on the llama.cpp build this process loaded (see the module doc)."""
    import llama_cpp  # deferred: loaded after the parent chose the build (LLAMA_CPP_LIB_PATH)

    llm = llama_cpp.Llama(model_path=model_path, n_ctx=8192, n_threads=n_threads, n_threads_batch=n_threads,
                          flash_attn=flash_attn, seed=0, verbose=False)
    meta = llm.metadata
    arch = meta.get("general.architecture", "")
    out: dict[str, Any] = {
        "libraries": _mapped_libraries(),
        "model_bytes": int(llm._model.size()),
        "n_params": int(llm._model.n_params()),
        "n_vocab": int(llm.n_vocab()),
        "n_embd": int(llm.n_embd()),
        "n_layer": int(meta.get(f"{arch}.block_count", 0)),
    }
    cpu = [Path(p).name for p in out["libraries"] if "ggml-cpu" in Path(p).name]
    out["backend"] = ",".join(sorted(set(cpu))) or "?"

    # Prompt evaluation: one pass over the largest size, timed at each size's boundary.
    tokens: list[int] = []
    examples = 10
    while len(tokens) < max(sizes):
        tokens = llm.tokenize(_planner_prompt(llm, examples).encode("utf-8"), add_bos=False, special=True)
        examples += 10
    llm.reset()
    llm.eval(tokens[:8])  # warm up: thread pool, first buffers
    llm.reset()
    elapsed, done, rates = 0.0, 0, {}
    for size in sorted(sizes):
        started = time.perf_counter()
        llm.eval(tokens[done:size])
        elapsed += time.perf_counter() - started
        done = size
        rates[str(size)] = size / elapsed
    out["prompt_tok_s"] = rates

    # The first token of a planner prompt whose examples are cached (another request before it).
    llm.reset()
    llm.create_completion(_planner_prompt(llm, PLANNER_EXAMPLES, request=PLANNER_EXAMPLES + 1), max_tokens=1)
    started = time.perf_counter()
    llm.create_completion(_planner_prompt(llm, PLANNER_EXAMPLES), max_tokens=1, temperature=0.0)
    out["first_token_cached_ms"] = (time.perf_counter() - started) * 1000

    # Generation after HELPER's planner prompt, evaluated before the timing.
    prompt = _planner_prompt(llm, PLANNER_EXAMPLES)
    prompt_tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    out["planner_prompt_tokens"] = len(prompt_tokens)
    llm.reset()
    llm.eval(prompt_tokens)
    started = time.perf_counter()
    reply = llm.create_completion(prompt, max_tokens=FREE_TOKENS, temperature=0.0, seed=0)
    seconds = time.perf_counter() - started
    _free(out, reply["choices"][0]["text"], int(reply["usage"]["completion_tokens"]), seconds)

    llm.reset()
    llm.eval(prompt_tokens)
    cold = ProgramDecoder(llm).decode(prompt, temperature=0.0, seed=0)
    llm.reset()
    llm.eval(prompt_tokens)
    _grammar(out, ProgramDecoder(llm).decode(prompt, temperature=0.0, seed=0), cold)
    llm.reset()
    llm.create_completion(_planner_prompt(llm, PLANNER_EXAMPLES, request=PLANNER_EXAMPLES + 1), max_tokens=1)
    _person(out, ProgramDecoder(llm).decode(prompt, temperature=0.0, seed=0))
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def _free(out: dict[str, Any], text: str, tokens: int, seconds: float) -> None:
    out["gen_free_tokens"] = tokens
    out["gen_free_tok_s"] = tokens / seconds
    out["gen_free_sha"] = _sha(text)
    out["gen_free_text"] = text


def _person(out: dict[str, Any], result: Any) -> None:
    """What a person waits for, from one decoding timed from Enter (`DecodeResult`'s first line and
    first acting line)."""
    out["first_line_s"] = result.first_line_seconds
    out["first_subgoal_s"] = result.first_action_seconds


def _grammar(out: dict[str, Any], result: Any, cold: Any) -> None:
    """The second line-by-line decoding of one prompt (`result`): its line grammars are compiled by
    then, so its rate is the generation's; the first (`cold`) also compiled them. xgrammar (OpenVINO)
    takes about 2 s for the first line grammar of a process and about 70 ms for each new one after
    it, llama.cpp a few ms: a program with new names pays that again, which the HELPER runs' LLM
    seconds include."""
    out["gen_grammar_tokens"] = result.completion_tokens
    out["gen_grammar_tok_s"] = result.completion_tokens / result.seconds
    out["gen_grammar_cold_tok_s"] = cold.completion_tokens / cold.seconds
    out["gen_grammar_sha"] = _sha(result.text)
    out["gen_grammar_text"] = result.text


def openvino_worker(model: str, sizes: Sequence[int], n_threads: int, weight_format: str) -> dict[str, Any]:
    """The same measures on OpenVINO GenAI (`helper_agent.llm.openvino_chat.OpenVINOContext`): each
    prompt size is a prompt of its own evaluated from an empty cache (`forget`), timed to its first
    token; generation is timed after the prompt was evaluated, as for llama.cpp."""
    from helper_agent.llm.openvino_chat import OpenVINOContext  # deferred: openvino-genai only in this worker

    folder = openvino_model_dir(model, weight_format)
    # a folder made by transformers has its config; one GenAI saved from the GGUF has not (the file has)
    config = json.loads((folder / "config.json").read_text()) if (folder / "config.json").exists() \
        else _gguf_config(assemble_local_model(model))
    ctx = OpenVINOContext(folder, n_threads)
    out: dict[str, Any] = {
        "libraries": [], "backend": f"openvino CPU ({weight_format} weights)",
        "model_bytes": sum(f.stat().st_size for f in folder.glob("openvino_model.bin")),
        "n_vocab": int(config["vocab_size"]), "n_embd": int(config["hidden_size"]),
        "n_layer": int(config["num_hidden_layers"]),
    }
    out["n_params"] = _qwen2_params(config)
    examples, tokens = 10, []
    while len(tokens) < max(sizes):
        tokens = ctx.tokenize(ctx.chat_prompt(_planner_messages(examples)).encode("utf-8"))
        examples += 10
    ctx.create_completion(ctx.tokenizer.decode(tokens[:8]), max_tokens=1, temperature=0.0, seed=0)  # warm up
    rates = {}
    for size in sorted(sizes):
        ctx.forget()
        text = ctx.tokenizer.decode(tokens[:size])
        started = time.perf_counter()
        reply = ctx.create_completion(text, max_tokens=1, temperature=0.0, seed=0)
        rates[str(size)] = (reply["usage"]["prompt_tokens"] - reply["usage"]["cached_tokens"]) / (time.perf_counter() - started)
    out["prompt_tok_s"] = rates

    ctx.forget()
    ctx.create_completion(ctx.chat_prompt(_planner_messages(PLANNER_EXAMPLES, request=PLANNER_EXAMPLES + 1)),
                          max_tokens=1, temperature=0.0, seed=0)
    prompt = ctx.chat_prompt(_planner_messages(PLANNER_EXAMPLES))
    started = time.perf_counter()
    ctx.create_completion(prompt, max_tokens=1, temperature=0.0, seed=0)
    out["first_token_cached_ms"] = (time.perf_counter() - started) * 1000
    out["planner_prompt_tokens"] = len(ctx.tokenize(prompt.encode("utf-8")))

    ctx.create_completion(prompt, max_tokens=1, temperature=0.0, seed=0)  # the prompt in the cache
    started = time.perf_counter()
    reply = ctx.create_completion(prompt, max_tokens=FREE_TOKENS, temperature=0.0, seed=0)
    _free(out, reply["choices"][0]["text"], reply["usage"]["completion_tokens"], time.perf_counter() - started)
    ctx.create_completion(prompt, max_tokens=1, temperature=0.0, seed=0)
    cold = ProgramDecoder(ctx).decode(prompt, temperature=0.0, seed=0)
    ctx.create_completion(prompt, max_tokens=1, temperature=0.0, seed=0)
    _grammar(out, ProgramDecoder(ctx).decode(prompt, temperature=0.0, seed=0), cold)
    ctx.forget()
    ctx.create_completion(ctx.chat_prompt(_planner_messages(PLANNER_EXAMPLES, request=PLANNER_EXAMPLES + 1)),
                          max_tokens=1, temperature=0.0, seed=0)
    _person(out, ProgramDecoder(ctx).decode(prompt, temperature=0.0, seed=0))
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def _gguf_config(path: Path) -> dict[str, int]:
    """The config fields `_qwen2_params` reads, from a GGUF file's metadata (Qwen2 keys)."""
    from gguf import GGUFReader  # deferred: the `local` extra

    reader = GGUFReader(path)

    def number(key: str) -> int:
        field = reader.fields[key]
        return int(field.parts[field.data[0]][0])

    return {"hidden_size": number("qwen2.embedding_length"), "intermediate_size": number("qwen2.feed_forward_length"),
            "num_hidden_layers": number("qwen2.block_count"), "num_attention_heads": number("qwen2.attention.head_count"),
            "num_key_value_heads": number("qwen2.attention.head_count_kv"),
            "vocab_size": len(reader.fields["tokenizer.ggml.tokens"].data)}


def _qwen2_params(config: dict[str, Any]) -> int:
    """A Qwen2 model's parameter count from its config (tied embedding counted once)."""
    d, ff, layers, vocab = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"], config["vocab_size"]
    kv = d // config["num_attention_heads"] * config["num_key_value_heads"]
    attention = d * d * 2 + d * kv * 2 + d + 2 * kv  # q, o; k, v; biases of q, k, v
    mlp = 3 * d * ff
    return int(layers * (attention + mlp + 2 * d) + vocab * d * (1 if config.get("tie_word_embeddings") else 2) + d)


def llama_bench(binary: Path, env: dict[str, str], folder: Path, model_path: str, n_threads: int) -> dict[str, float]:
    """pp512 and tg64 from a `llama-bench` binary run on a build's libraries ({} if it fails).
    `LD_LIBRARY_PATH` (searched before the binary's RUNPATH) points it at the build's libllama and
    ggml; the working folder is where ggml looks for dynamically loaded CPU variants."""
    run = subprocess.run([str(binary), "-m", model_path, "-p", "512", "-n", "64", "-r", "1", "-t", str(n_threads),
                          "-o", "json"], env=env, cwd=folder, capture_output=True, text=True, timeout=900, check=False)
    if run.returncode != 0:
        return {}
    rates = {}
    for test in json.loads(run.stdout):
        name = f"pp{test['n_prompt']}" if test.get("n_prompt") else f"tg{test['n_gen']}"
        rates[name] = float(test["avg_ts"])
    return rates


def run_worker(runtime: str, folder: Path | None, flash_attn: bool, model: str, model_path: str,
               sizes: Sequence[int], n_threads: int, bench_binary: Path | None,
               weight_format: str = "") -> dict[str, Any]:
    """One runtime x model in a subprocess; a llama.cpp build's libraries come from `folder`, an
    OpenVINO row's weights in `weight_format`."""
    env = dict(os.environ)
    if folder is not None:
        env.update(LLAMA_CPP_LIB_PATH=str(folder),
                   LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(folder), os.environ.get("LD_LIBRARY_PATH")])))
    row: dict[str, Any] = {"runtime": runtime, "model": model,
                           "folder": str(folder or openvino_model_dir(model, weight_format))}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        target = model if folder is None else model_path
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", target, "--worker-out", out.name,
               "--sizes", ",".join(map(str, sizes)), "--threads", str(n_threads)]
        cmd += ["--worker-runtime", "openvino", "--worker-format", weight_format] if folder is None else []
        cmd += ["--flash-attn"] if flash_attn else []
        run = subprocess.run(cmd, env=env, cwd=folder or Path.cwd(), capture_output=True, text=True, check=False)
        if run.returncode != 0:
            row["error"] = (run.stderr.strip().splitlines() or [f"exit code {run.returncode}"])[-1]
            return row
        row.update(json.loads(Path(out.name).read_text()))
    if bench_binary and folder is not None:
        row["llama_bench"] = llama_bench(bench_binary, env, folder, model_path, n_threads)
    return row


def installed_library_folder() -> Path | None:
    """The installed llama-cpp-python's own library folder (found without loading it), or None."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "lib"


def install_seconds(runtime: str) -> float:
    """Seconds to install `runtime` into a fresh venv (pip's cache warm; llama.cpp compiled, its wheel
    cache off, with the flags `make install-llama` gives)."""
    with tempfile.TemporaryDirectory(prefix="llm-bench-venv-") as venv:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        python = str(Path(venv) / "bin" / "python")
        env = dict(os.environ)
        if runtime == "openvino":
            cmd = [python, "-m", "pip", "install", "--quiet", "openvino-genai==2026.4.1.0"]
        else:
            flags = subprocess.run([sys.executable, str(ROOT / "tools" / "llama_cmake_args.py"), "/proc/cpuinfo"],
                                   capture_output=True, text=True, check=True).stdout.strip()
            env["CMAKE_ARGS"] = flags
            cmd = [python, "-m", "pip", "install", "--quiet", "--no-cache-dir", "llama-cpp-python==0.3.36"]
        started = time.perf_counter()
        subprocess.run(cmd, env=env, check=True)
        return time.perf_counter() - started


def convert_seconds(model: str, weight_format: str) -> float:
    """Seconds to make `model`'s OpenVINO folder in `weight_format` from its GGUF file, into a
    temporary model folder."""
    with tempfile.TemporaryDirectory(prefix="llm-bench-models-") as models:
        gguf = model_cache_dir() / MODELS[model]
        os.symlink(gguf, Path(models) / MODELS[model])
        for stamp in gguf.parent.glob(MODELS[model] + ".sha256"):
            (Path(models) / stamp.name).write_text(stamp.read_text())
        env = dict(os.environ, HELPER_MODEL_DIR=models)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "helper_agent.cli", "models", "prepare", "--size", model,
                        "--weights", weight_format], env=env, check=True)
        return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", action="append", default=[], choices=LOCAL_RUNTIMES,
                        help="a candidate runtime (repeatable; default: all)")
    parser.add_argument("--build", action="append", default=[], help="NAME=DIR of llama.cpp's shared libraries")
    parser.add_argument("--model", action="append", default=[], choices=sorted(MODELS))
    parser.add_argument("--model-dir", default=None, help="default: HELPER_MODEL_DIR or ~/.cache/helper-agent/models")
    parser.add_argument("--sizes", default=",".join(map(str, PROMPT_SIZES)))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--install", action="store_true", help="also time each runtime's install into a fresh venv")
    parser.add_argument("--convert", action="store_true", help="also time each model's conversion to OpenVINO")
    parser.add_argument("--llama-bench", type=Path, default=None, help="a llama-bench binary, run on every build too")
    parser.add_argument("--flash-attn", action="store_true", help=argparse.SUPPRESS)  # the worker's, from ",fa"
    parser.add_argument("--json", dest="json_path", default=None, help="write the flat figures here")
    parser.add_argument("--markdown", default=None, help="write the table here, with the limits and load")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-runtime", default="llama.cpp", help=argparse.SUPPRESS)
    parser.add_argument("--worker-format", default="", help=argparse.SUPPRESS)
    parser.add_argument("--weight-format", action="append", default=[], choices=WEIGHT_FORMATS,
                        help="OpenVINO weight formats to measure (repeatable; default: the models' own, "
                             + ", ".join(dict.fromkeys(DEFAULT_WEIGHTS.values())) + ")")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        if args.worker_runtime == "openvino":
            measures = openvino_worker(args.worker, sizes, args.threads, args.worker_format)
        else:
            measures = worker(args.worker, sizes, args.threads, args.flash_attn)
        Path(args.worker_out).write_text(json.dumps(measures))
        return

    runtimes = args.runtime or list(LOCAL_RUNTIMES)
    candidates: list[tuple[str, Path | None, bool]] = []
    formats = list(dict.fromkeys(args.weight_format or DEFAULT_WEIGHTS.values()))
    for runtime in runtimes:
        if runtime == "openvino":
            candidates += [(f"openvino-{f}", None, False) for f in formats]
        elif args.build:
            candidates += [(f"llama.cpp-{name}", folder, fa) for name, folder, fa in map(parse_build, args.build)]
        elif (installed := installed_library_folder()) is not None:
            candidates.append(("llama.cpp", installed, False))
        else:
            print("llama.cpp: llama-cpp-python is not installed (make install-llama); its rows are left out", flush=True)
    models = args.model or ["0.5b"]
    model_dir = Path(args.model_dir) if args.model_dir else model_cache_dir()
    limits = measure_limits()
    print("limits: " + ", ".join(f"{k} {v}" for k, v in limits.items()), flush=True)
    rows = []
    for name, folder, flash_attn in candidates:
        weight_format = name.split("-", 1)[1] if name.startswith("openvino-") else ""
        for model in models:
            if folder is None:
                began = time.perf_counter()
                prepare_openvino_model(model, weight_format)
                print(f"{name} {model}: folder ready in {time.perf_counter() - began:.0f} s", flush=True)
            started = time.perf_counter()
            row = run_worker(name, folder, flash_attn, model, str(model_dir / MODELS[model]), sizes, args.threads,
                             args.llama_bench, weight_format)
            print(f"{name} {model}: {time.perf_counter() - started:.0f} s; {row.get('error') or row['folder']}", flush=True)
            rows.append(row)
    limits["load_1min_end"] = round(os.getloadavg()[0], 2)
    out = figures(limits, rows, default_runtime=LOCAL_RUNTIMES[0])
    if args.convert:
        for weight_format in formats if "openvino" in runtimes else []:
            for model in models:
                out[f"openvino-{weight_format}:{model}:convert_s"] = round(convert_seconds(model, weight_format), 1)
    if args.install:
        for runtime in runtimes:
            out[f"{runtime}:install_s"] = round(install_seconds(runtime), 1)
    print(table(out, [c[0] for c in candidates], models, sizes))
    for key, value in out.items():
        if key.endswith(("convert_s", "install_s")) or "llama_bench" in key:
            print(f"{key} {value}")
    for row in rows:
        for kind in ("free", "grammar"):
            if f"gen_{kind}_text" in row:
                print(f"--- {row['runtime']} {row['model']} {kind}:\n{row[f'gen_{kind}_text']}")
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(json.dumps(out, indent=1))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(markdown_report(out, [c[0] for c in candidates], models, sizes))


def markdown_report(out: dict[str, Any], runtimes: Sequence[str], models: Sequence[str], sizes: Sequence[int]) -> str:
    """The table with the limits it is measured against and the machine's load, as a Markdown page."""
    extra = [f"- `{key}`: {value}" for key, value in out.items() if key.endswith(("convert_s", "install_s"))]
    return "\n".join([
        "# The local model's runtimes", "",
        f"Default runtime: `{out['default_runtime']}`. This CPU, measured in the same run: int8 matrix multiply "
        f"{out.get('matmul_int8_gop_s', '-')} GOP/s, float32 {out.get('matmul_f32_gflop_s', '-')} GFLOP/s, "
        f"memory bandwidth {out.get('bandwidth_gb_s', '-')} GB/s; load average {out.get('load_1min', '-')} at "
        f"the start and {out.get('load_1min_end', '-')} at the end ({int(out.get('cores', 0))} cores).", "",
        "Prompt evaluation in tokens/s at each prompt size, with its share of the int8 rate in parentheses; "
        "generation in tokens/s with its share of the memory bandwidth.", "",
        table(out, runtimes, models, sizes), "", *extra, ""])


if __name__ == "__main__":
    main()
