"""Routine recall and adaptation in the personalization suite, with a scripted chat model and the
real memories, graph, environment and harness.

The LLM sees every request unless the fast path is on, and the fast path reuses a routine only for
a request that is exactly the routine's name (or its teaching request): nothing fitted to the suite.
These tests drive the planner's whole-program rewrite of a routine (`routine_edits=False`, the path
before adaptation by edits); the edits are tested in test_graph_adapt.py.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import Field

from helper_agent.evals.studies.personalization import load_suite, run_suite
from helper_agent.graphs.helper import HelperConfig
from helper_agent.graphs.helper.agent import HelperAgent, Memories
from helper_agent.graphs.helper.prompts import load_adaptation_examples
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory


def _memories(tmp_path: Path) -> Memories:
    embedder = get_embedder("local")  # recall of routines by paraphrase needs the real embeddings
    path = tmp_path / "memory"
    routines = RoutineMemory(path=path, embedder=embedder)
    for routine in load_suite().routines:
        routines.teach(routine.name, routine.program, routine.request, user=routine.user)
    return Memories(ExampleMemory(path=path, embedder=embedder), CorrectionMemory(path=path, embedder=embedder), routines)


def _agent(tmp_path: Path, responses: list[str], fast_path: bool) -> HelperAgent:
    config = HelperConfig(feedback_rounds=0, routine_fast_path=fast_path, correction=False, routine_edits=False)
    return HelperAgent(FakeListChatModel(responses=responses), _memories(tmp_path), config)


def _fence(program: str) -> str:
    return f"```python\n{program}\n```"


def test_without_the_fast_path_every_request_goes_to_the_llm(tmp_path: Path) -> None:
    suite = load_suite()
    for n, req in enumerate([r for r in suite.requests if r.category == "original"][:2]):
        routine = suite.routine(req.routine)
        agent = _agent(tmp_path / str(n), [_fence(routine.program)], fast_path=False)
        score = run_suite(agent, [req], suite=suite).scores[0]
        assert score.llm_calls >= 1  # the plan, even for an unchanged recall
        assert score.program.strip() == routine.program.strip() and score.success


def test_fast_path_reuses_a_routine_only_for_an_exact_invocation(tmp_path: Path) -> None:
    suite = load_suite()
    routine = suite.routines[0]
    original = next(r for r in suite.requests if r.routine == routine.name and r.category == "original")
    exact = original.model_copy(update={"text": f"Do {routine.name}"})
    agent = _agent(tmp_path, ["this must not be used"], fast_path=True)
    result = run_suite(agent, [exact], suite=suite)
    assert result.scores[0].llm_calls == 0 and result.scores[0].success
    assert result.scores[0].program.strip() == routine.program.strip()


def test_a_modified_request_is_adapted_by_the_llm_from_the_routine(tmp_path: Path) -> None:
    suite = load_suite()
    req = next(r for r in suite.requests if r.category == "one")
    agent = _agent(tmp_path, [_fence(req.program)], fast_path=True)
    result = run_suite(agent, [req], suite=suite)
    score = result.scores[0]
    assert score.llm_calls == 1 and score.success


class _RecordingChat(FakeListChatModel):
    """A fake chat model that keeps the messages of every call."""

    seen: list = Field(default_factory=list)

    def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[override]
        self.seen.append(list(messages))
        return super()._call(messages, stop, run_manager, **kwargs)


def test_the_recalled_routine_and_the_request_are_the_last_turn(tmp_path: Path) -> None:
    suite = load_suite()
    req = next(r for r in suite.requests if r.category == "two")
    routine = suite.routine(req.routine)
    chat = _RecordingChat(responses=[_fence(req.program)])
    config = HelperConfig(feedback_rounds=0, routine_fast_path=False, correction=False, routine_edits=False)
    run_suite(HelperAgent(chat, _memories(tmp_path), config), [req], suite=suite)
    messages = chat.seen[0]
    last = messages[-1].content
    assert routine.program.strip() in last and req.text in last and routine.request in last
    shots = load_adaptation_examples()
    # the fixed adaptation turns come straight after the system prompt (a prefix the KV cache keeps)
    for n, shot in enumerate(shots):
        assert shot.request in messages[1 + 2 * n].content and messages[2 + 2 * n].content.count(shot.program.strip()) == 1
    # then the retrieved examples: ordinary dialogue turns
    assert messages[1 + 2 * len(shots)].content.startswith("Dialogue:")


def test_a_request_without_a_routine_gets_the_ordinary_prompt(tmp_path: Path) -> None:
    chat = _RecordingChat(responses=[_fence('mug = InteractionObject("Mug")\nmug.pickup()')])
    config = HelperConfig(feedback_rounds=0, routine_fast_path=False, correction=False, routine_edits=False)
    agent = HelperAgent(chat, _memories(tmp_path), config)
    suite = load_suite()
    req = suite.requests[0].model_copy(update={"text": "Please pick up the mug."})
    run_suite(agent, [req], suite=suite)
    assert all("taught you the routine" not in str(m.content) for m in chat.seen[0])
