"""The files of a run folder, as typed models: `spec.json`, `metrics.json` and a `results.jsonl` line;
and a progressive run's `progressive.json`, which the report reads to say whether its best
iteration so far is final (here, so that the report needs nothing of the progressive study).

Each is read through `helper_agent.files.read_json_model` (bounded size and nesting, UTF-8, one
line naming the file and the field on any damage) and written atomically (temporary file, fsync,
rename), so a crash or a full disk leaves the previous file or the new one, never a cut one.

The models name the fields the project reads back and let every other key through (`extra="allow"`):
a newer version's extra keys load, and a reader that needs a field finds it typed. Numbers a table
prints are finite: a metrics file holding NaN is refused, not printed as `nan (nan)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from helper_agent.files import (
    FileFormatError,
    atomic_write_json,
    parse_json_text,
    read_bounded,
    read_json_model,
    validate_model,
)


class _Open(BaseModel):
    """Fields we read; other keys are kept as they are."""

    model_config = ConfigDict(extra="allow")


class SpecFile(_Open):
    """`spec.json`: what a run was started with (compared on resume, so a folder holds one run)."""

    mode: StrictStr | None = None
    split: StrictStr | None = None
    planner: StrictStr | None = None
    ablate: StrictStr | None = None
    feedback: int | None = None
    llm: StrictStr | None = None
    agent_options: dict[StrictStr, StrictStr] = Field(default_factory=dict)


Percent = Annotated[float, Field(allow_inf_nan=False, ge=0, le=100)]
"""A rate in %: NaN, an infinity, SR -5 or 1e308 in a metrics file is damage, not a score."""


class Rates(_Open):
    """SR, GC and their path-length-weighted values, in %."""

    SR: Percent
    GC: Percent
    PLW_SR: Percent
    PLW_GC: Percent
    episodes: int = Field(default=0, ge=0)


class EndedBy(_Open):
    step_limit: int = Field(default=0, ge=0)
    failure_limit: int = Field(default=0, ge=0)
    error: int = Field(default=0, ge=0)
    llm_budget: int = Field(default=0, ge=0)


NonNegative = Annotated[float, Field(allow_inf_nan=False, ge=0)]


class PerEpisode(_Open):
    llm_calls: NonNegative = 0.0
    prompt_tokens: NonNegative = 0.0


class MetricsFile(_Open):
    """`metrics.json` of a run (`helper_agent.evals.engine.report.summarise`)."""

    overall: Rates
    by_task: dict[str, Rates] = Field(default_factory=dict)
    ended_by: EndedBy = Field(default_factory=EndedBy)
    per_episode: PerEpisode = Field(default_factory=PerEpisode)
    seconds_per_llm_call: NonNegative = 0.0
    label: str = ""


class ResultLine(_Open):
    """One line of `results.jsonl`: an episode's record, keyed by its instance id, with the figures the
    report adds up (`report.summarise`) checked as numbers when it is read. A resumed run whose last
    record said `"llm_calls": "many"` once ended in `could not convert string to float: 'many'`, with
    no file, line or field: the line is now refused where it is read, naming all three."""

    instance_id: StrictStr = Field(min_length=1)
    llm_calls: NonNegative | None = None
    replans: NonNegative | None = None
    prompt_tokens: NonNegative | None = None
    completion_tokens: NonNegative | None = None
    llm_seconds: NonNegative | None = None
    seconds: NonNegative | None = None


def read_spec(path: str | Path) -> dict[str, Any] | None:
    """A run's `spec.json` as a dict, or None when there is none yet.

    An empty file counts as none: only the non-atomic writer of earlier versions left one (a full
    disk at the start of a run), and refusing it blocked every resume until it was deleted by hand.
    """
    path = Path(path)
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return None
    return read_json_model(path, SpecFile).model_dump()


def write_spec(path: str | Path, spec: dict[str, Any]) -> Path:
    return atomic_write_json(path, spec)


def read_metrics(path: str | Path) -> dict[str, Any]:
    """A run's `metrics.json`, checked: finite rates, counts where counts belong."""
    return read_json_model(path, MetricsFile).model_dump()


def read_metrics_or_summary(path: str | Path) -> dict[str, Any]:
    """A `metrics.json` that may be a progressive run's summary (no `overall`): a JSON object, and
    checked as run metrics when it has `overall`."""
    data = parse_json_text(read_bounded(path), str(path))
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if "overall" in data:
        return validate_model(data, MetricsFile, str(path)).model_dump()
    return data


def result_line(data: Any, source: str) -> dict[str, Any]:
    """A parsed `results.jsonl` line checked as a record (a JSON object with an instance id)."""
    if not isinstance(data, dict):
        raise FileFormatError(f"{source}: expected a JSON object, got {type(data).__name__}")
    validate_model(data, ResultLine, source)
    return data
SPEC_FILE = "progressive.json"  # in a progressive run's --out: what it was run with


def read_progressive_spec(folder: Path) -> dict[str, Any] | None:
    """The spec a `helper eval progressive` folder was run with (its `progressive.json`), or None when
    the folder holds none. Read when a run resumes, adopts another's iteration 0, or is compared."""
    path = folder / SPEC_FILE
    if not path.exists():
        return None
    spec = parse_json_text(read_bounded(path), str(path))
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: not a progressive run's spec (not a JSON object)")
    return spec
