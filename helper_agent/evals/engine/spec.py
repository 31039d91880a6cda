"""What one TfD or EDH evaluation run is: its dataset and split, its method and switches, where
it writes (`EvalSpec`). The runner runs it, `methods.py` builds the run's method from it, and
`runfiles.py` keeps it beside the results so a resumed run is the same run.

Apart from the runner so that what reads a spec (method building, the studies, the CLI) does not
import the run loop with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ORACLE_PLANNERS = ("gold", "oracle-graph")


@dataclass
class EvalSpec:
    mode: str  # "tfd" or "edh"
    data: str
    split: str = "valid_unseen"
    out: str = "runs/eval"
    limit: int | None = None
    llm: str = "local"
    workers: int = 1
    ablate: str | None = None
    feedback: int = 1
    planner: str = "helper"
    seed: int = 0
    memory_dir: str | None = None
    instances: list[str] = field(default_factory=list)  # explicit instance files (else the split's)
    agent_options: dict[str, str] = field(default_factory=dict)  # the method's switches (`--agent-option`)

    def memory_folder(self) -> str:
        """Where the run's memories live: `--memory-dir`, else `<out>/memory` (on a Chroma server,
        the run's own collections named after it: `memory/folders.py`)."""
        return self.memory_dir or str(Path(self.out) / "memory")

    def label(self) -> str:
        parts = [self.mode, self.split, self.planner]
        if self.planner in ORACLE_PLANNERS:
            parts.append("ORACLE")
        if self.ablate:
            parts.append(f"no-{self.ablate}")
        parts.append(f"fb{self.feedback}")
        parts.extend(f"{key}={value}" for key, value in sorted(self.agent_options.items()))
        return "/".join(parts)
