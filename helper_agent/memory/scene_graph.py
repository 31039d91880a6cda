"""EmbodiedRAG's scene graph in the vector store.

One document per entity — its label as content (e.g. "Mug"), its attributes as metadata — and
one entry per edge ("Mug|1" --in--> "Cabinet|3", "Faucet|2" --controls--> "SinkBasin|1"). The
graph is updated incrementally as the world changes (`upsert_entities`, `remove_entities`,
`add_edges`, `remove_edges`, `set_edges`, or `sync_objects` from AI2-THOR object metadata).

Retrieval follows EmbodiedRAG: the planner names the task-relevant entities and the attributes it
needs — `[("mug", ["isDirty"]), ("coffee machine", ["isToggled"])]` — and `retrieve_subgraph` returns,
for each, the entities whose label is similar enough (cosine similarity ≥ `threshold`, at most `k`
per query), the edges among the retrieved entities only (the induced subgraph), and for each entity
only the attributes asked for. `SubGraph.to_json()` is what enters the prompt.

Many graphs share one collection: each memory instance works on its `graph_id` (e.g. one per
episode) and `clear()` removes only that graph.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from helper_agent.memory.base import BaseMemory, Hit
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.memory.store import Entry, where_all

ALL_ATTRIBUTES = "*"

DEFAULT_THOR_ATTRIBUTES = (
    "isOpen",
    "isToggled",
    "isSliced",
    "isCooked",
    "isDirty",
    "isFilledWithLiquid",
    "fillLiquid",
    "isPickedUp",
    "isBroken",
    "isUsedUp",
    "simbotIsCooked",
    "simbotIsBoiled",
    "simbotIsFilledWithCoffee",
)

# Receptacles things are "in" rather than "on" (everything else: "on").
CONTAINERS = frozenset(
    {
        "Fridge",
        "Cabinet",
        "Drawer",
        "Microwave",
        "Safe",
        "Box",
        "GarbageCan",
        "SinkBasin",
        "Sink",
        "BathtubBasin",
        "Bathtub",
        "Toaster",
        "Pot",
        "Pan",
        "Bowl",
        "Mug",
        "Cup",
        "Kettle",
        "Dresser",
        "LaundryHamper",
        "CoffeeMachine",
        "ToiletPaperHanger",
        "TowelHolder",
        "Toilet",
    }
)


class SceneEntity(BaseModel):
    """An entity: stable id, label (object type or name), attributes (JSON values)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["entity"] = "entity"
    id: str = Field(min_length=1)
    label: str
    attributes: dict[str, Any] = Field(default_factory=dict)


class SceneEdge(BaseModel):
    """A directed relation between two entities, e.g. (Mug|1, in, Cabinet|3)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["edge"] = "edge"
    source: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    target: str = Field(min_length=1)

    @property
    def id(self) -> str:
        return edge_id(self.source, self.relation, self.target)


SceneRecord = Annotated[SceneEntity | SceneEdge, Field(discriminator="type")]


class EntityQuery(BaseModel):
    """One entity the planner asks for, and which of its attributes it needs ("*" for all)."""

    label: str
    attributes: list[str] = Field(default_factory=list)


class SubGraphNode(BaseModel):
    id: str
    label: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    score: float = 0.0
    matched: list[str] = Field(default_factory=list, description="The query labels that retrieved it.")


class SubGraph(BaseModel):
    nodes: list[SubGraphNode] = Field(default_factory=list)
    edges: list[SceneEdge] = Field(default_factory=list)

    def to_json(self, *, with_scores: bool = False, indent: int | None = None) -> str:
        """{"nodes": [{"id", "label", "attributes"}], "edges": [{"source", "relation", "target"}]}."""
        nodes = []
        for n in self.nodes:
            item: dict[str, Any] = {"id": n.id, "label": n.label, "attributes": n.attributes}
            if with_scores:
                item["score"] = round(n.score, 4)
            nodes.append(item)
        edges = [{"source": e.source, "relation": e.relation, "target": e.target} for e in self.edges]
        return json.dumps(
            {"nodes": nodes, "edges": edges}, ensure_ascii=False, indent=indent, sort_keys=False
        )

    @property
    def node_ids(self) -> list[str]:
        return [n.id for n in self.nodes]


def edge_id(source: str, relation: str, target: str) -> str:
    return "e:" + hashlib.sha1(json.dumps([source, relation, target]).encode("utf-8")).hexdigest()


def humanize_label(label: str) -> str:
    """ "CoffeeMachine" → "coffee machine" (what is embedded)."""
    return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", label).replace("_", " ").split()).lower()


def _as_query(item: Any) -> EntityQuery:
    if isinstance(item, EntityQuery):
        return item
    if isinstance(item, str):
        return EntityQuery(label=item)
    if isinstance(item, Mapping):
        return EntityQuery.model_validate(item)
    if isinstance(item, Sequence) and len(item) == 2:
        label, attrs = item
        attrs = [attrs] if isinstance(attrs, str) else list(attrs or [])
        return EntityQuery(label=str(label), attributes=[str(a) for a in attrs])
    raise TypeError(f"expected (label, [attributes]), a label, or an EntityQuery; got {item!r}")


class SceneGraphMemory(BaseMemory):
    """The scene graph of one `graph_id` (see the module docstring)."""

    kind: ClassVar[str] = "scene_graph"
    record_type: ClassVar[Any] = SceneRecord
    default_collection: ClassVar[str] = "helper_scene_graph"

    def __init__(self, *, graph_id: str = "default", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not graph_id:
            raise ValueError("graph_id must not be empty")
        self.graph_id = graph_id

    # ----------------------------------------------------------------------------------- layout
    @property
    def entities(self) -> Any:
        return self._col()

    @property
    def edges(self) -> Any:
        return self._col("_edges")

    def _eid(self, entity_id: str) -> str:
        return f"{self.graph_id}::{entity_id}"

    def _edge_vector(self) -> np.ndarray:
        vector = np.zeros(self.embedder.dim, dtype=np.float32)
        vector[0] = 1.0
        return vector

    def check_record(self, record: Any, where: str) -> None:
        if isinstance(record, SceneEntity):
            self.check_key(record.label, where, "label")
            self.check_value(
                json.dumps(record.attributes, ensure_ascii=False, default=str), where, "attributes"
            )
        else:
            for field in ("source", "relation", "target"):
                self.check_key(getattr(record, field), where, field)

    # ----------------------------------------------------------------------------------- writes
    def add(self, records: Iterable[Any]) -> list[str]:
        """Upsert entities and add edges (records are `SceneEntity` or `SceneEdge`, or their dicts)."""
        records = self.coerce(records)
        entities = [r for r in records if isinstance(r, SceneEntity)]
        edges = [r for r in records if isinstance(r, SceneEdge)]
        with self.store.write_lock():
            self._upsert_entities(entities)
            self._add_edges(edges)
        return [r.id for r in records]

    def upsert_entities(self, entities: Iterable[SceneEntity | Mapping[str, Any]]) -> list[str]:
        records = self.coerce(
            [{"type": "entity", **dict(e)} if isinstance(e, Mapping) else e for e in entities]
        )
        with self.store.write_lock():
            self._upsert_entities(records)
        return [r.id for r in records]

    def _upsert_entities(self, entities: list[SceneEntity]) -> None:
        if not entities:
            return
        vectors = self._embed([humanize_label(e.label) or e.label for e in entities])
        rows = []
        for entity, vector in zip(entities, vectors, strict=True):
            meta: dict[str, Any] = {
                "graph": self.graph_id,
                "entity_id": entity.id,
                "label": entity.label,
                "attributes": json.dumps(entity.attributes, ensure_ascii=False, default=str, sort_keys=True),
            }
            for key, value in entity.attributes.items():
                if isinstance(value, bool | int | float | str):
                    meta[f"a.{key}"] = value
            rows.append(
                Entry(id=self._eid(entity.id), document=entity.label, metadata=meta, embedding=vector)
            )
        self.entities.upsert(rows)

    def remove_entities(self, entity_ids: Iterable[str]) -> int:
        """Remove entities and every edge touching them; returns how many entities were removed."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return 0
        with self.store.write_lock():
            found = self.entities.get(
                ids=[self._eid(i) for i in ids], include_documents=False, include_metadata=False
            )
            edge_where = {
                "$and": [
                    {"graph": self.graph_id},
                    {"$or": [{"source": {"$in": ids}}, {"target": {"$in": ids}}]},
                ]
            }
            if self.edges.count(edge_where):
                self.edges.delete(where=edge_where)
            if found:
                self.entities.delete(ids=[e.id for e in found])
        return len(found)

    def add_edges(self, edges: Iterable[SceneEdge | Mapping[str, Any] | Sequence[str]]) -> int:
        records = self.coerce([_edge_dict(e) for e in edges])
        with self.store.write_lock():
            self._add_edges(records)
        return len(records)

    def _add_edges(self, edges: list[SceneEdge]) -> None:
        if not edges:
            return
        vector = self._edge_vector()
        self.edges.upsert(
            [
                Entry(
                    id=f"{self.graph_id}::{e.id}",
                    document=f"{e.source} {e.relation} {e.target}",
                    metadata={
                        "graph": self.graph_id,
                        "source": e.source,
                        "relation": e.relation,
                        "target": e.target,
                    },
                    embedding=vector,
                )
                for e in edges
            ]
        )

    def remove_edges(self, edges: Iterable[SceneEdge | Mapping[str, Any] | Sequence[str]]) -> int:
        records = [SceneEdge.model_validate(_edge_dict(e)) for e in edges]
        if not records:
            return 0
        ids = [f"{self.graph_id}::{e.id}" for e in records]
        found = self.edges.get(ids=ids, include_documents=False, include_metadata=False)
        if found:
            self.edges.delete(ids=[e.id for e in found])
        return len(found)

    def set_edges(self, source: str, relation: str, targets: Iterable[str]) -> None:
        """Replace `source`'s `relation` edges by edges to `targets` (e.g. an object moved)."""
        targets = list(dict.fromkeys(targets))
        with self.store.write_lock():
            where = where_all(graph=self.graph_id, source=source, relation=relation)
            current = {
                str(e.metadata.get("target")): e.id
                for e in self.edges.get(where=where, include_documents=False)
            }
            gone = [eid for target, eid in current.items() if target not in targets]
            if gone:
                self.edges.delete(ids=gone)
            new = [SceneEdge(source=source, relation=relation, target=t) for t in targets if t not in current]
            self._add_edges(new)

    def update(
        self,
        *,
        entities: Iterable[SceneEntity | Mapping[str, Any]] = (),
        removed: Iterable[str] = (),
        add_edges: Iterable[Any] = (),
        remove_edges: Iterable[Any] = (),
    ) -> None:
        """One incremental change: upsert entities, remove entities (and their edges), edit edges."""
        with self.store.write_lock():
            if removed:
                self.remove_entities(removed)
            entities = list(entities)
            if entities:
                self.upsert_entities(entities)
            remove_edges = list(remove_edges)
            if remove_edges:
                self.remove_edges(remove_edges)
            add_edges = list(add_edges)
            if add_edges:
                self.add_edges(add_edges)

    def sync_objects(
        self, objects: Sequence[Mapping[str, Any]], attributes: Sequence[str] = DEFAULT_THOR_ATTRIBUTES
    ) -> None:
        """Make the graph equal to AI2-THOR object metadata (`event.metadata["objects"]`).

        Entities are objects (label = objectType); edges are `in`/`on` from `parentReceptacles`
        and `controls` from `controlledObjects`. Only what changed is written.
        """
        entities, edges = graph_from_thor_objects(objects, attributes)
        with self.store.write_lock():
            current = {
                str(e.metadata.get("entity_id")): e
                for e in self.entities.get(where={"graph": self.graph_id}, include_documents=True)
            }
            wanted = {e.id for e in entities}
            gone = [eid for eid in current if eid not in wanted]
            if gone:
                self.remove_entities(gone)
            changed = []
            for entity in entities:
                row = current.get(entity.id)
                attrs = json.dumps(entity.attributes, ensure_ascii=False, default=str, sort_keys=True)
                if row is None or row.document != entity.label or row.metadata.get("attributes") != attrs:
                    changed.append(entity)
            self._upsert_entities(changed)
            current_edges = {
                e.id: e for e in self.edges.get(where={"graph": self.graph_id}, include_documents=False)
            }
            wanted_edges = {f"{self.graph_id}::{e.id}": e for e in edges}
            stale = [eid for eid in current_edges if eid not in wanted_edges]
            if stale:
                self.edges.delete(ids=stale)
            self._add_edges([e for eid, e in wanted_edges.items() if eid not in current_edges])

    def clear(self) -> None:
        """Remove this graph (other graph ids are untouched)."""
        with self.store.write_lock():
            for col in (self.entities, self.edges):
                if col.count({"graph": self.graph_id}):
                    col.delete(where={"graph": self.graph_id})

    def delete(self, ids: Iterable[str]) -> int:
        """Delete entities by id (with their edges) and edges by `SceneEdge.id`."""
        ids = list(ids)
        edge_ids = [i for i in ids if i.startswith("e:")]
        n = self.remove_entities([i for i in ids if not i.startswith("e:")])
        if edge_ids:
            found = self.edges.get(ids=[f"{self.graph_id}::{i}" for i in edge_ids], include_documents=False)
            if found:
                self.edges.delete(ids=[e.id for e in found])
            n += len(found)
        return n

    # ------------------------------------------------------------------------------------ reads
    @staticmethod
    def _entity(entry: Entry) -> SceneEntity:
        return SceneEntity(
            id=str(entry.metadata.get("entity_id")),
            label=str(entry.document or entry.metadata.get("label", "")),
            attributes=json.loads(entry.metadata.get("attributes") or "{}"),
        )

    def get_entity(self, entity_id: str) -> SceneEntity | None:
        rows = self.entities.get(ids=[self._eid(entity_id)])
        return self._entity(rows[0]) if rows else None

    def list_entities(self) -> list[SceneEntity]:
        return sorted(
            (self._entity(e) for e in self.entities.get(where={"graph": self.graph_id})), key=lambda e: e.id
        )

    def list_edges(self) -> list[SceneEdge]:
        rows = self.edges.get(where={"graph": self.graph_id}, include_documents=False)
        return sorted(
            (
                SceneEdge(
                    source=e.metadata["source"], relation=e.metadata["relation"], target=e.metadata["target"]
                )
                for e in rows
            ),
            key=lambda e: (e.source, e.relation, e.target),
        )

    def list(self) -> list[Any]:
        return [*self.list_entities(), *self.list_edges()]

    def count(self) -> int:
        """Number of entities in this graph."""
        return self.entities.count({"graph": self.graph_id})

    def retrieve(
        self, query: Any, k: int | None = None, *, threshold: float | None = None
    ) -> list[Hit[SceneEntity]]:
        """Entities whose label is closest to `query` (one label), score ≥ threshold (default: none)."""
        q = _as_query(query)
        k = int(k or self.settings.scene_graph_k)
        rows = self.entities.query(
            self._embed([humanize_label(q.label) or q.label]), k, {"graph": self.graph_id}
        )[0]
        return [
            Hit(id=str(e.metadata.get("entity_id")), score=e.score, record=self._entity(e))
            for e in rows
            if threshold is None or e.score >= threshold
        ]

    def retrieve_subgraph(
        self,
        queries: Iterable[Any],
        k: int | None = None,
        threshold: float | None = None,
    ) -> SubGraph:
        """The subgraph for `queries` = [(label, [attributes]), ...] (see the module docstring)."""
        items = [_as_query(q) for q in queries]
        k = int(k or self.settings.scene_graph_k)
        threshold = self.settings.scene_graph_threshold if threshold is None else float(threshold)
        if not items:
            return SubGraph()
        for q in items:
            if not q.label.strip():
                raise InvalidRecordError("retrieve_subgraph: a query label is empty")
        vectors = self._embed([humanize_label(q.label) or q.label for q in items])
        results = self.entities.query(vectors, k, {"graph": self.graph_id})
        nodes: dict[str, SubGraphNode] = {}
        asked: dict[str, set[str]] = {}
        for q, rows in zip(items, results, strict=True):
            for e in rows:
                if e.score < threshold:
                    continue
                entity = self._entity(e)
                node = nodes.get(entity.id)
                if node is None:
                    node = nodes[entity.id] = SubGraphNode(id=entity.id, label=entity.label, score=e.score)
                    asked[entity.id] = set()
                    node.attributes = {}
                node.score = max(node.score, e.score)
                node.matched.append(q.label)
                wanted = set(entity.attributes) if ALL_ATTRIBUTES in q.attributes else set(q.attributes)
                asked[entity.id] |= wanted
                node.attributes = {
                    a: entity.attributes[a] for a in sorted(asked[entity.id]) if a in entity.attributes
                }
        edges: list[SceneEdge] = []
        if nodes:
            ids = list(nodes)
            rows = self.edges.get(
                where={
                    "$and": [{"graph": self.graph_id}, {"source": {"$in": ids}}, {"target": {"$in": ids}}]
                },
                include_documents=False,
            )
            edges = sorted(
                (
                    SceneEdge(
                        source=e.metadata["source"],
                        relation=e.metadata["relation"],
                        target=e.metadata["target"],
                    )
                    for e in rows
                ),
                key=lambda e: (e.source, e.relation, e.target),
            )
        ordered = sorted(nodes.values(), key=lambda n: (-n.score, n.id))
        return SubGraph(nodes=ordered, edges=edges)


def _edge_dict(edge: Any) -> dict[str, Any]:
    if isinstance(edge, SceneEdge):
        return edge.model_dump()
    if isinstance(edge, Mapping):
        return {"type": "edge", **dict(edge)}
    if isinstance(edge, Sequence) and not isinstance(edge, str) and len(edge) == 3:
        return {"type": "edge", "source": edge[0], "relation": edge[1], "target": edge[2]}
    raise InvalidRecordError(f"expected an edge (source, relation, target); got {edge!r}")


def graph_from_thor_objects(
    objects: Sequence[Mapping[str, Any]], attributes: Sequence[str] = DEFAULT_THOR_ATTRIBUTES
) -> tuple[list[SceneEntity], list[SceneEdge]]:
    """Entities and edges from AI2-THOR object metadata (see `SceneGraphMemory.sync_objects`)."""
    entities: list[SceneEntity] = []
    edges: list[SceneEdge] = []
    types = {str(o.get("objectId")): str(o.get("objectType", "")) for o in objects}
    for obj in objects:
        oid = str(obj.get("objectId") or "")
        if not oid:
            raise InvalidRecordError("AI2-THOR object without objectId")
        attrs = {a: obj[a] for a in attributes if a in obj and obj[a] is not None}
        entities.append(
            SceneEntity(id=oid, label=str(obj.get("objectType") or oid.split("|")[0]), attributes=attrs)
        )
        parents = obj.get("parentReceptacles") or []
        direct = obj.get("simbotDirectParent")
        for parent in [direct] if direct else parents[:1]:
            if parent in types:
                relation = "in" if types[parent] in CONTAINERS else "on"
                edges.append(SceneEdge(source=oid, relation=relation, target=parent))
        for controlled in obj.get("controlledObjects") or []:
            if controlled in types:
                edges.append(SceneEdge(source=oid, relation="controls", target=controlled))
    return entities, edges
