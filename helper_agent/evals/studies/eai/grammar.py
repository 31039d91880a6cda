"""EAI's response format: a JSON object of action names and their argument lists, in execution order.

It is the sequence form the methods write on an environment that acts by name
(`graphs/action_sequences`: its grammar over the environment's vocabulary, its parser, its rendering),
so the scorer reads and writes responses with the same functions: `render` for the executed steps a
record hands EAI's evaluator, `parse_steps` for a written answer (every pair in order, duplicates
kept: EAI's evaluator reads it with `json.loads`, which keeps one value per key).
"""

from __future__ import annotations

from helper_agent.envs.virtualhome import action_arities
from helper_agent.graphs.action_sequences import Step, parse_steps, render

__all__ = ["Step", "action_arities", "parse_steps", "render"]
