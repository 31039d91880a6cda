"""The HELPER graph's configuration: the switches of HELPER's ablations and the loop bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.config import get_settings


@dataclass
class HelperConfig:
    """What a run of the HELPER graph does.

    The first five fields are HELPER's ablations (Table 2 of the paper): memory-augmented vs fixed
    prompt examples, pre-condition checks, failure correction, LLM locator vs random search, and
    the number of feedback rounds.
    """

    memory_augmented: bool = True
    prechecks: bool = True
    correction: bool = True
    locator: str = "llm"  # "llm" or "random"
    feedback_rounds: int = 1  # 0, 1 or 2
    k: int = 3  # retrieved examples in the planner's prompt
    max_plan_attempts: int = 3  # invalid programs are sent back with the parser's message
    # Decoding: programs are constrained to the API where the chat model allows it (see
    # `llm.program_decoding`); a first attempt is greedy, a retry samples at `retry_temperature`
    # with a new seed so it does not repeat the rejected answer.
    max_program_lines: int = 30
    retry_temperature: float = 0.7
    max_corrections: int = 2
    max_locate_attempts: int = 2
    # TEACh's limits, 1000 steps and 30 failed actions unless HELPER_MAX_STEPS / HELPER_MAX_FAILURES say otherwise
    max_steps: int = field(default_factory=lambda: get_settings().max_steps)
    max_failures: int = field(default_factory=lambda: get_settings().max_failures)
    routine_min_score: float = 0.6
    # Reuse a recalled routine without the LLM when the request is exactly its name or its original
    # request (`requests.is_unchanged_recall`); otherwise the LLM adapts the routine to the request.
    routine_fast_path: bool = True
    # Adapt a recalled routine by edits (graphs/helper/adapt.py: its changes, one checked edit each);
    # off: the planner rewrites the whole program from the routine, the request and examples.
    routine_edits: bool = True
    # Refuse, before planning, a request whose named things are all absent from the household
    # ("mow the lawn" in a flat), with the reason (`understanding/absent.py`); off: every request is
    # planned.
    refuse_absent: bool = True
    # Write a correction's missing part from the person's words (`understanding/missing.py`,
    # `program/edits/part.py`) when every clause that asks for something is read; off: the planner
    # writes every replan.
    missing_parts: bool = True
    seed: int = 0

    @classmethod
    def ablated(cls, name: str | None, feedback_rounds: int | None = None) -> HelperConfig:
        """The configuration of one of HELPER's ablations (`mem`, `precheck`, `correction`, `locator`)."""
        config = cls()
        if name in (None, "", "none"):
            pass
        elif name == "mem":
            config.memory_augmented = False
        elif name == "precheck":
            config.prechecks = False
        elif name == "correction":
            config.correction = False
        elif name == "locator":
            config.locator = "random"
        else:
            raise ValueError(f"unknown ablation {name!r}; choose mem, precheck, correction or locator")
        if feedback_rounds is not None:
            config.feedback_rounds = feedback_rounds
        return config
