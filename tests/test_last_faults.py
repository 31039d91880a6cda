"""Issue 65, the last faults: each is now one `error:` line naming what to fix, and no data is lost.

- a routine import onto a disk with 0 bytes free (a new memory folder, and a store whose writes
  reach Chroma), and onto a disk that another process fills during a batch (a file growing beside the
  import on a small tmpfs): one line saying what could not be written and that the disk is full;
  what was committed stays, and the same import, run again once space is freed, adds exactly what
  is missing. A disk with under 1 MiB free still reads what it holds;
- errors that name the setting, file or field: a resumed run's record with `"llm_calls": "many"`
  (the file, the line, the episode and the field), `HELPER_LLM='http://'` (the setting, before
  any connection), `HELPER_MODEL_DIR` that cannot hold a folder (the setting), a `.env` that does
  not parse (the file and the line, refused at start rather than skipped).

Every command runs as a real `helper` process: its stderr is what a person reads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helper_agent.config import SettingsError, server_url_problem
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.llm import LLMUnavailable, make_chat_model
from helper_agent.llm.gguf import ensure_model_dir

HELPER = [sys.executable, "-m", "helper_agent.cli"]
HASH_ENV = {"HELPER_EMBEDDINGS": "hash:64", "HELPER_EMBEDDING_CACHE": "false", "NO_COLOR": "1", "COLUMNS": "200"}
PROGRAM = 'mug = InteractionObject("Mug")\nmug.pickup()\n'


def helper(args: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`helper ARGS` in its own process, with the hash embedder and no HELPER_ setting of this shell."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("HELPER_")}
    return subprocess.run([*HELPER, *args], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**base, **HASH_ENV, **env})


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single `error:` line a failed command printed on stderr (and nothing else there)."""
    assert done.returncode != 0, done.stdout[-2000:]
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


# ------------------------------------------------------------------------------ a full disk, for real
def _mount_tmpfs(point: Path, size: str) -> None:
    point.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command here; the injected full disks of tests/test_faults.py cover the writers")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")


def _unmount(point: Path) -> None:
    if subprocess.run(["umount", str(point)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)  # detached once nothing uses it


@pytest.fixture
def small_disk(tmp_path: Path):  # noqa: ANN201 - a generator fixture
    point = tmp_path / "disk"
    _mount_tmpfs(point, "8m")
    try:
        yield point
    finally:
        _unmount(point)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Fill `disk` up to `leave` bytes free with one file (returned, to be removed later)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as fh:  # unbuffered: nothing left to flush on a full disk
        while (room := shutil.disk_usage(disk).free - leave) > 0:
            try:
                fh.write(b"\0" * min(room, 1 << 20))
            except OSError:
                break
    return filler


def _routines_file(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"user": "u", "name": f"routine {i}", "program": PROGRAM,
                                        "request": f"do routine {i} please " + "x" * 200}) + "\n" for i in range(n)))
    return path


def _stored(memory: Path, out: Path, user: str = "u") -> list[tuple[str, int, str, str]]:
    """`user`'s routines as (name, version, program, request), exported by another process."""
    done = helper(["routines", "export", str(out), "--user", user, "--memory-dir", str(memory)])
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    return sorted((r["name"], r["version"], r["program"], r["request"]) for r in rows)


def test_an_import_into_a_new_memory_folder_on_a_full_disk_is_one_line(small_disk: Path, tmp_path: Path) -> None:
    """The issue's reproducer: `routines import FILE --user mary --memory-dir DIR` with 0 bytes free
    ended in a traceback through `_check_local_meta` (`OSError: [Errno 28]`)."""
    path = _routines_file(tmp_path / "r.jsonl", 20)
    filler = _fill(small_disk)
    assert shutil.disk_usage(small_disk).free == 0
    memory = small_disk / "m"
    args = ["routines", "import", str(path), "--user", "mary", "--memory-dir", str(memory)]
    line = one_error_line(helper(args))
    assert line == (f"error: {memory / 'helper_memory_meta.json'}: cannot write the new store's metadata file: "
                    "the disk is full (No space left on device); free some space and run the command again "
                    "(what was committed is kept, an import resumes)")
    assert [p.name for p in memory.iterdir() if "tmp" in p.name] == []  # no half-written temporary file
    filler.unlink()
    done = helper(args, HELPER_MEMORY_MIN_FREE_MB="1")  # the default reserve, 64 MiB, is more than this disk
    assert done.returncode == 0 and "imported 20 routine version(s)" in done.stdout, done.stderr


def test_an_import_that_reaches_chroma_on_a_full_disk_keeps_the_store(small_disk: Path, tmp_path: Path) -> None:
    """0 bytes free under a store holding a routine, with no reserve (HELPER_MEMORY_MIN_FREE_MB=0), so
    Chroma itself meets the full disk: one line, the routine kept, and the import completes later."""
    path = _routines_file(tmp_path / "r.jsonl", 300)
    memory = small_disk / "m"
    first = helper(["routines", "add", "first", "-p", PROGRAM, "--user", "u", "--memory-dir", str(memory)],
                   HELPER_MEMORY_MIN_FREE_MB="0")
    assert first.returncode == 0, first.stderr
    filler = _fill(small_disk)
    args = ["routines", "import", str(path), "--user", "u", "--memory-dir", str(memory)]
    line = one_error_line(helper(args, HELPER_MEMORY_MIN_FREE_MB="0"))
    assert line.startswith(f"error: {memory}: cannot write ") and "the disk is full (No space left on device)" in line
    filler.unlink()
    assert [r[:2] for r in _stored(memory, tmp_path / "kept.jsonl")] == [("first", 1)]  # nothing stored lost
    done = helper(args, HELPER_MEMORY_MIN_FREE_MB="0")
    assert done.returncode == 0 and "imported 300 routine version(s)" in done.stdout, done.stderr
    assert len(_stored(memory, tmp_path / "all.jsonl")) == 301


_GROWER = """
import os, sys, time
from pathlib import Path
disk, store = Path(sys.argv[1]), Path(sys.argv[2])
while sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) < 1 << 20:  # a batch or more committed
    time.sleep(0.01)
try:  # the import's own writes may fill the disk first (a busy machine starts this late): full all the same
    fh = (disk / "grower").open("ab")
except OSError:
    fh = None
while fh is not None:
    try:
        fh.write(b"\\0" * (256 << 10))
        fh.flush()
        os.fsync(fh.fileno())
    except OSError:
        break
    time.sleep(0.005)
print("full", flush=True)
"""


def test_a_disk_filled_by_another_process_during_an_import_then_resume(small_disk: Path, tmp_path: Path) -> None:
    """A file grows beside `routines import` until the disk is full, during a batch (no reserve:
    HELPER_MEMORY_MIN_FREE_MB=0, so the write itself meets the full disk). The batch stops with one
    line; the batches committed before it stay, each routine whole; with the file removed, the same
    command adds exactly what is missing, and a third run adds nothing."""
    n = 1200
    path = _routines_file(tmp_path / "r.jsonl", n)
    memory = small_disk / "m"
    args = ["routines", "import", str(path), "--user", "u", "--memory-dir", str(memory), "--batch", "100"]
    grower = subprocess.Popen([sys.executable, "-c", _GROWER, str(small_disk), str(memory)], stdout=subprocess.PIPE,
                              text=True)
    try:
        failed = helper(args, HELPER_MEMORY_MIN_FREE_MB="0")
        assert grower.wait(timeout=120) == 0
    finally:
        if grower.poll() is None:
            grower.kill()
    assert grower.stdout is not None and grower.stdout.read().strip() == "full"
    line = one_error_line(failed)
    assert line == (f"error: {memory}: cannot write to the memory store: the disk is full (No space left on "
                    "device); free some space and run the command again (what was committed is kept, an import "
                    "resumes)")
    (small_disk / "grower").unlink(missing_ok=True)
    kept = _stored(memory, tmp_path / "kept.jsonl")
    wanted = sorted((f"routine {i}", 1, PROGRAM, f"do routine {i} please " + "x" * 200) for i in range(n))
    assert 0 < len(kept) < n and set(kept) <= set(wanted)  # committed batches stay, whole; none invented
    resumed = helper(args, HELPER_MEMORY_MIN_FREE_MB="0")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"imported {n - len(kept)} routine version(s)" in resumed.stdout  # exactly what was missing
    again = helper(args, HELPER_MEMORY_MIN_FREE_MB="0")
    assert again.returncode == 0 and "imported 0 routine version(s)" in again.stdout
    assert _stored(memory, tmp_path / "all.jsonl") == wanted


def test_a_nearly_full_disk_still_reads_its_routines(small_disk: Path, tmp_path: Path) -> None:
    """Under 1 MiB free, `routines list` said the disk was full (Chroma's "collection does not exist",
    asked by the first-layout check, was taken for a failed write): reads work, writes are refused."""
    memory = small_disk / "m"
    first = helper(["routines", "add", "first", "-p", PROGRAM, "--user", "u", "--memory-dir", str(memory)],
                   HELPER_MEMORY_MIN_FREE_MB="0")
    assert first.returncode == 0, first.stderr
    _fill(small_disk, leave=512 << 10)
    assert shutil.disk_usage(small_disk).free < 1 << 20
    listed = helper(["routines", "list", "--user", "u", "--memory-dir", str(memory)])
    assert listed.returncode == 0 and "first" in listed.stdout, listed.stderr
    nobody = helper(["routines", "list", "--user", "nobody", "--memory-dir", str(memory)])
    assert nobody.returncode == 0 and "no routines for nobody" in nobody.stdout, nobody.stderr
    refused = helper(["routines", "add", "second", "-p", PROGRAM, "--user", "u", "--memory-dir", str(memory)])
    assert "HELPER_MEMORY_MIN_FREE_MB" in one_error_line(refused)


# ------------------------------------------------------------------------------ a record's field
@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=7, sizes={"valid_unseen": 3})
    return out


def test_a_resumed_record_with_a_word_for_a_number_names_the_file_line_and_field(bench: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """It said `error: could not convert string to float: 'many'`: no file, no record, no field."""
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:64")
    run = tmp_path / "run"
    run_eval(EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", planner="gold", out=str(run)))
    results = run / "results.jsonl"
    lines = results.read_text().splitlines()
    last = json.loads(lines[-1])
    last["llm_calls"] = "many"
    results.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    before = results.read_bytes()
    done = helper(["eval", "tfd", "--data", str(bench), "--agent", "gold", "--out", str(run)])
    assert one_error_line(done) == (f"error: {results}: line {len(lines)} (episode {last['instance_id']!r}): "
                                    "field 'llm_calls': Input should be a valid number, unable to parse string as "
                                    "a number")
    assert done.returncode == 2 and results.read_bytes() == before  # bad input; the file untouched


def test_a_record_with_a_negative_or_infinite_figure_is_refused_too(tmp_path: Path) -> None:
    from helper_agent.evals.engine.store import read_records
    from helper_agent.files import FileFormatError

    path = tmp_path / "results.jsonl"
    path.write_text('{"instance_id": "a", "seconds": 1.5, "llm_calls": null}\n{"instance_id": "b", "seconds": -1}\n')
    with pytest.raises(FileFormatError, match=r"results.jsonl: line 2 \(episode 'b'\): field 'seconds'"):
        list(read_records(path))
    path.write_text('{"instance_id": "a", "prompt_tokens": Infinity}\n')
    with pytest.raises(FileFormatError, match=r"line 1 \(episode 'a'\): field 'prompt_tokens'"):
        list(read_records(path))


# ------------------------------------------------------------------------------ HELPER_LLM's URL
@pytest.mark.parametrize(("url", "problem"), [
    ("http://", "it names no host"),
    ("https://:8080/v1", "it names no host"),
    ("http:///v1", "it names no host"),
    ("http://localhost:abc/v1", "its port 'abc' is not a number from 1 to 65535"),
    ("http://localhost:99999/v1", "its port '99999' is not a number from 1 to 65535"),
    ("http://local host:8080/v1", "it holds a space"),
])
def test_a_malformed_server_url_is_named_before_any_connection(url: str, problem: str) -> None:
    assert server_url_problem(url) == problem
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="is malformed: " + problem):
        make_chat_model(url)
    assert time.monotonic() - started < 1  # no attempt was made


@pytest.mark.parametrize("url", ["http://localhost:8080/v1", "https://api.example.org/v1#my-model",
                                 "http://[::1]:8080/v1", "http://127.0.0.1:9/v1"])
def test_well_formed_server_urls_pass(url: str) -> None:
    assert server_url_problem(url) is None


def test_helper_llm_with_a_malformed_url_names_the_setting(tmp_path: Path) -> None:
    """It said "the model server did not answer after 3 attempts", after trying to connect."""
    started = time.monotonic()
    done = helper(["run", "make me a coffee", "--out", str(tmp_path / "out")], HELPER_LLM="http://")
    assert one_error_line(done) == ("error: setting HELPER_LLM='http://' (environment or .env): value error, the "
                                    "server URL is malformed: it names no host (write it as http://HOST:PORT/v1)")
    assert done.returncode == 2 and time.monotonic() - started < 60


# ------------------------------------------------------------------------------ HELPER_MODEL_DIR
def test_helper_model_dir_that_cannot_hold_a_folder_names_the_setting(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    for value, why in ((afile, f"{afile} is a file, not a folder"), (afile / "x", f"{afile} is a file, not a folder"),
                       (Path("/proc/nope/x"), "cannot create /proc/nope (No such file or directory)")):
        if str(value).startswith("/proc") and not Path("/proc/self").exists():
            continue
        monkeypatch.setenv("HELPER_MODEL_DIR", str(value))
        with pytest.raises(SettingsError) as caught:
            ensure_model_dir("openvino")
        assert str(caught.value) == (f"setting HELPER_MODEL_DIR={str(value)!r}: {why}; set it to a folder the local "
                                     "models can be written to (unset: ~/.cache/helper-agent/models)")
    monkeypatch.setenv("HELPER_MODEL_DIR", str(tmp_path / "models"))
    assert ensure_model_dir("openvino") == tmp_path / "models" / "openvino" and (tmp_path / "models" / "openvino").is_dir()


@pytest.mark.parametrize("command", ["run", "eval", "models"])
def test_helper_model_dir_as_a_file_is_one_line_from_each_command(command: str, tmp_path: Path, bench: Path) -> None:
    """`HELPER_MODEL_DIR=/etc/passwd` ended in `NotADirectoryError ... '/etc/passwd/openvino'`. The
    local model is refused before it could load: the folder it would live in is checked first."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    args = {"run": ["run", "make me a coffee", "--llm", "local", "--out", str(tmp_path / "out")],
            "eval": ["eval", "tfd", "--data", str(bench), "--agent", "helper", "--llm", "local",
                     "--out", str(tmp_path / "run")],
            "models": ["models", "prepare"]}[command]
    done = helper(args, HELPER_MODEL_DIR=str(afile))
    line = one_error_line(done)
    assert f"setting HELPER_MODEL_DIR={str(afile)!r}: {afile} is a file, not a folder" in line, line
    assert done.returncode == 2
    if command == "eval":
        assert not (tmp_path / "run" / "results.jsonl").exists()  # refused before any episode


# ------------------------------------------------------------------------------ a .env that does not parse
@pytest.mark.parametrize(("content", "message"), [
    ('HELPER_USER=mary\nHELPER_MAX_STEPS="7\n', 'line 2 cannot be read as a setting (the value of HELPER_MAX_STEPS '
                                                'opens a " quote that is not closed)'),
    ("export HELPER_LLM='http://x:8080/v1\nA=1\n", "line 1 cannot be read as a setting (the value of HELPER_LLM "
                                                  "opens a ' quote that is not closed)"),
    ('A=1\nHELPER_USER="mary" smith\n', 'line 2 cannot be read as a setting (the value of HELPER_USER goes on after '
                                       'its closing " quote)'),
    ("A=1\n\nHELPER USER=mary\n", "line 3 cannot be read as a setting ('HELPER USER' is not a setting's name)"),
])
def test_a_dotenv_that_does_not_parse_is_refused_naming_the_line(content: str, message: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import Settings

    (tmp_path / ".env").write_text(content)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SettingsError, match=rf"^\.env: {re.escape(message)}; write KEY=VALUE"):
        Settings()


def test_a_dotenv_with_an_unterminated_quote_stops_the_command(tmp_path: Path) -> None:
    """Its settings were skipped, with only python-dotenv's warning on stderr, and the command ran on."""
    (tmp_path / ".env").write_text('HELPER_HOME=here\nHELPER_USER="mary\nHELPER_MAX_STEPS=7\n')
    done = helper(["routines", "list"], cwd=tmp_path)
    assert one_error_line(done) == ('error: .env: line 2 cannot be read as a setting (the value of HELPER_USER opens '
                                    'a " quote that is not closed); write KEY=VALUE, and close a quoted value with '
                                    "the same quote")
    assert done.returncode == 2 and "mary" not in done.stderr  # the value is not echoed (it may be a secret)
    assert not (tmp_path / "here").exists()  # refused at start: nothing was created
    (tmp_path / ".env").write_text('HELPER_HOME=here\nHELPER_USER="mary"\n')
    fixed = helper(["routines", "list"], cwd=tmp_path)
    assert fixed.returncode == 0 and "no routines for mary" in fixed.stdout, fixed.stderr
