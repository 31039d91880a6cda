"""The environment protocol the executor and the evaluators talk to.

An environment is reset to a scene or a saved state, stepped with TEACh actions, and observed. It
counts steps and failed actions (TEACh's episode limits are enforced by whoever drives it). Two
implementations: `SymbolicEnv` over the embedded world, and `ThorEnv` over a real AI2-THOR controller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from helper_agent.world.actions import ActionResult


@dataclass(frozen=True)
class ObjectView:
    """One detected object: id, type, horizontal distance (m), whether it is in reach now, and its position."""

    object_id: str
    object_type: str
    distance: float
    interactable: bool
    position: tuple[float, float, float]
    parent_id: str | None = None
    # Floor cells of the object's footprint, or of the fixture it stands in/on (its 3D box seen
    # from above); empty for loose objects, whose position is enough.
    footprint: tuple[tuple[int, int], ...] = ()
    state: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Observation:
    """What the agent perceives after a step."""

    pose: tuple[int, int, int, int]  # grid i, grid j, rotation, horizon
    position: tuple[float, float]  # metres (x, z)
    held_id: str | None
    visible: tuple[ObjectView, ...]
    last_action: str | None = None
    last_success: bool = True
    last_error: str = ""


@dataclass(frozen=True)
class NavigationGrid:
    """Occupancy the navigator plans on (HELPER builds this from depth; we take the simulator's)."""

    width: int
    depth: int
    origin: tuple[float, float]
    grid_size: float
    blocked: frozenset[tuple[int, int]]

    def walkable(self, cell: tuple[int, int]) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.depth and cell not in self.blocked

    def cell_center(self, cell: tuple[int, int]) -> tuple[float, float]:
        return (self.origin[0] + cell[0] * self.grid_size, self.origin[1] + cell[1] * self.grid_size)


class StepOutcome:
    """An action's result and, computed on first use, the observation after it.

    Perception is most of the cost of a step, and callers that only act (replaying a
    trajectory, benchmarks) never look, so the observation is computed lazily.
    """

    def __init__(self, result: ActionResult, observe: Callable[[], Observation]) -> None:
        self.result = result
        self._observe = observe
        self._observation: Observation | None = None

    @property
    def observation(self) -> Observation:
        if self._observation is None:
            self._observation = self._observe()
        return self._observation


@runtime_checkable
class Environment(Protocol):
    """What every environment offers."""

    steps: int
    failures: int

    def reset(self, scene: Any = None, *, room_type: str | None = None) -> Observation: ...

    def step(self, action: str, object_id: str | None = None) -> StepOutcome: ...

    def observe(self) -> Observation: ...

    def metadata(self) -> dict[str, Any]: ...

    def objects_metadata(self) -> list[dict[str, Any]]: ...

    def navigation_grid(self) -> NavigationGrid: ...

    def render(self, path: str | Path) -> Path: ...


@dataclass(frozen=True)
class ActionVocabulary:
    """What an environment acts on by name: its actions with the number of objects each takes, the
    object names an action may take now, and a one-line meaning where the environment gives one.

    A method builds its answer grammar and its action parser from the vocabulary of the environment
    it is handed rather than from one benchmark's list, so the same method acts in VirtualHome
    (EAI's actions, the task's objects) and in the embedded world (TEACh's actions, the ids in view).
    """

    actions: Mapping[str, int]
    objects: tuple[str, ...]
    meanings: Mapping[str, str] = field(default_factory=dict)
    world: str = ""  # what the prompts call the world ("VirtualHome"); "" for a generic one
    #: The object names the agent has perceived since the episode began, in the environment's order
    #: (LLM-Planner's grounded re-planning names only these); None when the environment does not say.
    seen: tuple[str, ...] | None = None
    #: what an agent must know to act here, one sentence for a prompt ("" when nothing needs saying)
    rule: str = ""
    #: the one-object action that brings the robot close to an object (VirtualHome's WALK), for an
    #: agent's precondition check; "" when the environment has none (it navigates by itself)
    approach: str = ""
    #: What an action makes true, as the environment's own simulator does it: ACTION -> the goal
    #: conditions it brings about, in the line form tasks state goals in ("{0} is ON",
    #: "character is HOLDS_RH to {0}", "{0} is ON to {1}"; `{i}` is the action's i-th object, a named
    #: placeholder such as `{held}` an object the action does not take: the embedded world's Place puts
    #: what the robot holds). An agent turns an unmet stated condition into the step that makes it true
    #: with it (`graphs/goal_conditions.achieving_steps`); empty when the environment does not say.
    effects: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Conditions that moving about undoes or cannot be done in, in the order a plan makes them true
    #: once its other steps are done (VirtualHome: a WALK drops the robot's CLOSE and FACING, and
    #: cannot start while it sits or lies); same line form as `effects`.
    settled_last: tuple[str, ...] = ()

    def problem(self, action: str, objects: tuple[str, ...]) -> str | None:
        """Why `action` on `objects` is outside the vocabulary (None: it is inside): what an action
        parser tells the model when it refuses an answer."""
        if action not in self.actions:
            return f"{action} is not an allowed action"
        if len(objects) != self.actions[action]:
            return f"{action} takes {self.actions[action]} object(s), not {len(objects)}"
        unknown = [o for o in objects if o not in self.objects]
        return f"{', '.join(unknown)} is not an object here" if unknown else None


@runtime_checkable
class NamesActions(Protocol):
    """An environment that says which actions it takes by name (`ActionVocabulary`)."""

    def action_vocabulary(self) -> ActionVocabulary: ...


@runtime_checkable
class ReportsRedundantSteps(Protocol):
    """An environment that tells a step whose effect already held (nothing to do: VirtualHome's
    "additional step", which EAI's evaluator skips) from a step that failed."""

    def last_step_redundant(self) -> bool: ...


@runtime_checkable
class ReportsImpossibleSteps(Protocol):
    """An environment that tells a step its object can never take (VirtualHome's "affordance
    error": the television is not grabbable) from one that failed for want of something."""

    def last_step_impossible(self) -> bool: ...


def impossible_step(env: Any) -> bool:
    """Whether `env`'s last step failed because its object cannot take that action at all (never for
    an environment that does not tell)."""
    return isinstance(env, ReportsImpossibleSteps) and env.last_step_impossible()


@runtime_checkable
class BriefsErrors(Protocol):
    """An environment whose error messages carry internals an agent does not name (graph ids, the
    script line); `brief_error` gives the message in the words of its vocabulary."""

    def brief_error(self, error: str) -> str: ...


def step_by_name(env: Environment, action: str, objects: tuple[str, ...] | list[str]) -> StepOutcome:
    """`action` on the named `objects` (an `ActionVocabulary`'s names): one object as `object_id`,
    several joined by `|` (VirtualHome's PUTBACK cup|sink), none as ""."""
    return env.step(action, "|".join(objects))


def redundant_step(env: Any) -> bool:
    """Whether `env`'s last step changed nothing because its effect already held (never for an
    environment that does not tell)."""
    return isinstance(env, ReportsRedundantSteps) and env.last_step_redundant()


def brief_error(env: Any, error: str) -> str:
    """`error` as the agent should read it (`BriefsErrors`), else as it is."""
    return env.brief_error(error) if isinstance(env, BriefsErrors) else error
@dataclass(frozen=True)
class NamedOutcome:
    """How an action taken by name ended: "ok", "skipped" (it had nothing to do, and changed
    nothing) or "failed", and what the agent is told (the environment's words, no internal ids)."""

    status: str
    observation: str


@runtime_checkable
class ActsByName(NamesActions, Protocol):
    """An environment a step-wise method acts in by names alone (VirtualHome): its actions on the
    names of `action_vocabulary`, and its scene graph as the views those methods show.

    - `act_by_name`: one action on named objects;
    - `scene_text`: the scene graph of the task's objects, one line each ("object: states; on
      other; in room"), then where the agent is and what it is close to;
    - `scene_entities`: the whole scene graph as entities (`id`, `label`, `attributes`) and
      (source, relation, target) edges, for a scene-graph memory;
    - `held_names`: the names of what the agent holds;
    - `state_key`: a digest of the whole state: equal keys, equal outcomes for the same action.
    """

    def act_by_name(self, action: str, objects: tuple[str, ...]) -> NamedOutcome: ...

    def scene_text(self) -> str: ...

    def scene_entities(self) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]: ...

    def held_names(self) -> list[str]: ...

    def state_key(self) -> str: ...


class SnapshotUnsupported(RuntimeError):
    """This environment cannot save and restore its whole state."""


@runtime_checkable
class Snapshotting(Protocol):
    """An environment that can save its whole state as JSON-friendly data and go back to it.

    A chat that stops at an `interrupt` and resumes in a new process needs this: the household goes
    into the checkpoint as a snapshot and the next process restores it. `restore(snapshot())`
    leaves the environment as it was, counters included.
    """

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, snapshot: dict[str, Any]) -> None: ...


def can_snapshot(env: Any) -> bool:
    """Whether `env` saves and restores its state exactly (`supports_snapshot` may say no)."""
    return isinstance(env, Snapshotting) and bool(getattr(env, "supports_snapshot", True))


@runtime_checkable
class ReportsMissing(Protocol):
    """An environment that says, after a step failed, which conditions the step needed and lacked
    (VirtualHome's executors record them), in the goal lines' form ("character is FACING to tv")."""

    def missing_conditions(self) -> list[str]:
        """What the last failed step lacked; [] after a success or when it did not say."""
        ...


@runtime_checkable
class ShowsFacts(Protocol):
    """An environment that shows what holds now among the objects it names: each named object's
    states and the relations between two named objects (the robot included, by the name its
    vocabulary leaves out of actions), in its own upper-case words. An agent compares it with the
    goal conditions its task states (`graphs/goal_conditions.py`); it is an observation, never a
    verdict on the task."""

    def scene_facts(self) -> frozenset[tuple[str, ...]]:
        """`(object, STATE)` and `(object, RELATION, other)` facts of the current state."""
        ...
