"""The four methods the project reproduces, by the name `--agent` takes.

Each method module exports `build(spec, chat_model) -> Agent`: it reads the method's switches from
`spec.agent_options` (strings from `--agent-option key=value`, validated by the method) and returns
an agent the episode harness can run. Modules are imported only when named, so a method's extra
dependencies load only for its runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from helper_agent.evals.agents import Agent
    from helper_agent.evals.runner import EvalSpec

#: agent name -> module with `build(spec, chat_model)`, and what the method is, for `--help` and the README.
METHODS: dict[str, tuple[str, str]] = {
    "helper": ("helper_agent.evals.methods.helper",
               "HELPER (Sarch et al. 2023): retrieval-augmented program planning, pre-condition checks, "
               "locator, failure correction, feedback, routines"),
    "llm-planner": ("helper_agent.evals.methods.llm_planner",
                    "LLM-Planner (Song et al. 2023): kNN few-shot high-level plans with grounded re-planning"),
    "prag": ("helper_agent.evals.methods.prag",
             "P-RAG (Xu et al. 2024): step-wise actions with progressive retrieval of its own experience"),
    "embodiedrag": ("helper_agent.evals.methods.embodiedrag",
                    "EmbodiedRAG (Booker et al. 2024): ReAct planning over a retrieved scene subgraph"),
}


class UnknownAgent(ValueError):
    pass


def method_names() -> list[str]:
    return list(METHODS)


def build_agent(spec: EvalSpec, chat_model: BaseChatModel) -> Agent:
    """The agent `spec.planner` names, built with the method's own switches."""
    if spec.planner not in METHODS:
        raise UnknownAgent(f"unknown agent {spec.planner!r}; choose from {', '.join(METHODS)}")
    module = importlib.import_module(METHODS[spec.planner][0])
    return module.build(spec, chat_model)


def check_agent_options(planner: str, options: dict[str, str]) -> None:
    """Refuse a method's switches before a run starts: an unknown key (`-o foo=bar`) or a bad value
    would otherwise be found by every episode and recorded as that many errors. A method checks its
    values in its `config_from_options` (or `config_from`); an oracle takes no switches."""
    if planner not in METHODS:
        check_known(options, (), planner)
        return
    module = importlib.import_module(METHODS[planner][0])
    check_known(options, tuple(getattr(module, "OPTIONS", ())), planner)
    for name in ("config_from_options", "config_from"):
        if hasattr(module, name):
            getattr(module, name)(options)
            break


def parse_agent_options(pairs: list[str] | None) -> dict[str, str]:
    """`["k=9", "replan=off"]` -> `{"k": "9", "replan": "off"}`; a pair without `=` is an error."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--agent-option takes KEY=VALUE, not {pair!r}")
        options[key.strip()] = value.strip()
    return options


def option(options: dict[str, str], key: str, default: Any, allowed: tuple[str, ...] | None = None) -> str:
    """One switch's value (string), checked against `allowed` when given."""
    value = options.get(key, str(default))
    if allowed is not None and value not in allowed:
        raise ValueError(f"agent option {key}={value!r}: choose from {', '.join(allowed)}")
    return value


def _whole_number(options: dict[str, str], key: str, default: int, minimum: int) -> int:
    value = option(options, key, default)
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"agent option {key}={value!r}: expected a whole number") from None
    if number < minimum:
        raise ValueError(f"agent option {key}={value!r}: expected a number >= {minimum}")
    return number


def positive_option(options: dict[str, str], key: str, default: int) -> int:
    """A switch that is a whole number >= 1 (k, max_steps, ...)."""
    return _whole_number(options, key, default, 1)


def count_option(options: dict[str, str], key: str, default: int) -> int:
    """A switch that is a whole number >= 0 (0 turns the feature off)."""
    return _whole_number(options, key, default, 0)


def check_known(options: dict[str, str], known: tuple[str, ...], agent: str) -> None:
    """Reject a switch the method does not have (a typo must not silently run the default)."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"agent {agent!r} has no option {', '.join(unknown)}; it takes {', '.join(known) or 'none'}")
