"""How closely each OpenVINO weight format writes what the GGUF file itself writes (issue 64).

The shipped models are GGUF files; llama.cpp runs them as they are, so its greedy programs are the
reference. Each OpenVINO folder (`gguf`: the file's own quantization read by GenAI; `int8`/`int4`:
dequantized by transformers and compressed again by nncf) writes programs for the same prompts, and
this script counts how many come out identical, and how many lines agree.

The prompts are HELPER's planner prompts (three packaged train examples as turns) for the first
`--cases` plain requests of the calibration suite of `helper eval requests` (never the reported one),
each written line by line under the program grammar (`decoding.ProgramDecoder`), greedy, as the agent
writes. It is an LLM job: run it alone, or under the machine's LLM lock.

    python benchmarks/weights_agreement_bench.py --model 0.5b --model 1.5b --json runs/agreement.json

Needs llama-cpp-python (`make install-llama`) for the reference, and makes any missing folder first
(`int8`/`int4` need `make install-converter`). `--json` writes a flat object: per model M and format F
`M:F:same_programs` (percent of prompts), `M:F:same_lines` (percent of the reference's lines written
identically at the same place) and `M:F:seconds_per_program`, plus `M:llama.cpp:seconds_per_program`
and `cases`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from helper_agent.decoding import ProgramDecoder, format_chat  # noqa: E402
from helper_agent.graphs.helper.prompts import planner_messages  # noqa: E402
from helper_agent.llm.gguf import assemble_local_model  # noqa: E402
from helper_agent.llm.inprocess import chat_messages  # noqa: E402
from helper_agent.llm.openvino_models import WEIGHT_FORMATS, prepare_openvino_model  # noqa: E402
from helper_agent.memory.examples import TRAIN_PROGRAMS_FILE  # noqa: E402

EXAMPLES = 3
CALIBRATION = "helper_agent/evals/studies/data/requests/calibration.jsonl"


def calibration_requests(cases: int) -> list[str]:
    """The first `cases` plain requests of the calibration suite, in file order."""
    rows = [json.loads(line) for line in (ROOT / CALIBRATION).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row["request"] for row in rows if row.get("kind") == "plain"][:cases]


def prompt_messages(request: str) -> list[dict[str, str]]:
    path = resources.files("helper_agent.prompts").joinpath("examples", TRAIN_PROGRAMS_FILE)
    shots = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return chat_messages(planner_messages(request, shots[:EXAMPLES]))


def programs(client: Any, prompt_of: Callable[[list[dict[str, str]]], str], requests: Sequence[str]) -> tuple[list[str], float]:
    """Each request's program, greedy under the grammar, and the mean seconds per program."""
    texts, started = [], time.perf_counter()
    for request in requests:
        texts.append(ProgramDecoder(client).decode(prompt_of(prompt_messages(request)), temperature=0.0, seed=0).text)
    return texts, (time.perf_counter() - started) / max(len(requests), 1)


def reference_programs(model: str, requests: Sequence[str], threads: int) -> tuple[list[str], float]:
    import llama_cpp  # deferred: `make install-llama`

    llm = llama_cpp.Llama(model_path=str(assemble_local_model(model)), n_ctx=8192, n_threads=threads,
                          n_threads_batch=threads, seed=0, verbose=False)
    try:
        return programs(llm, lambda messages: format_chat(llm, messages), requests)
    finally:
        llm.close()


def openvino_programs(model: str, weight_format: str, requests: Sequence[str], threads: int) -> tuple[list[str], float]:
    from helper_agent.llm.openvino_chat import OpenVINOContext  # deferred: the `local` extra

    context = OpenVINOContext(prepare_openvino_model(model, weight_format, log=True), threads)
    return programs(context, context.chat_prompt, requests)


def agreement(reference: Sequence[str], other: Sequence[str]) -> tuple[float, float]:
    """Percent of identical programs, and percent of the reference's lines written at the same place."""
    same = sum(a == b for a, b in zip(reference, other, strict=True))
    lines = matched = 0
    for a, b in zip(reference, other, strict=True):
        ref_lines, other_lines = a.splitlines(), b.splitlines()
        lines += len(ref_lines)
        matched += sum(x == y for x, y in zip(ref_lines, other_lines, strict=False))
    return 100.0 * same / max(len(reference), 1), 100.0 * matched / max(lines, 1)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=[], choices=("0.5b", "1.5b"))
    parser.add_argument("--weight-format", action="append", default=[], choices=WEIGHT_FORMATS)
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args(argv)
    requests = calibration_requests(args.cases)
    out: dict[str, Any] = {"cases": len(requests), "load_1min": round(os.getloadavg()[0], 2)}
    for model in args.model or ["0.5b"]:
        reference, seconds = reference_programs(model, requests, args.threads)
        out[f"{model}:llama.cpp:seconds_per_program"] = round(seconds, 2)
        print(f"{model} llama.cpp: {seconds:.2f} s per program", flush=True)
        for weight_format in args.weight_format or list(WEIGHT_FORMATS):
            texts, seconds = openvino_programs(model, weight_format, requests, args.threads)
            same, lines = agreement(reference, texts)
            out.update({f"{model}:{weight_format}:same_programs": round(same, 1),
                        f"{model}:{weight_format}:same_lines": round(lines, 1),
                        f"{model}:{weight_format}:seconds_per_program": round(seconds, 2)})
            print(f"{model} {weight_format}: {same:.1f} % identical programs, {lines:.1f} % of lines, "
                  f"{seconds:.2f} s per program", flush=True)
    out["load_1min_end"] = round(os.getloadavg()[0], 2)
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
