"""Which code ran an episode, kept in its record.

A run resumes across sessions, and the code may change in between: a table of methods mixing an
agent before and after a change compares neither. Each record carries `code` (the last commit that
changed the package, in the checkout it runs from; `+dirty` when the package's tracked files differ
from that checkout; the package version when it is not run from a checkout), and the reports say
when a run, or a table of runs, holds records of more than one.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import helper_agent

PACKAGE_DIR = Path(helper_agent.__file__).resolve().parent
UNKNOWN = "unknown"  # records written before runs kept their code


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(PACKAGE_DIR.parent), *args], capture_output=True, text=True,
                          timeout=10, check=True)
    return done.stdout.strip()


@lru_cache(maxsize=1)
def code_version() -> str:
    """`<short commit>[+dirty]` for a checkout (an editable install), else `helper-agent <version>`.

    The commit is the last one that changed the package, not HEAD: committing results, notes or the
    README between two episodes of a run changes nothing an agent does, so it must not make the
    run look like one of mixed code. For the same reason only the package's files decide `+dirty`. An installed package inside some other repository (a virtualenv in a checkout)
    is not that repository's code, so a checkout is recognised by its `.git` beside the package."""
    release = f"helper-agent {helper_agent.__version__}"
    if not (PACKAGE_DIR.parent / ".git").exists():
        return release
    try:
        commit = _git("log", "-1", "--format=%h", "--abbrev=7", "--", PACKAGE_DIR.name)
        changed = _git("status", "--porcelain", "--untracked-files=no", "--", PACKAGE_DIR.name)
    except (OSError, subprocess.SubprocessError):
        return release
    return commit + ("+dirty" if changed else "") if commit else release


def code_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Records per code version (`unknown` for records that do not say), most first."""
    return dict(Counter(str(r.get("code") or UNKNOWN) for r in records).most_common())


def code_note(label_counts: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    """One line for a table of runs (`(label, code_counts)` each): the code they ran, and in bold
    where a run mixes versions or the runs differ. Empty when no run says."""
    versions = {v for _, counts in label_counts for v in counts}
    if not versions or versions == {UNKNOWN}:
        return ""
    if len(versions) == 1:
        return f"Agent code: {next(iter(versions))}."
    parts = []
    for label, counts in label_counts:
        mixed = ", ".join(f"{v} ({n})" if len(counts) > 1 else v for v, n in counts.items())
        parts.append(f"{label} {mixed}")
    mixed_runs = [label for label, counts in label_counts if len(counts) > 1]
    warning = f"; {', '.join(mixed_runs)} mixes code versions" if mixed_runs else ""
    return f"**Agent code differs**: {'; '.join(parts)}{warning}."
