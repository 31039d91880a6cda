"""How much of a built-in benchmark `subgoals=on` row is the model's: the same agent with no model.

On the embedded world `-o subgoals=on` (`graphs/declarations.py`) makes a step-wise method choose
among the request's open parts: what the shared reading (`understanding/parts.py`) finds the words
ask and the household does not show yet, each acted out by the shared executor. This runs P-RAG (or
EmbodiedRAG, `--agent`) with that switch on a TfD split with a scripted model that always answers the
**first part listed** (the reading's order), and scores it with the harness like any row. No LLM is
loaded; where no part is open the scripted model answers `done()`, so the row shows what the parts
alone reach.

    python benchmarks/tfd_subgoal_order_bench.py --data /tmp/bench --split valid_seen --limit 50 \\
        --out runs/tfd-first-listed --json runs/tfd-first-listed.json
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

LISTED = re.compile(r"^Subgoals you can take now[^:]*\): (.+)$", re.M)


class FirstListedPart(BaseChatModel):
    """Answers the first part the step's prompt lists (`declarations.part_lines`) as `Action:
    subgoal(...)` (with a `Thought:` line first when the prompt is a ReAct one); `done()` when it
    lists none."""

    @property
    def _llm_type(self) -> str:
        return "first-listed-part"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        found = LISTED.findall(text)
        action = f"subgoal({found[-1].split('; ')[0].strip()})" if found and found[-1].strip() != "none" else "done()"
        react = "Thought:" in text
        content = (f"Thought: the first listed\nAction: {action}" if react else f"Action: {action}")
        message = AIMessage(content=content, usage_metadata={"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=message)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a built-in benchmark folder (`helper benchmark generate`)")
    parser.add_argument("--split", default="valid_seen")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--agent", default="prag", choices=("prag", "embodiedrag"))
    parser.add_argument("--out", type=Path, default=None, help="Keep the run here (default: a temporary folder).")
    parser.add_argument("--json", type=Path, default=None, help="write the flat figures here")
    args = parser.parse_args()

    from helper_agent.evals.engine.runner import run_eval
    from helper_agent.evals.engine.spec import EvalSpec

    out = args.out or Path(tempfile.mkdtemp(prefix="tfd-first-listed-"))
    spec = EvalSpec(mode="tfd", data=args.data, split=args.split, out=str(out), limit=args.limit, llm="first-listed",
                    feedback=0, planner=args.agent, agent_options={"subgoals": "on"})
    metrics = run_eval(spec, chat_model=FirstListedPart())
    overall = metrics["overall"]
    figures = {"episodes": overall["episodes"], "success_rate": overall["SR"], "goal_conditions": overall["GC"],
               "plw_success_rate": overall["PLW_SR"]}
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(f"run: {out}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
