"""Every command that makes its chat model from `--llm` does it one way (`commands.load_chat_model`):
a spec the factory refuses is one `error: cannot load the chat model: ...` line and exit 2, and the
command's own token and context options reach the factory.

The bad specs fail before any model loads: an unknown local size, and a provider `init_chat_model`
does not know. `helper eval tfd/edh/compare/demo` and `progressive --benchmark teach` make their
models in the episode workers, so they check the spec first (`commands.check_chat_model`): the same
one line, before a run folder is written. (`helper app` makes its model on first use, so that its
page can say what is wrong.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helper_agent import llm
from helper_agent.cli import app

# `helper eval eai` and `progressive --benchmark eai` check for EAI's package before the model: on a
# machine without the optional `virtualhome` extra (CI's `make test`) they say that instead.
NEEDS_EAI = pytest.mark.skipif(importlib.util.find_spec("virtualhome_eval") is None,
                               reason="virtualhome-eval (the optional `virtualhome` extra) is not installed")

BAD_SPECS = {
    "local:70b": "cannot load the chat model: unknown local model '70b'; choose one of",
    "nosuchprovider:model": "cannot load the chat model: cannot make a chat model from 'nosuchprovider:model'",
}


def commands(tmp: Path, spec: str) -> dict[str, list[str]]:
    """Each command that takes `--llm` and makes its model in this process, with the bad `spec`."""
    pool = tmp / "knn_set.json"
    pool.write_text("[]", encoding="utf-8")
    return {
        "run": ["run", "make coffee", "--llm", spec, "--out", str(tmp / "run")],
        "chat": ["chat", "--user", "mary", "--llm", spec, "--home", str(tmp / "home")],
        "eval personalization": ["eval", "personalization", "--llm", spec, "--out", str(tmp / "personalization")],
        "eval hlp": ["eval", "hlp", "--pool", str(pool), "--llm", spec, "--out", str(tmp / "hlp")],
        "eval eai": ["eval", "eai", "--llm", spec, "--limit", "1", "--no-peers", "--out", str(tmp / "eai")],
        "eval progressive": ["eval", "progressive", "--benchmark", "eai", "--limit", "1", "--llm", spec,
                             "--out", str(tmp / "progressive")],
    }


@pytest.mark.parametrize("spec", sorted(BAD_SPECS))
@pytest.mark.parametrize("command", ["run", "chat", "eval personalization", "eval hlp",
                                     pytest.param("eval eai", marks=NEEDS_EAI),
                                     pytest.param("eval progressive", marks=NEEDS_EAI)])
def test_a_bad_llm_is_one_error_line(command: str, spec: str, tmp_path: Path) -> None:
    args = commands(tmp_path, spec)[command]
    result = CliRunner().invoke(app, args, env={"HELPER_EMBEDDINGS": "hash:32", "HELPER_HOME": str(tmp_path / "home")})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {BAD_SPECS[spec]}"), result.output
    assert "Traceback" not in result.output


def worker_commands(tmp: Path, spec: str) -> dict[str, list[str]]:
    """Each command whose episodes make their model in a worker, with the bad `spec`."""
    data = str(tmp / "bench")
    return {
        "eval tfd": ["eval", "tfd", "--data", data, "--llm", spec, "--out", str(tmp / "out")],
        "eval edh": ["eval", "edh", "--data", data, "--llm", spec, "--out", str(tmp / "out")],
        "eval compare": ["eval", "compare", "--agents", "helper,llm-planner", "--data", data, "--llm", spec,
                         "--out", str(tmp / "out")],
        "demo": ["demo", "--llm", spec, "--out", str(tmp / "out")],
        "eval progressive": ["eval", "progressive", "--data", data, "--llm", spec, "--out", str(tmp / "out")],
    }


@pytest.mark.parametrize("spec", sorted(BAD_SPECS))
@pytest.mark.parametrize("command", ["eval tfd", "eval edh", "eval compare", "demo", "eval progressive"])
def test_a_bad_llm_stops_an_evaluation_before_its_episodes(command: str, spec: str, tmp_path: Path) -> None:
    """Not one error per episode in a run folder: one line, exit 2, and nothing written."""
    result = CliRunner().invoke(app, worker_commands(tmp_path, spec)[command], env={"HELPER_EMBEDDINGS": "hash:32"})
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {BAD_SPECS[spec]}"), result.output
    assert not (tmp_path / "out").exists()


def test_an_oracle_evaluation_asks_no_model(tmp_path: Path) -> None:
    """The oracle planners measure the world, not a model: a spec they never use is not checked."""
    from helper_agent.evals.benchmark import generate_benchmark

    generate_benchmark(tmp_path / "bench", seed=0, sizes={"valid_unseen": 1}, overwrite=True)
    result = CliRunner().invoke(app, ["eval", "tfd", "--data", str(tmp_path / "bench"), "--agent", "gold",
                                      "--llm", "nosuchprovider:model", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "results.jsonl").exists()


@pytest.mark.parametrize(("args", "expected"), [
    pytest.param(["eval", "eai", "--n-ctx", "6000", "--max-tokens", "300"], {"n_ctx": 6000, "max_tokens": 300},
                 marks=NEEDS_EAI),
    pytest.param(["eval", "eai"], {"n_ctx": 8192, "max_tokens": 640}, marks=NEEDS_EAI),
    pytest.param(["eval", "progressive", "--benchmark", "eai"], {"n_ctx": 8192, "max_tokens": 640}, marks=NEEDS_EAI),
    (["eval", "personalization"], {}),
])
def test_the_commands_options_reach_the_factory(args: list[str], expected: dict[str, Any], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def refuse(spec: str, **options: Any) -> Any:
        asked.append((spec, options))
        raise llm.LLMUnavailable("recorded")

    monkeypatch.setattr(llm, "make_chat_model", refuse)
    result = CliRunner().invoke(app, [*args, "--llm", "local:1.5b", "--limit", "1", "--out", str(tmp_path / "out"),
                                      *(["--no-peers"] if args[1] == "eai" else [])],
                                env={"HELPER_EMBEDDINGS": "hash:32"})
    assert result.exit_code == 2 and "error: cannot load the chat model: recorded" in result.output, result.output
    assert asked == [("local:1.5b", expected)]


def test_a_local_model_gets_the_context_length_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """`n_ctx` reaches the in-process model, and models with other lengths are other models."""
    from helper_agent.llm import factory

    monkeypatch.setattr(factory, "assemble_local_model", lambda size: Path(f"/models/{size}.gguf"))
    monkeypatch.setattr(llm.LlamaCppChatModel, "_new_context", lambda self: object())
    monkeypatch.setattr(factory, "_local_models", {})
    plain, long = llm.make_chat_model("local@llama.cpp"), llm.make_chat_model("local@llama.cpp", n_ctx=8192)
    assert plain.n_ctx == llm.LlamaCppChatModel.model_fields["n_ctx"].default and long.n_ctx == 8192
    assert long is not plain and llm.make_chat_model("local@llama.cpp", n_ctx=8192) is long
