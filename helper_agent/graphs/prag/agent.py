"""P-RAG as a method: the step loop of this package reading an experience database.

Switches (`--agent-option KEY=VALUE`):
- `retrieval=goal+scene|goal`: score stored episodes by goal + max scene-graph similarity (default,
  the paper) or by the goal only (the ablation);
- `k=N`: stored episodes in every step's prompt (default 3);
- `database=PATH`: the experience database folder to read (default: none, i.e. an empty database,
  iteration 0). `helper eval progressive` writes one per iteration and passes it here;
- `max_steps=N`: LLM steps per episode (default 30);
- `remembered=N`: ids seen earlier and out of view now that `goto` may name, most recent first
  (default 60; a class's consecutive ids are shown as one range). 0 is an ablation: the agent can
  walk only to what it sees, and as `search` finds only objects not seen yet, an object it walked
  away from is lost (replayed gold interactions then fail in 16 of 18 families);
- `refuse_futile=on|off`: leave out of a step's grammar what was already done from the current
  view and changed nothing (default on; off is the paper's agent);
- `look_around=on|off`: start by turning once in place and show the first step everything seen
  meanwhile (default on, as every method's agent starts); off shows the view the agent starts with;
- `admissible=on|off`: offer only actions the environment can accept, on objects whose type
  affords them and with the hands they need (default on, as ALFWorld's admissible commands); off
  offers every action on every shown id;
- `answer=action|thought`: a one-line thought before each action (default action, the paper's);
- `goal_steps=on`, `preconditions=on|reported`, `subgoals=on` (off by default; where the agent acts
  by names): what the environment declares, through `graphs/declarations.py` (`named.py` says how
  P-RAG uses each; `subgoals=on` makes each step a choice among the subgoals open now).

In an environment it acts in by names (`envs/base.ActsByName`: VirtualHome's EAI tasks) the agent
runs `named.py`'s loop on the environment's vocabulary; there `max_steps` defaults to 20 and
`refuse_futile` to off (the paper's agent, as its EAI rows were measured), and `remembered`,
`look_around` and `admissible` have nothing to act on (names need no walking back, the scene graph
is the task's objects, the vocabulary is the environment's).
The agent only reads the database; it never sees the episode's score, gold program or reference.
`--feedback` is not used: P-RAG's agent stops at its own `done()`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.envs.base import ActsByName
from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.declarations import SWITCHES, aids_from_options, refuse_declared_aids
from helper_agent.graphs.options import check_known, count_option, on_off, option, positive_option
from helper_agent.graphs.prag.configuration import PRAGConfig
from helper_agent.graphs.prag.context import PRAGContext
from helper_agent.graphs.prag.graph import build_graph, recursion_limit
from helper_agent.graphs.prag.named import NamedPRAGConfig, NamedPRAGContext, build_named_graph
from helper_agent.graphs.registry import BuildRequest, ExperienceUse, Method
from helper_agent.memory.experience import ExperienceMemory

OPTIONS = ("retrieval", "k", "database", "max_steps", "remembered", "refuse_futile", "look_around", "admissible",
           "answer", *SWITCHES)
NAMED = NamedPRAGConfig()  # the defaults where the agent acts by names


def config_from_options(options: dict[str, str], *, seed: int = 0) -> PRAGConfig:
    check_known(options, OPTIONS, "prag")
    retrieval = option(options, "retrieval", "goal+scene", ("goal+scene", "goal"))
    return PRAGConfig(retrieval=retrieval, k=positive_option(options, "k", 3),  # type: ignore[arg-type]
                      max_steps=positive_option(options, "max_steps", 30), seed=seed,
                      max_remembered=count_option(options, "remembered", 60),
                      refuse_futile=on_off(options, "refuse_futile"), look_around=on_off(options, "look_around"),
                      admissible=on_off(options, "admissible"), subgoals=aids_from_options(options).subgoals)


def named_config_from_options(options: dict[str, str]) -> NamedPRAGConfig:
    """The switches where the agent acts by names (`ActsByName`), with that loop's defaults."""
    check_known(options, OPTIONS, "prag")
    return NamedPRAGConfig(retrieval=option(options, "retrieval", NAMED.retrieval, ("goal+scene", "goal")),  # type: ignore[arg-type]
                           k=positive_option(options, "k", NAMED.k),
                           max_steps=positive_option(options, "max_steps", NAMED.max_steps),
                           answer=option(options, "answer", NAMED.answer, ("action", "thought")),  # type: ignore[arg-type]
                           refuse_futile=on_off(options, "refuse_futile", "on" if NAMED.refuse_futile else "off"),
                           aids=aids_from_options(options))


def check_options(options: dict[str, str]) -> None:
    """Both loops' readings of the switches (a bad value fails before the run, whichever world)."""
    config_from_options(options)
    named_config_from_options(options)


def open_database(path: str | None) -> ExperienceMemory | None:
    """The experience database of a folder (None: no database, the empty iteration 0)."""
    if not path or path.lower() == "none":
        return None
    return ExperienceMemory(path=path)


class NamedPRAGAgent(GraphAgent):
    """Runs `named.py`'s loop on an environment it acts in by names, reading its database."""

    def __init__(self, chat_model: BaseChatModel, config: NamedPRAGConfig, database: ExperienceMemory | None = None,
                 name: str = "prag") -> None:
        super().__init__(name, chat_model, build_named_graph(), recursion_limit(config.max_steps))
        self.config = config
        self.database = database

    def context(self, setup: EpisodeSetup) -> NamedPRAGContext:
        return NamedPRAGContext(env=setup.env, chat_model=self.chat_model, database=self.database, config=self.config,
                                tags=list(setup.tags), metadata=dict(setup.metadata))

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        episode = context.episode
        episode.extra["retrieve_seconds"] = round(sum(context.retrieve_seconds), 3)
        trace = [[s["action"], s["observation"], s["scene_graph"]] for s in episode.trajectory]
        return AgentResult(outcome=episode.outcome, program="\n".join(t[0] for t in trace), trace=trace,  # type: ignore[arg-type]
                           usage=context.usage.summary(), details=episode.details())


class PRAGAgent(GraphAgent):
    """Runs the P-RAG graph on the environment it is handed, reading (never writing) its database:
    the loop over an environment it acts in by names (`named.py`), or over the embedded world."""

    def __init__(self, chat_model: BaseChatModel, config: PRAGConfig, database: ExperienceMemory | None = None,
                 name: str = "prag", named: NamedPRAGConfig | None = None) -> None:
        super().__init__(name, chat_model, build_graph(), recursion_limit(config.max_steps))
        self.config = config
        self.database = database
        self.named = NamedPRAGAgent(chat_model, named or NamedPRAGConfig(), database, name)

    def run(self, setup: EpisodeSetup) -> AgentResult:
        if isinstance(setup.env, ActsByName):
            return self.named.run(setup)
        refuse_declared_aids(self.named.config.aids, setup.env)
        return super().run(setup)

    def context(self, setup: EpisodeSetup) -> PRAGContext:
        return PRAGContext(env=setup.env, chat_model=self.chat_model, experience=self.database,
                           config=self.config, tags=list(setup.tags), metadata=dict(setup.metadata))

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        history = list(state.get("history", []))
        trajectory = [[s.get("action", ""), s.get("observation", ""), s.get("scene_graph", "")] for s in history]
        return AgentResult(outcome=state.get("outcome", ""), program="\n".join(t[0] for t in trajectory),
                           log=list(state.get("log", [])), trace=trajectory,  # type: ignore[arg-type]
                           usage={**context.usage.summary(), **step_usage(context, seconds)})


def step_usage(context: Any, seconds: float) -> dict[str, float]:
    """Where an episode's time goes: LLM seconds (in `usage`), retrieval, acting, and the rest."""
    meter = context.meter
    retrieve = sum(meter.retrieve_seconds)
    act = sum(meter.act_seconds)
    return {
        "episode_seconds": round(seconds, 3),
        "retrieve_seconds": round(retrieve, 3),
        "act_seconds": round(act, 3),
        "retrievals": len(meter.retrieve_seconds),
        "experience_changes": meter.experience_changes,
        "parse_rejections": meter.parse_rejections,
        "futile_rejections": meter.futile_rejections,
    }


def build(request: BuildRequest) -> PRAGAgent:
    config = config_from_options(request.options, seed=request.seed)
    return PRAGAgent(request.chat_model, config, database=open_database(request.options.get("database")),
                     named=named_config_from_options(request.options))


METHOD = Method(
    name="prag",
    summary="P-RAG (Xu et al. 2024): step-wise actions with progressive retrieval of its own experience",
    build=build,
    options=OPTIONS,
    check=check_options,
    experience=ExperienceUse(option="database", retrieval_options=("retrieval", "k")),
)
