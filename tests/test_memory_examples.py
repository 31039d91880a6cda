"""HELPER's language-program and correction examples: seed data, retrieval quality, seeding."""

from __future__ import annotations

import ast
import itertools
import json
from collections import Counter

import numpy as np
import pytest

from helper_agent.memory.base import write_jsonl
from helper_agent.memory.corrections import (
    FAILURE_KINDS,
    CorrectionMemory,
    correction_query,
    load_seed_corrections,
)
from helper_agent.memory.embeddings import HashEmbedder, get_embedder
from helper_agent.memory.examples import ExampleMemory, ProgramExample, dialogue_text, load_seed_examples
from helper_agent.memory.keyed import seed_file
from helper_agent.memory.store import VectorStore

TEACH_FAMILIES = {
    "coffee",
    "water_plant",
    "toast",
    "plate_of_toast",
    "n_slices_of_x_in_y",
    "cooked_slice_of_x",
    "n_cooked_slices_of_x_in_y",
    "boil_x",
    "clean_x",
    "clean_all_x",
    "put_all_x_on_y",
    "put_all_x_in_one_y",
    "toggle_x_all_y",
    "sandwich",
    "salad",
    "breakfast",
    "omelette",
    "poach_egg",
    "candles",
    "workspace",
    "sliced_x",
}
API_METHODS = {
    "go_to",
    "pickup",
    "place",
    "put_down",
    "pickup_and_place",
    "open",
    "close",
    "toggle_on",
    "toggle_off",
    "slice",
    "pour",
    "fill_up",
    "empty",
    "clean",
    "cook",
    "toast",
}
CORRECTIVE = {"move_back", "move_closer", "move_alternate_viewpoint", "do_nothing"}
ATTRIBUTES = {"clean", "cooked", "toasted", "sliced", "filled"}


@pytest.fixture(scope="session")
def embedder():
    return get_embedder("local")


@pytest.fixture(scope="module")
def examples(embedder):
    """The hand-written examples only: the held-out paraphrases name them (the packaged train-split
    examples have their own tests in test_packaged_train_examples.py)."""
    return ExampleMemory(store=VectorStore.ephemeral(), embedder=embedder, seed_paths=[seed_file("programs.jsonl")])


def check_program(program: str, *, corrective: bool = False) -> None:
    """Only HELPER's API: constructors, API methods, literal loops; every variable defined first."""
    from helper_agent.world.catalog import load_catalog

    catalog = load_catalog()
    tree = ast.parse(program)
    defined: set[str] = set()

    def check_expr_call(call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name):
            assert corrective and func.id in CORRECTIVE, f"bare call {func.id}()"
            return
        assert isinstance(func, ast.Attribute), ast.dump(call)
        assert isinstance(func.value, ast.Name) and func.value.id in defined, (
            f"undefined object in {ast.unparse(call)}"
        )
        allowed = API_METHODS | (CORRECTIVE if corrective else set())
        assert func.attr in allowed, f"not in the API: {func.attr}"
        for arg in call.args:
            assert isinstance(arg, ast.Name) and arg.id in defined, (
                f"argument must be a defined object: {ast.unparse(call)}"
            )

    def check_constructor(call: ast.Call, loop_vars: set[str]) -> None:
        assert isinstance(call.func, ast.Name) and call.func.id in {"InteractionObject", "AgentCorrective"}
        if call.func.id == "AgentCorrective":
            assert corrective and not call.args
            return
        first = call.args[0]
        if isinstance(first, ast.Constant):
            assert first.value in catalog, f"unknown object type {first.value}"
        else:
            assert isinstance(first, ast.Name) and first.id in loop_vars
        for kw in call.keywords:
            assert kw.arg in {"landmark", "attributes"}, kw.arg
            if kw.arg == "landmark":
                if isinstance(kw.value, ast.Constant):
                    assert kw.value.value in catalog, f"unknown landmark {kw.value.value}"
                else:
                    assert isinstance(kw.value, ast.Name) and kw.value.id in loop_vars
            else:
                assert isinstance(kw.value, ast.List)
                assert {e.value for e in kw.value.elts} <= ATTRIBUTES

    def walk(body: list[ast.stmt], loop_vars: set[str]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                assert len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                assert isinstance(stmt.value, ast.Call), ast.unparse(stmt)
                check_constructor(stmt.value, loop_vars)
                defined.add(stmt.targets[0].id)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                check_expr_call(stmt.value)
            elif isinstance(stmt, ast.For):
                assert isinstance(stmt.target, ast.Name)
                it = stmt.iter
                literal_list = isinstance(it, ast.List) and all(isinstance(e, ast.Constant) for e in it.elts)
                literal_range = (
                    isinstance(it, ast.Call)
                    and getattr(it.func, "id", None) == "range"
                    and all(isinstance(a, ast.Constant) for a in it.args)
                )
                assert literal_list or literal_range, ast.unparse(it)
                if literal_list:
                    for e in it.elts:
                        assert e.value in catalog, f"unknown type {e.value}"
                walk(stmt.body, loop_vars | {stmt.target.id})
            else:
                pytest.fail(f"statement outside the grammar: {ast.unparse(stmt)}")

    walk(tree.body, set())


def test_seed_examples_cover_every_teach_family():
    seeds = load_seed_examples()
    assert len(seeds) >= 40
    assert len({s.id for s in seeds}) == len(seeds)
    families = Counter(s.task_family for s in seeds)
    assert TEACH_FAMILIES <= set(families), TEACH_FAMILIES - set(families)
    for s in seeds:
        assert s.dialogue.strip() and s.program.strip()
        assert "<Commander>" in s.dialogue


@pytest.mark.parametrize("example", load_seed_examples(), ids=lambda e: e.id)
def test_seed_programs_use_only_the_api(example):
    check_program(example.program)
    assert example.program.lstrip().startswith("#"), "each program starts with a comment saying what it does"


def test_seed_corrections_cover_every_failure_description():
    seeds = load_seed_corrections()
    assert len(seeds) >= 15
    kinds = Counter(c.failure_kind for c in seeds)
    assert set(FAILURE_KINDS) <= set(kinds)
    for c in seeds:
        assert c.explanation and c.failed_subgoal and c.failure
        check_program(c.program, corrective=True)
        if c.failure_kind in FAILURE_KINDS:
            assert c.failure == FAILURE_KINDS[c.failure_kind]


def test_retrieval_quality_on_held_out_paraphrases(examples):
    rows = [
        json.loads(line) for line in seed_file("paraphrases_heldout.jsonl").read_text().splitlines() if line
    ]
    assert len(rows) >= len(load_seed_examples())
    ranks = []
    for row in rows:
        hits = examples.retrieve(row["query"], k=3)
        assert len(hits) == 3
        ids = [h.id for h in hits]
        ranks.append(ids.index(row["example_id"]) + 1 if row["example_id"] in ids else None)
    recall1 = sum(r == 1 for r in ranks) / len(ranks)
    recall3 = sum(r is not None for r in ranks) / len(ranks)
    print(
        f"\nexamples retrieval on {len(rows)} held-out paraphrases: recall@1={recall1:.3f} recall@3={recall3:.3f}"
    )
    assert recall3 >= 0.95
    assert recall1 >= 0.85


def test_default_k_is_three_and_scores_descend(examples):
    hits = examples.retrieve("<Driver> hi <Commander> please water the plant")
    assert len(hits) == 3
    assert hits[0].record.task_family == "water_plant"
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    assert all(isinstance(h.record, ProgramExample) for h in hits)


def test_filter_and_exclude(examples):
    hits = examples.retrieve("make coffee", k=5, task_family="salad")
    assert hits and all(h.record.task_family == "salad" for h in hits)
    first = examples.retrieve("make coffee", k=1)[0]
    assert examples.retrieve("make coffee", k=1, exclude_ids=[first.id])[0].id != first.id


def test_dialogue_text_drops_speaker_tags():
    assert dialogue_text("<Driver> hi <Commander>: make  toast") == "hi make toast"


def test_user_examples_are_added_and_kept_by_reseeding(tmp_path):
    embedder = HashEmbedder(64)
    seeds = tmp_path / "seed.jsonl"
    write_jsonl(seeds, "examples", [ProgramExample(id="s1", dialogue="make toast", program="# toast\n")])
    store = VectorStore(tmp_path / "store")
    memory = ExampleMemory(store=store, embedder=embedder, seed_paths=[seeds])
    memory.add([{"id": "u1", "task_family": "custom", "dialogue": "feed the cat", "program": "# cat\n"}])
    assert {r.id for r in memory.list()} == {"s1", "u1"}
    # The shipped seed changes: s1 edited, s2 new; u1 (a user's) stays.
    write_jsonl(
        seeds,
        "examples",
        [
            ProgramExample(id="s1", dialogue="make two toasts", program="# two\n"),
            ProgramExample(id="s2", dialogue="boil an egg", program="# egg\n"),
        ],
    )
    again = ExampleMemory(store=store, embedder=embedder, seed_paths=[seeds])
    assert {r.id for r in again.list()} == {"s1", "s2", "u1"}
    assert again.get("s1").program == "# two\n"
    assert again.sync_seed() == 0  # idempotent
    write_jsonl(seeds, "examples", [ProgramExample(id="s2", dialogue="boil an egg", program="# egg\n")])
    third = ExampleMemory(store=store, embedder=embedder, seed_paths=[seeds])
    assert {r.id for r in third.list()} == {"s2", "u1"}


def test_corrections_retrieve_the_right_failure_kind(embedder):
    memory = CorrectionMemory(store=VectorStore.ephemeral(), embedder=embedder)
    assert memory.count() == len(load_seed_corrections())
    cases = {
        ("toaster.toggle_on()", FAILURE_KINDS["already_on"]): "already_on",
        ("lamp.toggle_off()", FAILURE_KINDS["already_off"]): "already_off",
        ("cabinet.close()", FAILURE_KINDS["blocked_open"]): "blocked_open",
        ("apple.pickup()", FAILURE_KINDS["blocks_interaction"]): "blocks_interaction",
        ("mug.pickup()", FAILURE_KINDS["too_far"]): "too_far",
        ("bowl.place(counter_top)", FAILURE_KINDS["no_space"]): "no_space",
        ("sink_basin.go_to()", FAILURE_KINDS["blocked_move"]): "blocked_move",
    }
    for (subgoal, failure), kind in cases.items():
        hits = memory.retrieve({"failed_subgoal": subgoal, "failure": failure})
        assert len(hits) == 3
        assert hits[0].record.failure_kind == kind, (subgoal, [h.record.failure_kind for h in hits])
        as_text = memory.retrieve(correction_query(subgoal, failure, "<Commander> make breakfast"))
        assert as_text[0].record.failure_kind == kind
        assert [h.id for h in as_text] == [h.id for h in hits]
    by_dict = memory.retrieve(
        {"failed_subgoal": "fridge.open()", "failure": FAILURE_KINDS["blocked_open"]}, k=1
    )
    assert by_dict[0].record.failure_kind == "blocked_open"
    only = memory.retrieve("the object is already on", k=10, failure_kind="already_on")
    assert {h.record.failure_kind for h in only} == {"already_on"}


def test_scores_match_a_direct_computation(examples, embedder):
    query = "rinse the dirty mug and make coffee"
    hits = examples.retrieve(query, k=3)
    q = embedder.embed([dialogue_text(query)])[0]
    keys = embedder.embed([dialogue_text(h.record.dialogue) for h in hits])
    assert [h.score for h in hits] == pytest.approx(list(keys @ q), abs=1e-4)
    assert np.all(np.diff([h.score for h in hits]) <= 1e-6)
