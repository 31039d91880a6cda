"""HELPER and LLM-Planner on EAI through the registry's graphs behave as the adapters that produced
the measured rows (`results/eai100`) did: the same prompts, grammars, temperatures and seeds sent to
the model, and the same records (the response EAI scores, the steps, attempts, re-plans, failures,
examples, the goal check).

The expected values in `tests/data/eai_seq_equivalence.json` were written by this test from the old
adapters (`eai/open_loop.py`, `eai/closed_loop.py`, `eai/llm_planner.py`, commit 58a7598), run with
`EAI_EQUIVALENCE_WRITE=1`, before the methods moved into `graphs/`; the old code is gone, the pinned
values stay. The chat model is scripted; it presents itself as an OpenAI-compatible client of a
server that takes grammars, so every grammar a method would send is recorded too.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("virtualhome_eval")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from helper_agent.config import get_settings  # noqa: E402
from helper_agent.evals.studies.eai.grammar import render  # noqa: E402
from helper_agent.evals.studies.eai.memory import GoldMemory  # noqa: E402
from helper_agent.evals.studies.eai.oracle import gold_replies  # noqa: E402
from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks  # noqa: E402
from helper_agent.evals.studies.eai.tasks import gold_steps, select_tasks  # noqa: E402
from helper_agent.memory.embeddings import HashEmbedder  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

PINNED = Path(__file__).parent / "data" / "eai_seq_equivalence.json"
IDS = ["11_1", "478_1", "1027_2"]
#: Record fields that measure the machine, not the method.
VOLATILE = {"seconds", "code", "llm_seconds_per_step", "prompt_tokens_per_step"}
CALLS: list[dict[str, Any]] = []  # what the scripted model was sent, call by call


class BaseChatOpenAI(FakeListChatModel):
    """Named as langchain-openai's client, so `llm.grammar_decoding` hands it the grammar it would send."""


class Recorder(BaseChatOpenAI):
    """Scripted answers; every call's messages (type and text) and decoding arguments, as digests."""

    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        grammar = (kwargs.get("extra_body") or {}).get("grammar", "")
        CALLS.append({
            "messages": [f"{m.type}:{_digest(str(m.content))}" for m in messages],
            "grammar": _digest(grammar) if grammar else "", "temperature": kwargs.get("temperature"),
            "seed": kwargs.get("seed"),
        })
        return super()._call(messages, stop, run_manager, **kwargs)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@pytest.fixture(autouse=True)
def _grammar_server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HELPER_LLM_GRAMMAR", "llama.cpp")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _gold(identifier: str) -> list[tuple[str, tuple[str, ...]]]:
    return gold_steps(identifier)


def _plan(steps) -> str:
    return ", ".join(" ".join([a, *args]) for a, args in steps)


def _scenarios() -> dict[str, tuple[EaiRunSpec, list[str], list[str], bool]]:
    """name -> (spec, task ids, scripted replies, with the cross-task gold memory)."""
    tasks = select_tasks(ids=IDS)
    gold = {t.identifier: _gold(t.identifier) for t in tasks}
    rendered = [render(gold[i]) for i in IDS]
    reversed_ = [render(list(reversed(gold[i]))) for i in IDS for _ in range(3)]
    lamp = gold["11_1"]
    return {
        "helper-open-k0": (EaiRunSpec(k=0), IDS, rendered, False),
        "helper-open-k3": (EaiRunSpec(k=3), IDS, rendered, True),
        "helper-open-retry": (EaiRunSpec(k=0), ["11_1"], ['{"FLY": ["moon"]}', render(lamp)], False),
        "helper-open-unparsable": (EaiRunSpec(k=0), ["11_1"], ["nonsense", "still nonsense"], False),
        "helper-closed-correct": (EaiRunSpec(mode="closed-loop", k=0), ["11_1"],
                                  [render([("SWITCHON", ("floor_lamp",))]), render(lamp)], False),
        "helper-closed-reversed": (EaiRunSpec(mode="closed-loop", k=0), IDS, reversed_, False),
        "helper-closed-k3": (EaiRunSpec(mode="closed-loop", k=3, max_replans=1), IDS, reversed_, True),
        "llmp-open-k0": (EaiRunSpec(agent="llm-planner", k=0), IDS, gold_replies("llm-planner", tasks), False),
        "llmp-open-k3": (EaiRunSpec(agent="llm-planner", k=3), IDS, gold_replies("llm-planner", tasks), True),
        "llmp-open-rejected": (EaiRunSpec(agent="llm-planner", k=0), ["11_1"], ["FLY moon", "WALK unicorn"], False),
        "llmp-closed-k0": (EaiRunSpec(agent="llm-planner", mode="closed-loop", k=0), IDS,
                           gold_replies("llm-planner", tasks), False),
        "llmp-closed-replan": (EaiRunSpec(agent="llm-planner", mode="closed-loop", k=0), ["11_1"],
                               [_plan([lamp[0], lamp[-1]]), _plan(lamp[1:])], False),
        "llmp-closed-k3-fails": (EaiRunSpec(agent="llm-planner", mode="closed-loop", k=3), IDS,
                                 [_plan(list(reversed(gold[i]))) for i in IDS for _ in range(3)], True),
    }


def _observe(name: str, tmp_path: Path, memory: GoldMemory) -> dict[str, Any]:
    spec, ids, replies, with_memory = _scenarios()[name]
    CALLS.clear()
    chat = Recorder(responses=replies)
    records = run_tasks(spec, chat, tmp_path / name, tasks=select_tasks(ids=ids), memory=memory if with_memory else None)
    kept = [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
    for record in kept:
        record["usage"] = {"llm_calls": record.get("usage", {}).get("llm_calls")}
    return {"records": json.loads(json.dumps(kept)), "calls": list(CALLS)}


@pytest.fixture(scope="module")
def memory() -> GoldMemory:
    return GoldMemory(embedder=HashEmbedder())


def test_write_the_old_adapters_values(tmp_path: Path, memory: GoldMemory) -> None:
    """Only with EAI_EQUIVALENCE_WRITE=1: run the scenarios and pin what they did."""
    if not os.environ.get("EAI_EQUIVALENCE_WRITE"):
        pytest.skip("writes the pinned values only when asked")
    PINNED.parent.mkdir(exist_ok=True)
    PINNED.write_text(json.dumps({name: _observe(name, tmp_path, memory) for name in _scenarios()}, indent=1) + "\n")


@pytest.mark.parametrize("name", list(_scenarios()))
def test_the_registry_path_does_what_the_old_adapters_did(name: str, tmp_path: Path, memory: GoldMemory) -> None:
    expected = json.loads(PINNED.read_text())[name]
    observed = _observe(name, tmp_path, memory)
    assert observed["calls"] == expected["calls"]  # the same prompts, grammars, temperatures and seeds
    assert len(observed["records"]) == len(expected["records"])
    for got, want in zip(observed["records"], expected["records"], strict=True):
        assert {key: got.get(key) for key in want} == want  # every field the old record had, equal
