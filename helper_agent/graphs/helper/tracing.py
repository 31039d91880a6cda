"""Subgoals as spans: each subgoal the executor runs becomes a child run of the graph node that ran
it, so a LangSmith trace (or any LangChain tracer) reads plan -> execute -> Navigate(Mug), Pickup(Mug)...
with each subgoal's status and actions, and no household in its inputs or outputs."""

from __future__ import annotations

from langchain_core.callbacks.manager import CallbackManagerForChainRun
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config

from helper_agent.tools.executor import SubgoalTrace


class SubgoalSpans:
    """An `ExecutionListener` that opens a chain run per subgoal under the node's run."""

    def __init__(self, config: RunnableConfig) -> None:
        self.manager = get_callback_manager_for_config(config)
        self._open: CallbackManagerForChainRun | None = None

    def subgoal_started(self, trace: SubgoalTrace) -> None:
        self._open = self.manager.on_chain_start({"name": "subgoal"}, {"subgoal": trace.subgoal},
                                                 name=trace.subgoal, run_type="tool")

    def subgoal_finished(self, trace: SubgoalTrace) -> None:
        if self._open is None:
            return
        self._open.on_chain_end({"status": trace.status, "actions": [a.action for a in trace.actions],
                                 "notes": trace.notes[:5]})
        self._open = None
