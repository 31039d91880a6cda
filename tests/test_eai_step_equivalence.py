"""P-RAG and EmbodiedRAG on EAI run the registry's graphs (`graphs/prag`, `graphs/embodiedrag`) through
the one harness, and behave exactly as EAI's own adapters did when `results/eai100` was measured.

The expected values below were produced by those adapters (`evals/studies/eai/prag.py` and
`embodiedrag.py`, deleted since) on the same scripted answers: every prompt the model was sent, the
grammar and sampling settings of every call (as an OpenAI-compatible server would get them), the
executed steps, EAI's response, the goal check, the retrieved episodes and the trajectory. A change
to any prompt, grammar, parser or step of the loop changes a digest here.

One case cannot be pinned whole: EmbodiedRAG's retrieved subgraph differs by an entity now and then
between two processes of the old adapter itself (the same scripted answers gave 6.0 and 6.2 entities
per step under PYTHONHASHSEED 1 and 2), so for it the subgraph's size and its prompts are not
compared; what it did (steps, trajectory, response, success) is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

import helper_agent.llm.decoding_args as decoding_args  # noqa: E402
from helper_agent.config import get_settings  # noqa: E402
from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks  # noqa: E402
from helper_agent.evals.studies.eai.tasks import gold_steps, select_tasks  # noqa: E402
from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

EXPECTED = Path(__file__).resolve().parent / "data" / "eai_step_equivalence.json"
VARYING = {"embodiedrag-subgraph": ("entities_shown_per_step", "prompt_chars_per_step")}  # see the docstring
KEPT = ("llm_output", "steps", "sequence_success", "examples", "trajectory", "failures", "attempts", "decisions",
        "rejected", "outcome", "replans", "refused_steps", "graph", "entities_shown_per_step", "prompt_chars_per_step")


def _text(step: tuple[str, tuple[str, ...]] | list[Any]) -> str:
    return f"{step[0]}({', '.join(step[1])})"


def _gold(task_id: str) -> list[str]:
    return [_text(s) for s in gold_steps(task_id)]


class Recording(FakeListChatModel):
    """Scripted answers; keeps every call: the prompt and the grammar, temperature and seed it got."""

    calls: list[list[Any]] = []

    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        grammar = (kwargs.get("extra_body") or {}).get("grammar", "")
        self.calls.append(["\n".join(f"{m.type}: {m.content}" for m in messages), grammar,
                           kwargs.get("temperature"), kwargs.get("seed")])
        return super()._call(messages, stop, run_manager, **kwargs)


def _database(folder: Path) -> str:
    """Two episodes of other tasks, one done: what an iteration's database holds."""
    memory = ExperienceMemory(path=str(folder))
    records = []
    for n, task in enumerate(select_tasks(ids=["27_2", "417_1"])):
        steps = [ExperienceStep(scene_graph=f"scene of step {i}", action=a, observation="ok")
                 for i, a in enumerate(_gold(task.identifier))]
        records.append(Experience(id=f"r0:{task.identifier}", goal=task.goal_text, steps=steps, done=n == 0,
                                  info={"task": task.identifier, "iteration": 0}))
    memory.commit_iteration(records)
    return str(folder)


def _cases(tmp: Path) -> dict[str, tuple[str, dict[str, str], str, list[str]]]:
    """name -> (agent, switches, task, answers)."""
    far = "Action: SWITCHON(floor_lamp)"  # before walking to it: fails, changes nothing
    lamp = _gold("11_1")
    return {
        "prag-failure-then-gold": ("prag", {}, "11_1", [far, *(f"Action: {s}" for s in lamp), "Action: done()"]),
        "prag-database-goal+scene": ("prag", {"database": _database(tmp / "db1"), "k": "2"}, "478_1",
                                     [*(f"Action: {s}" for s in _gold("478_1")), "Action: done()"]),
        "prag-goal-thought-refuse": ("prag", {"database": _database(tmp / "db2"), "retrieval": "goal",
                                              "answer": "thought", "refuse_futile": "on", "max_steps": "6"}, "11_1",
                                     [f"Thought: lamp\n{far}", f"Thought: again\n{far}", "no answer at all",
                                      f"Thought: walk\nAction: {lamp[0]}", "Thought: stop\nAction: done()"]),
        "prag-step-cap": ("prag", {"max_steps": "3"}, "1027_2", [f"Action: {_gold('1027_2')[0]}"] * 3),
        "embodiedrag-subgraph": ("embodiedrag", {}, "11_1",
                                 ["- floor lamp\n- bedroom", *(f"Thought: next\nAction: {s}" for s in lamp),
                                  "Thought: all done\nAction: done()"]),
        "embodiedrag-full-refuse": ("embodiedrag", {"graph": "full", "refuse_futile": "on", "max_steps": "5"}, "11_1",
                                    [f"Thought: on\n{far}", f"Thought: on\n{far}", "Thought: walk\nAction: WALK(bedroom)",
                                     "Thought: stop\nAction: done()"]),
    }


def _digest(calls: list[list[Any]]) -> str:
    return hashlib.sha256(json.dumps(calls).encode("utf-8")).hexdigest()[:20]


def observed(tmp: Path) -> dict[str, Any]:
    """What each case did: the record's fields EAI's table, report and progressive read, and the calls."""
    out: dict[str, Any] = {}
    for name, (agent, options, task_id, answers) in _cases(tmp).items():
        chat = Recording(responses=answers)
        chat.calls = []
        spec = EaiRunSpec(agent=agent, mode="closed-loop", k=0, agent_options=options)
        record = run_tasks(spec, chat, tmp / name, tasks=select_tasks(ids=[task_id]))[0]
        kept = {key: record[key] for key in KEPT if key in record}
        kept["steps"] = [[a, list(args)] for a, args in kept["steps"]]
        kept["llm_calls"] = record["usage"]["llm_calls"]
        out[name] = {"record": kept, "calls": len(chat.calls), "calls_digest": _digest(chat.calls),
                     "first_prompt": chat.calls[0][0], "first_grammar": chat.calls[0][1]}
    return out


@pytest.fixture()
def served_grammar(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every call gets its grammar as a llama.cpp server would (so the grammars are compared too)."""
    monkeypatch.setenv("HELPER_LLM_GRAMMAR", "llama.cpp")
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    monkeypatch.setattr(decoding_args, "is_openai_client", lambda chat: isinstance(chat, Recording))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_the_registry_graphs_do_on_eai_what_eais_own_adapters_did(served_grammar: None, tmp_path: Path) -> None:
    got = observed(tmp_path)
    expected = json.loads(EXPECTED.read_text())
    assert sorted(got) == sorted(expected)
    for name in expected:
        varying = VARYING.get(name, ())
        mine = {k: v for k, v in got[name]["record"].items() if k not in varying}
        assert mine == {k: v for k, v in expected[name]["record"].items() if k not in varying}, name
        assert set(got[name]["record"]) == set(expected[name]["record"]), name
        assert got[name]["first_prompt"] == expected[name]["first_prompt"], name
        assert got[name]["first_grammar"] == expected[name]["first_grammar"], name
        assert got[name]["calls"] == expected[name]["calls"], name
        if not varying:
            assert got[name]["calls_digest"] == expected[name]["calls_digest"], name
