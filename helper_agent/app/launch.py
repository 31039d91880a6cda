"""Serving the page: `launch` starts `helper app`'s Gradio server over one chat runtime and cleans up
after it. The page itself (its blocks and handlers) is `app/ui.py`; what is here is the server's
lifecycle around it.

- Gradio's named-call route answers 404 for a name no endpoint has (it answered 500, with a traceback
  in the log), and since no event of the page is named, that is every name (`UnknownEndpoint`).
- Each run has a folder of its own in Gradio's cache and in the home's served files; both are removed
  when the app stops, on Ctrl+C or SIGTERM alike.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
from langchain_core.language_models import BaseChatModel
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from helper_agent.app.ui import CSS, build, files_folder
from helper_agent.chat_runtime import ChatRuntime

CALL_ROUTE = re.compile(r"^/gradio_api/call/(?:v2/)?(?P<name>[^/]+)(?:/[^/]*)?/?$")
"""Gradio's named-call routes: POST `/gradio_api/call/<name>` (and `call/v2/<name>`) and the GET of
an event's result, `/gradio_api/call/<name>/<event id>`."""


class UnknownEndpoint:
    """A 404 for a named call to a name that no endpoint a client may call has, before Gradio's
    route: Gradio answered such a call with a 500 and logged a traceback (`FnIndexInferError`)."""

    def __init__(self, app: ASGIApp, names: Callable[[], set[str]]) -> None:
        self.app, self.names = app, names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = CALL_ROUTE.match(str(scope.get("path", ""))) if scope["type"] == "http" else None
        if match is not None and match["name"] not in self.names():
            answer = JSONResponse({"detail": f"no API endpoint named {match['name']!r}"}, status_code=404)
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


def named_endpoints(demo: gr.Blocks) -> set[str]:
    """The names a client may call: none here, every event is private (`PRIVATE`)."""
    return {str(fn.api_name) for fn in demo.fns.values() if fn.api_name and fn.api_visibility != "private"}


def gradio_cache() -> Path:
    """A folder of this run's own in Gradio's cache (`GRADIO_TEMP_DIR`, else `<temp>/gradio`), for
    the copies Gradio serves and the uploads: removed whole when the app stops. Gradio's own
    shutdown removes the files it made and leaves their folders (a home picture's, an export's),
    and nothing at all when the process is terminated."""
    parent = Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="helper-app-", dir=parent))


def launch(runtime: ChatRuntime, chat_model: Callable[[], BaseChatModel], llm: str, host: str, port: int,
           logins: list[tuple[str, str]] | None = None, max_upload: str = "5mb") -> None:
    """Serve the app until interrupted (Ctrl+C, or SIGTERM, which stops it the same way).

    Files are served only from `files_folder` (pictures, exports) and Gradio's own cache; the home's
    memory and checkpoints are blocked outright, so no file route reaches them even if the folders
    move. Uploads over `max_upload` are refused by Gradio before they are stored. Gradio's cache
    (uploads included) is emptied hourly, and when the app stops, this run's pictures and exports
    (`files_folder/run-*`) and its folder of Gradio's cache (`gradio_cache`) are removed."""
    files = files_folder(runtime) / f"run-{uuid.uuid4().hex[:8]}"
    files.mkdir(parents=True, exist_ok=True)
    cache = gradio_cache()
    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(cache)  # read by each component as it is built, and by the server
    terminate = _stop_on_sigterm()
    try:
        blocked = [runtime.home / "memory", *runtime.home.glob("checkpoints.sqlite*"), runtime.home / "checkpoints.sqlite"]
        demo = build(runtime, chat_model, llm, logins=bool(logins), files=files)
        demo.queue(default_concurrency_limit=4)
        demo.launch(server_name=host, server_port=port, allowed_paths=[str(files)],
                    blocked_paths=[str(p) for p in blocked], max_file_size=max_upload, auth=logins or None,
                    footer_links=[], quiet=True, show_error=False, css=CSS,
                    app_kwargs={"middleware": [Middleware(UnknownEndpoint, names=lambda: named_endpoints(demo))]})
    finally:
        if terminate is not None:
            signal.signal(signal.SIGTERM, terminate)
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)
        with contextlib.suppress(OSError):  # made empty by Gradio's server in the cache it read at import
            (cache.parent / "vibe_edit_history").rmdir()


def _stop_on_sigterm() -> Any:
    """SIGTERM as Ctrl+C (Gradio then closes its server and runs its shutdown, and `launch` removes
    the run's folders); Python's default ended the process with nothing removed. Returns the handler
    it replaced, or None off the main thread (where no handler can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)
