"""VirtualHome (EAI's evolving-graph simulator) behind the `Environment` protocol.

The Embodied Agent Interface (`pip install -e '.[virtualhome]'`) ships VirtualHome's
action-sequencing tasks with their initial scene graphs, a symbolic simulator (`MotionPlanner` over
`EnvironmentState`) and goal checks. This adapter resets to a task's initial graph, executes
actions in EAI's vocabulary (`[WALK] <sink> (12)`) exactly as EAI's evaluator does (its
evaluation-mode executor, whose failures carry an error type: wrong order, missing step,
affordance, additional step), and answers success with EAI's own goal check on the current graph
and the executed actions. An agent may act step by step (`step`, `execute`) or hand over a whole
sequence (`run`).

Observations are symbolic: the TEACh-shaped `Observation` carries the task's relevant objects
(those EAI's prompt lists) as `ObjectView`s with their states; there is no metric pose or
navigation grid (VirtualHome walks by name).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from helper_agent.envs import virtualhome_scene as views
from helper_agent.envs.base import (
    ActionVocabulary,
    NamedOutcome,
    NavigationGrid,
    ObjectView,
    Observation,
    StepOutcome,
    step_by_name,
)
from helper_agent.world.actions import ActionResult

SCENE_ID = 1
CHARACTER_ID = 65  # EAI's acting character in scene 1
ERROR_TYPES = {0: "wrong_order", 1: "missing_step", 2: "affordance_error", 3: "unseen_object",
               4: "additional_step", 5: "unknown_error"}
ADDITIONAL_STEP = 4  # EAI's evaluator skips such a step and goes on; every other failure ends a plan
WORLD = "VirtualHome"
REACH_RULE = "You must be close to an object (WALK to it) before acting on it."
#: What each action makes true in VirtualHome's simulator (EAI's `evolving_graph/execution.py`: the
#: executor of each action and the states and edges it adds), in the goal lines' form. GRAB holds in a
#: free hand, the right one first (`_find_free_hand`); WALK to a room puts the robot inside it. An
#: action whose effect is only that it was done (TOUCH, TYPE, DRINK, ...) makes no condition true:
#: a task asks for it as an action goal ("do TYPE"), which names the action itself.
EFFECTS: dict[str, tuple[str, ...]] = {
    "SWITCHON": ("{0} is ON",), "SWITCHOFF": ("{0} is OFF",),
    "OPEN": ("{0} is OPEN",), "CLOSE": ("{0} is CLOSED",),
    "PLUGIN": ("{0} is PLUGGED_IN",), "PLUGOUT": ("{0} is PLUGGED_OUT",),  # the simulator's; EAI allows neither
    "WASH": ("{0} is CLEAN",), "WIPE": ("{0} is CLEAN",),
    "SIT": ("character is SITTING", "character is ON to {0}"),
    "LIE": ("character is LYING", "character is ON to {0}"),
    "GRAB": ("character is HOLDS_RH to {0}", "character is HOLDS_LH to {0}"),
    "TURNTO": ("character is FACING to {0}",),
    "WALK": ("character is CLOSE to {0}", "character is INSIDE to {0}"),
    "PUTBACK": ("{0} is ON to {1}",), "PUTIN": ("{0} is INSIDE to {1}",),
    "PUTON": ("{0} is ON to character",),
}
#: What a WALK undoes (`WalkExecutor` deletes the robot's INSIDE, CLOSE and FACING edges) or cannot
#: start from (`check_walk`: not while SITTING or LYING): a plan makes these true last, in this order.
SETTLED_LAST = ("character is CLOSE to {0}", "character is SITTING", "character is LYING", "character is FACING to {0}")
_IDS = re.compile(r"<([^>]+)> \(\d+\)")
_TAIL = re.compile(r'\s*when executing ".*$', re.S)


def short_error(error: str) -> str:
    """The simulator's message without graph ids or the script line (`soap is not close to ...`)."""
    return _IDS.sub(r"\1", _TAIL.sub("", error)).strip()


class VirtualHomeUnavailable(RuntimeError):
    """`virtualhome-eval` is not installed."""


def _package() -> Path:
    try:
        import virtualhome_eval
    except ImportError:
        raise VirtualHomeUnavailable("virtualhome-eval is not installed: pip install -e '.[virtualhome]'") from None
    return Path(virtualhome_eval.__file__).parent


def _dataset_root() -> Path:
    return _package() / "dataset" / "programs_processed_precond_nograb_morepreconds"


@lru_cache(maxsize=1)
def _goal_tables() -> tuple[dict[str, Any], dict[str, str]]:
    resources = _package() / "resources" / "virtualhome"
    goals = json.loads((resources / "task_state_LTL_formula_accurate.json").read_text())[f"scene_{SCENE_ID}"]
    id2task = json.loads((resources / "id2task.json").read_text())
    return goals, id2task


@lru_cache(maxsize=1)
def action_arities() -> dict[str, int]:
    """ACTION -> number of objects it takes, as EAI's evaluator checks them (`eval_utils.valid_actions`:
    the prompt's list plus e.g. SLEEP, which action goals ask for)."""
    from virtualhome_eval.simulation.evolving_graph.eval_utils import valid_actions

    return {name: int(arity) for name, (_, arity) in valid_actions.items()}


_MEANING = re.compile(r"^([A-Z_]+): \((\d), .*\) # (.+)$", re.M)


@lru_cache(maxsize=1)
def action_meanings() -> dict[str, str]:
    """ACTION -> EAI's one-line meaning, from its prompt's "Supported Actions List" (the same in every
    task's prompt; the first is read); an action the evaluator knows but the list omits has none."""
    prompts = json.loads((_package() / "evaluation" / "action_sequence" / "prompts" / "helm_prompts.json").read_text())
    return {m.group(1): m.group(3).strip() for m in _MEANING.finditer(prompts[0]["llm_prompt"])}


@lru_cache(maxsize=1)
def _metadata_tables() -> tuple[Any, Any, Any]:
    import virtualhome_eval.simulation.evolving_graph.utils as utils

    return utils.load_name_equivalence(), utils.load_properties_data(), utils.load_object_placing()


@dataclass(frozen=True)
class TaskGoals:
    """EAI's symbolic goal of a task: node goals (states), edge goals (relations), action goals."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    actions: list[str]


def task_goals(task_id: str) -> TaskGoals:
    from virtualhome_eval.simulation.evolving_graph.eval_utils import remove_duplicate_dicts

    goals, id2task = _goal_tables()
    vh_goal = goals[id2task[task_id]][task_id]["vh_goal"]
    nodes = [g for g in vh_goal["goal"] if {"id", "class_name", "state"} <= set(g)]
    edges = [g for g in vh_goal["goal"] if {"from_id", "to_id", "relation_type"} <= set(g)]
    return TaskGoals(remove_duplicate_dicts(nodes), remove_duplicate_dicts(edges), sorted(set(vh_goal["actions"])))


@dataclass
class GoalReport:
    """EAI's goal check on a state: matched counts and whether everything is satisfied."""

    success: bool
    node_matched: int
    edge_matched: int
    action_matched: int
    totals: tuple[int, int, int]


@dataclass
class _Episode:
    task_id: str
    planner: Any
    goals: TaskGoals
    name_to_id: dict[str, int]
    executed: list[str] = field(default_factory=list)  # script lines that succeeded
    history_states: list[dict[str, Any]] = field(default_factory=list)
    seen_rooms: set[int] = field(default_factory=set)  # the rooms the robot was in after a step
    been_close: set[int] = field(default_factory=set)  # what it was close to after a step


_LINE = re.compile(r"^\[(\w+)\]")


def _room_of(state: dict[str, Any], node: int, rooms: set[int]) -> int | None:
    return next((e["to_id"] for e in state["edges"]
                 if e["from_id"] == node and e["relation_type"] == "INSIDE" and e["to_id"] in rooms), None)


class VirtualHomeEnv:
    """One EAI task at a time; `reset(task_id)` starts it from its initial scene graph."""

    def __init__(self, task_id: str | None = None) -> None:
        _package()
        self.steps = 0
        self.failures = 0
        self.last_error_type: str | None = None
        self.last_failed: str | None = None  # the last script line that failed (an additional step aside)
        self._episode: _Episode | None = None
        self._last: tuple[str | None, bool, str] = (None, True, "")
        self._missing: list[str] = []
        if task_id is not None:
            self.reset(task_id)

    # ------------------------------------------------------------------ lifecycle
    def reset(self, scene: Any = None, *, room_type: str | None = None) -> Observation:
        """Start task `scene` (an EAI file id such as "27_2") from its initial graph."""
        if scene is None:
            if self._episode is None:
                raise ValueError("VirtualHomeEnv.reset needs a task id the first time")
            scene = self._episode.task_id
        from virtualhome_eval.simulation.evolving_graph.eval_utils import construct_planner

        equivalence, properties, placing = _metadata_tables()
        planner, _, _, _, _ = construct_planner(equivalence, properties, placing, scenegraph_id=SCENE_ID,
                                                script_id=str(scene), dataset_root=str(_dataset_root()))
        goals = task_goals(str(scene))
        *_, name_to_id = planner.get_symbolic_goal_nl(goals.nodes, goals.edges, action_goals=goals.actions)
        self._episode = _Episode(str(scene), planner, goals, dict(name_to_id),
                                 history_states=[copy.deepcopy(planner.env_state.to_dict())])
        self.steps = self.failures = 0
        self.last_error_type = None
        self.last_failed = None
        self._last = (None, True, "")
        self._missing = []
        return self.observe()

    @property
    def episode(self) -> _Episode:
        if self._episode is None:
            raise RuntimeError("VirtualHomeEnv: call reset(task_id) first")
        return self._episode

    @property
    def task_id(self) -> str:
        return self.episode.task_id

    @property
    def object_ids(self) -> dict[str, int]:
        """The task's relevant object names -> graph ids (the names EAI's prompt lists)."""
        return dict(self.episode.name_to_id)

    def action_vocabulary(self) -> ActionVocabulary:
        """EAI's actions (its evaluator's, with the meanings its prompt gives) and the names an action
        may take in this task: the task's relevant objects, the robot itself left out (EAI's rule 3)."""
        objects = tuple(name for name in self.episode.name_to_id if name != "character")
        return ActionVocabulary(actions=action_arities(), objects=objects, meanings=action_meanings(),
                                world=WORLD, seen=self.seen_names(), rule=REACH_RULE, approach="WALK",
                                effects={a: e for a, e in EFFECTS.items() if a in action_arities()},
                                settled_last=SETTLED_LAST)

    def seen_names(self) -> tuple[str, ...]:
        """The task's object names the robot has perceived so far (LLM-Planner's grounding): the
        rooms, the objects now in a room it has been in after a step, and what it has been close to.
        Read from the current graph, as the re-planner sees it when it re-plans."""
        state = self.state_dict()
        nodes = {n["id"]: n for n in state["nodes"]}
        rooms = {i for i, n in nodes.items() if n.get("category") == "Rooms"}
        seen = self.episode.seen_rooms
        return tuple(name for name, node in self.episode.name_to_id.items()
                     if name != "character" and node in nodes
                     and (node in rooms or node in self.episode.been_close or _room_of(state, node, rooms) in seen))

    def last_step_impossible(self) -> bool:
        """Whether the last step failed on an affordance: its object lacks the property the action
        needs (`envs/base.ReportsImpossibleSteps`)."""
        return self.last_error_type == "affordance_error"

    def last_step_redundant(self) -> bool:
        """Whether the last step was an additional step: its effect already held (EAI skips it)."""
        return self.last_error_type == "additional_step"

    def brief_error(self, error: str) -> str:
        """`short_error`: the message in the names an agent uses (`envs/base.BriefsErrors`)."""
        return short_error(error)

    def act_by_name(self, action: str, objects: tuple[str, ...]) -> NamedOutcome:
        """One action on the task's names (`ActsByName`). A step the simulator calls an additional
        step (already satisfied) changes nothing and is "skipped", as EAI's evaluator skips it; any
        other failure is reported with the simulator's error type and message, ids dropped."""
        outcome = step_by_name(self, action, objects)
        if outcome.result.success:
            return NamedOutcome("ok", "ok")
        if self.last_step_redundant():
            return NamedOutcome("skipped", "nothing to do: " + short_error(outcome.result.error))
        return NamedOutcome("failed", "failed: " + short_error(outcome.result.error))

    def scene_text(self) -> str:
        """The task's objects as a scene graph (`virtualhome_scene.compact_scene`)."""
        return views.compact_scene(self)

    def scene_entities(self) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
        """The whole scene graph (`virtualhome_scene.graph_entities`)."""
        return views.graph_entities(self)

    def scene_facts(self) -> frozenset[tuple[str, ...]]:
        """What holds now among the task's names (`envs/base.ShowsFacts`, `virtualhome_scene.facts`)."""
        return views.facts(self)

    def held_names(self) -> list[str]:
        held = views.holding(self)
        return held.split(", ") if held else []

    def state_key(self) -> str:
        return views.state_key(self)

    @property
    def executed(self) -> list[str]:
        """The script lines that have succeeded, in order."""
        return list(self.episode.executed)

    # ------------------------------------------------------------------ acting
    def line(self, action: str, *objects: str) -> str:
        """`[ACTION] <name> (id) ...` for names of the task's objects (KeyError for another name)."""
        ids = self.episode.name_to_id
        return " ".join([f"[{action.upper()}]", *(f"<{o}> ({ids[o]})" for o in objects)])

    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        """One action; `object_id` is an object name, or two joined by `|` for two-argument actions."""
        objects = [o for o in (object_id or "").split("|") if o]
        try:
            script = self.line(action, *objects)
        except KeyError as exc:
            return self._record(ActionResult(action, object_id, False, f"unknown object {exc.args[0]!r}"), None)
        return self.execute(script)

    def execute(self, script: str) -> StepOutcome:
        """One script line, executed as EAI's evaluator executes it (evaluation-mode executor)."""
        from virtualhome_eval.simulation.evolving_graph.checker import TemporalOrderChecker

        episode = self.episode
        match = _LINE.match(script.strip())
        action = match.group(1) if match else script
        try:
            ok, info = episode.planner.my_execute_primitive_action_eval(script)
        except Exception as exc:  # noqa: BLE001 - the simulator raises on malformed lines and unknown actions
            return self._record(ActionResult(action, script, False, f"cannot execute {script!r}: {exc}"), "unknown_error")
        self._missing = [] if ok else self._conditions(info.missing_preconds)
        if ok:
            episode.executed.append(script)
            episode.history_states.append(copy.deepcopy(episode.planner.env_state.to_dict()))
            return self._record(ActionResult(action, script, True), None)
        checked = TemporalOrderChecker(info, copy.deepcopy(episode.history_states)).run_checker()
        error_type = ERROR_TYPES.get(checked.get_error_type(), "unknown_error")
        if error_type != "additional_step":
            self.last_failed = script
        message = checked.get_error_string() or info.get_error_string() or "not executable"
        return self._record(ActionResult(action, script, False, f"{error_type}: {message}"), error_type)

    def missing_conditions(self) -> list[str]:
        """What the last failed step lacked, as the simulator's executor recorded it
        (`ExecutionInfo.missing_preconds`), in the goal lines' form (`envs/base.ReportsMissing`). A
        condition that must not hold (the robot must not sit) and one on an object outside the
        task's names are left out."""
        return list(self._missing)

    def _conditions(self, preconditions: list[tuple[bool, dict[str, Any]]]) -> list[str]:
        names = {i: name for name, i in self.episode.name_to_id.items()}
        lines = []
        for negate, condition in preconditions:
            if negate:
                continue
            if {"from_id", "relation", "to_id"} <= set(condition):
                source, target = names.get(condition["from_id"]), names.get(condition["to_id"])
                if source and target:
                    lines.append(f"{source} is {condition['relation']} to {target}")
            elif {"id", "state"} <= set(condition) and condition["id"] in names:
                lines.append(f"{names[condition['id']]} is {condition['state']}")
        return list(dict.fromkeys(lines))

    def run(self, scripts: list[str], *, stop_on_failure: bool = True) -> list[ActionResult]:
        """A whole sequence, as EAI's evaluator runs it: an additional step is skipped, any other
        failure ends the sequence (unless `stop_on_failure=False`)."""
        results = []
        for script in scripts:
            outcome = self.execute(script)
            results.append(outcome.result)
            if not outcome.result.success and stop_on_failure and self.last_error_type != "additional_step":
                break
        return results

    def _record(self, result: ActionResult, error_type: str | None) -> StepOutcome:
        self._perceive()
        self.steps += 1
        if not result.success:
            self.failures += 1
        self.last_error_type = error_type
        self._last = (result.action, result.success, result.error)
        return StepOutcome(result, self.observe)

    def _perceive(self) -> None:
        """After a step: the robot's room and what it is close to join what it has perceived."""
        episode = self.episode
        state = self.state_dict()
        rooms = {n["id"] for n in state["nodes"] if n.get("category") == "Rooms"}
        character = episode.name_to_id.get("character", CHARACTER_ID)
        room = _room_of(state, character, rooms)
        if room is not None:
            episode.seen_rooms.add(room)
        episode.been_close.update(e["to_id"] for e in state["edges"]
                                  if e["from_id"] == character and e["relation_type"] == "CLOSE")

    # ------------------------------------------------------------------ success (EAI's goal check)
    def goal_report(self) -> GoalReport:
        from virtualhome_eval.simulation.evolving_graph.eval_utils import scene_evaluate_wID

        episode, goals = self.episode, self.episode.goals
        nodes, edges, actions, success, *_ = scene_evaluate_wID(
            episode.planner.env_state.to_dict(), goals.nodes, goals.edges, CHARACTER_ID,
            action_seq=list(episode.executed), action_goals=goals.actions)
        return GoalReport(bool(success), nodes, edges, actions, (len(goals.nodes), len(goals.edges), len(goals.actions)))

    def success(self) -> bool:
        return self.goal_report().success

    # ------------------------------------------------------------------ observing
    def state_dict(self) -> dict[str, Any]:
        return self.episode.planner.env_state.to_dict()

    def observe(self) -> Observation:
        state = self.state_dict()
        ids = set(self.episode.name_to_id.values())
        nodes = {n["id"]: n for n in state["nodes"]}
        held = next((str(e["to_id"]) for e in state["edges"]
                     if e["from_id"] == CHARACTER_ID and e["relation_type"] in ("HOLDS_RH", "HOLDS_LH")), None)
        near = {e["to_id"] for e in state["edges"] if e["from_id"] == CHARACTER_ID and e["relation_type"] == "CLOSE"}
        views = tuple(ObjectView(str(i), nodes[i]["class_name"], 0.0 if i in near else 1.0, i in near,
                                 (0.0, 0.0, 0.0), state={"states": list(nodes[i].get("states", [])),
                                                         "properties": list(nodes[i].get("properties", []))})
                      for i in sorted(ids) if i in nodes)
        action, ok, error = self._last
        return Observation((0, 0, 0, 0), (0.0, 0.0), held, views, action, ok, error)

    def metadata(self) -> dict[str, Any]:
        action, ok, _ = self._last
        return {"task_id": self.task_id, "objects": self.objects_metadata(), "lastAction": action,
                "lastActionSuccess": ok, "executed": self.executed}

    def objects_metadata(self) -> list[dict[str, Any]]:
        nodes = {n["id"]: n for n in self.state_dict()["nodes"]}
        return [{"objectId": str(i), "objectType": name, "states": list(nodes[i].get("states", [])),
                 "properties": list(nodes[i].get("properties", []))}
                for name, i in self.episode.name_to_id.items() if i in nodes]

    def navigation_grid(self) -> NavigationGrid:
        return NavigationGrid(1, 1, (0.0, 0.0), 1.0, frozenset())  # VirtualHome walks by name: no grid

    def render(self, path: str | Path) -> Path:
        """The current scene graph as JSON (no images in a symbolic simulator)."""
        path = Path(path)
        path.write_text(json.dumps(self.state_dict()))
        return path
