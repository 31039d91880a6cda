"""The Embodied Agent Interface's VirtualHome action-sequencing benchmark (Li et al., NeurIPS 2024).

Everything here uses the `virtualhome-eval` package (`pip install -e '.[virtualhome]'`): its task
inputs, its evolving-graph simulator and its own evaluator, `evaluate_results`, which scores our
outputs and the 15 LLM outputs it ships in the same run. Nothing is copied out of the package.
"""
