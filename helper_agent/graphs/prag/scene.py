"""The agent's side of one P-RAG episode: observation -> scene-graph text, and acting on its ids.

The scene graph is the current observation only (the paper's per-step scene graph): the objects in
view, nearest first and at most `max_objects`, each with the states its class has and the object it
is in or on, plus what the agent holds. It is built from the `Observation` the environment hands
the agent, never from the simulator's ground truth. The first step's is what the agent saw turning
once in place (`look_around`), as every method's agent starts: ALFWorld's first observation, which
the paper's agent sees, likewise lists the room around it, and a view that starts facing a wall
shows a model nothing to act on. Ids are short aliases (`Mug_2`) given in the
order objects are first seen, so a line costs few tokens and the grammar stays small; the alias
table maps them back to environment ids.

Acting goes through the shared executor's primitives (`interact`, `walk_to`, `find`), so walking
into reach and the episode limits are the same as for the other methods; no macro (clean, cook)
is used: the model chooses every interaction itself.

The agent also remembers what it saw: ids seen earlier in the episode and out of view now are
listed (most recently seen first, at most `max_remembered`), and `goto` may name them. ALFWorld,
where the paper's agent acts, offers `go to` every receptacle of the room whether in view or not;
with only the current view's ids, an agent that walked away from an object could never come back to
it, and replaying the gold interactions of every task family through this action layer failed for
five families of eighteen. Interactions still need the object in view. `search(Class)` looks for an
object of the class the agent has not been shown yet (a second plate for "clean all plates"); it
used to walk to the nearest seen one, so a second one out of view could not be found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from helper_agent.envs.base import Environment, ObjectView, Observation
from helper_agent.graphs.object_actions import ShortIds
from helper_agent.graphs.prag.actions import BY_NAME, StepAction
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.errors import EpisodeLimit, ObjectNotFound, StepFailed
from helper_agent.tools.executor import Executor, ExecutorConfig
from helper_agent.world.catalog import Catalog, load_catalog


@dataclass
class SceneView:
    """What one step's prompt shows: the scene-graph text and the ids an action may name."""

    text: str
    ids: list[str]
    held: str | None
    remembered: list[str] = field(default_factory=list)  # seen before, out of view now: `goto` only


class EpisodeWorld(ShortIds):
    """The executor and the alias table of one episode."""

    def __init__(self, env: Environment, *, catalog: Catalog | None = None,
                 executor_config: ExecutorConfig | None = None) -> None:
        self.env = env
        self.catalog = catalog or load_catalog()
        self.executor = Executor(env, config=executor_config or ExecutorConfig(), catalog=self.catalog)
        super().__init__()  # ShortIds: alias (environment id -> short id) and env_id (back)
        self._last_seen: dict[str, int] = {}  # short id -> the view it was last shown in
        self._views = 0
        self.focus: str | None = None  # the environment id last walked to or found: shown while in view

    def classes(self) -> list[str]:
        return sorted(self.catalog.types)

    # ------------------------------------------------------------------ observation -> text
    def _states(self, view: ObjectView) -> list[str]:
        info = self.catalog.types.get(view.object_type)
        s = view.state
        out: list[str] = []
        if info is None:
            return out
        if info.openable:
            out.append("open" if s.get("isOpen") else "closed")
        if info.toggleable:
            out.append("on" if s.get("isToggled") else "off")
        if info.dirtyable:
            out.append("dirty" if s.get("isDirty") else "clean")
        if info.cookable and s.get("isCooked"):
            out.append("cooked")
        if info.can_fill_with_liquid and s.get("isFilledWithLiquid"):
            out.append(f"filled with {s.get('fillLiquid') or 'liquid'}")
        if view.interactable:
            out.append("in reach")
        return out

    def look_around(self, max_objects: int, max_remembered: int = 0) -> SceneView:
        """Turn once in place and show everything seen meanwhile, as one scene graph.

        Each object keeps the view in which it was nearest. `EpisodeLimit` passes through; if the
        environment refuses a look or a turn, the scene graph is the views before and after it.
        """
        seen: list[Observation] = [self.env.observe()]
        try:
            seen += self.executor.look_around()
        except StepFailed:
            seen.append(self.env.observe())
        nearest: dict[str, ObjectView] = {}
        for view in (v for obs in seen for v in obs.visible):
            kept = nearest.get(view.object_id)
            if kept is None or view.distance < kept.distance:
                nearest[view.object_id] = view
        return self._render(list(nearest.values()), self.env.observe().held_id, max_objects, max_remembered)

    def scene(self, max_objects: int, max_remembered: int = 0) -> SceneView:
        """The current observation as scene-graph text, one line per object: `Mug_2: dirty; in Sink_1`."""
        obs = self.env.observe()
        return self._render(obs.visible, obs.held_id, max_objects, max_remembered)

    def _remembered(self, shown: Sequence[str], held: str | None, limit: int) -> list[str]:
        """Ids shown in an earlier view and not now (nor held), most recently seen first."""
        now = {*shown, held}
        earlier = sorted((i for i in self._last_seen if i not in now), key=lambda i: (-self._last_seen[i], i))
        return earlier[:limit]

    def _render(self, visible: Sequence[ObjectView], held_id: str | None, max_objects: int,
                max_remembered: int = 0) -> SceneView:
        views = sorted(visible, key=lambda v: (v.distance, v.object_id))
        shown = [v for v in views if v.object_id != held_id][:max_objects]
        # What the agent walked to is shown even when more than `max_objects` nearer ones crowd it
        # out: otherwise a walk to it changes nothing the model can see, and it cannot act on it.
        focused = [v for v in views if v.object_id == self.focus and v.object_id != held_id]
        if focused and focused[0] not in shown:
            shown = [*shown[: max(max_objects - 1, 0)], focused[0]]
        for v in shown:
            self.alias_of(v.object_id, v.object_type)
        held = None
        if held_id:
            held = self.alias_of(held_id, self.executor.env_type(held_id))
        visible_ids = {v.object_id for v in shown}
        lines = []
        for v in shown:
            parts = []
            states = self._states(v)
            if states:
                parts.append(", ".join(states))
            if v.parent_id and v.parent_id in visible_ids:
                parts.append(f"in {self.alias[v.parent_id]}")
            alias = self.alias[v.object_id]
            lines.append(f"{alias}: {'; '.join(parts)}" if parts else alias)
        text = "\n".join(lines) if lines else "(nothing in view)"
        ids = [self.alias[v.object_id] for v in shown] + ([held] if held else [])
        self._views += 1
        for alias in ids:
            self._last_seen[alias] = self._views
        return SceneView(text=text, ids=ids, held=held, remembered=self._remembered(ids, held, max_remembered))

    # ------------------------------------------------------------------ acting
    def _holding(self) -> str:
        held = self.executor.tracker.held_id
        return f"holding {self.alias.get(held, held)}" if held else "hands empty"

    def act(self, step: StepAction) -> str:
        """Run one action; the observation text. `EpisodeLimit` passes through (the episode is over)."""
        spec = BY_NAME[step.action]
        executor = self.executor
        try:
            if step.action == "search":
                cls = str(step.arg)
                ref = ObjectRef(instance_key=f"search:{cls}", object_class=cls)
                # Everything shown to the model is left out: the search is for one it has not seen
                # (walking back to a seen one is `goto`, which may name it).
                executor.bindings = {}
                executor.grounding.excluded[ref.instance_key] = set(self.alias)
                try:
                    found = executor.find(ref)
                except ObjectNotFound:
                    seen = sorted((a for a in self.env_id if self.type_of[a] == cls), key=lambda a: int(a.rpartition("_")[2]))
                    known = f" (seen before: {', '.join(seen)}; goto one)" if seen else ""
                    return f"no {cls} found that you have not seen{known}; {self._holding()}"
                finally:
                    executor.bindings = {}
                    executor.grounding.excluded.pop(ref.instance_key, None)
                assert found is not None
                executor.walk_to(found)  # a found object may have been seen from afar: go and look
                self.focus = found
                return f"found {self.alias_of(found, executor.env_type(found))}; {self._holding()}"
            oid = self.env_id[str(step.arg)]
            if step.action == "goto":
                before = self.env.steps
                self.focus = oid
                executor.walk_to(oid)
                # Saying so stops a small model from asking for the same walk again and again.
                where = "already next to" if self.env.steps == before else "arrived at"
                return f"{where} {step.arg}; {self._holding()}"
            assert spec.env_action is not None
            executor.interact(spec.env_action, oid)
            return f"ok; {self._holding()}"
        except EpisodeLimit:
            raise
        except StepFailed as failed:
            return f"failed: {self.aliased(failed.error)}; {self._holding()}"

    def usage(self) -> dict[str, Any]:
        return {"env_steps": self.env.steps, "env_failures": self.env.failures}
