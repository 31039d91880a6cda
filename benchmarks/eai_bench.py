"""EAI VirtualHome action sequencing: prompt length for the local models, and the simulator's speed.

No LLM runs. For the first N tasks (default: all 342) it measures
- prompt tokens of EAI's task input alone and of HELPER's prompt (k cross-task examples, `pool.py`)
  with the local model's tokenizer (vocabulary only), hence the context length a run needs
  (prompt + the answer bound), against `LlamaCppChatModel`'s default n_ctx of 4096;
- how many gold programs repeat an action name (EAI's evaluator reads an answer with json.loads,
  which keeps one value per key, so such a program cannot be written in its response format);
- seconds per task to execute a gold program in `VirtualHomeEnv` and check EAI's goal, and per
  retrieval.
Run: `python benchmarks/eai_bench.py [--limit 100] [--k 3] [--llm local] [--json figures.json]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

from langchain_core.messages import HumanMessage, SystemMessage


def _tokenizer(llm: str):
    """The local model's tokenizer (vocab-only load: no weights evaluated)."""
    from llama_cpp import Llama

    from helper_agent.llm import assemble_local_model

    size = llm.partition(":")[2] or "0.5b"
    model = Llama(model_path=str(assemble_local_model(size)), vocab_only=True, verbose=False)
    return lambda text: len(model.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def _chat_tokens(count, messages) -> int:
    # Qwen's chat template: <|im_start|>role\n ... <|im_end|>\n per message, plus the assistant header
    return sum(count(str(m.content)) + 5 for m in messages) + 3


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--llm", default="local", help="local or local:1.5b (same tokenizer family)")
    parser.add_argument("--max-tokens", type=int, default=640)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()

    from helper_agent.envs.virtualhome import VirtualHomeEnv
    from helper_agent.evals.studies.eai.memory import GoldExamples, GoldMemory
    from helper_agent.evals.studies.eai.tasks import gold_lines, gold_steps, select_tasks
    from helper_agent.graphs.helper.sequence.prompts import build_prompt, system_prompt

    tasks = select_tasks(args.limit)
    count = _tokenizer(args.llm)
    started = time.perf_counter()
    memory = GoldMemory()
    index_seconds = time.perf_counter() - started
    lend = GoldExamples(tasks, memory)  # what HELPER's sequence writer is lent on EAI (graphs/helper/sequence)
    bare, helper, retrieval = [], [], []
    for task in tasks:
        bare.append(_chat_tokens(count, [SystemMessage(""), HumanMessage(task.prompt)]))
        t0 = time.perf_counter()
        examples = lend(task.identifier, task.goal_text, args.k)
        retrieval.append(time.perf_counter() - t0)
        vocabulary = VirtualHomeEnv(task.identifier).action_vocabulary()
        helper.append(_chat_tokens(count, [SystemMessage(system_prompt(vocabulary)),
                                           HumanMessage(build_prompt(task.prompt, examples))]))
    repeats = sum(len({a for a, _ in g}) < len(g) for g in (gold_steps(t.identifier) for t in tasks))
    sim, sim_ok = [], 0
    for task in tasks:
        t0 = time.perf_counter()
        env = VirtualHomeEnv(task.identifier)
        env.run(gold_lines(task.identifier))
        sim_ok += env.success()
        sim.append(time.perf_counter() - t0)

    def pct(values: list[float], q: float) -> float:
        return sorted(values)[min(int(q * len(values)), len(values) - 1)]

    figures = {
        "tasks": len(tasks),
        "k": args.k,
        "eai_prompt_tokens_mean": round(statistics.mean(bare), 1),
        "eai_prompt_tokens_p95": pct(bare, 0.95),
        "eai_prompt_tokens_max": max(bare),
        "helper_prompt_tokens_mean": round(statistics.mean(helper), 1),
        "helper_prompt_tokens_p95": pct(helper, 0.95),
        "helper_prompt_tokens_max": max(helper),
        "answer_tokens_bound": args.max_tokens,
        "n_ctx_needed": max(helper) + args.max_tokens,
        "tasks_over_default_n_ctx_4096": sum(h + args.max_tokens > 4096 for h in helper),
        "gold_programs_repeating_an_action_name": repeats,
        "gold_programs_reaching_eai_goal_in_simulator": sim_ok,
        "sim_seconds_per_task": round(statistics.mean(sim), 4),
        "retrieval_ms_per_task": round(1000 * statistics.mean(retrieval), 2),
        "index_seconds": round(index_seconds, 2),
    }
    for key, value in figures.items():
        print(f"{key:45s} {value}")
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(figures, handle, indent=1)


if __name__ == "__main__":
    main()
