"""`helper app` with a real model, seen from a browser: seconds from pressing send to the first
subgoal row and to the feedback question, and three screenshots (chat mid-task, the home after the
task, the routines tab).

Starts `helper app` on a free port (the local 0.5B by default: run it under `flock /tmp/llm.lock`
on a shared machine), drives it with Playwright in Debian's chromium, answers "done" and then
"yes" to "Store it?" so the request is taught as a routine, and stops the app.

Run: `python benchmarks/app_bench.py [--llm local] [--shots results/app] [--json figures.json]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cluster_bench import free_port, stop_server, wait_until_serving
from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT_MS = 1_800_000


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", default="local")
    parser.add_argument("--request", default="Perform the morning coffee: make me a coffee")
    parser.add_argument("--user", default="mary")
    parser.add_argument("--home", type=Path, default=None, help="The app's home (default: a new temporary folder).")
    parser.add_argument("--shots", type=Path, default=Path("results/app"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="app-bench-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = open(home / "app.log", "w")  # noqa: SIM115 - closed by stop_server
    app = subprocess.Popen([sys.executable, "-m", "helper_agent.cli", "app", "--port", str(port), "--home", str(home),
                            "--llm", args.llm], stdout=log, stderr=subprocess.STDOUT,
                           env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"})
    figures: dict[str, object] = {"llm": args.llm, "request": args.request, "load_before": _load()}
    try:
        wait_until_serving(app, url, 600)
        args.shots.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.set_default_timeout(WAIT_MS)
            page.goto(url)
            page.locator("#user").locator("textarea, input").first.fill(args.user)
            page.locator("#open").click()
            expect(page.locator("#home img").first).to_be_visible()
            page.locator("#request").locator("textarea, input").first.fill(args.request)
            start = time.monotonic()
            page.locator("#send").click()
            # Gradio's table is not an HTML table: wait for a subgoal's text, e.g. "Navigate(Mug)".
            page.wait_for_function("() => /[A-Za-z]+\\(/.test(document.querySelector('#subgoals').innerText)",
                                   timeout=WAIT_MS)
            figures["seconds_to_first_subgoal"] = round(time.monotonic() - start, 1)
            page.screenshot(path=str(args.shots / "chat-mid-task.png"))
            expect(page.locator("#answer-done")).to_be_visible(timeout=WAIT_MS)
            figures["seconds_to_feedback_question"] = round(time.monotonic() - start, 1)
            page.locator("#home").screenshot(path=str(args.shots / "home-after-task.png"))
            page.screenshot(path=str(args.shots / "chat-feedback.png"))
            page.locator("#answer-done").click()
            expect(page.locator("#answer-done")).to_be_hidden(timeout=WAIT_MS)
            # A request that teaches a routine asks "... Store it?" next, with yes and no buttons.
            page.wait_for_function("() => { const yes = document.querySelector('#answer-yes'); "
                                   "return (yes && yes.offsetParent !== null) || "
                                   "/routine '/.test(document.querySelector('#chatbot').innerText); }", timeout=WAIT_MS)
            if page.locator("#answer-yes").is_visible():
                figures["store_question"] = page.locator("#question").inner_text().strip()
                page.locator("#answer-yes").click()
            expect(page.locator("#chatbot")).to_contain_text("routine '", timeout=WAIT_MS)  # the reply (stored or not)
            figures["reply"] = page.locator("#chatbot").inner_text().strip().splitlines()[-1]
            page.get_by_role("tab", name="Routines").click()
            page.locator("#routines-refresh").click()
            page.wait_for_timeout(1500)  # let the program panel follow the selected routine
            page.screenshot(path=str(args.shots / "routines-tab.png"))
            page.get_by_role("tab", name="Trace").click()
            page.wait_for_timeout(1000)
            page.screenshot(path=str(args.shots / "trace-tab.png"))
            browser.close()
    finally:
        stop_server(app, log)
    figures["load_after"] = _load()
    for key, value in figures.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
