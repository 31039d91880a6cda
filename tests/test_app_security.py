"""`helper app` over plain HTTP, as a hostile local process would use it (issue 52).

The app runs in its own process on a free port (a fake chat model swapped in by the driver; the
graph, checkpointer, memories and Gradio server are the real ones). Mary has a routine; the caller
never opened her session. It must not be able to:

- download the memory database or the checkpoints through any Gradio file route;
- list, export or delete Mary's routines through the page's event handlers (called by `fn_index`
  over Gradio's queue, the way the page calls them) or by a named API endpoint;
- upload a file over the size limit;

and `--host 0.0.0.0` without a login must refuse to start, while with one the API asks for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripts import load_script

pytest.importorskip("gradio", reason="the app extra installs gradio")
ROOT = Path(__file__).resolve().parents[1]
PROGRAM = 'mug = InteractionObject("Mug")\nmug.pickup()\n'
SECRET_NAME = "marys secret morning routine"
SECRET_REQUEST = "only-the-store-knows-7f3a9"  # what Mary taught it with: in any answer, it leaked

DRIVER = textwrap.dedent(
    """
    import sys
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    import helper_agent.llm as llm

    llm.make_chat_model = lambda *a, **k: FakeListChatModel(responses=["Cabinet"])
    from helper_agent.cli import app
    app(sys.argv[1:], standalone_mode=True)
    """
)
_bench = load_script("benchmarks/cluster_bench.py")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "HELPER_HOME": str(home), "HELPER_EMBEDDINGS": "hash", "PYTHONPATH": str(ROOT),
           "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "127.0.0.1,localhost", "GRADIO_TEMP_DIR": str(home.parent / "gradio-tmp"),
           **extra}
    env.pop("HELPER_APP_AUTH", None)
    env.update(extra)
    return env


def _cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "helper_agent.cli", *argv], env=_env(home), capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("app-home")
    added = _cli(home, "routines", "add", SECRET_NAME, "-p", PROGRAM, "-r", SECRET_REQUEST, "--user", "mary",
                 "--memory-dir", str(home / "memory"))
    assert added.returncode == 0, added.stderr
    port = _bench.free_port()
    log = open(home.parent / "app.log", "w")  # noqa: SIM115 - closed by stop_server
    process = subprocess.Popen([sys.executable, "-c", DRIVER, "app", "--port", str(port), "--home", str(home),
                                "--max-upload", "1mb"], env=_env(home), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            _bench.wait_until_serving(process, url + "/", 600)
        except RuntimeError as exc:
            raise AssertionError(f"{exc}: " + (home.parent / "app.log").read_text()[-3000:]) from None
        yield {"url": url, "home": home}
    finally:
        _bench.stop_server(process, log)


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _post(url: str, body: bytes, content_type: str = "application/json") -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _event(url: str, elem_id: str, trigger: str) -> tuple[int, int, list[int]]:
    """(fn_index, trigger component id, input component ids) of the page's event on `elem_id`."""
    config = json.loads(_get(url + "/config")[1])
    ids = {c["props"].get("elem_id"): c["id"] for c in config["components"] if c.get("props", {}).get("elem_id")}
    for dep in config["dependencies"]:
        if [ids[elem_id], trigger] in [list(t) for t in dep["targets"]]:
            return dep["id"], ids[elem_id], dep["inputs"]
    raise AssertionError(f"no {trigger} event on #{elem_id}")


def _call(url: str, elem_id: str, trigger: str, values: dict[int, Any] | None = None,
          session: str | None = None) -> dict[str, Any]:
    """Call the page's handler over Gradio's queue as a script would: a fresh session (no opened
    session in it), the inputs given by position; returns the completed message."""
    fn_index, trigger_id, inputs = _event(url, elem_id, trigger)
    session = session or uuid.uuid4().hex
    data = [(values or {}).get(n) for n in range(len(inputs))]
    status, body = _post(url + "/gradio_api/queue/join", json.dumps(
        {"data": data, "fn_index": fn_index, "trigger_id": trigger_id, "session_hash": session,
         "event_data": None}).encode())
    assert status == 200, body
    with urllib.request.urlopen(f"{url}/gradio_api/queue/data?session_hash={session}", timeout=120) as stream:
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return message
    raise AssertionError("the queue closed without completing the event")


def _marys_routines(home: Path) -> list[str]:
    out = home.parent / f"marys-{uuid.uuid4().hex[:6]}.jsonl"
    done = _cli(home, "routines", "export", str(out), "--user", "mary", "--memory-dir", str(home / "memory"))
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["name"] for line in out.read_text().splitlines()[1:]]


def test_the_memory_and_the_checkpoints_are_reachable_through_no_file_route(app: dict[str, Any]) -> None:
    url, home = app["url"], app["home"]
    assert (home / "memory" / "chroma.sqlite3").is_file()
    targets = [home / "memory" / "chroma.sqlite3", home / "checkpoints.sqlite", home / "memory",
               home / "memory" / "helper_memory_meta.json"]
    tried = 0
    for target in targets:
        for route in ("/gradio_api/file=", "/gradio_api/file/", "/file=", "/file/"):
            for shown in (str(target), urllib.parse.quote(str(target)), str(target).upper(),
                          f"{home}/app-files/../{target.relative_to(home)}"):
                status, body = _get(url + route + shown)
                tried += 1
                assert status != 200 or b"SQLite format" not in body and b"helper" not in body[:200], (route, shown)
                assert status in (400, 403, 404, 405), (route, shown, status)
    assert tried == 64


def test_another_users_routines_cannot_be_listed_exported_or_deleted(app: dict[str, Any]) -> None:
    url, home = app["url"], app["home"]
    assert _marys_routines(home) == [SECRET_NAME]
    # The page's handlers, called with Mary's name in the user box, in a session that never opened hers.
    listed = _call(url, "routines-refresh", "click", {1: "mary"})
    assert SECRET_NAME not in json.dumps(listed) and SECRET_REQUEST not in json.dumps(listed), listed
    assert "open a session first" in json.dumps(listed)
    exported = _call(url, "routines-export", "click", {1: "mary"})
    assert "open a session first" in json.dumps(exported) and exported["output"]["data"][1] is None, exported
    _call(url, "routine-delete", "click", {1: "mary", 2: SECRET_NAME})
    assert _marys_routines(home) == [SECRET_NAME]  # still there
    assert not list((home / "app-files").rglob("routines-mary.jsonl"))  # nothing exported either
    # Gradio's named-call route (its client's way in) reaches the same handlers: the same answer.
    for name in ("list_routines", "export_routines", "delete_routine"):
        status, body = _post(f"{url}/gradio_api/call/{name}", json.dumps({"data": ["mary", SECRET_NAME]}).encode())
        if status == 200:
            with urllib.request.urlopen(f"{url}/gradio_api/call/{name}/{json.loads(body)['event_id']}",
                                        timeout=120) as stream:
                body = stream.read()
        assert SECRET_REQUEST.encode() not in body and b"v1" not in body, (name, body[:300])
    assert _marys_routines(home) == [SECRET_NAME]
    info = json.loads(_get(url + "/gradio_api/info")[1])
    assert info.get("named_endpoints", {}) == {}  # and none is advertised


def test_an_opened_session_sees_only_its_own_users_routines(app: dict[str, Any]) -> None:
    """The same handlers work for the tab's own session: Eve opens hers, lists, exports and deletes,
    and Mary's routine is never among what she gets."""
    url, home = app["url"], app["home"]
    session = uuid.uuid4().hex
    opened = _call(url, "open", "click", {0: "eve", 1: None, 2: 0, 3: "Kitchen"}, session=session)
    assert opened["success"], opened
    listed = _call(url, "routines-refresh", "click", {1: "mary"}, session=session)
    assert "no routines of eve yet" in json.dumps(listed) and SECRET_REQUEST not in json.dumps(listed)
    exported = _call(url, "routines-export", "click", {}, session=session)
    assert "exported 0 routine version(s) of eve" in json.dumps(exported)
    _call(url, "routine-delete", "click", {1: SECRET_NAME}, session=session)  # not among Eve's: refused
    assert _marys_routines(home) == [SECRET_NAME]


def test_an_upload_over_the_limit_is_refused_and_not_stored(app: dict[str, Any]) -> None:
    url, home = app["url"], app["home"]
    boundary = uuid.uuid4().hex
    payload = b"x" * (3 << 20)  # 3 MB against --max-upload 1mb
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.jsonl\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + payload + f"\r\n--{boundary}--\r\n".encode()
    status, answer = _post(url + "/gradio_api/upload", body, f"multipart/form-data; boundary={boundary}")
    assert status == 413, (status, answer[:300])
    stored = [p for p in (home.parent / "gradio-tmp").rglob("*") if p.is_file() and p.stat().st_size >= len(payload)]
    assert stored == []
    small = body.replace(payload, b"{}")
    assert _post(url + "/gradio_api/upload", small, f"multipart/form-data; boundary={boundary}")[0] == 200


def test_a_host_that_is_not_loopback_needs_a_login(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "helper_agent.cli", "app", "--host", "0.0.0.0", "--port",
                           str(_bench.free_port()), "--home", str(tmp_path / "h")], env=_env(tmp_path / "h"),
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "HELPER_APP_AUTH" in lines[0], done.stderr
    assert not (tmp_path / "h" / "checkpoints.sqlite").exists()  # refused before anything was opened
    assert time.monotonic() - started < 120
    bad = subprocess.run([sys.executable, "-m", "helper_agent.cli", "app", "--host", "0.0.0.0", "--home",
                          str(tmp_path / "h")], env=_env(tmp_path / "h", HELPER_APP_AUTH="mary"),
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no password" in bad.stderr, bad.stderr


def test_with_a_login_the_page_and_its_queue_ask_for_it(tmp_path: Path) -> None:
    home = tmp_path / "h"
    port = _bench.free_port()
    log = open(tmp_path / "app.log", "w")  # noqa: SIM115 - closed by stop_server
    process = subprocess.Popen([sys.executable, "-c", DRIVER, "app", "--host", "0.0.0.0", "--port", str(port),
                                "--home", str(home)], env=_env(home, HELPER_APP_AUTH="mary:s3cret"), stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _bench.wait_until_serving(process, url + "/", 600)
        status, _ = _post(url + "/gradio_api/queue/join", json.dumps({"data": [], "fn_index": 0,
                                                                      "session_hash": "x"}).encode())
        assert status == 401
        assert _get(url + "/config")[0] == 401
        assert _get(f"{url}/gradio_api/file={home}/checkpoints.sqlite")[0] in (401, 403)
        status, _ = _post(url + "/login", urllib.parse.urlencode({"username": "mary", "password": "wrong"}).encode(),
                          "application/x-www-form-urlencoded")
        assert status in (400, 401)
    finally:
        _bench.stop_server(process, log)
