"""EmbodiedRAG: grammar and parser agree, episodes succeed with a scripted planner, the memory holds
only what was seen, the subgraph prompt stays flat as the home grows while the full graph grows."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_episode
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.embodiedrag.actions import (
    ACTIONS,
    ReactParseError,
    parse_react,
    parse_self_query,
    react_cfg,
    react_grammar,
    self_query_cfg,
)
from helper_agent.graphs.embodiedrag.agent import config_from_options
from helper_agent.graphs.embodiedrag.nodes import SELF_QUERY_ATTRIBUTES, _needs
from helper_agent.graphs.registry import BuildRequest, build_agent
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.cfg_sample import Sampler
from helper_agent.world.catalog import load_catalog

COFFEE_PLAN = [("clean", "Mug"), ("place", "CoffeeMachine"), ("toggle_on", "CoffeeMachine")]


class ScriptedReact(BaseChatModel):
    """Answers the self-query with fixed lines and each ReAct step with the next step of a plan,
    naming the first id of the wanted class in the prompt's scene graph (or searching for the class);
    its thought names the class the plan needs after this step.
    It reports a prompt length of characters / 4 tokens."""

    plan: list[Any] = []
    queries: str = ""
    pos: int = 0
    prompts: list[str] = []
    fail_with: str = ""

    @property
    def _llm_type(self) -> str:
        return "scripted-react"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if self.fail_with:
            raise ValueError(self.fail_with)
        system = str(messages[0].content)
        user = "\n".join(str(m.content) for m in messages[1:])
        self.prompts.append(user)
        if "name the objects" in system:
            text = self.queries
        else:
            graph = user.split("Scene graph:\n", 1)[1].split("\n\nHolding:", 1)[0]
            ids = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M)
            if self.pos >= len(self.plan):
                text = "Thought: the coffee is made\nAction: done()"
            else:
                action, cls = self.plan[self.pos]
                match = [i for i in ids if i.rsplit("_", 1)[0] == cls]
                after = self.plan[self.pos + 1][1] if self.pos + 1 < len(self.plan) else None
                then = f", then the {after}" if after and after != cls else ""
                if match:
                    text = f"Thought: I {action} the {cls}{then}\nAction: {action}({match[0]})"
                    self.pos += 1
                else:
                    text = f"Thought: I need a {cls}\nAction: search({cls})"
        tokens = len(system + user) // 4
        message = AIMessage(content=text, usage_metadata={"input_tokens": tokens, "output_tokens": 8, "total_tokens": tokens + 8})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")  # "hash" (256) maps mug and cabinet alike


@pytest.fixture(scope="module")
def benches(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    out = {}
    for n in (0, 1000):
        path = tmp_path_factory.mktemp(f"bench{n}")
        generate_benchmark(path, seed=0, sizes={"valid_unseen": 3}, distractors=n)
        out[n] = path
    return out


def _coffee(bench: Path) -> Path:
    for path in sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json")):
        if json.loads(path.read_text())["helper_agent"]["family"] == "coffee":
            return path
    raise AssertionError("no coffee episode")


def _run(bench: Path, tmp_path: Path, chat: BaseChatModel, **options: str) -> dict[str, Any]:
    spec = EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / "run"), planner="embodiedrag", feedback=0,
                    agent_options=options)
    return run_episode(spec, str(_coffee(bench)), chat)


def _chat() -> ScriptedReact:
    return ScriptedReact(plan=list(COFFEE_PLAN), queries="- mug: isDirty", prompts=[])


# ------------------------------------------------------------------------------------ grammar and parser
IDS = ["Mug_1", "Mug_2", "SinkBasin_1", "CoffeeMachine_1"]
CLASSES = ["Mug", "Knife", "CoffeeMachine"]


@pytest.mark.parametrize("ids", [IDS, [], ["Apple_10"]])
def test_llama_cpp_compiles_the_react_grammar(ids: list[str]) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    text = react_grammar(ids, CLASSES)
    sampler = llama_cpp.llama_sampler_init_grammar(None, text.encode("utf-8"), b"root")
    assert sampler, "llama.cpp rejected the grammar"
    llama_cpp.llama_sampler_free(sampler)
    assert ("id ::=" in text) == bool(ids)


def test_llama_cpp_compiles_the_self_query_grammar() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    text = self_query_cfg(SELF_QUERY_ATTRIBUTES, 6).to_gbnf()
    sampler = llama_cpp.llama_sampler_init_grammar(None, text.encode("utf-8"), b"root")
    assert sampler
    llama_cpp.llama_sampler_free(sampler)


def test_every_sampled_react_answer_parses_to_what_it_says() -> None:
    grammar = react_cfg(IDS, CLASSES)
    sampler = Sampler(grammar, random.Random(3))
    names = set()
    for _ in range(400):
        text = sampler.sample()
        answer = parse_react(text, IDS, CLASSES)
        assert text.endswith(f"\nAction: {answer.render()}")
        assert answer.thought
        names.add(answer.action)
    assert names == {a.name for a in ACTIONS}


def test_every_sampled_self_query_parses() -> None:
    sampler = Sampler(self_query_cfg(SELF_QUERY_ATTRIBUTES, 4), random.Random(5))
    for _ in range(300):
        text = sampler.sample()
        items = parse_self_query(text, SELF_QUERY_ATTRIBUTES, 4)
        assert 1 <= len(items) <= 4
        assert all(set(attrs) <= set(SELF_QUERY_ATTRIBUTES) for _, attrs in items)


@pytest.mark.parametrize("text", [
    "Thought: x\nAction: pickup(Mug_9)",  # id not shown
    "Thought: x\nAction: fly(Mug_1)",  # no such action
    "Thought: x\nAction: search(Dragon)",  # no such class
    "Action: pickup(Mug_1)",  # no thought
    "Thought: x\nAction: done(Mug_1)",
])
def test_the_parser_and_the_grammar_reject_the_same_bad_answers(text: str) -> None:
    with pytest.raises(ReactParseError):
        parse_react(text, IDS, CLASSES)
    assert not Matcher(react_cfg(IDS, CLASSES)).matches(text)


def test_a_thought_names_what_is_retrieved_next() -> None:
    needs = _needs("I need the CoffeeMachine, then two mugs", load_catalog().types)
    assert "coffee machine" in needs and "mug" in needs and "knife" not in needs


# ------------------------------------------------------------------------------------ the method's switches
def test_options_are_checked() -> None:
    config = config_from_options({"graph": "full", "k": "2", "max_steps": "7"})
    assert (config.graph, config.k, config.max_steps) == ("full", 2, 7)
    with pytest.raises(ValueError, match="no option"):
        config_from_options({"grph": "full"})
    with pytest.raises(ValueError, match="choose from"):
        config_from_options({"graph": "whole"})
    with pytest.raises(ValueError, match=">= 1"):
        config_from_options({"k": "0"})


def test_the_registry_builds_the_agent(tmp_path: Path) -> None:
    agent = build_agent("embodiedrag", BuildRequest(_chat(), {"graph": "full"}, memory_dir=str(tmp_path)))
    assert agent.name == "embodiedrag" and agent.config.graph == "full" and not agent.oracle


# ------------------------------------------------------------------------------------ episodes
@pytest.mark.parametrize("graph", ["subgraph", "full"])
def test_a_scripted_planner_succeeds_in_the_embedded_world(benches: dict[int, Path], tmp_path: Path, graph: str) -> None:
    chat = _chat()
    record = _run(benches[0], tmp_path, chat, graph=graph)
    assert record.get("error_message") is None
    assert record["success"] == 1 and record["goal_condition_success"] == 1.0
    assert record["outcome"] == "done"
    assert record["react_steps"] == 4  # clean, place, toggle_on, done
    assert record["llm_calls"] == (5 if graph == "subgraph" else 4)  # the self-query is EmbodiedRAG's only
    assert any(line.startswith("step 1: clean(Mug_") for line in record["log"])
    assert record["program"].splitlines()[0].startswith("clean(Mug_") and record["program"].endswith("done()")


def test_a_planner_that_does_nothing_fails(benches: dict[int, Path], tmp_path: Path) -> None:
    chat = ScriptedReact(plan=[], queries="- mug", prompts=[])
    record = _run(benches[0], tmp_path, chat)
    assert record["success"] == 0 and record["react_steps"] == 1


def test_the_memory_holds_only_what_was_seen(benches: dict[int, Path], tmp_path: Path) -> None:
    from helper_agent.envs.symbolic import SymbolicEnv
    from helper_agent.graphs.base import EpisodeSetup
    from helper_agent.graphs.embodiedrag import EmbodiedRAGConfig
    from helper_agent.graphs.embodiedrag.agent import EmbodiedRAGAgent
    from helper_agent.teach.instances import load_instance

    loaded = load_instance(str(_coffee(benches[1000])), "tfd")
    env = SymbolicEnv()
    agent = EmbodiedRAGAgent(ScriptedReact(plan=[], queries="- mug", prompts=[]), EmbodiedRAGConfig(max_steps=1),
                             memory_path=str(tmp_path / "memory"))
    loaded.start(env)
    total = len(env.objects_metadata())
    result = agent.run(EpisodeSetup(env=env, request=loaded.dialogue, instance_id="seen"))
    entities = agent.memory("seen").list_entities()
    objects = env.state.objects
    visible = Counter(o.object_type for oid, o in objects.items() if not env.sim.is_hidden(oid))
    hidden = Counter(o.object_type for oid, o in objects.items() if env.sim.is_hidden(oid))
    known = Counter(e.label for e in entities)
    assert 0 < len(entities) < total and result.usage["entities_known"] == len(entities)
    # Nothing was opened: objects inside closed receptacles were never seen and are not known.
    assert sum(hidden.values()) > 0
    assert all(known[t] <= visible[t] for t in known), known - visible


def test_subgraph_prompt_is_flat_while_the_full_graph_grows(benches: dict[int, Path], tmp_path: Path) -> None:
    tokens: dict[tuple[str, int], float] = {}
    for n, bench in benches.items():
        for graph in ("subgraph", "full"):
            record = _run(bench, tmp_path / f"{graph}{n}", _chat(), graph=graph)
            assert record["success"] == 1, (graph, n, record.get("log"))
            tokens[graph, n] = record["react_prompt_tokens"]
    assert tokens["subgraph", 1000] < 1.3 * tokens["subgraph", 0]  # nearly flat
    assert tokens["full", 1000] > 5 * tokens["full", 0]  # grows with the home
    assert tokens["full", 1000] > 10 * tokens["subgraph", 1000]  # the paper's order of magnitude


def test_the_subgraph_is_refreshed_from_the_thought(benches: dict[int, Path], tmp_path: Path) -> None:
    chat = _chat()  # the self-query names only the mug
    record = _run(benches[0], tmp_path, chat)
    react = [p.split("Holding:")[0] for p in chat.prompts if "Scene graph:" in p]
    assert "Mug_" in react[0] and "CoffeeMachine_" not in react[0]
    # Step 1's thought "I clean the Mug, then the CoffeeMachine" puts it in step 2's subgraph: no search.
    assert "CoffeeMachine_" in react[1]
    assert not any("search(" in line for line in record["log"])


def test_a_prompt_beyond_the_context_is_a_baseline_failure(benches: dict[int, Path], tmp_path: Path) -> None:
    chat = ScriptedReact(plan=[], queries="", prompts=[], fail_with="Requested tokens (23000) exceed context window of 4096")
    record = _run(benches[1000], tmp_path, chat, graph="full")
    assert record["success"] == 0
    assert record["outcome"] == "context_overflow" and record["context_overflow"] == 1


class RandomReact(BaseChatModel):
    """Any answer the grammars allow, at random (done() rarely): the agent must never crash on one."""

    seed: int = 0

    @property
    def _llm_type(self) -> str:
        return "random-react"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        rng = random.Random(self.seed)
        self.seed += 1
        user = "\n".join(str(m.content) for m in messages[1:])
        if "name the objects" in str(messages[0].content):
            text = Sampler(self_query_cfg(SELF_QUERY_ATTRIBUTES, 6), rng).sample()
        else:
            graph = user.split("Scene graph:\n", 1)[1].split("\n\nHolding:", 1)[0]
            sampler = Sampler(react_cfg(re.findall(r"^([A-Za-z]+_\d+)", graph, re.M), sorted(load_catalog().types)), rng)
            text = sampler.sample()
            while text.endswith("done()") and rng.random() > 0.05:
                text = sampler.sample()
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


@pytest.mark.parametrize("graph", ["subgraph", "full"])
def test_any_answer_the_grammar_allows_is_acted_on_without_error(benches: dict[int, Path], tmp_path: Path,
                                                                 graph: str) -> None:
    record = _run(benches[0], tmp_path, RandomReact(seed=7), graph=graph, max_steps="12")
    assert record.get("error_message") is None, record.get("traceback")
    assert 1 <= record["react_steps"] <= 12
    assert record["outcome"] in ("done", "max_steps", "step_limit", "failure_limit")


# ------------------------------------------------------------------------------------ futile actions
def test_an_action_that_changed_nothing_from_here_is_refused(benches: dict[int, Path], tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    chat = FakeListChatModel(responses=["- mug", "Thought: free my hands\nAction: put_down()",
                                        "Thought: again\nAction: put_down()", "Thought: finished\nAction: done()"])
    # With admissible actions on, putting down with empty hands is never offered (below); off, it
    # is tried once, changes nothing, and is refused from the same observation.
    record = _run(benches[0], tmp_path, chat, admissible="off")
    steps = [line for line in record["log"] if line.startswith("step ")]
    assert steps[0] == "step 1: put_down() -> nothing to put down; hands empty", record["log"]
    assert "put_down() was already done from here and changed nothing" in steps[1]
    assert steps[2].startswith("step 2: done()")
    assert record["futile_rejections"] == 1 and record["llm_calls"] == 4
    off = _run(benches[0], tmp_path / "off", FakeListChatModel(responses=chat.responses), refuse_futile="off",
               admissible="off")
    assert [line for line in off["log"] if line.startswith("step ")][1].startswith("step 2: put_down()")
    admissible = _run(benches[0], tmp_path / "admissible", FakeListChatModel(responses=chat.responses))
    steps = [line for line in admissible["log"] if line.startswith("step ")]
    assert steps[:2] == ["step 1 rejected: put_down(): you hold nothing"] * 2, admissible["log"]


def test_the_grammar_leaves_out_the_futile_actions() -> None:
    cfg = react_cfg(IDS, CLASSES, exclude=["put_down()", "goto(Mug_1)"])
    assert not Matcher(cfg).matches("Thought: x\nAction: put_down()")
    assert not Matcher(cfg).matches("Thought: x\nAction: goto(Mug_1)")
    assert Matcher(cfg).matches("Thought: x\nAction: goto(Mug_2)")
    assert Matcher(cfg).matches("Thought: x\nAction: done()")
    assert Matcher(react_cfg(IDS, CLASSES)).matches("Thought: x\nAction: put_down()")
