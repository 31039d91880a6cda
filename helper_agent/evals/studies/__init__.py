"""The per-paper studies, each built on the run engine (`evals/engine/`) and independent of the others.

| module | study |
|---|---|
| `personalization` | HELPER's personalization suite (Sarch et al., Table 3); its suites are in `data/` |
| `progressive` | P-RAG's progressive iteration: passes that each retrieve from the episodes of the passes before |
| `hlp` | LLM-Planner's high-level-planning accuracy, leave-one-out over a `knn_set.json` pool |
| `eai` | the Embodied Agent Interface's VirtualHome action-sequencing benchmark |

Nothing else in the package imports a study except the CLI (an import-linter contract in `pyproject.toml`).
"""
