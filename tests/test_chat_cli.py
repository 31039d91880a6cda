"""`helper chat` end to end from stdin, and a chat killed mid-task resuming from its SQLite checkpoint.

The chat model is LangChain's fake chat model (a test double) swapped in for the factory; the
household, graph, checkpointer and memories are real.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

COFFEE = 'mug = InteractionObject("Mug", attributes=["clean"])\\nmug.clean()\\ncm = InteractionObject("CoffeeMachine")\\nmug.pickup_and_place(cm)\\ncm.toggle_on()'

DRIVER = textwrap.dedent(
    """
    import json, os, signal, sys
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    import helper_agent.llm as llm

    responses = json.loads(sys.argv[1])
    kill_on = int(sys.argv[2])  # kill this process (SIGKILL) on that call number; 0 = never

    class Chat(FakeListChatModel):
        calls: int = 0
        def _call(self, *a, **k):
            self.calls += 1
            if self.calls == kill_on:
                os.kill(os.getpid(), signal.SIGKILL)
            return super()._call(*a, **k)

    llm.make_chat_model = lambda *a, **k: Chat(responses=responses)
    from helper_agent.cli import app
    app(sys.argv[3:], standalone_mode=True)
    """
)


def chat(tmp_path: Path, responses: list[str], stdin: str, kill_on: int = 0, user: str = "mary") -> subprocess.CompletedProcess:
    env = {"HELPER_HOME": str(tmp_path / "home"), "HELPER_EMBEDDINGS": "hash", "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    args = ["chat", "--user", user, "--scene", "3", "--home", str(tmp_path / "home")]
    return subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(responses), str(kill_on), *args],
        input=stdin, capture_output=True, text=True, timeout=300, env=env,
    )


def fenced(program: str) -> str:
    return "```python\n" + program.replace("\\n", "\n") + "\n```"


def test_scripted_chat_teaches_and_lists_a_routine(tmp_path: Path) -> None:
    result = chat(tmp_path, [fenced(COFFEE), "Cabinet"], "Perform the morning coffee: make me a coffee\nyes\n/routines\n/state\n/quit\n")
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "Is the task completed to your satisfaction?" in out
    assert "memorize: routine 'the morning coffee'" in out
    assert "the morning coffee (v" in out  # /routines shows it
    assert "holding" in out  # /state


def test_chat_killed_mid_task_resumes_from_checkpoint(tmp_path: Path) -> None:
    # First process: plan (call 1), then killed while the locator asks the LLM (call 2).
    first = chat(tmp_path, [fenced(COFFEE), "Cabinet"], "make me a coffee\n", kill_on=2)
    assert first.returncode == -9
    assert "execute: not_found" in first.stdout
    # Second process: the same household thread resumes at the interrupted node; the plan is
    # not asked for again (the only scripted answer is the locator's).
    second = chat(tmp_path, ["Cabinet"], "yes\n/quit\n")
    assert second.returncode == 0, second.stderr[-3000:]
    out = second.stdout
    assert "resuming the request that was interrupted" in out
    assert "locate: Mug found" in out
    assert "execute: done" in out
    assert "plan: attempt" not in out
