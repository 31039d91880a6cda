"""The EAI adapters end to end with ORACLE answers: every method's row on real EAI tasks, no LLM.

Each adapter (LLM-Planner open and closed loop, P-RAG, EmbodiedRAG with the subgraph and with the
full graph) runs on the first `--limit` EAI tasks with a scripted model that answers each task's
gold sequence in the method's own form (`evals/studies/eai/oracle.py`); the runs are scored by EAI's
evaluator beside the 15 packaged LLMs in one table (`helper eval eai-table`). It checks that
prompts, grammars, parsers, acting in VirtualHome and scoring carry a right answer intact: an ORACLE
row below 100% task success on the tasks EAI keeps is a bug of the adapter (or of the gold).

Each prompt is measured with the local model's tokenizer (llama.cpp, vocabulary only, nothing is
generated), so prompt tokens per step are the real figures of these prompts; EmbodiedRAG's subgraph
vs full graph differ in exactly that. Seconds are the adapters' own (environment, retrieval,
embedding), the LLM's are not in them.

    python benchmarks/eai_methods_bench.py --limit 100 --out runs/eai-oracle100 --json /tmp/eai.json

EAI's evaluator needs tasks with node, edge and action goals among those it keeps: the first 100
have them, the first 50 as it keeps them do not (the table then stops with that message; the runs are kept).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

ROWS: list[tuple[str, str, dict[str, str]]] = [
    ("llm-planner", "open-loop", {}),
    ("llm-planner", "closed-loop", {}),
    ("prag", "closed-loop", {}),
    ("embodiedrag", "closed-loop", {"graph": "subgraph"}),
    ("embodiedrag", "closed-loop", {"graph": "full"}),
]


class OracleChat(BaseChatModel):
    """Answers from a list in order; every prompt's tokens counted with `count` (0 without one)."""

    replies: list[str] = []
    count: Any = None
    index: int = 0

    @property
    def _llm_type(self) -> str:
        return "eai-oracle"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        tokens = len(self.count(text)) if self.count else 0
        answer = self.replies[self.index] if self.index < len(self.replies) else "done()"
        self.index += 1
        message = AIMessage(content=answer, usage_metadata={"input_tokens": tokens, "output_tokens": 8,
                                                            "total_tokens": tokens + 8})
        return ChatResult(generations=[ChatGeneration(message=message)])


def tokenizer() -> Any:
    try:
        from llama_cpp import Llama

        from helper_agent.llm import assemble_local_model

        vocab = Llama(model_path=str(assemble_local_model("0.5b")), vocab_only=True, verbose=False)
    except Exception as exc:  # noqa: BLE001 - no llama.cpp or no model: prompts are not measured
        print(f"prompt tokens not measured: {exc}")
        return None
    return lambda text: vocab.tokenize(text.encode("utf-8"), add_bos=False, special=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None, help="Keep the runs here (default: a temporary folder).")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()

    from helper_agent.evals.studies.eai.oracle import gold_replies
    from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks
    from helper_agent.evals.studies.eai.table import table
    from helper_agent.evals.studies.eai.tasks import select_tasks

    out = args.out or Path(tempfile.mkdtemp(prefix="eai-oracle-"))
    tasks = select_tasks(args.limit)
    count = tokenizer()
    folders = []
    for agent, mode, options in ROWS:
        spec = EaiRunSpec(agent=agent, mode=mode, llm="oracle", k=0, limit=args.limit, agent_options=options)
        folder = out / spec.row_name.removeprefix("ours-")
        for task in tasks:  # one scripted model per task: a rejected answer cannot shift the next task's
            chat = OracleChat(replies=gold_replies(agent, [task], graph=options.get("graph", "subgraph")), count=count)
            run_tasks(spec, chat, folder, tasks=[task])
        folders.append(folder)
        print(f"ran {spec.row_name}")
    written = table(folders, out / "table", peers=not args.no_peers)
    rows, report = written.rows, written.report
    figures: dict[str, float] = {}
    for r in rows:
        if not str(r["name"]).startswith("ours-"):
            continue
        name = str(r["name"]).removeprefix("ours-").replace("-oracle", "")
        for key in ("task_success", "execution_success", "full_sequence_success", "prompt_tokens_per_step",
                    "seconds_per_step", "seconds_per_task", "llm_calls_per_task", "entities_shown_per_step"):
            if r.get(key) is not None:
                figures[f"{name}_{key}"] = r[key]
        figures["tasks"] = r["tasks"]
        figures["kept"] = r.get("kept") or 0
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(f"report: {report}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
