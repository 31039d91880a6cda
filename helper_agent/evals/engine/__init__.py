"""The run engine: one TfD/EDH evaluation run from its spec to its report.

| module | job |
|---|---|
| `spec` | `EvalSpec`: what a run is (dataset, split, method and switches, output folder) |
| `runner` | `run_eval`: walks the split, resumes, hands episodes to an executor, writes records |
| `methods` | the run's method built from the registry (`graphs/registry.py`) |
| `agents` | the oracles and baselines run beside the methods (`gold`, `oracle-graph`, program agents) |
| `harness` | one episode: environment from the instance, the agent, TEACh's scoring |
| `executors`, `workers`, `ray_executor`, `executor_factory` | where episodes run: this process, a process pool, a Ray cluster; `--executor NAME` -> one of them |
| `store`, `runfiles` | `results.jsonl` and the run folder's other files |
| `report`, `provenance`, `plots` | metrics, tables, figures and the code version behind them |

It imports no study (`evals/studies/`) and reads the built-in benchmark only as files, like TEACh's
own download (an import-linter contract in `pyproject.toml`).
"""
