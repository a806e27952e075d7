"""Screenshots of Neo4j Browser running each saved query: docs/browser/<query>.png (a dev tool).

For every saved query of the workspace (``kg/browser/queries/*.cypher``, :func:`kg.browser.saved_queries`), a
headless Chromium opens the Neo4j Browser that the local server serves (``http://127.0.0.1:<http_port>/browser/``),
logs in with the settings' user and password, loads the GRASS style sheet (``kg/browser/finkg.grass``, put where
Browser keeps it: ``localStorage['neo4j.grass']``, the sheet parsed by :func:`kg.browser.parse_grass` as Browser's
own ``:style`` command stores it), sets the query's example parameters (its ``// :param`` lines), runs the query and, once the graph layout has settled, saves the page as
``OUT/<query>.png``. A query whose result is empty or an error is reported and its picture is still taken (look at
it): the queries that need LLM output need the demo graph (``finkg extract``, ``finkg graph analyze``,
``finkg report``; see docs/queries/README.md).

Not part of finkg and not in requirements.lock: it needs Playwright (PyPI) and a Chromium. Playwright's own
browser download is not needed; Debian's chromium is used::

    apt-get install -y chromium
    python3 -m venv /tmp/finkg-shots && /tmp/finkg-shots/bin/pip install playwright
    PYTHONPATH=/tmp/finkg-shots/lib/python3.11/site-packages python scripts/browser_screenshots.py
    PYTHONPATH=... python scripts/browser_screenshots.py --query memo-audit-trail --settle 8

Run it with finkg's own environment (it reads the settings and the saved queries from the checkout) against the
server of those settings (FINKG_CONFIG). The pictures are 1400 x 900 pixels.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from finkg.api import open_graph  # noqa: E402
from finkg.config import load_settings  # noqa: E402
from kg.browser import SavedQuery, example_params, parse_grass, saved_queries, style_text  # noqa: E402

OUT = ROOT / "docs" / "browser"
EDITOR = "[data-testid='activeEditor'] textarea"


def run_in_editor(page, command: str) -> None:
    """Type ``command`` into Browser's editor (as one paste: no auto-closed brackets) and run it (Ctrl+Enter)."""
    page.click("[data-testid='activeEditor']")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(command)
    page.keyboard.press("Control+Enter")


def login(page, url: str, user: str, password: str) -> None:
    page.goto(url)
    page.wait_for_selector("[data-testid='password']", timeout=60_000)
    page.fill("[data-testid='username']", user)
    page.fill("[data-testid='password']", password)
    page.click("[data-testid='connect']")
    page.wait_for_selector("[data-testid='password']", state="detached", timeout=60_000)


def shoot(page, query: SavedQuery, out: Path, settle: float) -> str:
    """Run ``query`` in a cleared Browser, show its frame full screen with the graph zoomed to fit, and save the
    page; returns "error: ..." when Browser shows an error frame, else ""."""
    run_in_editor(page, ":clear")
    time.sleep(0.5)
    for line in query.param_lines():  # one command each: ``=>`` has the server evaluate it (5 stays an integer)
        run_in_editor(page, line)
        time.sleep(0.7)
    if query.params:
        run_in_editor(page, ":clear")
        time.sleep(0.5)
    run_in_editor(page, query.text)
    page.wait_for_selector("[data-testid='frameContents']", timeout=120_000)
    time.sleep(1.0)
    page.locator("[data-testid='frame'] button[title='Fullscreen']").first.evaluate("b => b.click()")
    time.sleep(settle)  # the force-directed layout moves for a few seconds
    fit = page.locator("button[aria-label='zoom-to-fit']")
    if fit.count():
        fit.first.evaluate("b => b.click()")
        time.sleep(1.5)
    page.mouse.move(1395, 895)  # no hover highlight
    page.screenshot(path=str(out))
    error = page.locator("[data-testid='cypherFrameErrorMessage']")
    said = f"error: {error.first.inner_text()}" if error.count() else ""
    page.locator("[data-testid='frame'] button[title='Close fullscreen']").first.evaluate("b => b.click()")
    time.sleep(0.5)
    return said


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="folder of the PNGs (default docs/browser)")
    ap.add_argument("--query", action="append", default=[], help="only this saved query (repeatable)")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium executable")
    ap.add_argument("--settle", type=float, default=6.0, help="seconds the graph layout gets before the picture")
    args = ap.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("playwright is not importable: see this script's docstring (a venv under /tmp, PYTHONPATH)")
        return 2

    settings = load_settings()
    queries = [q for q in saved_queries() if not args.query or q.name in args.query]
    if args.query and len(queries) != len(args.query):
        print(f"unknown query among {args.query}; the saved queries are {[q.name for q in saved_queries()]}")
        return 2
    with open_graph(settings) as graph:  # the examples must answer, or the picture shows nothing
        rows = {q.name: len(graph.read(q.text, example_params(graph, q))) for q in queries}
    host_port = settings.uri.split("://", 1)[1]
    url = (
        f"http://127.0.0.1:{settings.server.http_port}/browser/?dbms=neo4j://{settings.neo4j.user}@{host_port}"
        f"&db={settings.neo4j.database}&preselectAuthMethod=NATIVE"
    )
    storage = {
        "neo4j.grass": parse_grass(style_text()),
        "neo4j.settings": {"allowUserStats": False, "allowCrashReports": False, "showWheelZoomInfo": False},
        "neo4j.udc": {"consentBannerShownCount": 100},
    }
    init = "".join(
        f"window.localStorage.setItem({json.dumps(k)}, {json.dumps(json.dumps(v))});" for k, v in storage.items()
    )
    args.out.mkdir(parents=True, exist_ok=True)
    empty = [name for name, n in rows.items() if n == 0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.add_init_script(init)
        login(page, url, settings.neo4j.user, settings.password())
        for q in queries:
            path = args.out / f"{q.name}.png"
            error = shoot(page, q, path, args.settle)
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            print(f"{shown}: {rows[q.name]} rows {error}")
            if error:
                empty.append(q.name)
        browser.close()
    if empty:
        print(f"empty results or errors (load the demo graph first, see the docstring): {', '.join(empty)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
