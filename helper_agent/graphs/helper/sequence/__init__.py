"""HELPER on an environment that acts by name (EAI's VirtualHome): the whole action sequence written
at once under a grammar over the environment's vocabulary, with k retrieved examples; in the closed
loop, executed step by step and corrected from the failure (`graph.py` draws it)."""
