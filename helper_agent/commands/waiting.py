"""One status line while `helper run` or `helper chat` waits: the graph node at work, what it waits
on (the LLM call's name) and the seconds so far, refreshed every half second.

The chat once showed nothing for 41 s while a node searched the household and asked the LLM where
to look; a spinner that only ran during LLM calls did not say which step was slow or for how long.
The app's status line says the same (node, LLM call); this is its terminal twin. Rich draws it only
on a terminal, so a piped transcript stays free of it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from rich.console import Console
from rich.status import Status


class Waiting:
    """The status line: `start()`, then `node(name)` and `llm(name)` as work moves, `stop()`."""

    def __init__(self, console: Console, clock: Any = time.monotonic) -> None:
        self.console = console
        self.clock = clock
        self._status: Status | None = None
        self._node = ""
        self._llm: str | None = None
        self._since = clock()
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self._running = threading.Event()

    def text(self) -> str:
        """What the line says now, e.g. `plan: asking the LLM (plan)... 12 s`."""
        with self._lock:
            node, llm, since = self._node, self._llm, self._since
        doing = f"asking the LLM ({llm})..." if llm else "asking the LLM..." if llm == "" else "working..."
        return f"{node + ': ' if node else ''}{doing} {self.clock() - since:.0f} s"

    def node(self, name: str) -> None:
        with self._lock:
            self._node, self._llm, self._since = name, None, self.clock()
        self._refresh()

    def llm(self, name: str | None) -> None:
        """An LLM call started (`name`, "" when unnamed) or ended (None)."""
        with self._lock:
            self._llm = name
            if not self._node:  # no node reported (`helper run`): time the LLM call itself
                self._since = self.clock()
        self._refresh()

    def start(self) -> None:
        if self._status is not None:
            return
        with self._lock:
            self._since = self.clock()
        self._status = self.console.status(self.text(), spinner="dots")
        self._status.start()
        self._running.set()
        self._ticker = threading.Thread(target=self._tick, name="waiting", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        self._running.clear()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._status is not None:
            self._status.stop()
            self._status = None
        with self._lock:
            self._node, self._llm = "", None

    def _tick(self) -> None:
        while self._running.is_set():
            self._refresh()
            time.sleep(0.5)

    def _refresh(self) -> None:
        status = self._status
        if status is not None:
            status.update(self.text())


def llm_waiting(waiting: Waiting) -> BaseCallbackHandler:
    """A LangChain callback handler that tells `waiting` when the chat model starts and stops
    answering (started as needed: `helper run` has no graph stream to start it)."""

    class LLMWaiting(BaseCallbackHandler):
        def __init__(self) -> None:
            self.running = 0
            self.calls = 0
            self.own = False  # this handler started the line (no stream did)

        def _start(self, name: str | None) -> None:
            self.calls += 1
            self.running += 1
            if waiting._status is None:
                waiting.start()
                self.own = True
            waiting.llm(name or "")

        def _stop(self) -> None:
            self.running = max(0, self.running - 1)
            if self.running == 0:
                waiting.llm(None)
                if self.own:
                    waiting.stop()
                    self.own = False

        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            self._start(kwargs.get("name"))

        def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
            self._start(kwargs.get("name"))

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            self._stop()

        def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
            self._stop()

    return LLMWaiting()
