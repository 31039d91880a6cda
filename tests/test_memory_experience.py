"""P-RAG's experience memory: the score on hand-computed cases, rounds, policies, atomicity."""

from __future__ import annotations

import numpy as np
import pytest

from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep
from helper_agent.memory.store import Entry, VectorStore


class TableEmbedder:
    """A tiny deterministic embedding: each known text has a hand-written vector."""

    name = "table:4"
    dim = 4

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}

    def embed(self, texts):
        return np.stack([self.table[t] for t in texts])


TABLE = {
    "make coffee": [1, 0, 0, 0],
    "make tea": [0.6, 0.8, 0, 0],
    "slice bread": [0, 0, 1, 0],
    "brew coffee": [0.8, 0.6, 0, 0],
    "mug on counter": [0, 0, 0, 1],
    "mug in machine": [0, 0, 0.6, 0.8],
    "bathroom": [0, 1, 0, 0],
    "(empty scene)": [0.5, 0.5, 0.5, 0.5],
}


def step(scene: str, action: str = "noop", observation: str = "ok") -> ExperienceStep:
    return ExperienceStep(scene_graph=scene, action=action, observation=observation)


A = Experience(
    id="A",
    goal="make coffee",
    steps=[step("bathroom", "Navigate Mug"), step("mug on counter", "Pickup Mug")],
    done=True,
)
B = Experience(id="B", goal="make tea", steps=[step("mug in machine", "ToggleOn CoffeeMachine")], done=False)
C = Experience(id="C", goal="slice bread", steps=[step("bathroom")], done=True)


def memory(policy: str = "append", pool: int = 64) -> ExperienceMemory:
    return ExperienceMemory(
        store=VectorStore.ephemeral(), embedder=TableEmbedder(TABLE), policy=policy, candidate_pool=pool
    )


def ranked(hits):
    return [
        (h.id, round(h.score, 5), round(h.details["goal_score"], 5), round(h.details["scene_score"], 5))
        for h in hits
    ]


@pytest.mark.parametrize("pool", [64, 1])
def test_score_is_goal_cosine_plus_best_step_cosine(pool):
    m = memory(pool=pool)
    assert m.commit_iteration([A, B, C]) == 1
    # cos(brew coffee, goal): A 0.8, B 0.6*0.8+0.8*0.6 = 0.96, C 0
    # best step vs "mug on counter": A 1.0 (step 1), B cos(mug in machine) = 0.8, C 0
    hits = m.retrieve("brew coffee", k=3, scene_graph="mug on counter")
    assert ranked(hits) == [("A", 1.8, 0.8, 1.0), ("B", 1.76, 0.96, 0.8), ("C", 0.0, 0.0, 0.0)]
    assert hits[0].details["best_step"] == 1
    assert hits[0].record.steps[1].action == "Pickup Mug" and hits[0].record.done is True
    # another scene: A 0.8 + 1 (bathroom step 0), C 0 + 1, B 0.96 + 0
    hits = m.retrieve("brew coffee", k=3, scene_graph="bathroom")
    assert ranked(hits) == [("A", 1.8, 0.8, 1.0), ("C", 1.0, 0.0, 1.0), ("B", 0.96, 0.96, 0.0)]
    # no scene graph: goal only
    assert ranked(m.retrieve("brew coffee", k=2)) == [("B", 0.96, 0.96, 0.0), ("A", 0.8, 0.8, 0.0)]


def test_top_k_and_done_filter():
    m = memory()
    m.commit_iteration([A, B, C])
    assert [h.id for h in m.retrieve("brew coffee", k=1, scene_graph="bathroom")] == ["A"]
    assert [h.id for h in m.retrieve("brew coffee", k=3, scene_graph="bathroom", done=True)] == ["A", "C"]
    assert [
        h.id for h in m.retrieve({"goal": "brew coffee", "scene_graph": "bathroom"}, k=3, done=False)
    ] == ["B"]


def test_append_keeps_every_round_and_keep_latest_round_keeps_the_last():
    appended = memory("append")
    assert appended.commit_iteration([A, B]) == 1
    assert appended.commit_iteration([C]) == 2
    assert appended.count() == 3
    assert {(r.id, r.round) for r in appended.list()} == {("A", 1), ("B", 1), ("C", 2)}
    latest = memory("keep_latest_round")
    latest.commit_iteration([A, B])
    latest.commit_iteration([C])
    assert latest.count() == 1 and [r.id for r in latest.list()] == ["C"]
    assert [h.id for h in latest.retrieve("brew coffee", k=3)] == ["C"]
    assert latest.steps.count() == 1  # old rounds' steps are gone too


def test_add_goes_into_the_current_round():
    m = memory()
    m.add([A])
    assert m.committed_round() == 1
    m.commit_iteration([B])
    m.add([C])
    assert {(r.id, r.round) for r in m.list()} == {("A", 1), ("B", 2), ("C", 2)}


def test_a_crashed_commit_is_invisible_and_cleaned_up():
    m = memory()
    m.commit_iteration([A])
    # A commit of round 2 that died before its marker: heads and steps written, marker not.
    m._write([B, C], 2)
    assert m.count() == 1 and [r.id for r in m.list()] == ["A"]
    assert [h.id for h in m.retrieve("brew coffee", k=3, scene_graph="bathroom")] == ["A"]
    # Orphan steps (the process died before the head) are ignored as well.
    ghost = Entry(
        "ghost#t#0",
        "bathroom",
        {"record_id": "ghost", "token": "t", "step": 0, "round": 1},
        TableEmbedder(TABLE).embed(["bathroom"])[0],
    )
    m.steps.upsert([ghost])
    assert [h.id for h in m.retrieve("brew coffee", k=3, scene_graph="bathroom")] == ["A"]
    # The next commit removes the leftovers of round 2 before writing its own round 2.
    assert m.commit_iteration([C]) == 2
    assert sorted(r.id for r in m.list()) == ["A", "C"]
    assert m.heads.count() == 2


def test_replacing_a_record_switches_its_steps_atomically():
    m = memory()
    m.commit_iteration([A])
    m.add([A.model_copy(update={"steps": [step("mug in machine", "Place Mug")]})])
    record = m.get("A")
    assert [s.action for s in record.steps] == ["Place Mug"]
    assert m.steps.count() == 1  # the old version's steps were removed after the switch
    hits = m.retrieve("brew coffee", k=1, scene_graph="mug on counter")
    assert hits[0].details["scene_score"] == pytest.approx(0.8, abs=1e-5)


def test_delete_export_import(tmp_path):
    m = memory()
    m.commit_iteration([A, B, C])
    assert m.delete(["B", "nope"]) == 1
    assert sorted(r.id for r in m.list()) == ["A", "C"] and m.steps.count() == 3
    path = tmp_path / "exp.jsonl"
    assert m.export_jsonl(path) == 2
    other = memory()
    assert other.import_jsonl(path) == 2
    assert [s.scene_graph for s in other.get("A").steps] == ["bathroom", "mug on counter"]


def test_empty_scene_graph_steps_and_records_without_steps():
    m = memory()
    m.commit_iteration(
        [Experience(id="E", goal="make coffee", steps=[step("")]), Experience(id="F", goal="make tea")]
    )
    hits = m.retrieve("brew coffee", k=2, scene_graph="bathroom")
    # E: cos(brew coffee, make coffee) 0.8 + cos(bathroom, "(empty scene)") 0.5; F: 0.96 + 0 (no steps)
    assert {h.id: round(h.score, 5) for h in hits} == {"E": 1.3, "F": 0.96}
    assert m.get("E").steps[0].scene_graph == ""


def test_with_the_real_model():
    m = ExperienceMemory(store=VectorStore.ephemeral(), embedder=get_embedder("local"))
    m.commit_iteration(
        [
            Experience(
                id="coffee",
                goal="make a cup of coffee",
                steps=[step("Mug on CounterTop; CoffeeMachine off")],
                done=True,
            ),
            Experience(
                id="plant",
                goal="water the house plant",
                steps=[step("HousePlant on Floor; Cup in SinkBasin")],
            ),
        ]
    )
    hits = m.retrieve("prepare coffee in a mug", k=2, scene_graph="CoffeeMachine off; Mug on CounterTop")
    assert hits[0].id == "coffee" and hits[0].score > hits[1].score
    assert hits[0].details["goal_score"] + hits[0].details["scene_score"] == pytest.approx(hits[0].score)


def test_validation():
    from helper_agent.memory.errors import InvalidRecordError

    m = memory()
    with pytest.raises(InvalidRecordError, match="'goal' is empty"):
        m.add([{"id": "x", "goal": " "}])
    with pytest.raises(InvalidRecordError, match=r"steps\.0.*limit"):
        m.add([Experience(goal="make coffee", steps=[step("bathroom", observation="o" * 300_000)])])
    with pytest.raises(ValueError, match="policy"):
        memory("sometimes")


def test_threshold_search_matches_brute_force_on_random_data():
    rng = np.random.default_rng(7)
    table: dict[str, list[float]] = {}
    records = []
    for i in range(60):
        table[f"goal {i}"] = list(rng.standard_normal(6))
        steps = []
        for j in range(int(rng.integers(0, 5))):
            table[f"scene {i}.{j}"] = list(rng.standard_normal(6))
            steps.append(step(f"scene {i}.{j}"))
        records.append(Experience(id=f"r{i}", goal=f"goal {i}", steps=steps, done=bool(i % 3)))
    for q in range(25):
        table[f"query goal {q}"] = list(rng.standard_normal(6))
        table[f"query scene {q}"] = list(rng.standard_normal(6))
    embedder = TableEmbedder(table)
    embedder.dim = 6
    m = ExperienceMemory(store=VectorStore.ephemeral(), embedder=embedder, candidate_pool=4)
    m.commit_iteration(records)
    exact_count = 0
    for q in range(25):
        gq, sq = embedder.embed([f"query goal {q}", f"query scene {q}"])
        expected = []
        for r in records:
            goal = float(embedder.embed([r.goal])[0] @ gq)
            scene = max((float(embedder.embed([s.scene_graph])[0] @ sq) for s in r.steps), default=0.0)
            expected.append((goal + scene, r.id))
        expected.sort(key=lambda t: (-t[0], t[1]))
        hits = m.retrieve(f"query goal {q}", k=3, scene_graph=f"query scene {q}")
        if hits[0].details["exact"]:
            exact_count += 1
            assert [h.id for h in hits] == [rid for _, rid in expected[:3]]
            assert [h.score for h in hits] == pytest.approx([t for t, _ in expected[:3]], abs=1e-5)
        else:  # approximate: still real records with their true scores
            truth = {rid: t for t, rid in expected}
            assert all(h.score == pytest.approx(truth[h.id], abs=1e-5) for h in hits)
    assert exact_count == 25  # the pool widens until the ranking is provably exact
