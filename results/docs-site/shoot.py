import sys
from playwright.sync_api import sync_playwright
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
requests = []
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
    page = b.new_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: requests.append(r.url))
    for url, out, full in [("http://127.0.0.1:8855/", "/tmp/site-shots/home.png", False),
                           ("http://127.0.0.1:8855/guides/evaluate-eai.html", "/tmp/site-shots/guide-eai.png", False),
                           ("http://127.0.0.1:8855/results/eai.html", "/tmp/site-shots/results-eai.png", True)]:
        page.goto(url, wait_until="networkidle")
        page.screenshot(path=out, full_page=full)
        print(out, page.title())
    b.close()
print("external requests:", sorted({u for u in requests if not u.startswith("http://127.0.0.1:8855/")}))
