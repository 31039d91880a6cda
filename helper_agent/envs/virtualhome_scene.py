"""What a method sees of a VirtualHome task: scene graphs read from the live environment.

`VirtualHomeEnv` shows these views to the methods that act on it (`scene_text`, `scene_entities`,
`held_names`, `state_key`); each is read from the evolving graph after the steps so far
(`VirtualHomeEnv.state_dict()`) and the task's names, never from a gold program:

- `compact_scene`: P-RAG's per-step scene graph in the form it has on our world, one line per object,
  `washing_machine: closed, off, plugged_in; on basket_for_clothes; in dining_room`, over the task's
  relevant objects (the objects EAI's prompt gives every model, the only names its evaluator
  accepts), then where the robot is, what it is close to and what it holds.
- `facts`: what holds now among the task's names (the robot as `character`): each named object's
  states (`("tv", "ON")`) and every relation the graph has between two named objects
  (`("character", "HOLDS_RH", "cellphone")`, `("plate", "INSIDE", "dishwasher")`), in the graph's own
  words, the words EAI's prompt states goal conditions in.
- `graph_entities`: the whole scene graph (about 290 nodes in scene 1: rooms, furniture, walls,
  appliances, the task's objects) as entities and `inside`/`on` edges for EmbodiedRAG's vector store.
  A relevant object's entity id is its EAI name; any other node's is `<class>_<graph id>`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol


class LiveGraph(Protocol):
    """What the views read: the evolving graph and the task's names (`VirtualHomeEnv` is one)."""

    @property
    def object_ids(self) -> dict[str, int]: ...

    def state_dict(self) -> dict[str, Any]: ...

CHARACTER = "character"
RELATIONS = {"INSIDE": "inside", "ON": "on"}
HOLDS = ("HOLDS_RH", "HOLDS_LH")


@dataclass
class Graph:
    """One state of the scene graph, indexed."""

    nodes: dict[int, dict[str, Any]]
    edges: list[dict[str, Any]]
    names: dict[str, int]  # the task's relevant names -> ids (character included)
    by_id: dict[int, str]  # the other way

    @classmethod
    def of(cls, env: LiveGraph) -> Graph:
        state = env.state_dict()
        names = env.object_ids
        return cls({n["id"]: n for n in state["nodes"]}, state["edges"], names, {i: n for n, i in names.items()})

    @property
    def character(self) -> int:
        return self.names[CHARACTER]

    @property
    def rooms(self) -> set[int]:
        return {i for i, n in self.nodes.items() if n.get("category") == "Rooms"}

    def out(self, node: int, *relations: str) -> list[int]:
        return [e["to_id"] for e in self.edges if e["from_id"] == node and e["relation_type"] in relations]

    def room_of(self, node: int) -> int | None:
        rooms = self.rooms
        return next((r for r in self.out(node, "INSIDE") if r in rooms), None)

    def held(self) -> list[int]:
        return self.out(self.character, *HOLDS)

    def close(self) -> list[int]:
        return self.out(self.character, "CLOSE")

    def label(self, node: int) -> str:
        return self.by_id.get(node) or f"{self.nodes[node]['class_name']}_{node}"


def state_key(env: LiveGraph) -> str:
    """The whole simulator state (every node's states and properties, every edge) as a short digest.
    VirtualHome's simulator is deterministic: a step taken from a state with the same key ends as it
    ended then, so the step-wise methods' `refuse_futile` keys what they tried by it."""
    state = env.state_dict()
    nodes = sorted((n["id"], sorted(n.get("states") or [])) for n in state["nodes"])
    edges = sorted((e["from_id"], e["relation_type"], e["to_id"]) for e in state["edges"])
    return hashlib.sha1(json.dumps([nodes, edges]).encode("utf-8")).hexdigest()[:16]


def states(node: dict[str, Any]) -> str:
    return ", ".join(s.lower() for s in sorted(node.get("states") or []))


def compact_scene(env: LiveGraph) -> str:
    """P-RAG's scene-graph text for the current state (see the module docstring)."""
    g = Graph.of(env)
    relevant = {i for n, i in g.names.items() if n != CHARACTER}
    rooms = g.rooms
    lines = []
    for name, node in g.names.items():
        if name == CHARACTER or node in rooms or node not in g.nodes:
            continue
        parts = [states(g.nodes[node])] if g.nodes[node].get("states") else []
        for e in g.edges:
            if e["from_id"] == node and e["relation_type"] in RELATIONS and e["to_id"] in relevant and e["to_id"] not in rooms:
                parts.append(f"{RELATIONS[e['relation_type']]} {g.label(e['to_id'])}")
        room = g.room_of(node)
        if room is not None:
            parts.append(f"in {g.nodes[room]['class_name']}")
        lines.append(f"{name}: {'; '.join(parts)}" if parts else name)
    here = g.room_of(g.character)
    near = [g.label(i) for i in g.close() if i in relevant and i not in rooms]
    lines.append(f"You are in {g.nodes[here]['class_name'] if here is not None else 'no room'}"
                 + (f", close to {', '.join(sorted(near))}" if near else ""))
    return "\n".join(lines)


def facts(env: LiveGraph) -> frozenset[tuple[str, ...]]:
    """The task's named objects' states and relations now (see the module docstring)."""
    g = Graph.of(env)
    found: set[tuple[str, ...]] = set()
    for name, node in g.names.items():
        found.update((name, str(s).upper()) for s in (g.nodes.get(node, {}).get("states") or []))
    for e in g.edges:
        source, target = g.by_id.get(e["from_id"]), g.by_id.get(e["to_id"])
        if source is not None and target is not None:
            found.add((source, str(e["relation_type"]).upper(), target))
    return frozenset(found)


def holding(env: LiveGraph) -> str | None:
    g = Graph.of(env)
    held = [g.label(i) for i in g.held()]
    return ", ".join(held) if held else None


def graph_entities(env: LiveGraph) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The whole graph as entity dicts (`id`, `label`, `attributes`) and (source, relation, target)
    edges, the robot left out (it is the agent, not an object of the scene)."""
    g = Graph.of(env)
    entities, edges = [], []
    for node, data in g.nodes.items():
        if node == g.character:
            continue
        attributes = {"state": states(data)} if data.get("states") else {}
        entities.append({"id": g.label(node), "label": data["class_name"], "attributes": attributes})
    for e in g.edges:
        relation = RELATIONS.get(e["relation_type"])
        if relation and e["from_id"] != g.character and e["from_id"] in g.nodes and e["to_id"] in g.nodes:
            edges.append((g.label(e["from_id"]), relation, g.label(e["to_id"])))
    return entities, edges
