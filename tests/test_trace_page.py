"""``trace html`` in a real browser: Debian's headless Chromium, driven by Playwright.

The page is loaded from a file, stepped with the buttons and the arrow keys; the step shown,
its action and the highlighted fields must follow.  A trace full of markup must show as text
and run nothing.
"""

import json
import re
import tempfile
from pathlib import Path

import pytest

from kraftcheck.model import MUTANTS
from kraftcheck.traces.trace import load_trace
from tests.test_trace_render import hostile_trace
from tests.trace_helpers import kafka_traces, kraftcheck, run

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
HIGHLIGHT = "rgb(255, 226, 122)"  # --changed, #ffe27a


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module, with a fresh profile; no request may leave the page's file."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), "Debian's chromium is needed: make system-packages installs it"
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture
def open_page(browser):
    """Open a page file; returns the page and the list of dialogs, console errors and requests seen."""
    pages, events = [], []

    def open_(path: Path):
        page = browser.new_page()
        pages.append(page)
        page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: events.append(f"error: {e}"))
        page.on("request", lambda r: None if r.url.startswith("file://") else events.append(f"request: {r.url}"))
        page.goto(path.as_uri())
        return page

    yield open_, events
    for page in pages:
        page.close()


def visible_step(page) -> dict:
    """What the reader sees: the position, the current action, the shown section and its highlighted rows."""
    return page.evaluate("""() => {
        const shown = Array.from(document.querySelectorAll("section.step")).filter(s => !s.hidden);
        const rows = shown.length ? Array.from(shown[0].querySelectorAll("tr.changed")) : [];
        return {
            position: document.getElementById("position").textContent,
            action: document.getElementById("current-action").textContent,
            shown: shown.map(s => Number(s.dataset.step)),
            highlighted: rows.map(r => r.dataset.variable),
            colours: rows.map(r => getComputedStyle(r.querySelector("td")).backgroundColor),
            verdict: shown.length && shown[0].querySelector(".verdict") ? shown[0].querySelector(".verdict").innerText : null,
        };
    }""")


@pytest.fixture(scope="module")
def diehard_page(tmp_path_factory):
    directory = tmp_path_factory.mktemp("page")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", directory, "--quiet")
    assert p.returncode == 12
    out = directory / "jugs.html"
    p = kraftcheck("trace", "html", directory / "diehard_NotFourGallons.itf.json", "-o", out)
    assert (p.returncode, p.stdout) == (0, f"wrote {out}\n"), p.stderr
    return out


def test_page_is_self_contained(diehard_page):
    text = diehard_page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert text.count("<script") == 1 and "Content-Security-Policy" in text


def test_stepping_with_buttons_and_arrow_keys(open_page, diehard_page):
    open_, events = open_page
    page = open_(diehard_page)
    assert visible_step(page) == {"position": "state 1 of 7", "action": "Init", "shown": [0], "highlighted": [],
                                  "colours": [], "verdict": None}
    page.keyboard.press("ArrowRight")
    assert visible_step(page) == {"position": "state 2 of 7", "action": "FillBig", "shown": [1],
                                  "highlighted": ["big"], "colours": [HIGHLIGHT], "verdict": None}
    page.click("#next")
    step = visible_step(page)
    assert (step["position"], step["action"], step["highlighted"]) == ("state 3 of 7", "BigToSmall", ["small", "big"])
    page.keyboard.press("ArrowLeft")
    assert visible_step(page)["shown"] == [1]
    page.click("#previous")
    page.keyboard.press("ArrowLeft")  # at the first step already: stays there
    assert visible_step(page)["shown"] == [0] and page.is_disabled("#previous")
    page.keyboard.press("End")
    assert visible_step(page) == {"position": "state 7 of 7", "action": "BigToSmall", "shown": [6],
                                  "highlighted": ["small", "big"], "colours": [HIGHLIGHT, HIGHLIGHT],
                                  "verdict": "state 7 violates the invariant NotFourGallons"}
    assert page.is_disabled("#next")
    page.click("ol.timeline li:nth-child(4) button")
    assert visible_step(page)["position"] == "state 4 of 7"
    assert page.inner_text("section.step:not([hidden]) ul.changes") == "small: 3 → 0"
    assert page.url.endswith("#step-3")
    assert events == []


def test_the_address_names_the_step(open_page, diehard_page):
    open_, events = open_page
    page = open_(diehard_page)
    page.goto(diehard_page.as_uri() + "#step-4")
    page.reload()
    assert visible_step(page)["position"] == "state 5 of 7"
    page.evaluate("location.hash = '#step-2'")
    page.wait_for_function("document.body.dataset.currentStep === '2'")
    assert visible_step(page)["shown"] == [2]
    assert events == []


def test_trace_content_is_shown_as_text_and_never_runs(open_page, capsys, tmp_path):
    trace = tmp_path / "hostile.itf.json"
    hostile = hostile_trace(trace)
    out = tmp_path / "hostile.html"
    code, _, _ = run(capsys, "trace", "html", trace, "-o", out)
    assert code == 0
    open_, events = open_page
    page = open_(out)
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('img, b, iframe, textarea').length") == 0
    assert page.title() == "nowhere:at_all: <img src=x onerror=alert(2)>"
    page.keyboard.press("ArrowRight")
    shown = visible_step(page)
    assert shown["action"] == f'<b>Say</b>("{hostile.replace(chr(34), chr(92) + chr(34))}")'
    assert shown["highlighted"] == ["text"]
    cell = page.inner_text("section.step:not([hidden]) tr.changed td")
    assert cell == '"' + hostile.replace('"', '\\"') + '"'
    page.keyboard.press("ArrowRight")
    assert visible_step(page)["verdict"] == "state 3 violates the invariant <img src=x onerror=alert(2)>"
    assert events == []


@pytest.mark.slow  # over 30 s: left to CI and `make test-all`
def test_kafka_pages_step_through_to_the_violation(open_page, capsys, tmp_path):
    """For every mutant: the page of its first trace opens and steps to the end."""
    open_, events = open_page
    for mutant in sorted(MUTANTS):
        path = kafka_traces()[mutant][0]
        trace = load_trace(path)
        out = tmp_path / f"{mutant}.html"
        code, _, err = run(capsys, "trace", "html", path, "-o", out)
        assert (code, err) == (0, "")
        page = open_(out)
        last = len(trace.steps) - 1
        assert page.evaluate("document.querySelectorAll('section.step svg').length") == len(trace.steps)
        for i in range(1, last + 1):
            page.keyboard.press("ArrowRight")
            shown = visible_step(page)
            assert shown["position"] == f"state {i + 1} of {last + 1}" and shown["action"] == trace.steps[i].label
            assert shown["highlighted"] == trace.steps[i].changed
        assert shown["verdict"] == trace.verdict
        # the picture of the shown step highlights what changed
        assert page.evaluate("""() => document.querySelectorAll(
            'section.step:not([hidden]) svg [fill="#ffe27a"]').length""") > 0
        page.close()
    assert events == []


def test_html_output_must_be_html(capsys, tmp_path):
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps({"vars": ["x"], "states": [{"x": 1}]}))
    code, _, err = run(capsys, "trace", "html", trace, "-o", tmp_path / "t.svg")
    assert (code, err) == (2, f"kraftcheck: error: trace html writes an .html file, not '{tmp_path / 't.svg'}'\n")


def test_the_policy_stops_a_script_that_got_in(open_page, diehard_page, tmp_path):
    """Defence in depth: were some trace text ever unescaped, its script still would not run."""
    tampered = tmp_path / "tampered.html"
    tampered.write_text(diehard_page.read_text().replace(
        "<main>", "<main><script>document.title = 'ran'</script><img src=x onerror=\"document.title = 'ran'\">"))
    open_, events = open_page
    page = open_(tampered)
    assert page.title() == "tests.models:diehard: NotFourGallons"
    assert visible_step(page)["position"] == "state 1 of 7"  # the page's own script still runs
    assert events == []


def test_the_sequence_chart_unfolds_above_the_steps(open_page, capsys, tmp_path):
    """A Kafka page: the chart is folded at first, one click shows it, and the steps still step."""
    open_, events = open_page
    out = tmp_path / "finding.html"
    finding = Path(__file__).resolve().parent.parent / "spec" / "findings" / "heartbeat_LeaderOnOnlineDir.itf.json"
    code, _, err = run(capsys, "trace", "html", finding, "-o", out)
    assert (code, err) == (0, "")
    page = open_(out)
    chart = "#sequence-chart svg"
    assert not page.is_visible(chart) and not page.evaluate("document.getElementById('sequence-chart').open")
    page.click("#sequence-chart summary")
    assert page.is_visible(chart) and page.evaluate("document.getElementById('sequence-chart').open")
    assert page.evaluate(f"document.querySelector('{chart}').getBoundingClientRect().height") > 200
    assert page.evaluate(f"Array.from(document.querySelectorAll('{chart} text')).some(t => t.textContent === 'controller')")
    page.keyboard.press("End")
    assert visible_step(page)["verdict"] == "state 16 violates the invariant LeaderOnOnlineDir"
    # the chart marks the current step's row, and a click on a row goes to its step
    marked = "Array.from(document.querySelectorAll('#sequence-chart g.node.current title')).map(t => t.textContent)"
    assert "r15_step" in page.evaluate(marked) and all(t.startswith("r15_") for t in page.evaluate(marked))
    page.click("#sequence-chart g.node.row:has(title:text-is('r4_step'))")
    assert visible_step(page)["position"] == "state 5 of 16"
    assert "r4_step" in page.evaluate(marked) and all(t.startswith("r4_") for t in page.evaluate(marked))
    assert events == []
