"""The report of a small run, opened in real headless Chromium (Debian's `chromium`, driven by Playwright
through its executable path): no console errors, every figure drawn, the table filters and sorts, and
hostile solution text shows literally with no script run.

Skipped, with the reason, only where the browser or Playwright is not installed; with
KERNELJUDGE_REQUIRE_BROWSER=1 (CI) their absence fails instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from .verdict_logs import (HOSTILE_EXCERPT, HOSTILE_PROBLEM, HOSTILE_REASON, HOSTILE_SOLUTION, write_bench_run,
                           write_run_log)

CHROMIUM = os.environ.get("KERNELJUDGE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE_LABEL = "<img src=x onerror=\"window.__pwned='label'\">"


def _missing() -> str | None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install 'kerneljudge[report]')"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (pip install playwright; never `playwright install`)"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    why = _missing()
    if why:
        if os.environ.get("KERNELJUDGE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"KERNELJUDGE_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    from kerneljudge.results.report.build import ReportSettings, write_report
    from kerneljudge.results.runs import load_runs

    root = tmp_path_factory.mktemp("browser")
    runs = load_runs([write_bench_run(root / "bench"), write_run_log(root / "log" / "run.jsonl")],
                     [HOSTILE_LABEL, "log"])
    report = write_report(runs, root / "report.html", settings=ReportSettings(n_boot=100, band_boot=20))
    log: dict[str, list] = {"console": [], "errors": [], "requests": []}
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = context.new_page()
            page.on("console", lambda m: log["console"].append((m.type, m.text)))
            page.on("pageerror", lambda e: log["errors"].append(str(e)))
            page.on("request", lambda r: log["requests"].append(r.url))
            page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                                 "e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
            page.goto(report.path.as_uri())
            page.wait_for_load_state("load")
            yield page, log, report
        finally:
            context.close()


def test_loads_without_console_errors_or_outside_requests(browser_page):
    page, log, report = browser_page
    assert log["errors"] == []
    assert [m for m in log["console"] if m[0] in ("error", "warning")] == []
    assert page.evaluate("window.__violations") == []
    assert all(url.startswith(("file:", "data:")) for url in log["requests"]), log["requests"]


def test_every_figure_is_present_and_drawn(browser_page):
    page, _, report = browser_page
    figures = page.evaluate("""() => Array.from(document.querySelectorAll('img.plot')).map(img => {
        const c = document.createElement('canvas');
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        let inked = 0;
        for (let i = 0; i < d.length; i += 4) { if (d[i + 3] > 0 \
&& (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200)) inked++; }
        return {complete: img.complete, width: img.naturalWidth, height: img.naturalHeight, inked: inked};
    })""")
    assert len(figures) == report.figures == 7
    for f in figures:
        assert f["complete"] and f["width"] > 200 and f["height"] > 100, f
        assert f["inked"] > 2000, f  # axes, text and data drawn, not a blank image


def _shown(page) -> int:
    return page.evaluate("Array.from(document.querySelectorAll('#problems tbody tr')).filter(r => !r.hidden).length")


def test_table_filters_and_sorts(browser_page):
    page, _, _ = browser_page
    assert _shown(page) == 16
    assert page.text_content("#f-count") == "16 of 16 rows shown"
    page.fill("#f-text", "softmax")
    assert _shown(page) == 4 and page.text_content("#f-count") == "4 of 16 rows shown"
    page.fill("#f-text", "")
    page.select_option("#f-verdict", "correct")
    assert _shown(page) == 8
    page.select_option("#f-run", "log")
    assert _shown(page) == 3
    page.select_option("#f-run", "")
    page.select_option("#f-verdict", "")
    page.check("#f-accepted")
    assert _shown(page) == 8  # the held 120x row is correct but not accepted
    page.uncheck("#f-accepted")
    page.select_option("#f-level", "2")
    assert _shown(page) == 8
    page.select_option("#f-level", "")
    # sort by speedup: ascending, then descending; rows without a speedup stay last
    header = page.locator("#problems th", has_text="speedup")
    header.click()
    col = int(header.get_attribute("data-col"))
    values = page.evaluate("Array.from(document.querySelectorAll('#problems tbody tr'))"
                           f".map(r => r.cells[{col}].textContent)")
    timed = [float(v.rstrip("x")) for v in values if v != "-"]
    assert timed == sorted(timed) and values[len(timed):] == ["-"] * (16 - len(timed))
    header.click()
    values = page.evaluate("Array.from(document.querySelectorAll('#problems tbody tr'))"
                           f".map(r => r.cells[{col}].textContent)")
    assert values[0] == "120.00x"


def test_hostile_text_shows_literally_and_runs_nothing(browser_page):
    page, _, _ = browser_page
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('[onerror], [onload], [onmouseover]').length") == 0
    assert page.evaluate("document.scripts.length") == 2
    sources = page.evaluate("Array.from(document.querySelectorAll('pre.code')).map(p => p.textContent)")
    assert HOSTILE_SOLUTION in sources
    assert (page.evaluate("Array.from(document.querySelectorAll('pre.excerpt')).map(p => p.textContent)")
            == [HOSTILE_EXCERPT])
    text = page.evaluate("document.body.innerText")
    for literal in (HOSTILE_REASON, HOSTILE_PROBLEM, HOSTILE_LABEL):
        assert literal in text
    # following a link opens the details it points to
    page.click("#problems a[href='#v1']")
    # the page opens it on the hash change, an event after the click returns (read at once, it was still shut
    # once on CI, 2026-12-07): waited for, at most 5 s, and a timeout fails the test
    page.wait_for_function("document.getElementById('v1').open === true", timeout=5000)
    assert page.evaluate("window.__pwned") is None


def test_policy_blocks_injected_script_and_loads(browser_page):
    page, _, _ = browser_page
    page.evaluate("""() => {
        const s = document.createElement('script'); s.textContent = 'window.__injected = 1'; \
document.body.appendChild(s);
        const i = document.createElement('img'); i.src = 'http://127.0.0.1:9/x.png'; document.body.appendChild(i);
    }""")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__injected") is None
    violations = page.evaluate("window.__violations")
    assert any(v.startswith("script-src") for v in violations), violations
    assert any(v.startswith("img-src") and "127.0.0.1" in v for v in violations), violations
