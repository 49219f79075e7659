"""``trace render`` and ``trace show``: valid SVG naming every broker and directory, changes
highlighted, generic models drawn as a table, trace content escaped."""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from kraftcheck.checker.cli import main
from kraftcheck.model import MUTANTS
from kraftcheck.model.picture import CHANGED as PICTURE_CHANGED
from kraftcheck.traces.render import CHANGED
from kraftcheck.traces.trace import load_trace
from tests.test_trace_itf import QUINT_TRACE
from tests.trace_helpers import kafka_traces, kraftcheck, mutant_params, run

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(path) -> list[str]:
    """The text of every <text> element of a (valid) SVG file, runs of spaces as one."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return [" ".join("".join(t.itertext()).split()) for t in root.iter(f"{SVG}text")]


def highlighted(path) -> int:
    """How many shapes of an SVG are filled with the highlight colour."""
    root = ET.parse(path).getroot()
    return sum(1 for e in root.iter() if e.get("fill", "").lower() == CHANGED.lower())


@pytest.fixture(scope="module")
def diehard_trace(tmp_path_factory):
    directory = tmp_path_factory.mktemp("diehard")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", directory, "--quiet")
    assert p.returncode == 12, p.stderr
    return directory / "diehard_NotFourGallons.itf.json"


def test_a_generic_model_is_drawn_as_tables_of_variables(capsys, diehard_trace, tmp_path):
    out = tmp_path / "jugs.svg"
    code, stdout, err = run(capsys, "trace", "render", diehard_trace, "-o", out, "--model", "tests.models:diehard",
                            "--style", "state")
    assert (code, stdout, err) == (0, f"wrote {out}\n", "")
    texts = svg_texts(out)
    for label in ("Init", "FillBig", "BigToSmall", "EmptySmall", "small", "big"):
        assert label in texts
    assert "state 7 violates the invariant NotFourGallons" in texts
    # step 2 changes big, 3 and 5 both jugs, 4 small, 6 big, 7 both: one row (two cells) per change
    assert highlighted(out) == 2 * (1 + 2 + 1 + 2 + 1 + 2)


def test_dot_and_png_by_extension(capsys, diehard_trace, tmp_path):
    code, _, _ = run(capsys, "trace", "render", diehard_trace, "-o", tmp_path / "jugs.dot")
    assert code == 0
    source = (tmp_path / "jugs.dot").read_text()
    # the compact picture: the verdict on top (its link unseen), then the seven states
    assert source.startswith("digraph trace {") and source.count("->") == 7 and source.count("style=invis") == 1
    code, _, _ = run(capsys, "trace", "render", diehard_trace, "-o", tmp_path / "jugs.png")
    assert code == 0 and (tmp_path / "jugs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check_draws_the_trace_beside_it(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", tmp_path)
    assert p.returncode == 12
    svg = tmp_path / "diehard_NotFourGallons.svg"
    assert f"  trace: {tmp_path / 'diehard_NotFourGallons.itf.json'}\n  picture: {svg}\n" in p.stdout
    assert "state 7 violates the invariant NotFourGallons" in svg_texts(svg)


def test_a_quint_trace_is_drawn_without_a_model(capsys, tmp_path):
    trace = tmp_path / "bank.itf.json"
    trace.write_text(QUINT_TRACE)
    out = tmp_path / "bank.svg"
    code, _, err = run(capsys, "trace", "render", trace, "-o", out, "--style", "state")
    assert (code, err) == (0, "")
    texts = svg_texts(out)
    assert {"init", "deposit", "withdraw", "balances", "mbt::actionTaken"} <= set(texts)
    assert "{alice: -9007199254740993, bob: 0}" in texts  # a #map with string keys reads as a record


def hostile_trace(path):
    """A trace whose every string tries to break out of its markup."""
    hostile = "<script>alert(1)</script> \"double\" 'single' & ] [ </TD></TABLE>"
    path.write_text(json.dumps({
        "#meta": {"source": "kraftcheck", "model": "nowhere:at_all", "kind": "invariant",
                  "invariant": "<img src=x onerror=alert(2)>"},
        "vars": ["text", "x"],
        "states": [
            {"#meta": {"index": 0, "action": "Init"}, "text": "plain", "x": 0},
            {"#meta": {"index": 1, "action": "<b>Say</b>", "params": [hostile]}, "text": hostile, "x": 0},
            {"#meta": {"index": 2, "action": "Count", "params": []}, "text": hostile, "x": {"#set": [hostile]}},
        ],
    }))
    return hostile


def test_trace_content_is_escaped_in_pictures(capsys, tmp_path):
    trace = tmp_path / "hostile.itf.json"
    hostile = hostile_trace(trace)
    out = tmp_path / "hostile.svg"
    code, _, err = run(capsys, "trace", "render", trace, "-o", out)
    assert code == 0
    # kraftcheck does not ship its model: drawn from the file alone, with a note
    assert err == (f"kraftcheck: note: drawing the variables only: {trace}: the trace names model nowhere:at_all, "
                   "which kraftcheck does not ship, and it is not a trace this user's kraftcheck wrote as it stands; pass --model nowhere:at_all to trust it\n")
    texts = svg_texts(out)  # parses: nothing broke out
    joined = "\n".join(texts)
    assert f'"{hostile.replace(chr(34), chr(92) + chr(34))}"' in joined  # shown as a quoted string
    assert "<b>Say</b>(" in joined and "state 3 violates the invariant <img src=x onerror=alert(2)>" in joined
    assert not ET.parse(out).getroot().findall(f".//{SVG}script")


# ----------------------------------------------------------------------- the Kafka picture


@pytest.mark.parametrize("mutant", mutant_params(MUTANTS))
def test_kafka_picture_names_every_broker_and_directory(capsys, tmp_path, mutant):
    for path in kafka_traces()[mutant]:
        out = tmp_path / (path.name.removesuffix(".itf.json") + ".svg")
        code, _, err = run(capsys, "trace", "render", path, "-o", out, "--style", "state")
        assert (code, err) == (0, "")
        trace = load_trace(path)
        texts = svg_texts(out)
        joined = "\n".join(texts)
        brokers = len(trace.steps[0].values["brokerStatus"])
        for b in range(brokers):
            assert texts.count(f"broker {b}") == len(trace.steps)  # one box per broker per step
            assert texts.count(f"controller's view of broker {b}") == len(trace.steps)
        directories = {d for step in trace.steps for ids in step.values["dirIds"] for d in ids}
        for d in directories:
            assert re.search(rf"(^|\W){re.escape(d)}(\W|$)", joined), d
        assert trace.verdict in texts
        # every step after the first highlights what it changed
        root = ET.parse(out).getroot()
        nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
        assert len(nodes) == len(trace.steps)
        for step, node in zip(trace.steps[1:], nodes[1:]):
            if step.changed:
                assert any(e.get("fill", "").lower() == PICTURE_CHANGED.lower() for e in node.iter()), step.index


def test_kafka_picture_marks_failed_directories_leaders_and_messages(capsys, tmp_path):
    [path] = [p for p in kafka_traces()["no_revert_on_dest_failure"]]
    out = tmp_path / "moves.svg"
    assert run(capsys, "trace", "render", path, "-o", out, "--style", "state")[0] == 0
    texts = svg_texts(out)
    assert "FAILED" in texts or "FAILED (acked)" in texts
    assert "leader" in texts and "ISR" in texts
    assert any(t.startswith("→ AssignReplicasToDirs(") for t in texts)
    assert "controller's metadata" in texts and "messages in flight" in texts


def test_show_prints_each_step_and_only_what_changed(capsys, diehard_trace):
    code, out, _ = run(capsys, "trace", "show", diehard_trace, "--color", "never")
    assert code == 0
    assert out == (
        "tests.models:diehard: NotFourGallons\n"
        "── 1/7 Init\n   small = 0\n   big = 0\n"
        "── 2/7 FillBig\n   big: 0 → 5\n"
        "── 3/7 BigToSmall\n   small: 0 → 3\n   big: 5 → 2\n"
        "── 4/7 EmptySmall\n   small: 3 → 0\n"
        "── 5/7 BigToSmall\n   small: 0 → 2\n   big: 2 → 0\n"
        "── 6/7 FillBig\n   big: 0 → 5\n"
        "── 7/7 BigToSmall\n   small: 2 → 3\n   big: 5 → 4\n"
        "state 7 violates the invariant NotFourGallons\n"
    )


def test_show_colours_on_request_and_shows_fields_and_bags(capsys):
    path = kafka_traces()["fenced_leader_kept"][0]
    code, out, _ = run(capsys, "trace", "show", path, "--color", "always")
    assert code == 0 and "\x1b[" in out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "   brokerStatus[0]: OFF → STARTING\n" in plain
    assert '   network + "Register(b0, incarnation 1, dirs [' in plain  # a message sent
    assert plain.endswith(f"\n{load_trace(path).verdict}\n")
    assert load_trace(path).verdict.endswith(" violates the invariant FencedBrokerLeadsNothing")


def test_show_keeps_brackets_of_trace_content(capsys, tmp_path):
    trace = tmp_path / "hostile.itf.json"
    hostile_trace(trace)
    code, out, _ = run(capsys, "trace", "show", trace, "--color", "always")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert code == 0 and "[bold]" not in plain
    assert '"<script>alert(1)</script> \\"double\\" \'single\' & ] [ </TD></TABLE>"' in plain


def test_kafka_picture_escapes_and_takes_any_described_state(tmp_path):
    import subprocess

    from kraftcheck.model import make_model
    from kraftcheck.model.picture import picture

    model = make_model({})
    state = model.describe(next(iter(model.init_states())))
    hostile = dict(state, network=["<script>alert(1)</script> \"q\" 'q' ]"], dirIds=[["dir-0", "a&b"], ["<x>", "dir-3"]])

    def drawn(vars, previous):
        out = tmp_path / "p.svg"
        source = f"digraph {{ node [shape=plain]; s [label=<{picture(vars, previous)}>] }}"
        out.write_bytes(subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=True).stdout)
        return svg_texts(out)  # parses: valid SVG

    for vars, previous in ((state, None), ({}, None), ({"brokerStatus": ["OFF"]}, {})):  # partial states draw too
        assert drawn(vars, previous)
    texts = drawn(hostile, state)
    assert "→ <script>alert(1)</script> \"q\" 'q' ]" in texts and "a&b" in texts and "<x>" in texts


def test_a_lasso_says_where_it_loops_back(capsys, tmp_path):
    trace = tmp_path / "lasso.itf.json"
    trace.write_text(json.dumps({
        "#meta": {"format": "ITF", "description": "Created by Apalache"}, "vars": ["x"], "loop": 1,
        "states": [{"#meta": {"index": 0}, "x": 0}, {"#meta": {"index": 1}, "x": 1}, {"#meta": {"index": 2}, "x": 2}],
    }))
    code, out, _ = run(capsys, "trace", "show", trace, "--color", "never")
    assert code == 0
    assert out == ("lasso.itf.json: trace\n── 1/3 step 1\n   x = 0\n── 2/3 step 2\n   x: 0 → 1\n"
                   "── 3/3 step 3\n   x: 1 → 2\nthen back to state 2: the steps from there repeat forever\n")
    code, _, _ = run(capsys, "trace", "render", trace, "-o", tmp_path / "lasso.dot")
    assert code == 0 and 's2 -> s1 [label=<loop> constraint=false style=dashed]' in (tmp_path / "lasso.dot").read_text()
    code, _, _ = run(capsys, "trace", "html", trace, "-o", tmp_path / "lasso.html")
    assert code == 0 and "then back to state 2: the steps from there repeat forever" in (tmp_path / "lasso.html").read_text()


def test_the_compact_picture_is_the_default_and_the_full_one_a_style(tmp_path, capsys):
    """The violation on top, the first state whole, then only what each step changed."""
    assert main(["check", "--model", "tests.models:diehard", "--trace-dir", str(tmp_path), "--quiet", "--no-picture"]) == 12
    trace = tmp_path / "diehard_NotFourGallons.itf.json"
    assert main(["trace", "render", str(trace), "-o", str(tmp_path / "compact.dot")]) == 0
    assert main(["trace", "render", str(trace), "-o", str(tmp_path / "full.dot"), "--style", "state"]) == 0
    compact, full = (tmp_path / "compact.dot").read_text(), (tmp_path / "full.dot").read_text()
    nodes = re.findall(r"^\t(\w+) \[label=", compact, re.M)
    assert nodes == ["verdict", "s0", "s1", "s2", "s3", "s4", "s5", "s6"]
    fill_big = re.search(r"^\ts1 \[label=(.*)\]$", compact, re.M).group(1)
    assert "FillBig" in fill_big and "<B>big</B>" in fill_big and "small" not in fill_big  # only what changed
    assert "state 7 violates the invariant NotFourGallons" in re.search(r"^\tverdict \[label=(.*)\]$", compact, re.M).group(1)
    # the full style draws every state whole: each step's node names both jugs
    assert all("small" in label and "big" in label for label in re.findall(r"^\ts\d \[label=(.*)\]$", full, re.M))
