"""The bad-input matrix of issue 38: every reproducer as a real `helper` process, counted by outcome.

Each case writes its files into a fresh folder, runs one `helper` command there (the working
directory, so a `.env` in it is read) with a timeout, and is judged:

- `pass`: the expected answer. For a bad input, a non-zero exit with exactly one line on stderr,
  `error: ...`, naming the file or setting and the field; for an input that must work (a resume
  after a crash), exit 0 and the correct result;
- `traceback`, `hang` (past the timeout), `silent` (exit 0 where an error was due, or a wrong
  result), `unclear` (an error, but several lines or not naming the file/field).

`--root DIR` runs another checkout's code (`PYTHONPATH=DIR`), e.g. the code before the fix:

    git archive 409f0fe | tar -x -C /tmp/base
    python benchmarks/bad_input_matrix.py --root /tmp/base --json /tmp/before.json
    python benchmarks/bad_input_matrix.py --json /tmp/after.json

`tests/test_bad_input_matrix.py` runs every case and asserts `pass`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELPER = [sys.executable, "-m", "helper_agent.cli"]
UNSET = "<unset>"
"""A case's environment value that removes the variable."""

TIMEOUT = 180.0
"""Seconds a case may take: every case answers in a few seconds on an idle machine, and the hangs it
looks for run for minutes (python-dotenv on a long run of spaces) or for ever; the margin is for a
machine busy with other work."""


@dataclass
class Run:
    code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    folder: Path


Check = Callable[[Run], str | None]
"""A correct-result check: None when right, else what is wrong."""


@dataclass
class Case:
    name: str
    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()  # an error must name these (file, field, setting); empty: a result is due
    check: Check | None = None  # for a result: what must hold
    fixture: str = ""  # "bench" (3 valid_unseen episodes) or "run" (a finished gold run in ./run)
    before: list[list[str]] = field(default_factory=list)  # commands run first (setting the scene)
    timeout: float = TIMEOUT


# ------------------------------------------------------------------------------------ fixtures
def _helper(argv: list[str], cwd: Path, env: dict[str, str], root: Path, timeout: float) -> Run:
    full_env = {**os.environ, "PYTHONPATH": str(root), "HELPER_EMBEDDINGS": "hash:64", "COLUMNS": "80",
                "NO_COLOR": "1", **env}
    for key in [k for k, v in env.items() if v == UNSET]:
        full_env.pop(key, None)
    for key in ("HELPER_HOME", "HELPER_MEMORY_DIR", "HELPER_USER", "HELPER_SEED", "HELPER_DEBUG"):
        if key not in env:
            full_env.pop(key, None)
    dotenv = cwd / ".env"
    if dotenv.is_file() and dotenv.stat().st_size < 4096:  # what the case's .env sets, the environment must not
        for line in dotenv.read_bytes().decode("utf-8", "replace").splitlines():
            if line.partition("=")[0].strip() not in env:
                full_env.pop(line.partition("=")[0].strip(), None)
    started = time.perf_counter()
    try:
        done = subprocess.run(HELPER + argv, cwd=cwd, env=full_env, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
        return Run(done.returncode, done.stdout, done.stderr, time.perf_counter() - started, cwd)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return Run(None, out, err, time.perf_counter() - started, cwd)


def make_fixtures(base: Path, root: Path) -> dict[str, Path]:
    """A 3-episode benchmark, and a finished gold run on it (made by the code under test)."""
    bench = base / "bench"
    run = base / "run"
    if not bench.exists():
        _helper(["bench", "generate", "--out", str(bench), "--train", "0", "--valid-seen", "0",
                 "--valid-unseen", "3"], base, {}, root, 120)
    if not (run / "metrics.json").exists():
        _helper(["eval", "tfd", "--data", str(bench), "--agent", "gold", "--out", str(run)], base, {}, root, 300)
    return {"bench": bench, "run": run}


# ------------------------------------------------------------------------------------ checks
def _records(folder: Path) -> list[dict]:
    lines = (folder / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def resumed_to_three(run: Run) -> str | None:
    """The run resumed: 3 distinct episodes, no duplicate, metrics over 3."""
    records = _records(run.folder)
    ids = [r["instance_id"] for r in records]
    if len(ids) != len(set(ids)):
        return f"duplicate records: {ids}"
    if len(set(ids)) != 3:
        return f"{len(set(ids))} episodes recorded, not 3"
    metrics = json.loads((run.folder / "run" / "metrics.json").read_text())
    if metrics["overall"]["episodes"] != 3:
        return f"metrics over {metrics['overall']['episodes']} episodes"
    return None


def routine_count(expected: int) -> Check:
    def check(run: Run) -> str | None:
        export = run.folder / "export.jsonl"
        done = _helper(["routines", "export", str(export), "--user", "u"], run.folder, {}, Path(os.environ["MATRIX_ROOT"]), 120)
        if done.code != 0:
            return f"export failed: {done.stderr.strip()[:200]}"
        lines = [line for line in export.read_text().splitlines() if line.strip()][1:]
        return None if len(lines) == expected else f"{len(lines)} routine versions stored, not {expected}"
    return check


def stored_as(text: str) -> Check:
    """The program was stored and shows `text` (what the language accepted is what was stored)."""
    def check(run: Run) -> str | None:
        shown = _helper(["routines", "show", "r", "--user", "u"], run.folder, {}, Path(os.environ["MATRIX_ROOT"]), 120)
        return None if text in shown.stdout else f"stored program lacks {text!r}: {shown.stdout[-300:]!r}"
    return check


# ------------------------------------------------------------------------------------ the cases
GOOD_PROGRAM = 'apple = InteractionObject("Apple")\napple.pickup()\n'
EVAL = ["eval", "tfd", "--data", "bench", "--agent", "gold", "--out", "run"]
COMPARE = ["eval", "compare", "run"]
NESTED = b"[" * 100_000 + b"]" * 100_000


def _routine_line(name: str, program: str = GOOD_PROGRAM, **extra: object) -> bytes:
    return (json.dumps({"user": "u", "name": name, "program": program, "request": f"do {name}", **extra}) + "\n").encode()


def _metrics_with(overall: str) -> bytes:
    return ('{"episodes": 3, "overall": ' + overall + ', "ended_by": {"step_limit": 0, "failure_limit": 0, '
            '"error": 0}, "per_episode": {"llm_calls": 0, "prompt_tokens": 0}, "seconds_per_llm_call": 0, '
            '"label": "x"}').encode()


def cases() -> list[Case]:
    out: list[Case] = []
    # 1. settings: validated when read, read where they matter
    for setting, value in (("HELPER_SEED", "1.5"), ("HELPER_MAX_STEPS", "-5"), ("HELPER_MAX_FAILURES", "0"),
                           ("HELPER_EMBEDDINGS", "bogus:thing"), ("HELPER_LLM_TIMEOUT", "-1"),
                           ("HELPER_CHROMA_PORT", "abc"), ("HELPER_MAX_SCENE_OBJECTS", "0")):
        out.append(Case(f"setting {setting}={value} in .env: eval", EVAL, files={".env": f"{setting}={value}\n".encode()},
                        names=(setting,), fixture="bench"))
    out.append(Case("setting HELPER_EMBEDDINGS=bogus:thing: routines list", ["routines", "list", "--user", "u"],
                    env={"HELPER_EMBEDDINGS": "bogus:thing"}, names=("HELPER_EMBEDDINGS",)))
    out.append(Case("setting HELPER_USER=' ': routines list", ["routines", "list"], env={"HELPER_USER": " "},
                    names=("HELPER_USER",)))
    out.append(Case("--user ' ': routines add", ["routines", "add", "r", "-p", GOOD_PROGRAM, "--user", " "],
                    names=("user",)))
    out.append(Case("--user ' ': chat", ["chat", "--user", " ", "--llm", "openai:gpt-4o"], names=("--user",)))
    out.append(Case("--llm openai:gpt-4o without OPENAI_API_KEY: chat", ["chat", "--user", "u", "--llm", "openai:gpt-4o"],
                    env={"OPENAI_API_KEY": UNSET, "OPENAI_ADMIN_KEY": UNSET}, names=("OPENAI_API_KEY",)))
    out.append(Case(".env not UTF-8", ["routines", "list", "--user", "u"], files={".env": b"HELPER_LLM=caf\xe9\n"},
                    names=(".env", "line 1")))
    out.append(Case(".env with 1 MB of spaces", ["routines", "list", "--user", "u"],
                    files={".env": b"HELPER_LLM=" + b" " * 1_000_000 + b"x\n"}, names=(".env",)))
    out.append(Case(".env with a 128 KB line", ["routines", "list", "--user", "u"],
                    files={".env": b"HELPER_LLM='" + b" " * 131_072 + b"'\n"}, names=(".env",)))
    # 2. run folders: the project's own files, damaged
    damage = {"empty": b"", "cut": b'{"mode": "tf', "nested": NESTED, "a list": b"[1, 2]",
              "not UTF-8": b'{"mode": "tfd\xff"}', "a number": b"7"}
    for what, data in damage.items():
        if what == "empty":  # only a crash of the old writer left one: treated as never written
            out.append(Case("spec.json empty: eval resumes", EVAL, fixture="run", files={"run/spec.json": data},
                            check=resumed_to_three))
        else:
            out.append(Case(f"spec.json {what}: eval", EVAL, fixture="run", files={"run/spec.json": data},
                            names=("spec.json",)))
        out.append(Case(f"metrics.json {what}: eval compare", COMPARE, fixture="run",
                        files={"run/metrics.json": data}, names=("metrics.json",)))
    out.append(Case("metrics.json with NaN: eval compare", COMPARE, fixture="run",
                    files={"run/metrics.json": _metrics_with('{"SR": NaN, "GC": 1, "PLW_SR": 0, "PLW_GC": 0}')},
                    names=("metrics.json", "overall.SR")))
    out.append(Case("metrics.json without overall.GC: eval compare", COMPARE, fixture="run",
                    files={"run/metrics.json": _metrics_with('{"SR": 1, "PLW_SR": 0, "PLW_GC": 0}')},
                    names=("metrics.json", "overall.GC")))
    lines = {"a list line": b"[1]\n", "a nested line": NESTED + b"\n", "a line not UTF-8": b'{"instance_id": "\xff"}\n',
             "a line without instance_id": b'{"x": 1}\n', "a cut middle line": b'{"instance_id": "a", \n'}
    for what, data in lines.items():
        out.append(Case(f"results.jsonl with {what}: eval", EVAL, fixture="run", files={"run/results.jsonl+": data},
                        names=("results.jsonl", "line")))
        out.append(Case(f"results.jsonl with {what}: trace", ["trace", "run", "valid_unseen_0000"], fixture="run",
                        files={"run/results.jsonl+": data}, names=("results.jsonl", "line")))
    out.append(Case("results.jsonl torn last line: eval resumes", EVAL, fixture="run",
                    files={"run/results.jsonl+": b'{"instance_id": "valid_unseen_0001.tfd", "succ'},
                    check=resumed_to_three))
    # 3. routines: import idempotent without versions, programs checked
    plain = b"".join(_routine_line(f"routine {i}") for i in range(20))
    out.append(Case("routines import without versions, twice", ["routines", "import", "r.jsonl", "--user", "u"],
                    files={"r.jsonl": plain}, before=[["routines", "import", "r.jsonl", "--user", "u"]],
                    check=routine_count(20)))
    out.append(Case("routines add: a program program-check rejects", ["routines", "add", "r", "-p",
                    'import os\nos.system("x")\n', "--user", "u"], names=("program",)))
    out.append(Case("routines import: a program program-check rejects", ["routines", "import", "bad.jsonl", "--user", "u"],
                    files={"bad.jsonl": _routine_line("r", 'x = Y("Apple")\n')}, names=("bad.jsonl", "program")))
    # 4. bounds
    out.append(Case("routines import over HELPER_MAX_INPUT_BYTES", ["routines", "import", "big.jsonl", "--user", "u"],
                    files={"big.jsonl": plain * 2000}, env={"HELPER_MAX_INPUT_BYTES": "100000"},
                    names=("big.jsonl", "HELPER_MAX_INPUT_BYTES")))
    out.append(Case("program check over HELPER_MAX_INPUT_BYTES", ["program", "check", "big.py"],
                    files={"big.py": GOOD_PROGRAM.encode() * 20000}, env={"HELPER_MAX_INPUT_BYTES": "100000"},
                    names=("big.py", "HELPER_MAX_INPUT_BYTES")))
    out.append(Case("bench generate --distractors 2000", ["bench", "generate", "--out", "b2", "--train", "0",
                    "--valid-seen", "0", "--valid-unseen", "1", "--distractors", "2000"], names=("--distractors",)))
    # 5. the language as documented
    for what, program, named in (
            ("an unknown class Xyzzy", 'x = InteractionObject("Xyzzy")\nx.pickup()\n', ("line 1", "did you mean")),
            ("60 x Q as a class", f'x = InteractionObject("{"Q" * 60}")\nx.pickup()\n', ("line 1", "did you mean")),
            ("two statements joined by ;", 'a = InteractionObject("Apple"); a.pickup()\n', ("line 1", "one statement")),
            ("a backslash continuation", 'a = InteractionObject(\\\n"Apple")\na.pickup()\n', ("line 1", "backslash")),
            ("a one-line for", 'for i in range(2): InteractionObject("Apple").pickup()\n', ("line 1", "for"))):
        out.append(Case(f"program check: {what}", ["program", "check", "p.py"], files={"p.py": program.encode()},
                        names=named))
    for char, label in (("\x0b", "U+000B"), ("\x0c", "U+000C"), ("\u00a0", "U+00A0")):
        program = f'a = InteractionObject("Apple")\na.pickup()\na.{char}place(InteractionObject("Plate"))\n'
        out.append(Case(f"program check: {label} after the dot of the last line", ["program", "check", "p.py"],
                        files={"p.py": program.encode()}, names=("line 3", label)))
    out += issue_52_cases()
    out += issue_65_cases()
    return out


def routines_of(user: str, expected: list[str]) -> Check:
    """`user`'s routines (every version) are exactly `expected`, as "name vN"."""
    def check(run: Run) -> str | None:
        export = run.folder / f"export-{abs(hash(user))}.jsonl"
        done = _helper(["routines", "export", str(export), "--user", user], run.folder, {},
                       Path(os.environ["MATRIX_ROOT"]), 120)
        if done.code != 0:
            return f"export of {user} failed: {done.stderr.strip()[:200]}"
        rows = [json.loads(line) for line in export.read_text().splitlines()[1:] if line.strip()]
        found = sorted(f"{r['name']} v{r['version']}" for r in rows)
        return None if found == sorted(expected) else f"{user} has {found}, not {sorted(expected)}"
    return check


def issue_52_cases() -> list[Case]:
    """Issue 52's inputs: a damaged record for `trace`, settings without an upper bound or that are
    empty, a metrics file out of range, a removal across users, a repeated import."""
    out: list[Case] = []
    deep = "[" * 900 + "]" * 900
    for what, field_json, named in (("log an int", '"log": 5', "log"), ("log nested 900 deep", f'"log": {deep}', "log"),
                                    ("program an int", '"program": 7', "program")):
        line = '{"instance_id": "zz_damaged", ' + field_json + "}\n"
        out.append(Case(f"i52 trace: a record whose {what}", ["trace", "run", "zz_damaged"], fixture="run",
                        files={"run/results.jsonl+": line.encode()}, names=("results.jsonl", named)))
    out.append(Case("i52 setting HELPER_EMBEDDINGS=local:/nonexistent/model: routines add",
                    ["routines", "add", "r", "-p", GOOD_PROGRAM, "--user", "u"],
                    env={"HELPER_EMBEDDINGS": "local:/nonexistent/model"}, names=("HELPER_EMBEDDINGS",)))
    for length in (300, 100):
        out.append(Case(f"i52 setting HELPER_CHROMA_HOST of {length} letters: routines list",
                        ["routines", "list", "--user", "u"], env={"HELPER_CHROMA_HOST": "a" * length},
                        names=("HELPER_CHROMA_HOST",)))
    for setting in ("HELPER_LLM_RETRIES", "HELPER_LLM_TIMEOUT", "HELPER_MAX_STEPS", "HELPER_EMBEDDING_BATCH_SIZE"):
        out.append(Case(f"i52 setting {setting}=99999999999999999999: run", ["run", "make me a coffee", "--llm",
                        "http://127.0.0.1:9/v1"], env={setting: "99999999999999999999"}, names=(setting,)))
    for value in ("-5", "1e308"):
        out.append(Case(f"i52 metrics.json with SR {value}: eval compare", COMPARE, fixture="run",
                        files={"run/metrics.json": _metrics_with(f'{{"SR": {value}, "GC": 1, "PLW_SR": 0, "PLW_GC": 0}}')},
                        names=("metrics.json", "overall.SR")))
    for setting in ("HELPER_HOME", "HELPER_MEMORY_DIR"):
        out.append(Case(f"i52 setting {setting}='': routines add", ["routines", "add", "r", "-p", GOOD_PROGRAM,
                        "--user", "u"], env={setting: ""}, names=(setting,)))
    out.append(Case("i52 setting HELPER_LLM_GRAMMAR=bogus: eval", EVAL, fixture="bench",
                    env={"HELPER_LLM_GRAMMAR": "bogus"}, names=("HELPER_LLM_GRAMMAR",)))
    out.append(Case("i52 routines remove --version: user a/b's x, not user a's b/x",
                    ["routines", "remove", "x", "--version", "1", "--user", "a/b"],
                    before=[["routines", "add", "b/x", "-p", GOOD_PROGRAM, "--user", "a"],
                            ["routines", "add", "x", "-p", GOOD_PROGRAM, "--user", "a/b"]],
                    check=routines_of("a", ["b/x v1"])))
    out.append(Case("i52 routines import of another store's export over a taken number, 4 times",
                    ["routines", "import", "exported.jsonl", "--user", "u"],
                    before=[["routines", "add", "r", "-p", GOOD_PROGRAM, "--user", "x", "--memory-dir", "other"],
                            ["routines", "export", "exported.jsonl", "--user", "x", "--memory-dir", "other"],
                            ["routines", "add", "r", "-p", 'mug = InteractionObject("Mug")\nmug.pickup()\n', "--user", "u"],
                            *[["routines", "import", "exported.jsonl", "--user", "u"]] * 3],
                    check=routines_of("u", ["r v1", "r v2"])))
    out.append(Case("i52 routines import of another store's export, 4 times",
                    ["routines", "import", "exported.jsonl", "--user", "u"],
                    before=[["routines", "add", "r", "-p", GOOD_PROGRAM, "--user", "x", "--memory-dir", "other"],
                            ["routines", "export", "exported.jsonl", "--user", "x", "--memory-dir", "other"],
                            *[["routines", "import", "exported.jsonl", "--user", "u"]] * 3],
                    check=routines_of("u", ["r v1"])))
    for what, line in (("without game_id", '{"instance_id": "valid_unseen_0000.tfd"}'),
                       ("with success 'maybe'", '{"instance_id": "valid_unseen_0000.tfd", "game_id": "g", "success": "maybe"}')):
        out.append(Case(f"i52 results.jsonl with an episode's record {what}: eval", EVAL, fixture="run",
                        files={"run/results.jsonl+": (line + "\n").encode()}, names=("results.jsonl", "valid_unseen_0000")))
    return out


def issue_65_cases() -> list[Case]:
    """Issue 65's errors that did not name the setting, file or field (its full disks need a tmpfs:
    `tests/test_last_faults.py`)."""
    out: list[Case] = []
    out.append(Case("i65 setting HELPER_LLM='http://': run", ["run", "make me a coffee"], env={"HELPER_LLM": "http://"},
                    names=("HELPER_LLM", "malformed")))
    out.append(Case("i65 --llm 'http://:8080/v1': run", ["run", "make me a coffee", "--llm", "http://:8080/v1"],
                    names=("--llm", "HELPER_LLM", "malformed")))
    for what, value in (("a file", "afile"), ("a folder under a file", "afile/models")):
        out.append(Case(f"i65 setting HELPER_MODEL_DIR naming {what}: run --llm local",
                        ["run", "make me a coffee", "--llm", "local"], files={"afile": b"not a folder\n"},
                        env={"HELPER_MODEL_DIR": value}, names=("HELPER_MODEL_DIR", "afile is a file")))
    out.append(Case("i65 .env with an unterminated quote: routines list", ["routines", "list"],
                    files={".env": b'HELPER_USER=u\nHELPER_MAX_STEPS="7\n'}, names=(".env", "line 2", "quote")))
    line = b'{"instance_id": "valid_unseen_0002.tfd", "game_id": "g", "llm_calls": "many"}\n'
    out.append(Case("i65 results.jsonl whose last record has llm_calls 'many': eval", EVAL, fixture="run",
                    files={"run/results.jsonl+": line}, names=("results.jsonl", "line 4", "llm_calls")))
    return out


# ------------------------------------------------------------------------------------ judging
def judge(case: Case, run: Run) -> tuple[str, str]:
    """(verdict, detail) for one case's run."""
    text = run.stdout + run.stderr
    if run.code is None:
        return "hang", f"killed after {run.seconds:.0f} s"
    if "Traceback (most recent call last)" in text:
        last = [line for line in run.stderr.splitlines() if line.strip()][-1:] or ["?"]
        return "traceback", last[0][:160]
    errors = [line for line in run.stderr.splitlines() if line.strip()]
    if not errors and run.code == 1:  # `program check`'s documented answer: `rejected: <reason>` on stdout
        errors = [line for line in run.stdout.splitlines() if line.startswith("rejected:")]
    if case.names:
        if run.code == 0:
            return "silent", "exit 0 where an error was due"
        if len(errors) != 1 or not errors[0].startswith(("error:", "rejected:")):
            return "unclear", f"{len(errors)} stderr lines: {' | '.join(errors)[:200]}"
        missing = [n for n in case.names if n.casefold() not in errors[0].casefold()]
        if missing:
            return "unclear", f"does not name {missing}: {errors[0][:200]}"
        return "pass", errors[0][:200]
    if run.code != 0:
        return "silent" if not errors else "unclear", f"exit {run.code}: {' | '.join(errors)[:200]}"
    wrong = case.check(run) if case.check else None
    return ("silent", wrong) if wrong else ("pass", "correct result")


def run_case(case: Case, root: Path, fixtures: dict[str, Path], work: Path) -> tuple[str, str, float]:
    os.environ["MATRIX_ROOT"] = str(root)
    folder = Path(tempfile.mkdtemp(prefix="case-", dir=work))
    if case.fixture:
        shutil.copytree(fixtures["bench"], folder / "bench")
    if case.fixture == "run":
        shutil.copytree(fixtures["run"], folder / "run", ignore=shutil.ignore_patterns("memory", "*.lock"))
    for name, data in case.files.items():
        append = name.endswith("+")
        path = folder / name.rstrip("+")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab" if append else "wb") as fh:
            fh.write(data)
    for argv in case.before:
        _helper(argv, folder, case.env, root, case.timeout)
    run = _helper(case.argv, folder, case.env, root, case.timeout)
    verdict, detail = judge(case, run)
    return verdict, detail, run.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="Checkout whose code runs (PYTHONPATH).")
    parser.add_argument("--only", default="", help="Run the cases whose name holds this text.")
    parser.add_argument("--json", type=Path, help="Write flat JSON figures here.")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bad-input-matrix-"))
    fixtures = make_fixtures(work, args.root.resolve())
    counts: Counter[str] = Counter()
    figures: dict[str, float | int | str] = {"root": str(args.root)}
    slowest = 0.0
    for case in cases():
        if args.only and args.only not in case.name:
            continue
        verdict, detail, seconds = run_case(case, args.root.resolve(), fixtures, work)
        counts[verdict] += 1
        slowest = max(slowest, seconds)
        print(f"{verdict:9s} {seconds:5.1f}s  {case.name}: {detail}", flush=True)
    total = sum(counts.values())
    print(f"\n{total} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    figures.update({"cases": total, **{f"verdict_{k}": v for k, v in counts.items()},
                    "slowest_case_seconds": round(slowest, 1) if not math.isnan(slowest) else 0})
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
