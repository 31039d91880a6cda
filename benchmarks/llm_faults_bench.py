"""LLM fault matrix: how long a call to a misbehaving OpenAI-compatible server takes to fail, and how.

A fake server on 127.0.0.1 (ephemeral port) answers every chat completion in one failure mode:
HTTP 500, HTTP 429, junk (a body that is not JSON, served as JSON), an HTML page, an empty body, an
empty message, 200 KB of text in the message, or no answer at all (hang). Each call goes through
`make_chat_model(URL)` and `invoke_with_retry`, as the agents' calls do, and the script prints per
mode the seconds until the call ended, how it ended (error type, or `ok` for a reply that was cut)
and the requests the server saw. The bound for modes that are retried is
`attempts*timeout + delay*(2**(attempts-1) - 1)`; it is printed too.

Run: `python benchmarks/llm_faults_bench.py [--timeout 2] [--retries 2] [--delay 0.25] [--json PATH]`.
The JSON is flat: `<mode>_seconds`, `<mode>_error`, `<mode>_requests`, plus the settings and bound.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("ok", "500", "429", "junk", "html", "empty_body", "empty", "huge", "hang")
HUGE_CHARS = 200_000


def completion(content: str, *, prompt_tokens: int = 12, completion_tokens: int | None = None,
               finish_reason: str = "stop") -> dict[str, Any]:
    """An OpenAI chat-completion body."""
    completion_tokens = len(content.split()) if completion_tokens is None else completion_tokens
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


class FakeOpenAIServer:
    """An OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 that answers in one `mode`.

    It records every request body (`requests`). Use as a context manager; `base_url` is
    `http://127.0.0.1:PORT/v1`. In `hang` mode a request is read and never answered (until the
    server stops). `port` 0 takes a free one; a given port lets a test restart a server where it was.
    """

    def __init__(self, mode: str = "ok", reply: str = "done()", huge_chars: int = HUGE_CHARS, port: int = 0,
                 stall_first: float = 0.0) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
        self.mode = mode
        self.reply = reply
        self.huge_chars = huge_chars
        # A streamed request (`"stream": true`, answered as server-sent events like llama_cpp.server)
        # first gets keep-alive pings for `stall_first` seconds if it is the first request: a request
        # waiting for a busy model. `disconnects` holds when (monotonic) a client closed a stream.
        self.stall_first = stall_first
        self.disconnects: list[float] = []
        self.requests: list[dict[str, Any]] = []
        self._release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    server.requests.append(json.loads(raw or b"{}"))
                except ValueError:
                    server.requests.append({"_raw": raw.decode("utf-8", "replace")})
                server._answer(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        mode = self.mode
        if mode == "ok" and self.requests and self.requests[-1].get("stream"):
            self._stream(h, stall=self.stall_first if len(self.requests) == 1 else 0.0)
            return
        if mode == "hang":
            self._release.wait(600)
            h.close_connection = True
            return
        if mode == "500":
            self._send(h, 500, json.dumps({"error": {"message": "internal error", "type": "server_error"}}))
        elif mode == "429":
            self._send(h, 429, json.dumps({"error": {"message": "rate limited", "type": "rate_limit"}}))
        elif mode == "junk":
            self._send(h, 200, "this is {not json at all")
        elif mode == "html":
            self._send(h, 200, "<html><body>502 Bad Gateway</body></html>", "text/html")
        elif mode == "empty_body":
            self._send(h, 200, "")
        elif mode == "empty":
            self._send(h, 200, json.dumps(completion("", completion_tokens=0)))
        elif mode == "huge":
            line = "pickup('Mug')\n"
            text = (line * (self.huge_chars // len(line) + 1))[: self.huge_chars]
            self._send(h, 200, json.dumps(completion(text, completion_tokens=50_000)))
        else:
            body = self.requests[-1] if self.requests else {}
            cap = body.get("max_tokens")
            words = self.reply.split()
            tokens = len(words) if cap is None else min(len(words), int(cap))
            self._send(h, 200, json.dumps(completion(" ".join(words[:tokens]), completion_tokens=tokens,
                                                     finish_reason="length" if tokens < len(words) else "stop")))

    def _stream(self, h: BaseHTTPRequestHandler, stall: float) -> None:
        """The reply as server-sent events (one chunk per word, usage in the last), after `stall`
        seconds of keep-alive pings; a client that closes the connection is recorded."""
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        words = self.reply.split()

        def event(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
            chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                chunk["usage"] = usage
            return f"data: {json.dumps(chunk)}\n\n".encode()

        try:
            until = time.monotonic() + stall
            while time.monotonic() < until:
                h.wfile.write(b": ping\n\n")
                h.wfile.flush()
                time.sleep(0.1)
            h.wfile.write(event({"role": "assistant", "content": ""}))
            for n, word in enumerate(words):
                h.wfile.write(event({"content": word if n == 0 else " " + word}))
            usage = {"prompt_tokens": 12, "completion_tokens": len(words), "total_tokens": 12 + len(words)}
            h.wfile.write(event({}, "stop", usage) + b"data: [DONE]\n\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.disconnects.append(time.monotonic())

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: str, content_type: str = "application/json") -> None:
        data = body.encode()
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def bound_seconds(timeout: float, retries: int, delay: float) -> float:
    """The time bound of one call whose every attempt fails transiently (each after <= timeout)."""
    attempts = retries + 1
    return attempts * timeout + delay * (2 ** (attempts - 1) - 1)


def run_mode(mode: str, *, timeout: float, retries: int, delay: float) -> dict[str, Any]:
    """One call through `make_chat_model` + `invoke_with_retry` against a server in `mode`."""
    from langchain_core.messages import HumanMessage

    from helper_agent.llm import invoke_with_retry, make_chat_model

    with FakeOpenAIServer(mode) as server:
        chat = make_chat_model(f"{server.base_url}#fake", max_tokens=16, timeout=timeout)
        start = time.perf_counter()
        try:
            reply = invoke_with_retry(chat, [HumanMessage(content="make coffee")], attempts=retries + 1,
                                      initial_delay=delay)
            outcome = "ok"
            detail = f"{len(str(reply.content))} chars, finish_reason={reply.response_metadata.get('finish_reason')}"
        except Exception as exc:  # noqa: BLE001 - the outcome is what is measured
            outcome = type(exc).__name__
            detail = str(exc)[:120]
        seconds = time.perf_counter() - start
        return {"seconds": round(seconds, 3), "error": outcome, "requests": len(server.requests), "detail": detail}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=2.0, help="per-request timeout, seconds")
    parser.add_argument("--retries", type=int, default=2, help="retries after the first attempt")
    parser.add_argument("--delay", type=float, default=0.25, help="first backoff, seconds (doubles)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    bound = bound_seconds(args.timeout, args.retries, args.delay)
    figures: dict[str, Any] = {"timeout_seconds": args.timeout, "retries": args.retries,
                               "backoff_seconds": args.delay, "bound_seconds": round(bound, 3)}
    print(f"timeout {args.timeout:g} s, {args.retries + 1} attempts, backoff {args.delay:g} s doubling: "
          f"bound {bound:.2f} s")
    print(f"{'mode':<11} {'seconds':>8} {'requests':>8}  outcome")
    for mode in args.modes.split(","):
        row = run_mode(mode, timeout=args.timeout, retries=args.retries, delay=args.delay)
        print(f"{mode:<11} {row['seconds']:>8.3f} {row['requests']:>8}  {row['error']}: {row['detail']}")
        figures.update({f"{mode}_seconds": row["seconds"], f"{mode}_error": row["error"],
                        f"{mode}_requests": row["requests"]})
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
