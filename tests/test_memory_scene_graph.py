"""EmbodiedRAG's scene-graph memory: subgraph selection on hand-computed cases, incremental updates."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.scene_graph import (
    SceneEdge,
    SceneEntity,
    SceneGraphMemory,
    graph_from_thor_objects,
    humanize_label,
)
from helper_agent.memory.store import VectorStore


class TableEmbedder:
    name = "table:4"
    dim = 4

    def __init__(self, table):
        self.table = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.extend(texts)
        return np.stack([self.table[t] for t in texts])


TABLE = {
    "mug": [1, 0, 0, 0],
    "cup": [0.8, 0.6, 0, 0],  # cos(mug, cup) = 0.8
    "coffee machine": [0, 1, 0, 0],
    "cabinet": [0, 0, 1, 0],
    "faucet": [0, 0, 0, 1],
    "sink basin": [0, 0, 0.6, 0.8],  # cos(sink basin, faucet) = 0.8, cos(sink basin, cabinet) = 0.6
    "counter top": [0.5, 0.5, 0.5, 0.5],
    "drinking vessel": [0.6, 0.8, 0, 0],  # mug 0.6, cup 0.96, coffee machine 0.8, counter top 0.7
}


def graph(store=None, graph_id="kitchen") -> SceneGraphMemory:
    memory = SceneGraphMemory(
        store=store or VectorStore.ephemeral(), embedder=TableEmbedder(TABLE), graph_id=graph_id
    )
    memory.add(
        [
            SceneEntity(
                id="Mug|1", label="Mug", attributes={"isDirty": True, "isPickedUp": False, "fillLiquid": None}
            ),
            SceneEntity(id="Cup|1", label="Cup", attributes={"isDirty": False, "isFilledWithLiquid": True}),
            SceneEntity(id="CoffeeMachine|1", label="CoffeeMachine", attributes={"isToggled": False}),
            SceneEntity(id="Cabinet|1", label="Cabinet", attributes={"isOpen": False}),
            SceneEntity(id="Faucet|1", label="Faucet", attributes={"isToggled": True}),
            SceneEntity(id="SinkBasin|1", label="SinkBasin", attributes={}),
            SceneEntity(id="CounterTop|1", label="CounterTop", attributes={}),
            SceneEdge(source="Mug|1", relation="in", target="Cabinet|1"),
            SceneEdge(source="Cup|1", relation="in", target="SinkBasin|1"),
            SceneEdge(source="Faucet|1", relation="controls", target="SinkBasin|1"),
            SceneEdge(source="CoffeeMachine|1", relation="on", target="CounterTop|1"),
        ]
    )
    return memory


def test_subgraph_thresholded_top_k_induced_edges_and_asked_attributes():
    memory = graph()
    sub = memory.retrieve_subgraph([("mug", ["isDirty"]), ("sink basin", ["*"])], k=2, threshold=0.5)
    # "mug": Mug 1.0, Cup 0.8 (others 0); "sink basin": SinkBasin 1.0, Faucet 0.8, Cabinet 0.6 (cut by k=2)
    assert {n.id: round(n.score, 5) for n in sub.nodes} == {
        "Mug|1": 1.0,
        "SinkBasin|1": 1.0,
        "Cup|1": 0.8,
        "Faucet|1": 0.8,
    }
    attrs = {n.id: n.attributes for n in sub.nodes}
    assert attrs == {
        "Mug|1": {"isDirty": True},
        "Cup|1": {"isDirty": False},
        "SinkBasin|1": {},
        "Faucet|1": {"isToggled": True},
    }
    # Only edges whose ends were both retrieved: Mug-in-Cabinet is not (Cabinet was cut).
    assert [(e.source, e.relation, e.target) for e in sub.edges] == [
        ("Cup|1", "in", "SinkBasin|1"),
        ("Faucet|1", "controls", "SinkBasin|1"),
    ]
    assert json.loads(sub.to_json()) == {
        "nodes": [
            {"id": "Mug|1", "label": "Mug", "attributes": {"isDirty": True}},
            {"id": "SinkBasin|1", "label": "SinkBasin", "attributes": {}},
            {"id": "Cup|1", "label": "Cup", "attributes": {"isDirty": False}},
            {"id": "Faucet|1", "label": "Faucet", "attributes": {"isToggled": True}},
        ],
        "edges": [
            {"source": "Cup|1", "relation": "in", "target": "SinkBasin|1"},
            {"source": "Faucet|1", "relation": "controls", "target": "SinkBasin|1"},
        ],
    }


def test_threshold_and_k_cut():
    memory = graph()
    high = memory.retrieve_subgraph([("mug", []), ("sink basin", [])], k=3, threshold=0.9)
    assert high.node_ids == ["Mug|1", "SinkBasin|1"] and high.edges == []
    # "sink basin": SinkBasin 1.0, Faucet 0.8, CounterTop 0.7, Cabinet 0.6
    wide = memory.retrieve_subgraph([("sink basin", ["isOpen"])], k=4, threshold=0.5)
    assert wide.node_ids == ["SinkBasin|1", "Faucet|1", "CounterTop|1", "Cabinet|1"]
    assert {n.id: n.attributes for n in wide.nodes}["Cabinet|1"] == {"isOpen": False}
    assert memory.retrieve_subgraph([("sink basin", [])], k=4, threshold=0.65).node_ids == [
        "SinkBasin|1",
        "Faucet|1",
        "CounterTop|1",
    ]
    assert memory.retrieve_subgraph([("sink basin", [])], k=2, threshold=0.0).node_ids == [
        "SinkBasin|1",
        "Faucet|1",
    ]
    # "drinking vessel": Cup 0.96, CoffeeMachine 0.8, CounterTop 0.7, Mug 0.6 -> top 3 over 0.65
    vessel = memory.retrieve_subgraph(["drinking vessel"], k=3, threshold=0.65)
    assert vessel.node_ids == ["Cup|1", "CoffeeMachine|1", "CounterTop|1"]
    assert [(e.source, e.target) for e in vessel.edges] == [("CoffeeMachine|1", "CounterTop|1")]
    assert memory.retrieve_subgraph([], k=3).nodes == []


def test_attributes_asked_by_several_queries_are_merged():
    memory = graph()
    sub = memory.retrieve_subgraph(
        [("mug", ["isDirty"]), ("cup", ["isPickedUp", "notThere"])], k=1, threshold=0.5
    )
    # each node shows only what its own query asked for (the cup has no isPickedUp)
    assert {n.id: n.attributes for n in sub.nodes} == {"Mug|1": {"isDirty": True}, "Cup|1": {}}
    both = memory.retrieve_subgraph([("mug", ["isDirty"]), ("cup", ["isPickedUp"])], k=2, threshold=0.5)
    mug = next(n for n in both.nodes if n.id == "Mug|1")
    assert mug.attributes == {"isDirty": True, "isPickedUp": False} and mug.matched == ["mug", "cup"]


def test_incremental_updates():
    memory = graph()
    # The cup moves from the sink into the cabinet and gets dirty.
    memory.set_edges("Cup|1", "in", ["Cabinet|1"])
    memory.upsert_entities([SceneEntity(id="Cup|1", label="Cup", attributes={"isDirty": True})])
    sub = memory.retrieve_subgraph([("cup", ["isDirty"]), ("cabinet", [])], k=1, threshold=0.5)
    assert [(e.source, e.relation, e.target) for e in sub.edges] == [("Cup|1", "in", "Cabinet|1")]
    assert {n.id: n.attributes for n in sub.nodes}["Cup|1"] == {"isDirty": True}
    # The faucet disappears: its edges go with it.
    assert memory.remove_entities(["Faucet|1"]) == 1
    assert ("Faucet|1", "controls", "SinkBasin|1") not in [
        (e.source, e.relation, e.target) for e in memory.list_edges()
    ]
    assert memory.get_entity("Faucet|1") is None
    memory.update(
        entities=[{"id": "Kettle|1", "label": "Cup", "attributes": {"isToggled": False}}],
        add_edges=[("Kettle|1", "on", "CounterTop|1")],
        remove_edges=[("CoffeeMachine|1", "on", "CounterTop|1")],
    )
    assert memory.count() == 7
    edges = {(e.source, e.relation, e.target) for e in memory.list_edges()}
    assert ("Kettle|1", "on", "CounterTop|1") in edges and (
        "CoffeeMachine|1",
        "on",
        "CounterTop|1",
    ) not in edges


def test_graphs_are_separate_and_clear_only_touches_one():
    store = VectorStore.ephemeral()
    a = graph(store, "episode-a")
    b = SceneGraphMemory(store=store, embedder=TableEmbedder(TABLE), graph_id="episode-b")
    b.upsert_entities([SceneEntity(id="Mug|9", label="Mug")])
    assert b.retrieve_subgraph([("mug", [])], k=5, threshold=0.1).node_ids == ["Mug|9"]
    assert "Mug|9" not in a.retrieve_subgraph([("mug", [])], k=5, threshold=0.1).node_ids
    b.clear()
    assert b.count() == 0 and a.count() == 7


THOR_OBJECTS = [
    {
        "objectId": "Mug|1",
        "objectType": "Mug",
        "isDirty": True,
        "parentReceptacles": ["Cabinet|1"],
        "isPickedUp": False,
    },
    {"objectId": "Cabinet|1", "objectType": "Cabinet", "isOpen": False, "parentReceptacles": None},
    {
        "objectId": "Faucet|1",
        "objectType": "Faucet",
        "isToggled": False,
        "controlledObjects": ["SinkBasin|1"],
    },
    {"objectId": "SinkBasin|1", "objectType": "SinkBasin"},
    {
        "objectId": "CoffeeMachine|1",
        "objectType": "CoffeeMachine",
        "isToggled": False,
        "parentReceptacles": ["CounterTop|1"],
    },
    {"objectId": "CounterTop|1", "objectType": "CounterTop"},
]


def test_sync_objects_from_thor_metadata_writes_only_changes():
    embedder = TableEmbedder(TABLE)
    memory = SceneGraphMemory(store=VectorStore.ephemeral(), embedder=embedder, graph_id="thor")
    memory.sync_objects(THOR_OBJECTS)
    assert memory.count() == 6
    assert {(e.source, e.relation, e.target) for e in memory.list_edges()} == {
        ("Mug|1", "in", "Cabinet|1"),
        ("Faucet|1", "controls", "SinkBasin|1"),
        ("CoffeeMachine|1", "on", "CounterTop|1"),
    }
    embedded = len(embedder.calls)
    moved = [dict(o) for o in THOR_OBJECTS if o["objectId"] != "Faucet|1"]
    moved[0] = {**moved[0], "isDirty": False, "parentReceptacles": ["SinkBasin|1"]}
    memory.sync_objects(moved)
    assert len(embedder.calls) == embedded + 1  # only the mug changed
    assert memory.get_entity("Mug|1").attributes == {"isDirty": False, "isPickedUp": False}
    assert {(e.source, e.relation, e.target) for e in memory.list_edges()} == {
        ("Mug|1", "in", "SinkBasin|1"),
        ("CoffeeMachine|1", "on", "CounterTop|1"),
    }
    entities, _ = graph_from_thor_objects(THOR_OBJECTS, attributes=("isOpen",))
    assert {e.id: e.attributes for e in entities}["Cabinet|1"] == {"isOpen": False}


def test_export_import_and_protocol(tmp_path):
    memory = graph()
    path = tmp_path / "g.jsonl"
    assert memory.export_jsonl(path) == 11
    other = SceneGraphMemory(store=VectorStore.ephemeral(), embedder=TableEmbedder(TABLE), graph_id="copy")
    assert other.import_jsonl(path) == 11
    assert other.count() == 7 and len(other.list_edges()) == 4
    hits = other.retrieve("mug", k=2)
    assert [h.id for h in hits] == ["Mug|1", "Cup|1"] and hits[1].score == pytest.approx(0.8, abs=1e-5)
    assert other.delete(["Mug|1", SceneEdge(source="Cup|1", relation="in", target="SinkBasin|1").id]) == 2
    assert len(other.list_edges()) == 2  # Mug-in-Cabinet went with the mug


def test_humanize_label():
    assert humanize_label("CoffeeMachine") == "coffee machine"
    assert humanize_label("TVStand") == "tvstand"
    assert humanize_label("Sink_Basin") == "sink basin"


def test_with_the_real_model():
    memory = SceneGraphMemory(store=VectorStore.ephemeral(), embedder=get_embedder("local"), graph_id="real")
    memory.sync_objects(THOR_OBJECTS)
    sub = memory.retrieve_subgraph(
        [("coffee mug", ["isDirty"]), ("espresso maker", ["isToggled"])], k=1, threshold=0.3
    )
    assert set(sub.node_ids) == {"Mug|1", "CoffeeMachine|1"}
    assert {n.id: n.attributes for n in sub.nodes} == {
        "Mug|1": {"isDirty": True},
        "CoffeeMachine|1": {"isToggled": False},
    }
