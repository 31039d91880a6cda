"""HELPER as a method: the graph of this package run on the environment it is handed, with the
run's memories (language-program examples, correction examples, routines).

Switches: `--ablate` (mem, precheck, correction, locator) and `--feedback`, shared with the command
line and the served graph; through `-o`:

- `mode=program|open-loop|closed-loop`: HELPER's program over the action API (the default), or, on
  an environment that acts by name (`envs/base.NamesActions`, EAI's VirtualHome), the whole action
  sequence written once (open loop: EAI's protocol) or executed and corrected after a failure
  (closed loop): `sequence/`;
- `k=N` retrieved examples (a program's language-program examples; a sequence's solved tasks, which
  the benchmark lends: `BuildRequest.examples`); 0: none;
- `max_steps=N` steps a written sequence may have, `max_replans=N` corrections in the closed loop;
- `goal_check=off|on` (closed loop; off by default): HELPER's "did I miss anything?" answered by its
  own check of the goal conditions the task states against what the environment shows, and a
  correction for the unmet ones, at most `goal_rounds=2` times (`sequence/nodes.py`, issue 53);
- `preconditions=off|on|reported` (closed loop; off by default): HELPER's pre-condition check for
  named actions, a step that fails tried once more after approaching its object
  (`graphs/approach.py`); `reported` first takes the steps that make true what the environment says
  the step lacked, and passes over a step the environment says can never succeed (issue 62);
- `goal_steps=off|on` (named actions; off by default): for a task that states its goal, the steps
  that make its stated conditions true by the environment's effects, given to the sequence writer
  as step-by-step instructions, the task's (those not met yet) and each example's (those its
  sequence took) alike (issue 62);
- `subgoals=off|on` (closed loop, named actions; off by default): the sequence is written over the
  subgoals open now alone (the achieving steps of the stated conditions not met yet and the action
  goals not done, `declarations.subgoal_steps`), at most once each, and each is executed with the
  pre-condition check on the reported lacks: HELPER's program calls subgoal functions its executor
  expands, and this is that form where the environment declares the subgoals (issue 62). The
  examples show the subgoals their sequences took. These three go through
  `graphs/declarations.py`, as every method's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.declarations import SWITCHES, aids_from_options
from helper_agent.graphs.helper.configuration import HelperConfig
from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.graph import build_graph
from helper_agent.graphs.helper.sequence.agent import SequenceAgent
from helper_agent.graphs.helper.sequence.context import SequenceConfig
from helper_agent.graphs.options import count_option, option, positive_option
from helper_agent.graphs.registry import BuildRequest, Method
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.folders import open_run_memory
from helper_agent.memory.routines import RoutineMemory


@dataclass
class Memories:
    examples: ExampleMemory
    corrections: CorrectionMemory
    routines: RoutineMemory

    @classmethod
    def at(cls, path: str | None = None) -> Memories:
        """The memories of one folder, or of the Chroma server when one is configured
        (`memory/folders.py` says which collections)."""
        return cls(*(open_run_memory(kind, path) for kind in (ExampleMemory, CorrectionMemory, RoutineMemory)))


class HelperAgent(GraphAgent):
    """HELPER: the LangGraph graph of `graphs/helper`, run on the environment it is handed."""

    def __init__(self, chat_model: BaseChatModel, memories: Memories, config: HelperConfig | None = None,
                 name: str = "helper") -> None:
        super().__init__(name, chat_model, build_graph())
        self.memories = memories
        self.config = config or HelperConfig()
        # Built once and shared by every episode: the diagnoser and class mapper embed fixed texts.
        shared = HelperContext(examples=memories.examples)
        self._diagnoser = shared.failure_diagnoser()
        self._mapper = shared.mapper()

    def context(self, setup: EpisodeSetup) -> HelperContext:
        return HelperContext(
            env=setup.env, chat_model=self.chat_model, examples=self.memories.examples,
            corrections=self.memories.corrections, routines=self.memories.routines, feedback=setup.feedback,
            config=self.config, diagnoser=self._diagnoser, class_mapper=self._mapper,
            tags=list(setup.tags), metadata=dict(setup.metadata),
        )

    def inputs(self, setup: EpisodeSetup) -> dict[str, Any]:
        return {"request": setup.request, "user": setup.user}

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        return AgentResult(outcome=state.get("outcome", ""), program=state.get("program", ""),
                           log=list(state.get("log", [])), usage=context.usage.summary(),
                           trace=list((state.get("execution") or {}).get("trace") or []))


def helper_config(ablate: str | None, feedback: int, seed: int) -> HelperConfig:
    """HELPER's configuration for a run: an ablation, the feedback rounds, the seed."""
    config = HelperConfig.ablated(ablate, feedback)
    config.seed = seed
    return config


MODES = ("program", "open-loop", "closed-loop")
OPTIONS = ("mode", "k", "max_steps", "max_replans", "goal_check", "goal_rounds", *SWITCHES)
SEQUENCE_ONLY = ("max_steps", "max_replans", "goal_check", "goal_rounds", *SWITCHES)


def sequence_config(options: dict[str, str]) -> SequenceConfig | None:
    """The sequence writer's settings (None: `mode=program`); a `ValueError` for a bad switch."""
    try:
        mode = option(options, "mode", "program", MODES)
        k = count_option(options, "k", 3)
        if mode == "program":
            given = [key for key in SEQUENCE_ONLY if key in options]
            if given:
                raise ValueError(f"{', '.join(given)}: a switch of mode=open-loop|closed-loop, not of mode=program")
            return None
        goal_check = option(options, "goal_check", "off", ("on", "off")) == "on"
        aids = aids_from_options(options)
        if (goal_check or aids.preconditions != "off" or aids.subgoals) and mode != "closed-loop":
            raise ValueError("goal_check=on, preconditions=on and subgoals=on need mode=closed-loop: "
                             "the open loop acts on nothing")
        return SequenceConfig(aids=aids, closed_loop=mode == "closed-loop", k=k, max_steps=positive_option(options, "max_steps", 40),
                              max_replans=count_option(options, "max_replans", 2), goal_check=goal_check,
                              goal_rounds=count_option(options, "goal_rounds", 2))
    except ValueError as exc:
        raise ValueError(f"helper: {exc}") from None


def build(request: BuildRequest) -> HelperAgent | SequenceAgent:
    sequence = sequence_config(request.options)
    if sequence is not None:
        return SequenceAgent(request.chat_model, sequence, request.examples)
    config = helper_config(request.ablate, request.feedback, request.seed)
    if "k" in request.options:
        config.k = count_option(request.options, "k", config.k)
    return HelperAgent(request.chat_model, Memories.at(request.memory_dir), config)


METHOD = Method(
    name="helper",
    summary="HELPER (Sarch et al. 2023): retrieval-augmented program planning, pre-condition checks, "
            "locator, failure correction, feedback, routines",
    build=build,
    options=OPTIONS,
    check=sequence_config,
    served_graph="helper_agent.serving:graph",
)
