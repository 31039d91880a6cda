"""How many requests an OpenAI-compatible server decodes at once, where the server says.

Why it matters: a program is decoded from a served model line by line, one request per line, each
reusing the prompt the server keeps in its slot's cache. A llama.cpp server with fewer parallel slots
than `--workers` hands a slot to another worker between two lines of one program, and every line then
evaluates the whole prompt again: on 10 episodes (`results/served-slots/`), 2 workers sharing 1 slot
ran about ten times slower per episode than 1 worker on it. llama.cpp's `llama-server` reports its
slots at `/props` (`total_slots`); servers that do not (vLLM, llama-cpp-python's server) get no
warning, since nothing is known.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def served_slots(spec: str, timeout: float = 3.0) -> int | None:
    """The server's parallel slots from llama.cpp's `/props`, or None where it does not say."""
    base_url = spec.partition("#")[0].rstrip("/")
    root = base_url.removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/props", timeout=timeout) as response:
            slots = json.loads(response.read()).get("total_slots")
    except (OSError, urllib.error.URLError, ValueError, AttributeError):
        return None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


def slot_shortfall(spec: str, workers: int) -> str | None:
    """A warning when `workers` episodes would share fewer slots of the server at `spec`, else None."""
    if workers <= 1 or not spec.startswith(("http://", "https://")):
        return None
    slots = served_slots(spec)
    if slots is None or slots >= workers:
        return None
    return (f"the server at {spec.partition('#')[0]} decodes {slots} request(s) at a time for {workers} workers: "
            f"the workers will evict each other's prompts from its cache and every program line re-reads its "
            f"prompt (about ten times slower per episode, results/served-slots); start it with -np {workers} "
            f"(llama-server) or use --workers {slots}")
