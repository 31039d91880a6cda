"""LLM-Planner's switches: retrieval (kNN or random, k), grounded re-planning and its bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.config import get_settings


@dataclass
class LLMPlannerConfig:
    """What a run of the LLM-Planner graph does.

    `replan` off is the paper's static setting (the first plan runs to its end or first failure).
    A subgoal that takes more than `replan_steps` environment steps counts as stuck and triggers a
    re-plan, as in Algorithm 1; `max_replans` bounds the LLM calls per episode.
    """

    k: int = 9
    retriever: str = "knn"  # "knn" or "random"
    replan: bool = True
    replan_steps: int = 60
    max_replans: int = 6
    max_plan_attempts: int = 2  # an unparsable answer gets one retry with the parser's reason
    retry_temperature: float = 0.7
    max_prompt_chars: int = 10500  # the nearest examples that fit (see prompts.MAX_PROMPT_CHARS)
    # TEACh's limits, 1000 steps and 30 failed actions unless HELPER_MAX_STEPS / HELPER_MAX_FAILURES say otherwise
    max_steps: int = field(default_factory=lambda: get_settings().max_steps)
    max_failures: int = field(default_factory=lambda: get_settings().max_failures)
    seed: int = 0
