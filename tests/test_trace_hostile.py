"""Traces from someone else: reading one runs no code the reader did not choose, prints and
draws its content escaped, stays linear in its size, and turns every malformed file into one
line and a documented exit code."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kraftcheck.traces import render
from kraftcheck.traces.render import svg_beside
from tests.trace_helpers import CONFIGS, kraftcheck, run

SVG = "{http://www.w3.org/2000/svg}"
#: What no output of a trace command may carry raw: C0 controls but newline, DEL, C1
#: controls, bidirectional marks, overrides and isolates, line and paragraph separators.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def kafka_document(tmp_path_factory) -> dict:
    """A trace of the Kafka model as the checker writes it (11 states, one broker)."""
    directory = tmp_path_factory.mktemp("kafka")
    p = kraftcheck("check", CONFIGS / "epochgate.toml", "--set", "mutant=skip_epoch_check", "--trace-dir", directory,
                   "--quiet")
    assert p.returncode == 13, p.stderr  # a step property: TLC's exit code
    return json.loads((directory / "epochgate,mutant=skip_epoch_check_StaleEpochChangesNothing.itf.json").read_text())


def written(path: Path, document) -> Path:
    path.write_text(json.dumps(document))
    return path


def edited(document: dict, edit) -> dict:
    copy = json.loads(json.dumps(document))
    edit(copy)
    return copy


def outputs(command: str, directory: Path) -> list:
    return {"render": ["-o", directory / "t.svg"], "html": ["-o", directory / "t.html"]}.get(command, [])


# ----------------------------------------------------------------------- no code from a trace


EVIL_MODULE = """\
from pathlib import Path
Path(__file__).with_name("imported-" + Path.cwd().name + ".txt").write_text("imported")


def make(config):
    Path(__file__).with_name("called.txt").write_text("called")
    raise SystemExit(0)
"""


@pytest.fixture
def planted(tmp_path, kafka_document):
    """Two traces naming models that would leave a marker file if ever imported or called: the
    standard library's ``subprocess:run`` (settings that make it run ``touch pwned.txt``) and
    ``evil:make``, a module beside the trace and in the current directory."""
    beside, cwd = tmp_path / "traces", tmp_path / "cwd"
    for directory in (beside, cwd):
        directory.mkdir()
        (directory / "evil.py").write_text(EVIL_MODULE)
    runs_touch = written(beside / "run.itf.json", edited(kafka_document, lambda d: d["#meta"].update(
        model="subprocess:run", config={"settings": {"touch": 1, "pwned.txt": 1}})))
    evil = written(beside / "evil.itf.json", edited(kafka_document, lambda d: d["#meta"].update(model="evil:make")))
    return {"subprocess:run": runs_touch, "evil:make": evil, "beside": beside, "cwd": cwd}


def markers(*directories: Path) -> list[str]:
    return sorted(p.name for d in directories for p in d.iterdir() if p.suffix == ".txt")


@pytest.mark.parametrize("named", ["subprocess:run", "evil:make"])
@pytest.mark.parametrize("command", ["show", "render", "html", "replay"])
def test_a_trace_never_makes_kraftcheck_import_its_model(planted, command, named):
    trace, beside, cwd = planted[named], planted["beside"], planted["cwd"]
    for directory in (beside, cwd):  # beside the trace and in the current directory
        p = kraftcheck("trace", command, trace, *outputs(command, directory), cwd=directory)
        untrusted = (f"{trace}: the trace names model {named}, which kraftcheck does not ship, and it is not a "
                     f"trace this user's kraftcheck wrote as it stands; pass --model {named} to trust it")
        if command == "show":  # show builds no model: nothing to say
            assert (p.returncode, p.stderr) == (0, "")
        elif command == "replay":
            assert (p.returncode, p.stdout, p.stderr) == (2, "", f"kraftcheck: error: {untrusted}\n")
        else:
            assert (p.returncode, p.stderr) == (0, f"kraftcheck: note: drawing the variables only: {untrusted}\n")
            assert p.stdout == f"wrote {outputs(command, directory)[1]}\n"
        assert markers(beside, cwd) == []


def test_the_model_a_reader_passes_with_model_is_trusted(planted):
    """The marker files do appear once the reader passes the model: the test above can fail."""
    cwd = planted["cwd"]
    p = kraftcheck("trace", "replay", planted["subprocess:run"], "--model", "subprocess:run", cwd=cwd)
    assert p.returncode == 2 and (cwd / "pwned.txt").exists()
    assert p.stderr == ("kraftcheck: error: subprocess:run did not return a model: it lacks init_states, successors, "
                        "invariants\n")


def test_a_shipped_model_named_by_a_trace_is_built(capsys, kafka_document, tmp_path):
    trace = written(tmp_path / "kafka.itf.json", kafka_document)
    code, out, err = run(capsys, "trace", "replay", trace)
    assert (code, err) == (0, "")
    assert out == ("valid: 11 states, every step a legal transition of kraftcheck.model:make_model; "
                   "step 11 (ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))) violates "
                   "StaleEpochChangesNothing\n")


# ----------------------------------------------------------------------- control characters

HOSTILE_LABEL = "\x1b[2J\x1b]0;pwned\x07\u202eevil\r\nvalid: fake\x00\x9b\u2066"
SHOWN_LABEL = r"\x1b[2J\x1b]0;pwned\x07\u202eevil\r\nvalid: fake\x00\x9b\u2066"


def hostile_kafka(document: dict) -> dict:
    def edit(d):
        d["states"][1]["#meta"]["label"] = HOSTILE_LABEL
        d["states"][2]["network"] = ["\x1b[31mred\x00 \u202eright-to-left"] + d["states"][2]["network"]
        d["states"][2]["dirIds"][0][1] = "dir\x00\x1b"
    return edited(document, edit)


def test_show_escapes_control_characters(capsys, kafka_document, tmp_path):
    trace = written(tmp_path / "t.itf.json", hostile_kafka(kafka_document))
    code, out, err = run(capsys, "trace", "show", trace, "--color", "never")
    assert (code, err) == (0, "")
    assert f"── 2/11 {SHOWN_LABEL}\n" in out
    assert '   network + "\\x1b[31mred\\x00 \\u202eright-to-left"\n' in out
    assert '   dirIds[0][1]: dir-1 → "dir\\x00\\x1b"\n' in out
    assert not UNSAFE.search(out)


def test_replay_escapes_step_labels_and_the_source(capsys, kafka_document, tmp_path):
    def edit(d):
        d["states"][1]["#meta"]["label"] = HOSTILE_LABEL
        d["states"][1]["incarnation"] = [2]
    trace = written(tmp_path / "t.itf.json", edited(kafka_document, edit))
    code, out, err = run(capsys, "trace", "replay", trace)
    assert (code, err) == (1, "")
    assert out == f"invalid: step 2: {SHOWN_LABEL} leads to incarnation[0] = 1, but the trace has 2\n"

    foreign = written(tmp_path / "f.itf.json", edited(kafka_document, lambda d: d["#meta"].update(
        source="\x1b[2J\x1b[1;1Hvalid: 11 states\u202e")))
    code, out, err = run(capsys, "trace", "replay", foreign)
    assert (code, out) == (2, "")
    assert err == (f"kraftcheck: error: {foreign} was not written by kraftcheck (\\x1b[2J\\x1b[1;1Hvalid: 11 states"
                   "\\u202e): replay needs a kraftcheck model, given with --model MODULE:FACTORY (and --set KEY=VALUE "
                   "for its settings)\n")


def test_nul_and_escape_draw_in_the_kafka_picture(capsys, kafka_document, tmp_path):
    trace = written(tmp_path / "t.itf.json", hostile_kafka(kafka_document))
    out = tmp_path / "t.svg"
    code, stdout, err = run(capsys, "trace", "render", trace, "-o", out, "--style", "state")
    assert (code, stdout, err) == (0, f"wrote {out}\n", "")  # the Kafka picture, no note: dot took it
    text = out.read_text()
    assert not UNSAFE.search(text)
    texts = [" ".join("".join(t.itertext()).split()) for t in ET.parse(out).getroot().iter(f"{SVG}text")]
    assert "→ \\x1b[31mred\\x00 \\u202eright-to-left" in texts
    assert any("dir\\x00\\x1b" in t for t in texts) and any(SHOWN_LABEL.split(r"\r")[0] in t for t in texts)


def test_the_page_holds_no_raw_control_characters(capsys, kafka_document, tmp_path):
    trace = written(tmp_path / "t.itf.json", hostile_kafka(kafka_document))
    out = tmp_path / "t.html"
    code, _, err = run(capsys, "trace", "html", trace, "-o", out)
    # the messages name no broker: no sequence chart, said in one line that quotes them escaped
    assert (code, err) == (0, f"kraftcheck: note: no sequence chart in the page: the model's sequence chart does not "
                              f"take {trace}: '\\x1b[31mred\\x00 \\u202eright-to-left' names no broker of this run\n")
    page = out.read_text()
    assert not UNSAFE.search(page) and 'id="sequence-chart"' not in page
    assert f'data-action="{SHOWN_LABEL}"' in page and "\\x1b[31mred\\x00 \\u202eright-to-left" in page


# ----------------------------------------------------------------------- size


def test_show_compares_long_lists_in_linear_time(capsys, tmp_path):
    """A 20,000-item list that loses one item (a bag) and then is rebuilt: each step's
    changes take a comparison per item, not per pair of items (once 42 s, now well under one)."""
    numbers = list(range(20_000))
    trace = written(tmp_path / "long.itf.json", {"vars": ["x"], "states": [
        {"x": numbers}, {"x": numbers[1:]}, {"x": [n + 100_000 for n in numbers[1:]]}]})
    start = time.perf_counter()
    code, out, _ = run(capsys, "trace", "show", trace, "--color", "never")
    elapsed = time.perf_counter() - start
    assert code == 0
    lines = out.splitlines()
    assert lines[lines.index("── 2/3 step 2") + 1:][:2] == ["   x - 0", "── 3/3 step 3"]
    assert lines[-3:] == ["   x[48]: 49 → 100049", "   x[49]: 50 → 100050", "   … 19,949 more changes of x"]
    assert len(lines) == 2 + 50 + 1 + 2 + 1 + 1  # title, state 0 (cut), steps, 50 changes, the count
    assert elapsed < 10, elapsed


def test_check_draws_no_picture_of_a_large_trace(capsys, tmp_path, monkeypatch, kafka_document):
    from kraftcheck.model import make_model

    trace = written(tmp_path / "t.itf.json", kafka_document)
    svg = tmp_path / "t.svg"
    assert svg_beside(trace, make_model({}), picture=False) is None and not svg.exists()
    assert capsys.readouterr().err == ""
    assert svg_beside(trace, make_model({})) == svg and svg.exists()
    monkeypatch.setattr(render, "PICTURE_MAX_BYTES", 1000)
    size = trace.stat().st_size
    assert svg_beside(trace, make_model({})) is None and not svg.exists()  # the old picture is gone too
    assert capsys.readouterr().err == (f"kraftcheck: note: no picture of {trace}: it is {size / 1e6:.1f} MB, more than "
                                       "a picture may take (0.0 MB)\n")


def test_render_and_html_of_a_large_trace(capsys, tmp_path, monkeypatch, kafka_document):
    trace = written(tmp_path / "t.itf.json", kafka_document)
    size = f"{trace.stat().st_size / 1e6:.1f} MB"
    monkeypatch.setattr(render, "PICTURE_MAX_BYTES", 1000)
    code, out, err = run(capsys, "trace", "render", trace, "-o", tmp_path / "t.svg")
    assert (code, out) == (2, "")
    assert err == (f"kraftcheck: error: {trace} is {size}, more than a picture may take (0.0 MB): write t.dot instead, "
                   "or read it with trace show\n")
    code, out, err = run(capsys, "trace", "render", trace, "-o", tmp_path / "t.dot")
    assert (code, out, err) == (0, f"wrote {tmp_path / 't.dot'}\n", "")
    code, out, err = run(capsys, "trace", "html", trace, "-o", tmp_path / "t.html")
    assert (code, out) == (0, f"wrote {tmp_path / 't.html'}\n")
    assert err == (f"kraftcheck: note: no pictures in the page: {trace} is {size}, more than a picture may take (0.0 MB); "
                   "the tables show every state\n")
    assert "<svg" not in (tmp_path / "t.html").read_text()


def test_html_without_pictures_on_request(capsys, tmp_path, kafka_document, planted):
    trace = written(tmp_path / "t.itf.json", kafka_document)
    code, _, err = run(capsys, "trace", "html", trace, "-o", tmp_path / "with.html")
    # a picture per state (11) and the sequence chart
    assert (code, err) == (0, "") and (tmp_path / "with.html").read_text().count("<svg") == 11 + 1
    code, _, err = run(capsys, "trace", "html", trace, "-o", tmp_path / "without.html", "--no-picture")
    assert (code, err) == (0, "") and "<svg" not in (tmp_path / "without.html").read_text()
    # no picture, no model: a trace naming one kraftcheck does not ship needs no note
    code, _, err = run(capsys, "trace", "html", planted["evil:make"], "-o", tmp_path / "evil.html", "--no-picture")
    assert (code, err) == (0, "")


# ----------------------------------------------------------------------- malformed traces


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("command", ["show", "render", "html", "replay"])
@pytest.mark.parametrize("case, text, message", [
    ("500 deep", '{"vars": ["x"], "states": [{"x": ' + deep_list(500) + "}]}",
     "{path} is not a trace: it is nested more than 100 levels deep"),
    ("100,000 deep", '{"vars": ["x"], "states": [{"x": ' + deep_list(100_000) + "}]}",
     "{path} is not a trace: it is nested more than 100 levels deep"),
    ("400 #tup", json.dumps({"vars": ["x"], "states": [{"x": json.loads('{"#tup": [' * 400 + "]}" * 400)}]}),
     "{path} is not a trace: it is nested more than 100 levels deep"),
    ("4,301 digits", '{"vars": ["x"], "states": [{"x": ' + "7" * 4301 + "}]}",
     "{path} is not a trace: it holds an integer of 4,301 digits, more than a trace may hold (4,300)"),
    ("#bigint of 4,301 digits", json.dumps({"vars": ["x"], "states": [{"x": {"#bigint": "-" + "7" * 4301}}]}),
     "{path}: state 1: #bigint holds an integer of 4,301 digits, more than a trace may hold (4,300)"),
    ("NaN", '{"vars": ["x"], "states": [{"x": NaN}]}', "{path} is not a trace: it holds NaN, which is not JSON"),
])
def test_malformed_json_is_one_line_and_exit_2(capsys, tmp_path, command, case, text, message):
    path = tmp_path / "t.itf.json"
    path.write_text(text)
    code, out, err = run(capsys, "trace", command, path, *outputs(command, tmp_path))
    assert (code, out, err) == (2, "", f"kraftcheck: error: {message.format(path=path)}\n")


def test_nesting_up_to_the_limit_reads(capsys, tmp_path):
    """A file nested 100 levels deep, the limit (the document, its states, a state, a list, then
    48 #tup of two levels each), reads, shows and draws: the limit leaves the recursive readers
    room.  One level more is refused."""
    value = 0
    for _ in range(47):
        value = {"#tup": [value]}
    path = written(tmp_path / "t.itf.json", {"vars": ["x"], "states": [{"x": [value]}, {"x": [{"#tup": [value]}]}]})
    for command in ("show", "render", "html"):
        code, _, err = run(capsys, "trace", command, path, *outputs(command, tmp_path))
        assert (code, err) == (0, ""), command
    deeper = written(tmp_path / "deeper.itf.json", {"vars": ["x"], "states": [{"x": [[{"#tup": [value]}]]}]})
    code, _, err = run(capsys, "trace", "show", deeper)
    assert (code, err) == (2, f"kraftcheck: error: {deeper} is not a trace: it is nested more than 100 levels deep\n")


SETTINGS_CASES = [
    ("an array", lambda d: d["#meta"]["config"].update(settings=[1]), None,
     "{path}: '#meta' config.settings must be a JSON object, not an array"),
    ("a string", lambda d: d["#meta"]["config"].update(settings="brokers=2"), None,
     "{path}: '#meta' config.settings must be a JSON object, not a string"),
    ("config null", lambda d: d["#meta"].update(config=None), None,
     "{path}: '#meta' config must be a JSON object, not null"),
    ("1e400", None, "1e400",
     "{path}: '#meta' config.settings brokers is Infinity, not a finite number, a string or a boolean"),
    ("-1e400", None, "-1e400",
     "{path}: '#meta' config.settings brokers is -Infinity, not a finite number, a string or a boolean"),
    ("Infinity", None, "Infinity", "{path} is not a trace: it holds Infinity, which is not JSON"),
    ("-Infinity", None, "-Infinity", "{path} is not a trace: it holds -Infinity, which is not JSON"),
    ('"inf"', None, '"inf"', "the model rejected its config: model setting 'brokers' must be an integer, not 'inf'"),
]


@pytest.mark.parametrize("command", ["render", "html", "replay"])
@pytest.mark.parametrize("case, edit, brokers, message", SETTINGS_CASES, ids=[c[0] for c in SETTINGS_CASES])
def test_settings_that_no_config_holds_are_one_line_and_exit_2(capsys, tmp_path, kafka_document, command, case, edit,
                                                              brokers, message):
    path = tmp_path / "t.itf.json"
    if edit is not None:
        written(path, edited(kafka_document, edit))
    else:
        text = json.dumps(kafka_document)
        assert text.count('"brokers": 1,') == 1
        path.write_text(text.replace('"brokers": 1,', f'"brokers": {brokers},'))
    code, out, err = run(capsys, "trace", command, path, *outputs(command, tmp_path))
    assert (code, out, err) == (2, "", f"kraftcheck: error: {message.format(path=path)}\n")


def test_a_malformed_kafka_value_is_drawn_as_a_table(capsys, tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", edited(kafka_document, lambda d: d["states"][3].update(brokerStatus=7)))
    note = (f"kraftcheck: note: drawing the variables only: the model's picture does not take state 4 of {path}: "
            "not a state of the Kafka model (TypeError: object of type 'int' has no len())\n")
    code, out, err = run(capsys, "trace", "render", path, "-o", tmp_path / "t.svg", "--style", "state")
    assert (code, out, err) == (0, f"wrote {tmp_path / 't.svg'}\n", note)
    texts = ["".join(t.itertext()) for t in ET.parse(tmp_path / "t.svg").getroot().iter(f"{SVG}text")]
    assert "brokerStatus" in texts and "broker 0" not in texts  # tables, not the Kafka picture
    code, out, err = run(capsys, "trace", "html", path, "-o", tmp_path / "t.html")
    no_chart = (f"kraftcheck: note: no sequence chart in the page: the model's sequence chart does not take {path}: "
                "state 4 is no state of the Kafka model\n")
    assert (code, err) == (0, note + no_chart) and "<svg" not in (tmp_path / "t.html").read_text()
    # replay never hands trace values to the model: the state simply does not match
    code, out, err = run(capsys, "trace", "replay", path)
    assert (code, err) == (1, "")
    assert out == "invalid: step 4: ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1'])) leads to brokerStatus = [STARTING], but the trace has 7\n"


def test_meta_fields_of_the_wrong_type_are_one_line(capsys, tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", edited(kafka_document, lambda d: d["#meta"].update(invariant=["x"])))
    code, out, err = run(capsys, "trace", "replay", path)
    assert (code, out, err) == (2, "", f"kraftcheck: error: {path}: '#meta' invariant must be a string, not an array\n")


# ----------------------------------------------------------------------- encodings


def test_show_to_an_ascii_stdout(tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", hostile_kafka(kafka_document))
    p = kraftcheck("trace", "show", path, env={"PYTHONIOENCODING": "ascii"})
    assert (p.returncode, p.stderr) == (0, "")
    assert f"\\u2500\\u2500 2/11 {SHOWN_LABEL}\n" in p.stdout


@pytest.mark.parametrize("utf8_mode", ["1", "0"])
def test_html_to_a_non_ascii_name_in_the_c_locale(tmp_path, kafka_document, utf8_mode):
    """In the C locale Python reads file names as UTF-8 (its UTF-8 mode) or, with that mode
    off, as ASCII with the other bytes kept: either way the page is written under its name."""
    path = written(tmp_path / "t.itf.json", kafka_document)
    out = tmp_path / "é.html"
    p = kraftcheck("trace", "html", path, "-o", out, env={"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": utf8_mode})
    assert (p.returncode, p.stderr) == (0, "")
    assert out.exists() and p.stdout.startswith(f"wrote {tmp_path}/") and p.stdout.endswith(".html\n")


# ----------------------------------------------------------------------- echoed values are cut


def test_a_huge_bad_value_is_not_echoed_whole(capsys, tmp_path):
    path = written(tmp_path / "t.itf.json", {"vars": ["x"], "states": [{"x": {"#bigint": "x" * 30_000_000}}]})
    code, out, err = run(capsys, "trace", "show", path)
    assert (code, out) == (2, "")
    assert err == f"kraftcheck: error: {path}: state 1: #bigint must hold a decimal integer string, not '{'x' * 78}…\n"


def test_a_huge_label_is_cut(capsys, tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", edited(kafka_document, lambda d: d["states"][1]["#meta"].update(
        label="L" * 1_000_000)))
    code, out, _ = run(capsys, "trace", "show", path, "--color", "never")
    assert code == 0 and f"── 2/11 {'L' * 199}…\n" in out and len(out) < 5000


class ShoutingPicture:
    """The Die Hard jugs, whose picture hook fails with a message holding escape sequences."""

    def __init__(self, config):
        from tests.models import DieHard

        jugs = DieHard(config)
        self.init_states, self.successors, self.describe, self.invariants = (
            jugs.init_states, jugs.successors, jugs.describe, jugs.invariants)

    def picture(self, vars, previous):
        raise ZeroDivisionError("\x1b[2J\x1b]0;retitled\x07")


def shouting_picture(config=None):
    return ShoutingPicture(config or {})


def test_error_lines_escape_what_they_echo(capsys, tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", {"vars": ["small", "big"], "states": [{"small": 0, "big": 0}]})
    code, _, err = run(capsys, "trace", "render", path, "-o", tmp_path / "t.svg",
                       "--model", "tests.test_trace_hostile:shouting_picture")
    assert code == 1
    assert re.fullmatch(r"kraftcheck: error: the model raised ZeroDivisionError: \\x1b\[2J\\x1b\]0;retitled\\x07 "
                        r"\(test_trace_hostile\.py:\d+\)\n", err), err
    named = written(tmp_path / "n.itf.json", edited(kafka_document, lambda d: d["#meta"].update(model="evil\x1b[2J:make")))
    code, _, err = run(capsys, "trace", "replay", named)
    assert (code, err) == (2, f"kraftcheck: error: {named}: the trace names model evil\\x1b[2J:make, which kraftcheck "
                              "does not ship, and it is not a trace this user's kraftcheck wrote as it stands; "
                              "pass --model evil\\x1b[2J:make to trust it\n")
    code, _, err = run(capsys, "trace", "render", named, "-o", tmp_path / "n.svg")
    assert (code, err) == (0, f"kraftcheck: note: drawing the variables only: {named}: the trace names model "
                              "evil\\x1b[2J:make, which kraftcheck does not ship, and it is not a trace this user's kraftcheck wrote as it stands; pass --model evil\\x1b[2J:make to "
                              "trust it\n")


def test_a_set_of_tuples_holding_lists_reads(capsys, tmp_path):
    """Set elements are made hashable all the way down, inside tuples too."""
    path = written(tmp_path / "t.itf.json", {"vars": ["s"], "states": [
        {"s": {"#set": [{"#tup": ["a", [1, 2]]}]}}, {"s": {"#set": []}}]})
    code, out, err = run(capsys, "trace", "show", path, "--color", "never")
    assert (code, err) == (0, "")
    assert out == ("t.itf.json: trace\n── 1/2 step 1\n   s = {<<a, <<1, 2>>>>}\n── 2/2 step 2\n"
                   "   s: {<<a, <<1, 2>>>>} → {}\n")


def test_a_file_without_end_is_refused(capsys, monkeypatch):
    from kraftcheck.traces import itf

    monkeypatch.setattr(itf, "MAX_TRACE_BYTES", 1_000_000)
    code, out, err = run(capsys, "trace", "show", "/dev/zero")
    assert (code, out, err) == (2, "", "kraftcheck: error: /dev/zero is not a trace: it is larger than a trace may be "
                                       "(1 MB)\n")


def test_a_huge_setting_is_not_echoed_whole(capsys, tmp_path, kafka_document):
    path = written(tmp_path / "t.itf.json", edited(kafka_document, lambda d: d["#meta"]["config"]["settings"].update(
        brokers="x" * 1_000_000)))
    code, out, err = run(capsys, "trace", "replay", path)
    assert (code, out) == (2, "")
    # the model cuts the value it quotes (reprlib); the trace reader would cut a longer message at 300
    assert err == ("kraftcheck: error: the model rejected its config: model setting 'brokers' must be an integer, "
                   "not 'xxxxxxxxxxxx...xxxxxxxxxxxxx'\n")


def test_the_kafka_picture_matches_messages_in_linear_time():
    """50,000 messages in flight, one delivered and one sent: counted, not searched for
    (searching took minutes)."""
    from kraftcheck.model.picture import CHANGED, picture

    messages = [f"Heartbeat(b0, epoch {i}, offline [])" for i in range(50_000)]
    start = time.perf_counter()
    drawn = picture({"network": messages[1:] + ["Register(b1)"]}, {"network": messages})
    assert time.perf_counter() - start < 5
    assert drawn.count("(gone)") == 1 and "<S>Heartbeat(b0, epoch 0, offline &#91;&#93;)</S>" in drawn
    assert drawn.count(f'<TD ALIGN="LEFT" BGCOLOR="{CHANGED}">&#8594; ') == 1  # only the new message is highlighted
    assert f'<TD ALIGN="LEFT" BGCOLOR="{CHANGED}">&#8594; Register(b1)</TD>' in drawn


def _kafka_values():
    from hypothesis import strategies as st

    leaves = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(
        ["OFF", "RUNNING", "HEALTHY", "FAILED", "NONE", "NoPartition", "dir-0", "\x00\x1b"]))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.frozensets(st.integers(0, 3), max_size=2),
        st.dictionaries(st.sampled_from(["leader", "isr", "dirs", "leaderEpoch", "partitionEpoch", "x"]), inner,
                        max_size=4)), max_leaves=12)


def test_the_kafka_picture_draws_or_rejects_any_values():
    """Whatever values a trace gives the Kafka picture, it returns a label or raises ValueError
    (then the readers draw tables): never another exception, which would read as a bug."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kraftcheck.model import VARIABLES
    from kraftcheck.model.picture import picture

    states = st.dictionaries(st.sampled_from(list(VARIABLES)), _kafka_values(), max_size=len(VARIABLES))

    @settings(max_examples=200, deadline=None)
    @given(states, st.one_of(st.none(), states))
    def draws_or_rejects(vars, previous):
        try:
            label = picture(vars, previous)
        except ValueError:
            return
        assert label.startswith("<TABLE") and not UNSAFE.search(label)

    draws_or_rejects()


@pytest.mark.parametrize("value", [7, "x", [], {"#tup": []}])
def test_any_variable_edited_still_gives_a_page_and_a_sequence_chart_or_bad_input(capsys, tmp_path, value):
    """Each variable of a finding's trace set to a value no run holds, at a middle state and at
    the last: the page is written (without a chart, with a note), and the sequence chart is
    drawn or refused as bad input (exit 2), never the model failing (exit 1)."""
    document = json.loads((Path(__file__).parent.parent / "spec" / "findings" /
                           "heartbeat_FencedUntilAssigned.itf.json").read_text())
    variables = [v for v in document["states"][0] if v != "#meta"]
    assert len(variables) == 29
    for variable in variables:
        for k in (5, len(document["states"]) - 1):
            edited_document = json.loads(json.dumps(document))
            edited_document["states"][k][variable] = value
            path = written(tmp_path / "t.itf.json", edited_document)
            code, out, err = run(capsys, "trace", "html", path, "-o", tmp_path / "t.html", "--no-picture")
            assert code == 0, (variable, k, err)
            code, out, err = run(capsys, "trace", "render", path, "-o", tmp_path / "t.dot", "--style", "sequence")
            assert code in (0, 2), (variable, k, err)
            assert "Traceback" not in err


def test_a_trace_of_many_tiny_states_is_not_drawn(capsys, tmp_path):
    """1,001 states of one integer: 60 kB on disk, yet more than a picture may take."""
    states = [{"#meta": {"index": i, "action": "Tick" if i else "Init", "params": []}, "x": i} for i in range(1001)]
    trace = written(tmp_path / "t.itf.json", {"#meta": {"format": "ITF", "source": "elsewhere"}, "vars": ["x"],
                                              "states": states})
    code, out, err = run(capsys, "trace", "render", trace, "-o", tmp_path / "t.svg")
    assert (code, out) == (2, "")
    assert err == (f"kraftcheck: error: {trace} holds 1,001 states, more than a picture may take (1,000): "
                   "write t.dot instead, or read it with trace show\n")
    code, out, err = run(capsys, "trace", "show", trace)
    assert code == 0 and out.count("\n") == 1 + 1001 * 2 and out.endswith("── 1001/1001 Tick\n   x: 999 → 1000\n")
