"""The packaged train-split examples: where they come from, what they may not contain, and the export command.

`helper_agent/prompts/examples/train_programs.jsonl` is part of the default example memory, so every
evaluation on the built-in benchmark retrieves from it. It must be exactly what `make
packaged-examples` writes from the seed-0 train split (the first 6 episodes of each family), and
nothing from an evaluation split.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helper_agent.cli import app
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import examples_from_split, stratified_examples
from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.examples import ExampleMemory, load_seed_examples, load_train_examples
from helper_agent.memory.keyed import seed_file
from helper_agent.memory.store import VectorStore
from helper_agent.program import compile_program

PACKAGED = load_train_examples()


@pytest.fixture(scope="module")
def train_bench(tmp_path_factory) -> Path:
    """The seed-0 train split, just long enough to hold the packaged episodes."""
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=0, sizes={"train": 120})
    return out


def test_packaged_file_is_the_first_six_of_each_train_family(train_bench):
    regenerated = stratified_examples(examples_from_split(train_bench, "train"), per_family=6)
    assert [r.model_dump() for r in PACKAGED] == [r.model_dump() for r in regenerated]
    assert set(Counter(r.task_family for r in PACKAGED).values()) == {6}
    assert len({r.task_family for r in PACKAGED}) == 18


def test_packaged_examples_come_from_train_only():
    assert PACKAGED and all(r.id.startswith("train:seed0:train_") for r in PACKAGED)
    hand_written = {r.id for r in load_seed_examples()}
    assert not hand_written & {r.id for r in PACKAGED}


@pytest.mark.parametrize("example", PACKAGED, ids=lambda e: e.id)
def test_packaged_programs_compile(example):
    assert compile_program(example.program).subgoals


def test_default_example_memory_holds_both_files():
    memory = ExampleMemory(store=VectorStore.ephemeral(), embedder=HashEmbedder(32))
    assert memory.count() == len(load_seed_examples()) + len(PACKAGED)


def test_stratified_keeps_split_order_and_caps_each_family(train_bench):
    records = examples_from_split(train_bench, "train")
    two = stratified_examples(records, per_family=2)
    assert Counter(r.task_family for r in two) == {f: 2 for f in {r.task_family for r in records}}
    order = [r.id for r in records]
    assert [order.index(r.id) for r in two] == sorted(order.index(r.id) for r in two)


def test_export_command_writes_loadable_records(train_bench, tmp_path):
    out = tmp_path / "pairs.jsonl"
    result = CliRunner().invoke(app, ["bench", "export-examples", "--data", str(train_bench), "--per-family", "1",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 18 and all(set(row) == {"id", "task_family", "dialogue", "program"} for row in rows)
    memory = ExampleMemory(store=VectorStore.ephemeral(), seed_paths=[out], embedder=HashEmbedder(32))
    assert memory.count() == 18


def test_export_command_refuses_an_evaluation_split(tmp_path):
    generate_benchmark(tmp_path / "b", seed=0, sizes={"valid_unseen": 2})
    out = tmp_path / "leak.jsonl"
    result = CliRunner().invoke(app, ["bench", "export-examples", "--data", str(tmp_path / "b"), "--split",
                                      "valid_unseen", "--out", str(out)])
    assert result.exit_code == 2 and "evaluation split" in result.output
    assert not out.exists()
    allowed = CliRunner().invoke(app, ["bench", "export-examples", "--data", str(tmp_path / "b"), "--split",
                                       "valid_unseen", "--allow-eval-split", "--out", str(out)])
    assert allowed.exit_code == 0 and len(out.read_text().splitlines()) == 2


def test_seed_file_is_packaged():
    assert seed_file("train_programs.jsonl").is_file()


def test_ids_name_the_benchmark_seed_so_two_benchmarks_never_collide(tmp_path):
    generate_benchmark(tmp_path / "s6", seed=6, sizes={"train": 2})
    ids = [r.id for r in examples_from_split(tmp_path / "s6", "train")]
    assert ids == ["train:seed6:train_0000.tfd", "train:seed6:train_0001.tfd"]
    assert not set(ids) & {r.id for r in PACKAGED}
