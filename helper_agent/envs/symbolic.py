"""`SymbolicEnv`: the environment protocol over the embedded household simulator."""

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
from helper_agent.world.simulator import Simulator
from helper_agent.world.state import WorldState


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
        interaction one object id) and the ids of the objects in view now."""
        actions = {**{a: 0 for a in NAVIGATION_ACTIONS}, **{a: 1 for a in INTERACTION_ACTIONS}, "Stop": 0}
        return ActionVocabulary(actions=actions, objects=tuple(v.object_id for v in self.observe().visible))

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
