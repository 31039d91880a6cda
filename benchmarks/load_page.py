"""One browser tab of `helper app`, over HTTP, as the page itself talks to the server.

The app names no API endpoint (every event is private: `helper_agent/app/ui.py`), so a script that
wants to act as a person must do what the page's JavaScript does: read `/config` for the events
(an event is found by the element it is bound to and its trigger, e.g. `("send", "click")`), join
Gradio's queue (`POST /gradio_api/queue/join` with the event's `fn_index` and the tab's
`session_hash`), and read the event's messages from the tab's stream (`GET
/gradio_api/queue/data`). Server-side values (`gr.State`: the tab's opened session) belong to the
`session_hash`, so one `PageTab` is one person's tab and never sees another's session.

A file goes up as the page sends it (`POST /gradio_api/upload`) and comes down by the URL the app
hands out. Nothing here knows the app's logic; `load_bench.py` says what each call means.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

API = "/gradio_api"


class PageError(RuntimeError):
    """The server refused a call, ended the stream early, or could not be reached."""


@dataclass(frozen=True)
class Event:
    """One event of the page: its `fn_index`, the block that triggers it, and its inputs/outputs (block ids)."""

    fn_index: int
    trigger: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass
class PageLayout:
    """What the page knows from `/config`: events by (elem_id, trigger), and each block's elem_id."""

    events: dict[tuple[str, str], Event]
    elem_ids: dict[int, str]

    @classmethod
    def read(cls, config: dict[str, Any]) -> PageLayout:
        elem_ids = {c["id"]: (c.get("props") or {}).get("elem_id") or "" for c in config["components"]}
        events: dict[tuple[str, str], Event] = {}
        for dep in config["dependencies"]:
            for block, trigger in dep.get("targets") or []:
                key = (elem_ids.get(block, ""), trigger)
                if key[0] and key not in events:
                    events[key] = Event(dep["id"], block, tuple(dep["inputs"]), tuple(dep["outputs"]))
        return cls(events, elem_ids)

    def event(self, elem_id: str, trigger: str) -> Event:
        try:
            return self.events[(elem_id, trigger)]
        except KeyError:
            raise PageError(f"the page has no {trigger} event on #{elem_id}") from None


@dataclass
class Reply:
    """What one call gave: each output's last value by elem_id, every status line the page showed
    while it ran (in order, with the second it appeared), and the seconds it took."""

    outputs: dict[str, Any]
    statuses: list[tuple[float, str]] = field(default_factory=list)
    seconds: float = 0.0

    def text(self, elem_id: str) -> str:
        value = self.outputs.get(elem_id)
        if isinstance(value, dict):  # an update: {"__type__": "update", "value": ...}
            value = value.get("value")
        return "" if value is None else str(value)


class PageTab:
    """One person's tab: its own `session_hash`, its own HTTP connection."""

    def __init__(self, base_url: str, layout: PageLayout, timeout: float = 1800.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.layout = layout
        self.session_hash = uuid.uuid4().hex[:11]
        self.http = httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(timeout, connect=10.0))

    @staticmethod
    def layout_of(base_url: str) -> PageLayout:
        with httpx.Client(timeout=30.0) as http:
            return PageLayout.read(http.get(base_url.rstrip("/") + "/config").json())

    def close(self) -> None:
        self.http.close()

    def call(self, elem_id: str, trigger: str, values: dict[str, Any]) -> Reply:
        """Fire the event bound to #elem_id's `trigger`, with the inputs the page would send (by their
        elem_id; a `gr.State` or an input not named is sent as null, as the page does for state), and
        wait for it to complete."""
        event = self.layout.event(elem_id, trigger)
        data = [values.get(self.layout.elem_ids.get(block, "")) for block in event.inputs]
        body = {"data": data, "fn_index": event.fn_index, "trigger_id": event.trigger,
                "session_hash": self.session_hash, "event_data": None, "simple_format": True}
        start = time.monotonic()
        try:
            joined = self.http.post(f"{API}/queue/join", json=body)
            if joined.status_code != 200:
                raise PageError(f"queue/join answered {joined.status_code}: {joined.text[:200]}")
            event_id = joined.json()["event_id"]
            reply = Reply({})
            with self.http.stream("GET", f"{API}/queue/data", params={"session_hash": self.session_hash}) as stream:
                for line in stream.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    message = json.loads(line[5:])
                    if message.get("event_id") not in (None, event_id):
                        continue
                    kind = message.get("msg")
                    if kind in ("process_generating", "process_completed"):
                        output = message.get("output") or {}
                        if kind == "process_completed" and not message.get("success", True):
                            raise PageError(f"#{elem_id} {trigger} failed: {output.get('error') or output}")
                        self._take(reply, event, output.get("data") or [], time.monotonic() - start)
                        if kind == "process_completed":
                            reply.seconds = time.monotonic() - start
                            return reply
                    elif kind == "unexpected_error":
                        raise PageError(f"#{elem_id} {trigger}: {message.get('message')}")
                    elif kind == "close_stream":
                        break
            raise PageError(f"#{elem_id} {trigger}: the stream ended before the event completed")
        except httpx.HTTPError as exc:
            raise PageError(f"#{elem_id} {trigger}: {type(exc).__name__}: {exc}") from exc

    def _take(self, reply: Reply, event: Event, data: list[Any], at: float) -> None:
        for block, value in zip(event.outputs, data, strict=False):
            name = self.layout.elem_ids.get(block, "")
            if not name or (isinstance(value, dict) and value.get("__type__") == "update" and "value" not in value):
                continue
            reply.outputs[name] = value
            if name == "status":
                text = reply.text("status")
                if text and (not reply.statuses or reply.statuses[-1][1] != text):
                    reply.statuses.append((at, text))

    def upload(self, path: Path) -> dict[str, Any]:
        """Send a file as the page's file box does; the FileData the app's event then takes."""
        try:
            with path.open("rb") as fh:
                sent = self.http.post(f"{API}/upload", files={"files": (path.name, fh, "application/jsonl")})
        except httpx.HTTPError as exc:
            raise PageError(f"upload {path.name}: {type(exc).__name__}: {exc}") from exc
        if sent.status_code != 200:
            raise PageError(f"upload {path.name} answered {sent.status_code}: {sent.text[:200]}")
        stored = sent.json()[0]
        return {"path": stored, "orig_name": path.name, "size": path.stat().st_size,
                "mime_type": "application/jsonl", "meta": {"_type": "gradio.FileData"}}

    def download(self, file_data: dict[str, Any]) -> bytes:
        """A file the app hands out (an export), by the URL the page would follow."""
        url = file_data.get("url") or f"{API}/file={file_data['path']}"
        try:
            got = self.http.get(url if url.startswith("http") else url)
        except httpx.HTTPError as exc:
            raise PageError(f"download: {type(exc).__name__}: {exc}") from exc
        if got.status_code != 200:
            raise PageError(f"download {url} answered {got.status_code}")
        return got.content
