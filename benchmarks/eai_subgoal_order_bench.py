"""How much of a `subgoals=on` row is the model's: the same agent with no model at all.

With `-o subgoals=on` (`graphs/declarations.py`) a method chooses among the subgoals the environment
names: each stated condition not met yet turned into the step that makes it true, each action goal
not done. This runs P-RAG with that switch on the first `--limit` EAI tasks with a scripted model that
always answers the **first subgoal listed** (the list's own order: the stated order, what moving about
undoes last, action goals after), and scores it with EAI's evaluator like any row. No LLM is loaded;
the seconds are the environment's.

If this row reaches what the LLM rows reach, the model's choices did not decide the tasks on that
slice: the environment's declarations did. With `--compare RUN ...` it also counts, for each of
those run folders, the tasks whose executed sequence differs from this row's.

    python benchmarks/eai_subgoal_order_bench.py --limit 100 --out runs/eai-first-listed \\
        --compare results/eai100/helper-closed-k3-cross-subgoals --json runs/first-listed.json
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

LISTED = re.compile(r"^Subgoals you can take now[^:]*: (.+)$", re.M)


class FirstListedSubgoal(BaseChatModel):
    """Answers the first subgoal the step's prompt lists (`named_steps.subgoal_lines`), as P-RAG's
    `Action: ...` line; `done()` when the prompt lists none."""

    @property
    def _llm_type(self) -> str:
        return "first-listed-subgoal"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        found = LISTED.findall(str(messages[-1].content))
        first = found[-1].split("; ")[0].strip() if found and found[-1].strip() != "none" else "done()"
        message = AIMessage(content=f"Action: {first}",
                            usage_metadata={"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=message)])


def executed(run: Path) -> dict[str, str]:
    """Each task's executed sequence (the scored `llm_output`) of a run folder."""
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    return {r["identifier"]: " ".join(str(r["llm_output"]).split()) for r in records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="Keep the run here (default: a temporary folder).")
    parser.add_argument("--compare", type=Path, nargs="*", default=[], help="run folders to compare sequences with")
    parser.add_argument("--json", type=Path, default=None, help="write the flat figures here")
    args = parser.parse_args()

    from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks
    from helper_agent.evals.studies.eai.table import table
    from helper_agent.evals.studies.eai.tasks import select_tasks

    out = args.out or Path(tempfile.mkdtemp(prefix="eai-first-listed-"))
    spec = EaiRunSpec(agent="prag", mode="closed-loop", llm="first-listed", limit=args.limit, skip=args.skip,
                      agent_options={"subgoals": "on"})
    folder = out / spec.row_name.removeprefix("ours-")
    run_tasks(spec, FirstListedSubgoal(), folder, tasks=select_tasks(args.limit, skip=args.skip))
    written = table([folder], out / "table", peers=False)
    row = next(r for r in written.rows if str(r["name"]).startswith("ours-"))
    figures: dict[str, float] = {key: row[key] for key in ("tasks", "kept", "task_success", "execution_success",
                                                          "full_sequence_success") if row.get(key) is not None}
    mine = executed(folder)
    for other in args.compare:
        theirs = executed(other)
        figures[f"differs_from:{other.name}"] = sum(1 for k, v in theirs.items() if mine.get(k) != v)
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(f"report: {written.report}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
