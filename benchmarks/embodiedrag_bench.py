"""EmbodiedRAG against the full scene graph as homes grow (Booker et al.'s claim).

For each N in `--n` (default 0,100,300,1000) distractor objects per scene, the same first `--limit`
valid_unseen TfD episodes (the built-in benchmark, seed 0, written with `--distractors N`) are run by
`--agent embodiedrag` twice: `graph=subgraph` (self-query, retrieved subgraph refreshed every step)
and `graph=full` (the whole known scene graph in every planning prompt). Figures per N and mode:

- prompt tokens per planning (ReAct) step, as the model reports them;
- seconds per step: the LLM call, and retrieval (memory sync excluded, it is the same for both);
- SR and GC; a full-graph prompt that no longer fits the model's context (n_ctx of the local model,
  4096) ends the episode as a failure of the baseline, as the paper counts it, and is reported
  (`*_context_overflows`, and the prompt size llama.cpp refused, `*_overflow_prompt_tokens`);
- `ratio_N*`: full-graph / subgraph prompt tokens per step; `step_time_saved_N*`: 1 - subgraph / full
  seconds per step;
- prompt tokens evaluated per LLM call: the local model serves the prefix a prompt shares with the
  previous one from its KV cache, and a full graph that did not change since the last step is such a
  prefix, so the tokens it evaluates (and its seconds) grow far less than the tokens it is shown.

`--cold` times the paper's setting, a model that evaluates every prompt token (an API, or a server
without prefix caching): the same cells with `HELPER_LLM_PREFIX_CACHE=false`, in `<cell>-cold` folders,
keys prefixed `cold_`. Use it on a few episodes (`--n 100 --limit 3 --cold`): the actions should be
those of the cached run (greedy decoding), and `cold_*_same_actions` counts the episodes where they are
(of `cold_*_compared_episodes`, those the cached cell has).

Two ways to run:
- with the real model (SR, GC, seconds need it):
  `flock /tmp/llm.lock python benchmarks/embodiedrag_bench.py --llm local --limit 20 --root runs/erag-bench
  --json runs/erag-bench/figures.json`; run folders make it resumable. `--reuse RUN` lets a cell adopt
  the episodes a `helper eval tfd --agent embodiedrag` run with the same settings already measured on
  byte-identical episode files (the seed-0 benchmark's first 20 are the N = 0 cell's).
- `--tokens-only`: no LLM. A scripted planner (it names the instruction's objects, then walks to the
  shown objects in turn) drives the episodes and every prompt is measured with the local model's
  tokenizer (llama.cpp, vocabulary only); a prompt beyond the context raises as llama.cpp does.
  Prompt sizes and retrieval seconds only (SR/GC of a scripted walker mean nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

DEFAULT_N = (0, 100, 300, 1000)
_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


class TokenMeter(BaseChatModel):
    """A scripted planner whose prompt sizes are measured with a real tokenizer (no generation).

    Self-query: the catalog classes the instruction names. ReAct: `goto` the shown objects in turn
    (it moves the agent, so it sees more of the home), `done()` after `max_steps`.
    """

    count: Any = None  # text -> token count
    n_ctx: int = 4096
    step: int = 0

    @property
    def _llm_type(self) -> str:
        return "token-meter"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        from helper_agent.graphs.embodiedrag.nodes import _needs
        from helper_agent.world.catalog import load_catalog

        tokens = sum(self.count(str(m.content)) + 4 for m in messages)
        if tokens > self.n_ctx:  # as llama.cpp: the prompt itself must fit (generation is cut short)
            raise ValueError(f"Requested tokens ({tokens}) exceed context window of {self.n_ctx}")
        system = str(messages[0].content)
        user = "\n".join(str(m.content) for m in messages[1:])
        if "name the objects" in system:
            request = user.split("Instruction:\n", 1)[-1].split("\n\nObjects:", 1)[0]
            labels = _needs(request, load_catalog().types)[:6] or ["counter top"]
            text = "\n".join(f"- {label}" for label in labels)
        else:
            graph = user.split("Scene graph:\n", 1)[1].split("\n\nHolding:", 1)[0]
            ids = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M)
            self.step += 1
            text = f"Thought: look at {ids[self.step % len(ids)]}\nAction: goto({ids[self.step % len(ids)]})" if ids \
                else "Thought: nothing known\nAction: done()"
        message = AIMessage(content=text, usage_metadata={"input_tokens": tokens, "output_tokens": 12, "total_tokens": tokens + 12})
        return ChatResult(generations=[ChatGeneration(message=message)])


def local_tokenizer(size: str = "0.5b") -> Any:
    """The local model's tokenizer (llama.cpp loads the vocabulary only)."""
    from llama_cpp import Llama

    from helper_agent.llm import assemble_local_model

    vocab = Llama(model_path=str(assemble_local_model(size)), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def ensure_bench(root: Path, n: int, limit: int) -> Path:
    from helper_agent.evals.benchmark import generate_benchmark

    path = root / f"bench-N{n}"
    manifest = path / "manifest.json"
    if manifest.exists():
        info = json.loads(manifest.read_text())
        if info.get("distractors") == n and info["splits"]["valid_unseen"]["tfd"] >= limit:
            return path
    generate_benchmark(path, seed=0, sizes={"valid_unseen": limit}, distractors=n, overwrite=True)
    return path


def reuse_records(source: Path, bench: Path, out: Path, graph: str, llm: str, max_steps: int, limit: int) -> int:
    """Adopt the episodes a `helper eval tfd --agent embodiedrag` run (`source`) already measured for
    one grid cell (`out`), so the same episode is not run twice: only with the cell's settings (graph,
    step limit, model, no feedback, no extra switches) and only episodes whose instance and game files
    are byte for byte the cell's (the grid's N = 0 benchmark holds the seed-0 benchmark's first
    episodes). Returns how many were adopted; a cell that already has records is left as it is."""
    from helper_agent.evals.engine.runner import instance_paths
    from helper_agent.evals.engine.spec import EvalSpec
    from helper_agent.evals.engine.store import ResultStore, read_records
    from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
    from helper_agent.teach.instances import instance_id_of

    if (out / "results.jsonl").exists():
        return 0
    theirs = json.loads((source / "spec.json").read_text())
    options = dict(theirs.get("agent_options") or {})
    steps = int(options.pop("max_steps", EmbodiedRAGConfig().max_steps))
    if (theirs.get("planner") != "embodiedrag" or theirs.get("mode") != "tfd" or theirs.get("feedback")
            or theirs.get("ablate") or theirs.get("llm") != llm or steps != max_steps
            or options.get("graph", "subgraph") != graph or set(options) - {"graph"}):
        return 0
    data = Path(theirs["data"])
    measured = {str(r["instance_id"]): r for r in read_records(source / "results.jsonl")}
    cell = EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", out=str(out), limit=limit)
    adopted = []
    for path in instance_paths(cell):
        record = measured.get(instance_id_of(path))
        split = path.parent.name
        same = [(path, data / "tfd_instances" / split / path.name),
                (bench / "games" / split / path.name.replace(".tfd.json", ".game.json"),
                 data / "games" / split / path.name.replace(".tfd.json", ".game.json"))]
        if record is not None and all(b.exists() and a.read_bytes() == b.read_bytes() for a, b in same):
            adopted.append(record)
    if not adopted:
        return 0
    out.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out / "results.jsonl")
    for record in adopted:
        store.append(record)
    (out / "adopted_from.json").write_text(json.dumps({"source": str(source), "episodes": len(adopted)}, indent=1))
    return len(adopted)


def run_mode(bench: Path, out: Path, graph: str, limit: int, llm: str, max_steps: int, chat: Any) -> list[dict[str, Any]]:
    from helper_agent.evals.engine.runner import run_eval
    from helper_agent.evals.engine.spec import EvalSpec
    from helper_agent.evals.engine.store import read_records

    spec = EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", out=str(out), limit=limit, llm=llm,
                    planner="embodiedrag", feedback=0, agent_options={"graph": graph, "max_steps": str(max_steps)})
    run_eval(spec, chat_model=chat)
    return list(read_records(out / "results.jsonl"))[:limit]


def cell_folder(root: Path, llm: str, graph: str, n: int, *, tokens_only: bool = False, cold: bool = False) -> Path:
    """A grid cell's run folder: `<root>/<model>/<graph>-N<n>[-cold]` (`tokens` for --tokens-only)."""
    model = "tokens" if tokens_only else llm.replace("/", "_").replace(":", "_")
    return root / model / f"{graph}-N{n}{'-cold' if cold else ''}"


def same_actions(records: list[dict[str, Any]], reference: list[dict[str, Any]]) -> tuple[int, int]:
    """How many of `records`' episodes took exactly the actions `reference` took in the same episode,
    of those both have."""
    theirs = {str(r["instance_id"]): r.get("pred_actions") for r in reference}
    shared = [r for r in records if str(r["instance_id"]) in theirs]
    return sum(r.get("pred_actions") == theirs[str(r["instance_id"])] for r in shared), len(shared)


def figures(records: list[dict[str, Any]]) -> dict[str, float]:
    """Per-step means weighted by steps, SR/GC, overflows, and the refused prompt sizes."""
    steps = sum(float(r.get("react_steps", 0) or 0) for r in records)

    def weighted(key: str) -> float:
        if not steps:
            return 0.0
        return sum(float(r.get(key, 0) or 0) * float(r.get("react_steps", 0) or 0) for r in records) / steps

    overflow_tokens = [int(m.group(1)) for r in records for line in r.get("log", []) for m in [_OVERFLOW.search(line)] if m]
    n = len(records) or 1
    calls = sum(int(r.get("llm_calls", 0) or 0) for r in records)
    return {
        "episodes": float(len(records)),
        "prompt_tokens_per_step": round(weighted("react_prompt_tokens"), 1),
        "llm_seconds_per_step": round(weighted("react_seconds"), 3),
        "retrieve_seconds_per_step": round(weighted("retrieve_seconds"), 4),
        "seconds_per_step": round(weighted("react_seconds") + weighted("retrieve_seconds"), 3),
        "prompt_tokens_evaluated_per_call": round(
            sum(float(r.get("prompt_tokens_evaluated", 0) or 0) for r in records) / calls, 1) if calls else 0.0,
        "entities_shown_per_step": round(weighted("entities_shown"), 1),
        "entities_known": round(sum(float(r.get("entities_known", 0) or 0) for r in records) / n, 1),
        "SR": round(100 * sum(float(r.get("success", 0) or 0) for r in records) / n, 2),
        "GC": round(100 * sum(float(r.get("goal_condition_success", 0) or 0) for r in records) / n, 2),
        "context_overflows": float(sum(int(r.get("context_overflow", 0) or 0) for r in records)),
        "overflow_prompt_tokens": round(sum(overflow_tokens) / len(overflow_tokens), 1) if overflow_tokens else 0.0,
        "errors": float(sum(1 for r in records if r.get("ended_by") == "error")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default=",".join(map(str, DEFAULT_N)), help="distractor counts, e.g. 0,100,300,1000")
    parser.add_argument("--limit", type=int, default=20, help="first N valid_unseen TfD episodes")
    parser.add_argument("--llm", default="local", help="chat model spec (ignored with --tokens-only)")
    parser.add_argument("--tokens-only", action="store_true", help="no LLM: scripted planner, prompts measured with the local tokenizer")
    parser.add_argument("--max-steps", type=int, default=30, help="ReAct steps per episode")
    parser.add_argument("--n-ctx", type=int, default=4096, help="--tokens-only: the context the prompts must fit")
    parser.add_argument("--root", default="runs/embodiedrag-bench", help="benchmarks and run folders (resumable)")
    parser.add_argument("--json", dest="json_path", default=None, help="write the flat figures here")
    parser.add_argument("--reuse", action="append", default=[], metavar="RUN",
                        help="a `helper eval tfd --agent embodiedrag` run whose episodes a grid cell with the same "
                             "settings and byte-identical episode files adopts instead of running them again")
    parser.add_argument("--cold", action="store_true",
                        help="evaluate every prompt token (no KV-cache prefix reuse), into <cell>-cold folders")
    args = parser.parse_args()
    if args.cold and args.tokens_only:
        parser.error("--cold times the model; --tokens-only runs none")
    if args.cold:  # read by make_chat_model when the harness builds the local model
        from helper_agent.config import get_settings

        os.environ["HELPER_LLM_PREFIX_CACHE"] = "false"
        get_settings.cache_clear()
    from helper_agent.evals.engine.store import read_records

    root = Path(args.root)
    prefix = "cold_" if args.cold else ""
    counts = [int(x) for x in args.n.split(",") if x.strip()]
    count = local_tokenizer() if args.tokens_only else None
    out: dict[str, float | str] = {"limit": float(args.limit), "max_steps": float(args.max_steps),
                                   "llm": "tokens-only" if args.tokens_only else args.llm}
    for n in counts:
        bench = ensure_bench(root, n, args.limit)
        per_mode = {}
        for graph in ("subgraph", "full"):
            chat = TokenMeter(count=count, n_ctx=args.n_ctx) if args.tokens_only else None
            folder = cell_folder(root, args.llm, graph, n, tokens_only=args.tokens_only, cold=args.cold)
            for source in ([] if args.tokens_only or args.cold else args.reuse):
                adopted = reuse_records(Path(source), bench, folder, graph, args.llm, args.max_steps, args.limit)
                if adopted:
                    print(f"{graph}-N{n}: {adopted} episodes adopted from {source}")
            records = run_mode(bench, folder, graph, args.limit, args.llm, args.max_steps, chat)
            per_mode[graph] = figures(records)
            for key, value in per_mode[graph].items():
                if args.tokens_only and key in ("SR", "GC", "llm_seconds_per_step", "seconds_per_step",
                                                "prompt_tokens_evaluated_per_call"):
                    continue
                out[f"{prefix}{graph}_N{n}_{key}"] = value
            warm = cell_folder(root, args.llm, graph, n) / "results.jsonl"
            if args.cold and warm.exists():
                same, shared = same_actions(records, list(read_records(warm)))
                out[f"cold_{graph}_N{n}_same_actions"] = float(same)
                out[f"cold_{graph}_N{n}_compared_episodes"] = float(shared)
                print(f"{graph}-N{n}: cold and cached runs took the same actions in {same} of {shared} episodes")
        sub, full = per_mode["subgraph"], per_mode["full"]
        full_tokens = max(full["prompt_tokens_per_step"], full["overflow_prompt_tokens"])
        out[f"{prefix}ratio_N{n}"] = round(full_tokens / sub["prompt_tokens_per_step"], 2) if sub["prompt_tokens_per_step"] else 0.0
        if not args.tokens_only and full["seconds_per_step"]:
            out[f"{prefix}step_time_saved_N{n}"] = round(1 - sub["seconds_per_step"] / full["seconds_per_step"], 3)
        print(f"N={n:5d}{' cold' if args.cold else ''}  subgraph {sub['prompt_tokens_per_step']:8.1f} tok/step  full {full_tokens:8.1f} tok/step "
              f"(x{out[f'{prefix}ratio_N{n}']})  overflows {int(full['context_overflows'])}/{int(full['episodes'])}"
              + ("" if args.tokens_only else
                 f"  s/step {sub['seconds_per_step']:.2f} vs {full['seconds_per_step']:.2f}  "
                 f"SR {sub['SR']:.1f} vs {full['SR']:.1f}  GC {sub['GC']:.1f} vs {full['GC']:.1f}  "
                 f"evaluated tok/call {sub['prompt_tokens_evaluated_per_call']:.0f} vs {full['prompt_tokens_evaluated_per_call']:.0f}"))
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(json.dumps(out, indent=1))
        print(f"figures: {args.json_path}")


if __name__ == "__main__":
    main()
