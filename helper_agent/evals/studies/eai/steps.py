"""EAI's action vocabulary as its report reads it: the actions' meanings, how every method shows them,
and the check of an answer that copied a listed order (`copies_a_list`, for the report).

Every method answers over the environment's vocabulary in its own graph: HELPER EAI's own JSON
(`graphs/action_sequences`), LLM-Planner its plans (`graphs/llm_planner/named/plans.py`), P-RAG and
EmbodiedRAG one step at a time (`graphs/named_actions.py`, which also says how the vocabulary is
shown: `vocabulary_text`, used here too).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from helper_agent.envs.base import ActionVocabulary
from helper_agent.envs.virtualhome import action_meanings
from helper_agent.evals.studies.eai.grammar import action_arities
from helper_agent.graphs import named_actions


def meanings() -> dict[str, str]:
    """ACTION -> EAI's one-line meaning (the environment's: `VirtualHomeEnv.action_vocabulary`)."""
    return action_meanings()


def vocabulary_text() -> str:
    """EAI's actions, grouped by the number of objects they take (`named_actions.vocabulary_text`)."""
    return named_actions.vocabulary_text(ActionVocabulary(actions=action_arities(), objects=(), meanings=meanings()))


def listed_orders() -> dict[str, list[str]]:
    """The two orders an answer could copy: EAI's prompt list, and `vocabulary_text`'s."""
    by_arity = _by_arity()
    return {"eai": list(meanings()), "vocabulary": [a for n in (0, 1, 2) for a in by_arity[n]]}


def copies_a_list(actions: Sequence[str], at_least: int = 4) -> bool:
    """Whether the answer's actions begin with `at_least` actions of a listed order, in that order
    (CLOSE, DRINK, FIND, WALK, ... is EAI's list, not a plan): the failure the 0.5B showed."""
    return any(len(actions) >= at_least and list(actions[:at_least]) == order[:at_least]
               for order in listed_orders().values())


def _by_arity(actions: Collection[str] | None = None) -> dict[int, list[str]]:
    arities = action_arities()
    chosen = sorted(actions if actions is not None else arities)
    return {n: [a for a in chosen if arities[a] == n] for n in (0, 1, 2)}
