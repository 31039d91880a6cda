"""Calibration cases through `helper eval requests`' own code with a scripted first program.

The chat model writes only the programs given per case (the last one again if asked for more); the
person's answers are read as the model's reader would ("yes ..." satisfied, anything else not); the
locator gets a fixed list of places. Everything after the first round is then the agent's own: with
`missing_parts` on, the correction is read from the person's words.

    PYTHONPATH=$PWD python results/requests/rounds-calibration/scripted_replay.py <case -> programs JSON>
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.chat_runtime import ChatAgent, ChatRuntime, chat_config
from helper_agent.evals.studies.requests import load_suite, run_case

READER = "A household robot finished a task"
LOCATOR = "You help a household robot find an object"
FIGURES = ("first_try_success", "corrected_success", "taught_replayed", "false_claims", "unasked_changes")


class Chat(FakeListChatModel):
    """The scripted programs, a reader of the person's answers and a locator with fixed places."""

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        if str(messages[0].content).startswith(READER):
            said = str(messages[-1].content).removeprefix("Answer: ").strip().lower()
            return "satisfied" if said.startswith("y") else "not satisfied"
        if any(LOCATOR in str(m.content) for m in messages):
            return "Cabinet, Drawer, Fridge, CounterTop, DiningTable"
        if self.i >= len(self.responses):
            return self.responses[-1]
        return super()._call(messages, *args, **kwargs)


def main(path: str) -> None:
    os.environ["HELPER_EMBEDDINGS"] = "hash"
    cases = {c.id: c for c in load_suite("calibration").cases}
    for cid, programs in json.loads(Path(path).read_text()).items():
        with tempfile.TemporaryDirectory() as tmp:
            runtime = ChatRuntime.open(Path(tmp) / "home")
            try:
                chat = Chat(responses=[f"```python\n{p}\n```" for p in programs])
                record = run_case(cases[cid], ChatAgent(runtime, chat, chat_config()))
            finally:
                runtime.close()
        for part in record.get("requests", []):
            answers = [r["answer"] for r in part["rounds"]]
            print(cid, part["part"], "first", part["first_try"], "success", part["success"], part["outcome"],
                  part["claim"], "steps", part["steps"], answers, [c["answer"] for c in part["confirmations"]])
            for line in part["log"]:
                if line.startswith(("replan", "execute", "locate", "memorize", "validate")):
                    print("   |", line[:200])
        print("   ", {key: record.get(key) for key in FIGURES}, record.get("error"))


if __name__ == "__main__":
    main(sys.argv[1])
