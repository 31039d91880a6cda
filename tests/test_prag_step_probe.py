"""benchmarks/prag_step_probe.py: replaying a recorded P-RAG run rebuilds the very prompts its agent saw,
and the prompt variants change only what they say they change."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from scripts import load_script

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec


def _probe_module() -> ModuleType:
    return load_script("benchmarks/prag_step_probe.py")  # registered: pydantic resolves annotations through it


class Wanderer(BaseChatModel):
    """Walks to a shown object out of reach, or picks up the first in reach, and keeps its prompts;
    once refused, it says `done()`."""

    prompts: list[list[str]] = []

    @property
    def _llm_type(self) -> str:
        return "wanderer"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.prompts.append([str(m.content) for m in messages])
        if len(messages) > 2:  # refused: finish (a step never answered validly is not replayed word for word)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Action: done()"))])
        user = str(messages[1].content)
        graph = user.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
        ids = re.findall(r"^([A-Za-z]+_\d+)(?::([^\n]*))?$", graph, re.M)
        far = [i for i, states in ids if "in reach" not in (states or "")]
        near = [i for i, states in ids if "in reach" in (states or "")]
        turn = len(self.prompts) % 3
        text = f"goto({far[0]})" if far and turn else (f"pickup({near[0]})" if near else "done()")
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=f"Action: {text}"))])


def test_the_replay_rebuilds_every_prompt_of_the_recorded_run(tmp_path: Path) -> None:
    data = tmp_path / "bench"
    generate_benchmark(data, seed=0, sizes={"valid_unseen": 2})
    chat = Wanderer(prompts=[])
    run = tmp_path / "run"
    run_eval(EvalSpec(mode="tfd", data=str(data), split="valid_unseen", out=str(run), limit=2, planner="prag",
                      feedback=0, agent_options={"max_steps": "6"}), chat_model=chat)
    probe = _probe_module()
    rebuilt = probe.rebuild_prompts(run, str(data), "valid_unseen")
    first_attempts = [p for p in chat.prompts if len(p) == 2]
    assert len(first_attempts) < len(chat.prompts)  # some answers were refused and asked again
    assert [[content for _, content in p["messages"]] for p in rebuilt] == first_attempts
    assert {p["episode"] for p in rebuilt} == {0, 1} and rebuilt[0]["step"] == 0


def test_the_variants_change_only_the_instruction_or_the_remembered_line() -> None:
    probe = _probe_module()
    user = ("Instruction:\nmake coffee\n\nPast episodes:\n(none yet)\n\nScene graph:\nMug_1: in reach\nHolding: nothing\n"
            "Seen before, out of view (goto only): Cup_1-2, Sink_1\n\nStep 2 of 30. Next action:")
    messages = [["system", "S"], ["human", user]]
    instructions = {0: "Instruction:\nmake coffee", 1: "Instruction:\nwater the plant"}
    swapped = probe.variant("swapgoal", messages, instructions, 0)[1]["content"]
    assert swapped == user.replace("make coffee", "water the plant")
    removed = probe.variant("norem", messages, instructions, 0)[1]["content"]
    assert "Seen before" not in removed and removed == user.replace("Seen before, out of view (goto only): Cup_1-2, Sink_1\n", "")
    assert probe.variant("base", messages, instructions, 0)[1]["content"] == user
    assert probe.total_variation({"goto": 0.7, "pickup": 0.3}, {"goto": 0.2, "done": 0.8}) == 0.8
