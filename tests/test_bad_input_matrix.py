"""Issue 38's reproducers, each as a real `helper` process (`benchmarks/bad_input_matrix.py` holds the
table and the judge): a bad setting, a damaged run-folder file, an import, a bound, a program outside
the documented language. Each must answer with one `error:` (or `rejected:`) line naming the file
or setting and the field, or with the correct result, within its timeout; no traceback, no hang."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


def _matrix() -> ModuleType:
    return load_script("benchmarks/bad_input_matrix.py")


MATRIX = _matrix()
CASES = MATRIX.cases()


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return MATRIX.make_fixtures(tmp_path_factory.mktemp("matrix"), ROOT)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reproducer(case, fixtures: dict[str, Path], tmp_path: Path) -> None:  # noqa: ANN001 - a Case
    verdict, detail, seconds = MATRIX.run_case(case, ROOT, fixtures, tmp_path)
    assert verdict == "pass", f"{case.name}: {verdict}: {detail}"
    assert seconds < case.timeout


def test_the_judge_can_fail() -> None:
    """A traceback, a silent exit 0, two lines, or an error not naming the file are not passes."""
    case = MATRIX.Case("x", [], names=("spec.json",))
    run = MATRIX.Run
    assert MATRIX.judge(case, run(0, "", "", 0.1, ROOT))[0] == "silent"
    assert MATRIX.judge(case, run(1, "", "Traceback (most recent call last):\n  x\nKeyError: 'a'", 0.1, ROOT))[0] == "traceback"
    assert MATRIX.judge(case, run(2, "", "error: run/spec.json: bad\nmore", 0.1, ROOT))[0] == "unclear"
    assert MATRIX.judge(case, run(2, "", "error: something is wrong", 0.1, ROOT))[0] == "unclear"
    assert MATRIX.judge(case, run(None, "", "", 60, ROOT))[0] == "hang"
    assert MATRIX.judge(case, run(2, "", "error: run/spec.json: field 'mode': bad", 0.1, ROOT))[0] == "pass"
