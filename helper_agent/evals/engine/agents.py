"""The oracles and baselines the harness runs beside the methods (`graphs/registry.py`).

They follow the agent protocol of `graphs/base.py`; only oracles are handed the episode's
reference (the gold program, the reference future actions), and every output labels them ORACLE.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.graphs.base import AgentResult, EpisodeSetup, Reference
from helper_agent.graphs.helper import HelperConfig
from helper_agent.graphs.helper.agent import HelperAgent, Memories
from helper_agent.program import ProgramError, compile_program
from helper_agent.tools.executor import Executor, ExecutorConfig


def oracle_chat_model(program: str) -> BaseChatModel:
    """A LangChain fake chat model that answers every call with `program` (so it is traced and
    counted like any model)."""
    return FakeListChatModel(responses=[f"```python\n{program}\n```"])


class OracleGraphAgent:
    """ORACLE: the full HELPER graph whose chat model answers every call with the gold program.
    It measures the graph and executor without LLM time."""

    name = "oracle-graph"
    oracle = True

    def __init__(self, memories: Memories, config: HelperConfig | None = None) -> None:
        self.helper = HelperAgent(oracle_chat_model(""), memories, config, name=self.name)

    def run(self, setup: EpisodeSetup) -> AgentResult:
        if setup.reference is None or not setup.reference.gold_program:
            raise ValueError(f"{setup.instance_id}: no gold program for the oracle planner")
        self.helper.chat_model = oracle_chat_model(setup.reference.gold_program)
        return self.helper.run(setup)


class GoldAgent:
    """ORACLE: runs the gold program through the executor (TfD), or replays the reference future
    actions (EDH). It measures the ceiling of the world and executor on a dataset."""

    name = "gold"
    oracle = True

    def run(self, setup: EpisodeSetup) -> AgentResult:
        reference = setup.reference or Reference()
        if reference.replay:
            for action, oid in reference.future_actions:
                setup.env.step(action, oid)
            return AgentResult(outcome="replayed")
        if reference.gold_program:
            result = Executor(setup.env).run(compile_program(reference.gold_program).subgoals)
            return AgentResult(outcome=result.status, program=reference.gold_program)
        raise ValueError(f"{setup.instance_id}: no gold program (the gold planner needs the built-in benchmark)")


class ProgramAgent:
    """Runs a program a function chooses for the request, through the executor, with no LLM.
    The personalization baselines (the gold adapted program, the unmodified routine) are these."""

    def __init__(self, name: str, choose: Callable[[EpisodeSetup], str], oracle: bool = False,
                 config: ExecutorConfig | None = None) -> None:
        self.name = name
        self.choose = choose
        self.oracle = oracle
        self.config = config

    def run(self, setup: EpisodeSetup) -> AgentResult:
        program = self.choose(setup)
        try:
            compiled = compile_program(program)
        except ProgramError as err:
            return AgentResult(outcome="program_error", program=program, log=[f"rejected: {err}"], error=str(err))
        result = Executor(setup.env, config=self.config).run(compiled.subgoals)
        return AgentResult(outcome=result.status, program=program, log=[f"execute: {result.status}"],
                           error=result.error or None)
