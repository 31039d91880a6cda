"""LLM-Planner on an environment that acts by name (EAI's VirtualHome): high-level plans of the
environment's own actions (`WALK sink, GRAB cup, PUTBACK cup sink`), executed step by step, with
grounded re-planning from what is completed and seen (`graph.py` draws it)."""
