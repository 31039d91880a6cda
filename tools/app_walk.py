"""Walk `helper app` in a real browser with the real model, and print each turn as the page shows it.

A session a person would have, for a closing note: it starts the app on a free port (the configured
LLM, default the local model), opens the page in Debian's chromium through Playwright, types each
request, answers each question by the button named after `=>`, and prints the page's new chat text
with the seconds from the click until the turn ended (a question's buttons shown, or a result line).

    python tools/app_walk.py --user ivy "make me a coffee => done" "switch the telly on"
    python tools/app_walk.py --out results/.../app-walk.txt --screenshot results/.../app.png "..."

Needs the `dev` extra (gradio, playwright) and `/usr/bin/chromium`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
BUTTONS = {"done": "#answer-done", "yes": "#answer-yes", "no": "#answer-no"}
TURN_SECONDS = 600


def _server_helpers() -> ModuleType:
    """The served benchmarks' port and readiness helpers (`benchmarks/cluster_bench.py`), which the
    browser tests use too: one copy of how a local server is started and waited for."""
    sys.path.insert(0, str(ROOT / "benchmarks"))  # a script beside the others, not a package
    import cluster_bench

    return cluster_bench


def turn_ended(page: object, before: str) -> bool:
    """A question's buttons are shown, or the chat has a new result line."""
    for selector in ("#answer-done", "#answer-yes"):
        if page.locator(selector).is_visible():  # type: ignore[attr-defined]
            return True
    text = page.locator("#chatbot").inner_text()  # type: ignore[attr-defined]
    return text != before and "Result:" in text[len(before) - 200 if len(before) > 200 else 0:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", nargs="+", help='a request, optionally "=> done|yes|no" to answer its question')
    parser.add_argument("--user", default="walker")
    parser.add_argument("--home", type=Path, default=None, help="the app's HELPER_HOME (default: a new folder)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright  # deferred: the dev extra

    home = args.home or Path(tempfile.mkdtemp(prefix="app-walk-"))
    servers = _server_helpers()
    port = servers.free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "HELPER_HOME": str(home), "GRADIO_ANALYTICS_ENABLED": "False",
           "NO_PROXY": "127.0.0.1,localhost", "GRADIO_TEMP_DIR": str(home / "gradio-tmp")}
    log = open(home / "app.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen([sys.executable, "-m", "helper_agent.cli", "app", "--port", str(port), "--home", str(home)],
                               env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    lines: list[str] = []
    try:
        started = time.monotonic()
        servers.wait_until_serving(process, url, 600)
        lines.append(f"# app served after {time.monotonic() - started:.1f} s")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.locator("#user").locator("textarea, input").first.fill(args.user)
            page.locator("#open").click()
            page.wait_for_function("document.querySelector('#sessions textarea, #sessions input')?.value?.length > 0",
                                   timeout=TURN_SECONDS * 1000)
            for turn in args.turns:
                request, _, answer = (part.strip() for part in turn.partition("=>"))
                for action, target in ((f">>> {request}", None), *(((f">>> [{answer}]", answer),) if answer else ())):
                    before = page.locator("#chatbot").inner_text()
                    started = time.monotonic()
                    if target is None:
                        page.locator("#request").locator("textarea, input").first.fill(request)
                        page.locator("#send").click()
                        page.wait_for_timeout(300)  # the buttons of the last turn hide first
                    else:
                        page.locator(BUTTONS[target]).click()
                        page.wait_for_timeout(300)
                    while not turn_ended(page, before) and time.monotonic() - started < TURN_SECONDS:
                        page.wait_for_timeout(200)
                    seconds = time.monotonic() - started
                    page.wait_for_timeout(500)  # the last lines of the turn
                    after = page.locator("#chatbot").inner_text()
                    lines += [action, after[len(before):].strip() if after.startswith(before) else after.strip(),
                              f"[{seconds:.1f} s]", ""]
                    print("\n".join(lines[-4:]), flush=True)
            if args.screenshot:
                page.screenshot(path=str(args.screenshot), full_page=True)
            browser.close()
    finally:
        servers.stop_server(process, log)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
