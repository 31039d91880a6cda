"""The built-in benchmark: seeded households, tasks from the families, gold programs run by the
executor for the reference trajectory, and commander-driver dialogues, written in TEACh's formats.

| module | job |
|---|---|
| `generate` | `generate_benchmark`: the splits, seeds, EDH cuts and files |
| `families` | the task families and their parameters |
| `episodes` | a family's scene and task, prepared, and its gold program run |
| `dialogue` | the commander-driver dialogue of an episode |

It imports nothing of the run engine or the studies: a run reads the files it writes, like TEACh's
own download (an import-linter contract in `pyproject.toml`).
"""

from helper_agent.evals.benchmark.generate import generate_benchmark, state_from_game

__all__ = ["generate_benchmark", "state_from_game"]
