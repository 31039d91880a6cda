"""The slot check reads llama.cpp's `/props` and warns only when workers outnumber known slots."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from helper_agent.llm.server_slots import served_slots, slot_shortfall


def _server(props: object | None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != "/props" or props is None:
                self.send_error(404)
                return
            body = json.dumps(props).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def serve() -> Iterator:
    started: list[ThreadingHTTPServer] = []

    def start(props: object | None) -> str:
        server = _server(props)
        started.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1#qwen"

    yield start
    for server in started:
        server.shutdown()


def test_slots_are_read_from_llama_cpp_props(serve) -> None:
    assert served_slots(serve({"total_slots": 2, "model_path": "x.gguf"})) == 2


@pytest.mark.parametrize("props", [None, {"model_path": "x.gguf"}, {"total_slots": "4"}, {"total_slots": 0},
                                   {"total_slots": True}, ["not", "a", "dict"]])
def test_a_server_that_does_not_say_gives_none(serve, props) -> None:
    assert served_slots(serve(props)) is None


def test_no_server_gives_none() -> None:
    assert served_slots("http://127.0.0.1:9/v1", timeout=0.5) is None


def test_warns_only_when_workers_outnumber_slots(serve) -> None:
    one_slot = serve({"total_slots": 1})
    warning = slot_shortfall(one_slot, 2)
    assert warning is not None and "-np 2" in warning and "--workers 1" in warning
    assert slot_shortfall(one_slot, 1) is None
    assert slot_shortfall(serve({"total_slots": 4}), 4) is None
    assert slot_shortfall(serve(None), 4) is None
    assert slot_shortfall("local", 4) is None
