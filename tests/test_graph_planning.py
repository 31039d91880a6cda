"""The graph's planning half used by the personalization experiment (fake chat model, real memories)."""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.evals.personalization import load_suite, score_program
from helper_agent.graphs.helper import HelperContext
from helper_agent.graphs.helper.planning import plan_program
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory


def _context(tmp_path: Path, responses: list[str]) -> HelperContext:
    embedder = get_embedder("local")  # recall of routines by paraphrase needs the real embeddings
    path = tmp_path / "memory"
    suite = load_suite()
    routines = RoutineMemory(path=path, embedder=embedder)
    for routine in suite.routines:
        routines.teach(routine.name, routine.program, routine.request, user=routine.user)
    return HelperContext(chat_model=FakeListChatModel(responses=responses), mode="eval", routines=routines,
                         examples=ExampleMemory(path=path, embedder=embedder), corrections=CorrectionMemory(path=path, embedder=embedder))


def test_unchanged_recall_reuses_the_routine_and_succeeds(tmp_path: Path) -> None:
    suite = load_suite()
    context = _context(tmp_path, ["this must not be used"])
    original = [r for r in suite.requests if r.category == "original"]
    reused = 0
    for req in original:
        routine = suite.routine(req.routine)
        program, log = plan_program(context, req.text, user=routine.user)
        if any(line.startswith("plan: recalled routine") for line in log):
            reused += 1
            assert program.strip() == routine.program.strip()
            assert score_program(req, program).success
    assert reused >= len(original) // 2
    assert context.usage.n_calls == len(original) - reused


def test_a_modified_request_asks_the_llm_with_the_routine_as_first_example(tmp_path: Path) -> None:
    suite = load_suite()
    req = next(r for r in suite.requests if r.category == "one")
    routine = suite.routine(req.routine)
    context = _context(tmp_path, ["```python\n" + req.program + "\n```"])
    program, log = plan_program(context, req.text, user=routine.user)
    assert "plan: attempt 1" in log and context.usage.n_calls == 1
    assert score_program(req, program).success
