"""Replay calibration cases with a scripted first program (the agent's later rounds are its own)."""
import json, sys, tempfile
from pathlib import Path
from typing import Any
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from helper_agent.chat_runtime import ChatAgent, ChatRuntime, chat_config
from helper_agent.evals.studies.requests import load_suite, run_case
import os
os.environ["HELPER_EMBEDDINGS"] = "hash"

class Chat(FakeListChatModel):
    def _call(self, messages: Any, *a: Any, **k: Any) -> str:
        first = str(messages[0].content)
        if first.startswith("A household robot finished a task"):
            said = str(messages[-1].content).removeprefix("Answer: ").strip().lower()
            return "satisfied" if said.startswith(("yes", "y")) else "not satisfied"
        if any("You help a household robot find an object" in str(m.content) for m in messages):
            return "Cabinet, Drawer, Fridge, CounterTop, DiningTable"
        if self.i >= len(self.responses):
            return "```python\n" + self.responses[-1] + "\n```"
        return super()._call(messages, *a, **k)

cases = {c.id: c for c in load_suite("calibration").cases}
scripts = json.load(open(sys.argv[1]))
for cid, programs in scripts.items():
    with tempfile.TemporaryDirectory() as tmp:
        rt = ChatRuntime.open(Path(tmp) / "home")
        try:
            chat = Chat(responses=["```python\n" + p + "\n```" for p in programs])
            rec = run_case(cases[cid], ChatAgent(rt, chat, chat_config()))
        finally:
            rt.close()
    for p in rec.get("requests", []):
        print(cid, p["part"], "first", p["first_try"], "success", p["success"], p["outcome"], p["claim"], "steps", p["steps"], [r["answer"] for r in p["rounds"]], [c['answer'] for c in p['confirmations']])
        for line in p["log"]:
            if line.startswith(("replan", "execute", "locate", "memorize", "validate")): print("   |", line[:200])
        if p["part"] == "request": print("   program:", p["program"].replace("\n", " / ")[:300])
    print("   ", {k: rec.get(k) for k in ("first_try_success", "corrected_success", "taught_replayed", "false_claims", "unasked_changes")}, rec.get("error"))
