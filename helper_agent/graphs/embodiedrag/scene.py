"""The agent's side of one episode: what it has seen as a scene graph, and acting on entity ids.

The scene graph is built from the executor's object tracker, i.e. from the observations the agent
received (what it has seen, where, in what state), never from the simulator's ground truth. Entity
ids are short aliases (`Mug_2`) given in the order objects are first seen, so prompts spend few
tokens per entity and the grammar stays small; the alias table maps them back to environment ids.

`EpisodeScene.sync()` writes what changed into the `SceneGraphMemory` (one document per entity,
`in`/`on`/`controls` edges) after every step; `retrieve()` asks it for the subgraph of the queries
and adds each retrieved entity's neighbours (its receptacle, what it holds, what it controls);
`full()` is the whole known graph (the baseline). `act()` runs one ReAct action through the
shared executor with its object bound to the named entity.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from helper_agent.envs.base import Environment
from helper_agent.graphs.embodiedrag.actions import BY_NAME, ReactAnswer
from helper_agent.graphs.object_actions import ShortIds
from helper_agent.memory.scene_graph import ALL_ATTRIBUTES, SceneGraphMemory, graph_from_thor_objects
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind
from helper_agent.tools.errors import EpisodeLimit, ObjectNotFound, StepFailed
from helper_agent.tools.executor import Executor, ExecutorConfig
from helper_agent.world.catalog import Catalog, load_catalog

# Tracker attribute -> AI2-THOR attribute, and the catalog flag that makes it meaningful for a class.
STATE_ATTRIBUTES: tuple[tuple[str, str, str], ...] = (
    ("open", "isOpen", "openable"),
    ("on", "isToggled", "toggleable"),
    ("dirty", "isDirty", "dirtyable"),
    ("cooked", "isCooked", "cookable"),
    ("filled", "isFilledWithLiquid", "can_fill_with_liquid"),
    ("sliced", "isSliced", "sliceable"),
)
THOR_ATTRIBUTES = tuple(a for _, a, _ in STATE_ATTRIBUTES) + ("isPickedUp",)


@dataclass
class GraphView:
    """A (sub)graph as the prompt shows it: nodes (id, label, attributes) and edges."""

    nodes: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [n[0] for n in self.nodes]

    def render(self) -> str:
        """One line per entity: `Mug_2: isDirty=true; in Cabinet_1` (the label is the id's prefix)."""
        out_edges: dict[str, list[str]] = {}
        for source, relation, target in self.edges:
            out_edges.setdefault(source, []).append(f"{relation} {target}")
        lines = []
        for oid, _label, attrs in self.nodes:
            parts = [", ".join(f"{k}={_value(v)}" for k, v in sorted(attrs.items()))] if attrs else []
            parts += out_edges.get(oid, [])
            lines.append(f"{oid}: {'; '.join(parts)}" if parts else oid)
        return "\n".join(lines) if lines else "(nothing seen yet)"


def _value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class EpisodeScene(ShortIds):
    """The executor, the alias table and the scene-graph memory of one episode."""

    def __init__(self, env: Environment, memory: SceneGraphMemory, *, catalog: Catalog | None = None,
                 executor_config: ExecutorConfig | None = None) -> None:
        self.env = env
        self.memory = memory
        self.catalog = catalog or load_catalog()
        self.executor = Executor(env, config=executor_config or ExecutorConfig(), catalog=self.catalog)
        super().__init__()  # ShortIds: alias (environment id -> short id) and env_id (back)
        self.objects: dict[str, dict[str, Any]] = {}  # entity id -> THOR-shaped metadata, as last synced

    # ------------------------------------------------------------------ what has been seen
    def observed(self) -> list[dict[str, Any]]:
        """What the tracker knows, as AI2-THOR-shaped object metadata keyed by alias."""
        tracker = self.executor.tracker
        objects = []
        for oid, tracked in sorted(tracker.objects.items(), key=lambda kv: (kv[1].last_seen, kv[0])):
            if tracked.gone:
                continue
            self.alias_of(oid, tracked.object_type)
        for oid, tracked in tracker.objects.items():
            if tracked.gone:
                continue
            info = self.catalog.get(tracked.object_type) if tracked.object_type in self.catalog else None
            meta: dict[str, Any] = {"objectId": self.alias[oid], "objectType": tracked.object_type}
            for attribute, thor, flag in STATE_ATTRIBUTES:
                if info is not None and getattr(info, flag, False):
                    meta[thor] = tracked.has(attribute)
            if info is not None and info.pickupable:
                meta["isPickedUp"] = tracker.held_id == oid
            parent = tracked.parent_id
            if parent and parent in self.alias and not tracker.objects[parent].gone:
                meta["parentReceptacles"] = [self.alias[parent]]
            meta["controlledObjects"] = [self.alias[c] for c in tracked.controls if c in self.alias]
            objects.append(meta)
        return objects

    def sync(self) -> int:
        """Write the observed graph into the memory (only what changed is re-embedded); entity count."""
        objects = self.observed()
        self.memory.sync_objects(objects, THOR_ATTRIBUTES)
        self.objects = {o["objectId"]: o for o in objects}
        return len(objects)

    @property
    def held(self) -> str | None:
        held = self.executor.tracker.held_id
        return self.alias.get(held) if held else None

    # ------------------------------------------------------------------ the graphs the prompt shows
    def _node(self, eid: str, wanted: set[str] | None = None) -> tuple[str, str, dict[str, Any]]:
        meta = self.objects[eid]
        attrs = {a: meta[a] for a in THOR_ATTRIBUTES if a in meta and (wanted is None or a in wanted)}
        return eid, str(meta["objectType"]), attrs

    def _edges_among(self, ids: set[str]) -> list[tuple[str, str, str]]:
        _, edges = graph_from_thor_objects([self.objects[i] for i in sorted(ids)], THOR_ATTRIBUTES)
        return [(e.source, e.relation, e.target) for e in edges]

    def full(self) -> GraphView:
        """The whole known scene graph, read back from the memory (the baseline's prompt)."""
        entities = self.memory.list_entities()
        edges = self.memory.list_edges()
        return GraphView([(e.id, e.label, dict(e.attributes)) for e in entities],
                         [(e.source, e.relation, e.target) for e in edges])

    def retrieve(self, queries: Sequence[tuple[str, list[str]]], k: int, threshold: float | None,
                 focus: Iterable[str] = (), all_attributes: bool = True) -> GraphView:
        """The subgraph of `queries` (EmbodiedRAG's retrieval) plus neighbours and `focus` entities."""
        asked = [(label, [ALL_ATTRIBUTES] if all_attributes or not attrs else attrs) for label, attrs in queries]
        sub = self.memory.retrieve_subgraph(asked, k=k, threshold=threshold) if asked else None
        chosen: dict[str, set[str] | None] = {}
        if sub is not None:
            for node in sub.nodes:
                chosen[node.id] = None if all_attributes else set(node.attributes) | {"isPickedUp"}
        for eid in focus:
            if eid in self.objects:
                chosen.setdefault(eid, None)
        # Neighbours: the receptacle each entity is in/on, what it holds, what it controls.
        children: dict[str, list[str]] = {}
        for eid, meta in self.objects.items():
            for parent in meta.get("parentReceptacles") or []:
                children.setdefault(parent, []).append(eid)
        neighbours: list[str] = []
        for eid in list(chosen):
            meta = self.objects.get(eid)
            if meta is None:
                continue
            neighbours += list(meta.get("parentReceptacles") or [])
            neighbours += list(meta.get("controlledObjects") or [])
            neighbours += children.get(eid, [])
            neighbours += [c for c, m in self.objects.items() if eid in (m.get("controlledObjects") or [])]
        for eid in neighbours:
            if eid in self.objects:
                chosen.setdefault(eid, None)
        ids = [eid for eid in chosen if eid in self.objects]
        nodes = [self._node(eid, chosen[eid]) for eid in ids]
        return GraphView(nodes, self._edges_among(set(ids)))

    # ------------------------------------------------------------------ acting
    def look_around(self) -> str:
        """Turn once in place looking a little down, as every method's agent starts."""
        try:
            self.executor.look_around()
        except StepFailed:
            pass
        return "looked around"

    def _ref(self, eid: str) -> ObjectRef:
        oid = self.env_id[eid]
        otype = self.executor.env_type(oid)
        ref = ObjectRef(instance_key=eid, object_class=otype)
        self.executor.grounding.bind(ref, oid)
        return ref

    def act(self, answer: ReactAnswer) -> str:
        """Run one action; the observation text. `EpisodeLimit` passes through (the episode is over)."""
        spec = BY_NAME[answer.action]
        executor = self.executor
        executor.bindings = {}
        if answer.action == "search":
            cls = str(answer.arg)
            ref = ObjectRef(instance_key=f"search:{cls}", object_class=cls)
            try:
                found = executor.find(ref)
            except ObjectNotFound:
                return f"searched: no {cls} found"
            except StepFailed as failed:
                return f"search failed: {self.aliased(failed.error)}"
            finally:
                executor.bindings = {}
            self.sync()
            return f"found {self.alias.get(found or '', found)}"
        if spec.kind is None:  # done() is the graph's
            return ""
        if spec.kind is SubgoalKind.PUT_DOWN:
            held = self.held
            if held is None:
                return "nothing to put down; hands empty"
            subgoal = Subgoal(SubgoalKind.PUT_DOWN, target=self._ref(held))
        elif spec.kind in (SubgoalKind.PLACE, SubgoalKind.POUR):
            held = self.held
            if held is None:
                return f"failed: you hold nothing to {answer.action}"
            subgoal = Subgoal(spec.kind, target=self._ref(held), receptacle=self._ref(str(answer.arg)))
        else:
            subgoal = Subgoal(spec.kind, target=self._ref(str(answer.arg)))
        result = executor.run([subgoal])
        self.sync()
        if result.ended_by_limit:
            raise EpisodeLimit(result.status)
        held = self.held
        holding = f"; holding {held}" if held else "; hands empty"
        if result.status == "done":
            return f"done{holding}"
        if result.status == "not_found":
            return f"failed: no {result.missing} found{holding}"
        return f"failed: {self.aliased(str(result.error))}{holding}"
