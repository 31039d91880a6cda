"""`SymbolicEnv`: the environment protocol over the embedded household simulator.

It states what the simulator's own table says (`world/rules.py`), as `VirtualHomeEnv` states what its
simulator's executors say: what each action makes true (`ActionVocabulary.effects`), what a failed
step lacked (`envs/base.ReportsMissing`), whether its object can never take it
(`ReportsImpossibleSteps`) and whether its effect held already (`ReportsRedundantSteps`). A condition
is worded in the goal lines' form with TEACh's property names, the names its task definitions and its
checker's problem keys use: "{0} is isOpen", "{0} is not isToggled", "{held} is parentReceptacles to
{0}" (`{held}`: what the robot holds, which Place does not name), so `graphs/goal_conditions`
maps an unmet TEACh condition to its step as it maps VirtualHome's.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from helper_agent.config import get_settings
from helper_agent.envs.base import ActionVocabulary, NavigationGrid, ObjectView, Observation, StepOutcome
from helper_agent.world.actions import INTERACTION_ACTIONS, NAVIGATION_ACTIONS
from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.generator import generate_scene
from helper_agent.world.geometry import GRID_SIZE, PERCEPTION_DISTANCE
from helper_agent.world.metadata import export_objects, export_state, load_state, load_state_file
from helper_agent.world.render import render_top_down
from helper_agent.world.rules import AFFORDANCE, DONE, EFFECTS, HELD, KNIFE, OBJECT, Fact, bind
from helper_agent.world.simulator import Simulator
from helper_agent.world.state import WorldState

#: How an effect names its roles: the action's object is its `{0}`; what the robot holds `{held}`.
_PLACEHOLDERS = {OBJECT: "{0}", HELD: "{held}"}


def phrase(fact: Fact, subject: str, other: str = "") -> str:
    """`fact` about `subject` (and `other`, for a relation) as a goal line: "Fridge_1 is isOpen",
    "Fridge_1 is not isOpen", "Mug_1 is parentReceptacles to Sink_1"."""
    if isinstance(fact.value, str):
        return f"{subject} is {fact.prop} to {other}"
    return f"{subject} is {fact.prop}" if fact.value else f"{subject} is not {fact.prop}"


#: What each interaction makes true, in the goal lines' form (`rules.EFFECTS`, the simulator's own).
EFFECT_LINES: dict[str, tuple[str, ...]] = {
    action: tuple(phrase(f, _PLACEHOLDERS[f.subject], _PLACEHOLDERS.get(str(f.value), "")) for f in facts)
    for action, facts in EFFECTS.items()
}


class SymbolicEnv:
    """Runs TEACh actions in the embedded world.

    `reset(scene)` takes a seed (int), a `WorldState`, an exported state dict or object list, or a
    path to a state JSON file. Steps and failures are counted from the last reset.
    """

    def __init__(self, catalog: Catalog | None = None, perception_distance: float = PERCEPTION_DISTANCE) -> None:
        self.catalog = catalog or load_catalog()
        self.perception_distance = perception_distance
        self._sim: Simulator | None = None
        self.steps = 0
        self.failures = 0
        self.history: list[tuple[str, str | None, bool]] = []

    # ------------------------------------------------------------------ lifecycle
    def reset(self, scene: Any = None, *, room_type: str | None = None) -> Observation:
        if scene is None:
            scene = 0
        if isinstance(scene, WorldState):
            state = copy.deepcopy(scene)
        elif isinstance(scene, bool):
            raise TypeError("scene must be a seed, a state, or a path")
        elif isinstance(scene, int):
            state = generate_scene(scene, room_type, self.catalog)
        elif isinstance(scene, (dict, list)):
            limits = get_settings()
            state = load_state(copy.deepcopy(scene), catalog=self.catalog, max_objects=limits.max_scene_objects,
                               max_grid_cells=limits.max_grid_cells)
        elif isinstance(scene, (str, Path)):
            limits = get_settings()
            state = load_state_file(scene, self.catalog, max_objects=limits.max_scene_objects,
                                    max_grid_cells=limits.max_grid_cells, max_bytes=limits.max_input_bytes)
        else:
            raise TypeError(f"cannot reset to a {type(scene).__name__}")
        self._sim = Simulator(state, self.catalog)
        self.steps = 0
        self.failures = 0
        self.history = []
        return self.observe()

    @property
    def sim(self) -> Simulator:
        if self._sim is None:
            raise RuntimeError("call reset() before using the environment")
        return self._sim

    @property
    def state(self) -> WorldState:
        return self.sim.state

    # ------------------------------------------------------------------ acting and observing
    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        """One TEACh step. Invalid input raises `WorldError` and is not counted."""
        result = self.sim.step(action, object_id)
        self.steps += 1
        if not result.success:
            self.failures += 1
        self.history.append((result.action, object_id, result.success))
        return StepOutcome(result, lambda: self.observe(result))

    def action_vocabulary(self) -> ActionVocabulary:
        """The embedded world's API: TEACh's actions (navigation and `Stop` take no object, an
        interaction one object id), the ids of the objects in view now, and what each interaction
        makes true (`EFFECT_LINES`, from the simulator's table `world/rules.EFFECTS`).

        Nothing is settled last: none of those effects is undone by moving about (a held object
        moves with the robot, what is open stays open), and no step here needs the robot still. What
        moving changes, whether an object is in view and in reach, no interaction makes true; the
        navigator does."""
        actions = {**{a: 0 for a in NAVIGATION_ACTIONS}, **{a: 1 for a in INTERACTION_ACTIONS}, "Stop": 0}
        return ActionVocabulary(actions=actions, objects=tuple(v.object_id for v in self.observe().visible),
                                effects=EFFECT_LINES, settled_last=())

    def missing_conditions(self) -> list[str]:
        """What the last step lacked, from the simulator's own checks that failed
        (`world/rules.CHECKS`, `envs/base.ReportsMissing`), in the goal lines' form: "Fridge_1 is
        isOpen" for a Place into a closed fridge, "Knife_2 is isPickedUp" for a Slice without a
        knife (the nearest knife in view: none when no knife is in view), "Mug_1 is not isPickedUp"
        for a Pickup with a full hand, "Apple_3 is visible" for an object out of view or reach (no
        interaction makes that true: the navigator does). A lack that names no object (holding
        nothing to place, a full receptacle, the fridge door's swing) is left out, and nothing is
        lacking after a success, for a step whose effect held already or for one the catalog
        forbids (no step makes slicing a Mug possible, knife or not)."""
        sim = self.sim
        last = self.history[-1] if self.history else None
        if last is None or last[2] or last[1] is None or self._failed(AFFORDANCE) or self._failed(DONE):
            return []
        in_view = [v.object_id for v in sim.visible_objects(self.perception_distance)]
        lines: list[str] = []
        for check in sim.last_failed:
            fact = check.wants
            if fact is None:
                continue
            subjects = bind(sim, fact.subject, last[1])
            if fact.subject == KNIFE:
                subjects = tuple(oid for oid in in_view if oid in subjects)[:1]
            lines += [phrase(fact, subject) for subject in subjects]
        return list(dict.fromkeys(lines))

    def last_step_impossible(self) -> bool:
        """Whether the last step failed because the catalog says its object can never take it
        (`envs/base.ReportsImpossibleSteps`): slicing a Mug, picking up a DiningTable, pouring into
        a Toaster, placing what is held where its type never goes. Checked whatever failed first,
        so slicing a Mug without a knife is impossible too."""
        return self._failed(AFFORDANCE)

    def last_step_redundant(self) -> bool:
        """Whether the last step failed with its effect already holding (opening what is open,
        switching on what is on: `envs/base.ReportsRedundantSteps`), nothing left to do there."""
        return self._failed(DONE) and not self._failed(AFFORDANCE)

    def _failed(self, kind: str) -> bool:
        last = self.history[-1] if self.history else None
        return last is not None and not last[2] and any(check.kind == kind for check in self.sim.last_failed)

    def observe(self, result: Any = None) -> Observation:
        sim = self.sim
        state = sim.state
        views = []
        for v in sim.visible_objects(self.perception_distance):
            obj = state.objects[v.object_id]
            views.append(
                ObjectView(
                    object_id=v.object_id,
                    object_type=v.object_type,
                    distance=v.distance,
                    interactable=v.interactable,
                    position=obj.position,
                    parent_id=obj.parent_id,
                    footprint=sim.footprint_of(v.object_id),
                    state={
                        "isOpen": obj.is_open,
                        "isToggled": obj.is_toggled,
                        "isDirty": obj.is_dirty,
                        "isCooked": obj.is_cooked,
                        "isFilledWithLiquid": obj.is_filled_with_liquid,
                        "fillLiquid": obj.fill_liquid,
                        "receptacleObjectIds": tuple(obj.contents),
                        "controlledObjects": obj.controlled_ids,
                    },
                )
            )
        pose = state.agent
        return Observation(
            pose=(pose.i, pose.j, pose.rotation, pose.horizon),
            position=state.agent_xz(),
            held_id=state.held_id,
            visible=tuple(views),
            last_action=getattr(result, "action", None),
            last_success=getattr(result, "success", True),
            last_error=getattr(result, "error", ""),
        )

    def metadata(self) -> dict[str, Any]:
        """AI2-THOR-shaped `event.metadata`: agent, objects, inventory, last action."""
        state = export_state(self.state, self.catalog)
        last = self.history[-1] if self.history else None
        state["lastAction"] = last[0] if last else None
        state["lastActionSuccess"] = last[2] if last else True
        return state

    def objects_metadata(self) -> list[dict[str, Any]]:
        return export_objects(self.state, self.catalog)

    def navigation_grid(self) -> NavigationGrid:
        state = self.state
        blocked = frozenset((int(i), int(j)) for i, j in zip(*state.blocked.nonzero(), strict=True))
        return NavigationGrid(state.width, state.depth, state.origin, GRID_SIZE, blocked)

    # ------------------------------------------------------------------ snapshots
    supports_snapshot = True

    def snapshot(self) -> dict[str, Any]:
        """The whole household (exported metadata with the grid) and the episode counters."""
        return {"world": export_state(self.state, self.catalog), "steps": self.steps, "failures": self.failures}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Go back to a snapshot; the action history restarts (it is not part of the state)."""
        self.reset(snapshot["world"])
        self.steps = int(snapshot.get("steps", 0))
        self.failures = int(snapshot.get("failures", 0))

    def render(self, path: str | Path) -> Path:
        return render_top_down(self.state, path, self.catalog)
