"""LLM-Planner's few-shot pool: the knn_set.json loader and kNN retrieval (k = 9)."""

from __future__ import annotations

import json

import pytest
from reference_data import reference_path

from helper_agent.memory.embeddings import HashEmbedder, get_embedder
from helper_agent.memory.errors import ImportFormatError, InvalidRecordError
from helper_agent.memory.fewshot import FewShotMemory, PlanExample, load_knn_set, parse_subgoal
from helper_agent.memory.store import VectorStore

KNN_SET = reference_path("llm_planner/knn_set.json")
needs_knn_set = pytest.mark.skipif(not KNN_SET.exists(), reason="$HELPER_REFERENCE_DIR/llm_planner/knn_set.json absent")

SMALL = [
    {
        "task": "pick_clean_then_place_in_recep-Fork-None-DiningTable-15/trial_1",
        "task_instr": "Put a cleaned fork on the table.",
        "step_instr": ["Go to the counter", "Pick up the fork"],
        "gold_traj": [
            ["('Navigation','CounterTop')"],
            ["('PickupObject','Fork')"],
            ["('PutObject','Fork', 'Sink')", "('ToggleObjectOn','Faucet')"],
        ],
        "vis_objs": ["Fork", "Sink"],
    },
    {
        "task": "look_at_obj_in_light-Book-None-DeskLamp-301/trial_2",
        "task_instr": "Read a book by the lamp.",
        "step_instr": [],
        "gold_traj": [["('PickupObject','Book')", "('ToggleObjectOn','DeskLamp')"]],
        "vis_objs": ["Book", "DeskLamp"],
    },
]


def test_parse_subgoal_without_eval():
    assert parse_subgoal("('PutObject','Knife', 'DiningTable')") == ["PutObject", "Knife", "DiningTable"]
    assert parse_subgoal('("Navigation", "Fridge")') == ["Navigation", "Fridge"]
    with pytest.raises(ValueError):
        parse_subgoal("no quotes here")


def test_loader_on_a_small_file(tmp_path):
    path = tmp_path / "knn.json"
    path.write_text(json.dumps(SMALL))
    examples = load_knn_set(path)
    assert [e.id for e in examples] == [SMALL[0]["task"], SMALL[1]["task"]]
    fork = examples[0]
    assert fork.plan == [
        ["Navigation", "CounterTop"],
        ["PickupObject", "Fork"],
        ["PutObject", "Fork", "Sink"],
        ["ToggleObjectOn", "Faucet"],
    ]
    assert fork.hlp()[2] == ("PutObject", "Sink")
    assert (
        fork.format_plan()
        == "Navigation countertop, PickupObject fork, PutObject sink, ToggleObjectOn faucet"
    )
    assert fork.task_type == "pick_clean_then_place_in_recep" and fork.visible_objects == ["Fork", "Sink"]


def test_loader_errors_name_the_file_and_entry(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"task_instr": "x"}]))
    with pytest.raises(ImportFormatError, match=r"bad\.json: entry 0: missing field 'gold_traj'"):
        load_knn_set(bad)
    bad.write_bytes(b'[{"task_instr": "caf\xe9"}]')
    with pytest.raises(ImportFormatError, match="not UTF-8"):
        load_knn_set(bad)
    bad.write_text(json.dumps([{"task_instr": "x", "gold_traj": [["nothing"]]}]))
    with pytest.raises(ImportFormatError, match="gold_traj"):
        load_knn_set(bad)


def test_default_k_is_nine_and_leave_one_out():
    memory = FewShotMemory(store=VectorStore.ephemeral(), embedder=HashEmbedder(64))
    memory.add(
        [
            PlanExample(
                id=f"e{i}",
                instruction=f"put apple number {i} in the fridge",
                plan=[["PickupObject", "Apple"]],
            )
            for i in range(12)
        ]
    )
    assert len(memory.retrieve("put an apple in the fridge")) == 9
    hits = memory.retrieve("put apple number 3 in the fridge", k=3, exclude_ids=["e3"])
    assert "e3" not in [h.id for h in hits] and len(hits) == 3
    with pytest.raises(InvalidRecordError, match="'plan' is empty"):
        memory.add([PlanExample(instruction="x", plan=[])])


@needs_knn_set
def test_llm_planner_knn_set():
    examples = load_knn_set(KNN_SET)
    assert len(examples) == 100 and len({e.id for e in examples}) == 100
    assert all(e.plan and e.instruction for e in examples)
    memory = FewShotMemory(store=VectorStore.ephemeral(), embedder=get_embedder("local"))
    assert memory.load_knn_set(KNN_SET) == 100
    # Leave-one-out as in LLM-Planner: every example retrieves 9 others; the nearest usually shares
    # the task type.
    same_type = 0
    for example in examples:
        hits = memory.retrieve(example.instruction, exclude_ids=[example.id])
        assert len(hits) == 9 and example.id not in {h.id for h in hits}
        same_type += hits[0].record.task_type == example.task_type
    print(f"\nknn_set leave-one-out: nearest neighbour shares the task type for {same_type}/100")
    assert same_type >= 40
