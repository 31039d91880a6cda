"""Progressive iteration: iteration 0 starts empty, each pass's episodes (with the harness's done
flag) enter the next database, each iteration keeps its own database, runs resume, train mode
evaluates the evaluation split with a database built on train episodes only, and no gold program,
gold plan or reference trajectory reaches a prompt or the database."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from typer.testing import CliRunner

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.studies.progressive import ProgressiveSpec, run_progressive
from helper_agent.memory.experience import ExperienceMemory

COFFEE_PLAN = [("pickup", "Mug"), ("put", "SinkBasin"), ("toggle_on", "Faucet"), ("toggle_off", "Faucet"),
               ("pickup", "Mug"), ("put", "CoffeeMachine"), ("toggle_on", "CoffeeMachine")]
SENTINEL = "GOLDSENTINEL"


class Scripted(BaseChatModel):
    """Makes coffee when the instruction asks for coffee, and says done() at once otherwise; keeps
    every prompt. It starts its plan again at each episode's first step."""

    prompts: list[str] = []
    pos: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-progressive"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text_in = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text_in)
        user = str(messages[1].content)
        if "\nStep 1 of " in user:
            self.pos = 0
        goal = user.split("Instruction:\n", 1)[1].split("\n", 1)[0].lower()
        graph = user.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
        held = user.split("Holding: ", 1)[1].split("\n", 1)[0]
        ids = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M) + ([held] if held != "nothing" else [])
        if "coffee" not in goal or self.pos >= len(COFFEE_PLAN):
            text = "Action: done()"
        else:
            action, cls = COFFEE_PLAN[self.pos]
            match = [i for i in ids if i.rsplit("_", 1)[0] == cls]
            if match:
                text = f"Action: {action}({match[0]})"
                self.pos += 1
            else:
                text = f"Action: search({cls})"
        message = AIMessage(content=text, usage_metadata={"input_tokens": len(text_in) // 4, "output_tokens": 5,
                                                          "total_tokens": len(text_in) // 4 + 5})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 valid_unseen and 2 train episodes; every gold program carries a sentinel line."""
    path = tmp_path_factory.mktemp("bench")
    generate_benchmark(path, seed=0, sizes={"valid_unseen": 3, "train": 2})
    for file in (path / "tfd_instances").rglob("*.json"):
        data = json.loads(file.read_text())
        data["helper_agent"]["gold_program"] += f"\n# {SENTINEL}"
        file.write_text(json.dumps(data))
    return path


def _gold(bench: Path) -> tuple[list[str], list[str]]:
    """Every gold program line and every object id of the reference trajectories."""
    lines, oids = [], []
    for file in (bench / "tfd_instances").rglob("*.json"):
        data = json.loads(file.read_text())
        lines += [ln.strip() for ln in data["helper_agent"]["gold_program"].splitlines() if ln.strip()]
        oids += [a["oid"] for a in data.get("driver_actions_future", []) if a.get("oid")]
    return lines, oids


def _stored(folder: Path) -> str:
    return json.dumps([r.model_dump() for r in ExperienceMemory(path=str(folder)).list()])


def test_self_iteration_fills_the_database_pass_by_pass_without_gold(bench: Path, tmp_path: Path) -> None:
    chat = Scripted(prompts=[])
    spec = ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=3, train_split="self", llm="scripted")
    metrics = run_progressive(spec, chat_model=chat)
    out = tmp_path / "run"
    assert [r["database_records"] for r in metrics["iterations"]] == [0, 3, 6]
    assert metrics["mode"] == "self-iteration" and "self-iteration" in metrics["label"]
    assert "self-iteration" in (out / "report.md").read_text()
    assert (out / "sr_by_iteration.png").stat().st_size > 0
    assert len(metrics["SR_by_iteration"]) == 3
    # The coffee episode succeeds (scripted), the others say done() at once and fail.
    results = [json.loads(line) for line in (out / "iter_0" / "eval" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["success"] for r in results) == [0, 0, 1]
    assert metrics["iterations"][0]["SR"] == pytest.approx(100 / 3, abs=0.01)
    # Each iteration keeps its own database: iteration 2's holds rounds 1 and 2, with the harness's done flag.
    records = ExperienceMemory(path=str(out / "iter_2" / "database")).list()
    assert sorted(r.round for r in records) == [1, 1, 1, 2, 2, 2]
    by_id = {r.id: r for r in records}
    for result in results:
        stored = by_id[f"r0:{result['instance_id']}"]
        assert stored.done == bool(result["success"])
        assert [s.action for s in stored.steps] == [s[0] for s in result["subgoals"]]
        assert all(s.scene_graph for s in stored.steps)
    assert ExperienceMemory(path=str(out / "iter_1" / "database")).count() == 3
    # Iteration 1's prompts show iteration 0's episodes; iteration 0's show none.
    assert any("Episode 1 (task done)" in p for p in chat.prompts)
    assert sum("Past episodes:\n(none yet)" in p for p in chat.prompts) == results[0]["llm_calls"] + results[1]["llm_calls"] + results[2]["llm_calls"]

    # REQUIRED: no gold program, gold plan or reference trajectory in any prompt or stored record.
    lines, oids = _gold(bench)
    assert lines and oids
    stored_text = "".join(_stored(out / f"iter_{i}" / "database") for i in range(3))
    for text in [*chat.prompts, stored_text]:
        assert SENTINEL not in text
        assert "InteractionObject" not in text
        assert not [ln for ln in lines if len(ln) > 12 and ln in text]
        assert not [oid for oid in oids if oid in text]

    # `helper eval compare` counts the run with its best iteration (not the SR-by-iteration summary).
    from helper_agent.evals.engine.report import best_iteration, iteration_metrics, method_name

    assert [p.parent.parent.name for p in iteration_metrics(out)] == ["iter_0", "iter_1", "iter_2"]
    best = best_iteration(out)
    by_sr = max(range(3), key=lambda i: (metrics["iterations"][i]["SR"], metrics["iterations"][i]["GC"]))
    assert best["overall"]["SR"] == metrics["iterations"][by_sr]["SR"]
    assert best["note"] == f"best of 3 iterations: iter_{by_sr}" and method_name(best) == "prag"

    # Resuming does nothing new: every episode is recorded and every database is marked complete.
    calls = len(chat.prompts)
    again = run_progressive(spec, chat_model=chat)
    assert len(chat.prompts) == calls and again["SR_by_iteration"] == metrics["SR_by_iteration"]
    # An iteration can be re-run on its kept database.
    import shutil

    shutil.rmtree(out / "iter_1" / "eval")
    rerun = run_progressive(spec, chat_model=chat)
    assert len(chat.prompts) > calls and rerun["iterations"][1]["database_records"] == 3


def test_a_run_kept_without_its_databases_rebuilds_them_from_the_passes(bench: Path, tmp_path: Path) -> None:
    # Results are kept (committed, copied) without `database/`, which is derived data. Resuming the
    # copy must rebuild each database from the passes' records, not hand the agent an empty one as Di.
    import shutil
    from dataclasses import replace

    chat = Scripted(prompts=[])
    spec = ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=2, train_split="self", llm="scripted")
    first = run_progressive(spec, chat_model=chat)
    before = sorted(r.id for r in ExperienceMemory(path=str(tmp_path / "run" / "iter_1" / "database")).list())
    kept = tmp_path / "kept"
    shutil.copytree(tmp_path / "run", kept, ignore=shutil.ignore_patterns("database"))
    assert (kept / "iter_1" / "database.json").exists() and not (kept / "iter_1" / "database").exists()
    shutil.rmtree(kept / "iter_1" / "eval")  # the iteration is re-run on the rebuilt database
    calls = len(chat.prompts)
    again = run_progressive(replace(spec, out=str(kept)), chat_model=chat)
    assert sorted(r.id for r in ExperienceMemory(path=str(kept / "iter_1" / "database")).list()) == before
    assert len(before) == 3 and again["iterations"][1]["database_records"] == 3
    assert any("Episode 1 (task done)" in p for p in chat.prompts[calls:])
    assert again["SR_by_iteration"] == first["SR_by_iteration"]


def test_train_mode_builds_the_database_on_train_episodes_only(bench: Path, tmp_path: Path) -> None:
    chat = Scripted(prompts=[])
    spec = ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=2, train_split="train",
                           train_limit=2, limit=2, llm="scripted", agent_options={"retrieval": "goal", "k": "1"})
    metrics = run_progressive(spec, chat_model=chat)
    out = tmp_path / "run"
    assert [r["database_records"] for r in metrics["iterations"]] == [0, 2]
    assert (out / "iter_0" / "train" / "results.jsonl").exists()
    assert not (out / "iter_1" / "train").exists()  # the last train pass would feed nothing
    stored = ExperienceMemory(path=str(out / "iter_1" / "database")).list()
    assert {r.info["split"] for r in stored} == {"train"}
    assert metrics["iterations"][1]["eval"]["episodes"] == 2
    assert "train(2)->valid_unseen" in metrics["label"]
    spec_json = json.loads((out / "iter_1" / "eval" / "spec.json").read_text())
    assert spec_json["agent_options"]["retrieval"] == "goal"
    assert spec_json["agent_options"]["database"].endswith("iter_1/database")


def test_a_changed_setting_is_refused_on_resume(bench: Path, tmp_path: Path) -> None:
    chat = Scripted(prompts=[])
    spec = ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=1, limit=1, llm="scripted")
    run_progressive(spec, chat_model=chat)
    with pytest.raises(ValueError, match="agent_options"):
        run_progressive(ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=1, limit=1,
                                        llm="scripted", agent_options={"k": "5"}), chat_model=chat)
    with pytest.raises(ValueError, match="database"):
        ProgressiveSpec(data=".", out=".", agent_options={"database": "x"}).check()


def test_the_command_is_registered_and_checks_its_switches(tmp_path: Path) -> None:
    from helper_agent.cli import app

    result = CliRunner().invoke(app, ["eval", "progressive", "--help"])
    assert result.exit_code == 0 and "--train-split" in result.output and "--iterations" in result.output
    bad = CliRunner().invoke(app, ["eval", "progressive", "--data", str(tmp_path), "--out", str(tmp_path / "o"),
                                   "--train-split", "valid"])
    assert bad.exit_code != 0


def test_an_ablation_or_a_longer_run_adopts_iteration0_episodes_and_refuses_a_different_run(bench: Path, tmp_path: Path) -> None:
    chat = Scripted(prompts=[])
    main = ProgressiveSpec(data=str(bench), out=str(tmp_path / "main"), iterations=1, train_split="self", llm="scripted")
    run_progressive(main, chat_model=chat)
    calls_main = len(chat.prompts)
    ablation = ProgressiveSpec(data=str(bench), out=str(tmp_path / "goal"), iterations=2, train_split="self",
                               llm="scripted", agent_options={"retrieval": "goal", "k": "2"},
                               iteration0_from=str(tmp_path / "main"))
    metrics = run_progressive(ablation, chat_model=chat)
    goal_dir = tmp_path / "goal"
    # Iteration 0 is not run again: its results are the main run's, iteration 1 runs on them.
    assert (goal_dir / "iter_0" / "eval" / "results.jsonl").read_text() == \
        (tmp_path / "main" / "iter_0" / "eval" / "results.jsonl").read_text()
    assert "Past episodes:\n(none yet)" not in "".join(chat.prompts[calls_main:])
    assert len(chat.prompts) > calls_main and metrics["iterations"][1]["database_records"] == 3
    assert json.loads((goal_dir / "iter_0" / "eval" / "spec.json").read_text())["agent_options"]["retrieval"] == "goal"
    assert "adopted from" in (goal_dir / "report.md").read_text()
    adopted = json.loads((goal_dir / "iter_0" / "eval" / "adopted_from.json").read_text())
    assert (adopted["episodes"], adopted["of"]) == (3, 3)
    # Anything that decides an episode besides retrieval and the episode count must match.
    for field_name, value in (("agent_options", {"max_steps": "5"}), ("llm", "other"), ("seed", 1)):
        other = ProgressiveSpec(data=str(bench), out=str(tmp_path / f"x-{field_name}"), iterations=2,
                                train_split="self", llm="scripted", iteration0_from=str(tmp_path / "main"))
        setattr(other, field_name, value)
        with pytest.raises(ValueError, match=field_name if field_name != "agent_options" else "switches"):
            run_progressive(other, chat_model=chat)
    # A shorter run adopts the episodes it has; a source stopped after one episode gives that one, and
    # the pass runs the others here.
    short = ProgressiveSpec(data=str(bench), out=str(tmp_path / "short"), iterations=1, train_split="self",
                            limit=2, llm="scripted", iteration0_from=str(tmp_path / "main"))
    calls = len(chat.prompts)
    run_progressive(short, chat_model=chat)
    assert len(chat.prompts) == calls
    main_lines = (tmp_path / "main" / "iter_0" / "eval" / "results.jsonl").read_text().splitlines()
    assert (tmp_path / "short" / "iter_0" / "eval" / "results.jsonl").read_text().splitlines() == main_lines[:2]
    (tmp_path / "main" / "iter_0" / "eval" / "results.jsonl").write_text(main_lines[0] + "\n")
    late = ProgressiveSpec(data=str(bench), out=str(tmp_path / "late"), iterations=1, train_split="self",
                           llm="scripted", iteration0_from=str(tmp_path / "main"))
    late_metrics = run_progressive(late, chat_model=chat)
    late_lines = (tmp_path / "late" / "iter_0" / "eval" / "results.jsonl").read_text().splitlines()
    assert late_lines[0] == main_lines[0] and len(late_lines) == 3 and len(chat.prompts) > calls
    assert late_metrics["iterations"][0]["eval"]["episodes"] == 3
    late_adopted = json.loads((tmp_path / "late" / "iter_0" / "eval" / "adopted_from.json").read_text())
    assert (late_adopted["episodes"], late_adopted["of"]) == (1, 3)
    # A train-mode run adopts a self-iteration's evaluation pass and makes its own train pass.
    (tmp_path / "main" / "iter_0" / "eval" / "results.jsonl").write_text(
        (goal_dir / "iter_0" / "eval" / "results.jsonl").read_text())
    calls = len(chat.prompts)
    train = ProgressiveSpec(data=str(bench), out=str(tmp_path / "train"), iterations=2, train_split="train",
                            train_limit=2, llm="scripted", iteration0_from=str(tmp_path / "main"))
    run_progressive(train, chat_model=chat)
    assert (tmp_path / "train" / "iter_0" / "eval" / "adopted_from.json").exists()
    assert not (tmp_path / "train" / "iter_0" / "train" / "adopted_from.json").exists()
    assert (tmp_path / "train" / "iter_0" / "train" / "results.jsonl").read_text().count("\n") == 2
    assert len(chat.prompts) > calls
    with pytest.raises(FileNotFoundError, match="progressive.json"):
        run_progressive(ProgressiveSpec(data=str(bench), out=str(tmp_path / "none"), llm="scripted",
                                        iteration0_from=str(tmp_path / "nowhere")), chat_model=chat)


def test_episodes_another_agent_code_ran_are_run_again_unless_adopted_on_purpose(bench: Path, tmp_path: Path) -> None:
    chat = Scripted(prompts=[])
    main = ProgressiveSpec(data=str(bench), out=str(tmp_path / "main"), iterations=1, train_split="self", llm="scripted")
    run_progressive(main, chat_model=chat)
    results = tmp_path / "main" / "iter_0" / "eval" / "results.jsonl"
    lines = results.read_text().splitlines()
    old = [json.dumps({**json.loads(line), "code": "0000000"}) for line in lines[:2]]
    results.write_text("\n".join([*old, *lines[2:]]) + "\n")  # two episodes by an older agent

    calls = len(chat.prompts)
    fresh = ProgressiveSpec(data=str(bench), out=str(tmp_path / "fresh"), iterations=1, train_split="self",
                            llm="scripted", agent_options={"retrieval": "goal"}, iteration0_from=str(tmp_path / "main"))
    run_progressive(fresh, chat_model=chat)
    adopted = json.loads((tmp_path / "fresh" / "iter_0" / "eval" / "adopted_from.json").read_text())
    assert (adopted["episodes"], adopted["not_adopted_other_code"]) == (1, 2)
    records = [json.loads(line) for line in (tmp_path / "fresh" / "iter_0" / "eval" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and "0000000" not in {r["code"] for r in records}
    assert len(chat.prompts) > calls  # the two were run again

    calls = len(chat.prompts)
    anyway = ProgressiveSpec(data=str(bench), out=str(tmp_path / "anyway"), iterations=1, train_split="self",
                             llm="scripted", iteration0_from=str(tmp_path / "main"), adopt_other_code=True)
    metrics = run_progressive(anyway, chat_model=chat)
    adopted = json.loads((tmp_path / "anyway" / "iter_0" / "eval" / "adopted_from.json").read_text())
    assert adopted["episodes"] == 3 and adopted["code"]["0000000"] == 2 and len(chat.prompts) == calls
    assert "0000000 (2)" in (tmp_path / "anyway" / "report.md").read_text()  # the report names the mix
    assert metrics["iterations"][0]["eval"]["episodes"] == 3

    # When every episode is another code's, nothing is adopted and the run says so.
    results.write_text("".join(json.dumps({**json.loads(line), "code": "0000000"}) + "\n" for line in lines))
    none = ProgressiveSpec(data=str(bench), out=str(tmp_path / "none"), iterations=1, train_split="self",
                           llm="scripted", iteration0_from=str(tmp_path / "main"))
    run_progressive(none, chat_model=chat)
    adopted = json.loads((tmp_path / "none" / "iter_0" / "eval" / "adopted_from.json").read_text())
    assert (adopted["episodes"], adopted["not_adopted_other_code"]) == (0, 3)
    records = [json.loads(line) for line in (tmp_path / "none" / "iter_0" / "eval" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and "0000000" not in {r["code"] for r in records}


class ExperienceFollower(Scripted):
    """The scripted coffee maker, except that once past episodes are in its prompt it searches for a
    mug before saying done() on a task that is not coffee: retrieval changes what it does."""

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        user = str(messages[1].content)
        goal = user.split("Instruction:\n", 1)[1].split("\n", 1)[0].lower()
        if "\nStep 1 of " in user and "coffee" not in goal and "Past episodes:\n(none yet)" not in user:
            self.prompts.append(user)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Action: search(Mug)"))])
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_the_report_counts_the_episodes_retrieval_changed(bench: Path, tmp_path: Path) -> None:
    spec = ProgressiveSpec(data=str(bench), out=str(tmp_path / "run"), iterations=2, train_split="self", llm="scripted")
    metrics = run_progressive(spec, chat_model=ExperienceFollower(prompts=[]))
    first, second = (row["eval"] for row in metrics["iterations"])
    assert (first["changed_from_iteration0"], first["compared_with_iteration0"]) == (0, 3)
    # The two episodes that are not coffee now search first; the coffee episode acts as before.
    assert (second["changed_from_iteration0"], second["compared_with_iteration0"]) == (2, 3)
    assert second["env_failures"] == pytest.approx(0.0)
    # Both passes ran under the same code, and the report says which.
    assert first["code"] == second["code"] and sum(first["code"].values()) == 3
    assert f"Agent code: {next(iter(first['code']))}." in (tmp_path / "run" / "report.md").read_text()
    rows = [line for line in (tmp_path / "run" / "report.md").read_text().splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 1 and "| 2 of 3 |" in rows[0]
    # The agent that ignores its database acts the same at every iteration.
    same = run_progressive(ProgressiveSpec(data=str(bench), out=str(tmp_path / "same"), iterations=2,
                                           train_split="self", llm="scripted"), chat_model=Scripted(prompts=[]))
    assert same["iterations"][1]["eval"]["changed_from_iteration0"] == 0
