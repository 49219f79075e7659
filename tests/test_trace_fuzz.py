"""Hostile and careless ITF files through every trace command, end to end in a subprocess.

Valid traces (the Kafka model's, a Quint one, one of a model kraftcheck does not ship) are
mutated the ways a hand, a broken tool or an attacker mutates them: values of the wrong type,
nesting deeper than any trace, control characters, integers past what Python converts,
numbers that are not integers, keys removed, random JSON, cut files.  Whatever the file, a
command ends with an exit code it documents, says what went wrong in exactly one line, and
never shows a traceback.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_trace_itf import QUINT_TRACE
from tests.trace_helpers import CONFIGS, kraftcheck

#: Examples per command: each runs a subprocess, so the suite keeps to a few; set
#: KRAFTCHECK_FUZZ_EXAMPLES for a longer search.
EXAMPLES = int(os.environ.get("KRAFTCHECK_FUZZ_EXAMPLES", "30"))
#: Exit codes each command documents: replay's 1 says the trace is not a run of its model.
DOCUMENTED = {"show": {0, 2}, "render": {0, 2}, "html": {0, 2}, "replay": {0, 1, 2}}

# Placeholders for JSON that Python's json module does not write (it refuses integers past
# 4,300 digits and writes infinity as Infinity): replaced in the text after dumping.
RAW = {
    "@@huge-int@@": "9" * 4301,
    "@@long-int@@": "-" + "1" * 4300,
    "@@1e400@@": "1e400",
    "@@-1e400@@": "-1e400",
    "@@Infinity@@": "Infinity",
    "@@NaN@@": "NaN",
}

control_text = st.lists(st.sampled_from(
    list("ab <>&]\"'\\") + ["\x00", "\x07", "\x1b", "\x1b[2J", "\x1b]0;t\x07", "\r", "\n", "\x7f", "\x85", "\x9b",
                            "\u202e", "\u2066", "\u2069", "\u200f", "\u061c", "\u2028", "\ud800"]),
    max_size=8).map("".join)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([2**53, -(2**53) - 1, 1.5, -0.0, 1e300, 2.0]),
    control_text, st.sampled_from(sorted(RAW)),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.one_of(control_text, st.sampled_from(
        ["#tup", "#set", "#map", "#bigint", "#unserializable", "#meta", "params", "action", "label", "index",
         "model", "config", "settings", "source", "kind", "invariant"])), inner, max_size=3)),
    max_leaves=10,
)
tagged = st.one_of(
    st.builds(lambda v: {"#tup": v}, json_values), st.builds(lambda v: {"#set": v}, json_values),
    st.builds(lambda v: {"#map": v}, json_values), st.builds(lambda v: {"#bigint": v}, json_values),
    st.builds(lambda v: {"#unserializable": v}, json_values),
)


def nested(depth: int, kind: str):
    """A value ``depth`` levels deep: lists, objects or ``#tup``s."""
    value = 0
    for _ in range(depth):
        value = {"list": lambda v: [v], "object": lambda v: {"k": v}, "tup": lambda v: {"#tup": [v]}}[kind](value)
    return value


deep = st.builds(nested, st.sampled_from([40, 97, 98, 99, 100, 101, 400, 500]), st.sampled_from(["list", "object", "tup"]))
replacements = st.one_of(json_values, tagged, deep)


def locations(document) -> list[tuple]:
    """Every path (keys and indexes) in a JSON document, the document itself first."""
    paths, stack = [], [()]
    while stack:
        path = stack.pop()
        paths.append(path)
        value = _at(document, path)
        if isinstance(value, dict):
            stack.extend(path + (k,) for k in value)
        elif isinstance(value, list):
            stack.extend(path + (i,) for i in range(len(value)))
    return paths


def _at(document, path):
    for key in path:
        document = document[key]
    return document


@st.composite
def mutated_traces(draw, bases) -> str:
    """The text of a base trace after a few mutations."""
    name = draw(st.sampled_from(sorted(bases)))
    document = copy.deepcopy(bases[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = locations(document)
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(["replace", "replace", "delete", "insert"]))
        if path == () and how != "insert":
            document = draw(replacements)
            continue
        if how == "insert":
            target = _at(document, path)
            if isinstance(target, dict):
                target[draw(control_text | st.sampled_from(["#meta", "vars", "loop", "config"]))] = draw(replacements)
            elif isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(replacements))
            continue
        parent, key = _at(document, path[:-1]), path[-1]
        if how == "delete":
            del parent[key]
        else:
            parent[key] = draw(replacements)
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    for placeholder, raw in RAW.items():
        text = text.replace(f'"{placeholder}"', raw)
    if draw(st.integers(0, 9)) == 0:  # a file cut short, as by a full disk
        text = text[: draw(st.integers(0, len(text)))]
    return text


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict:
    """Valid traces to mutate: the Kafka model's (shipped), a Quint trace, and a trace naming a
    model kraftcheck does not ship."""
    directory = tmp_path_factory.mktemp("fuzz-bases")
    p = kraftcheck("check", CONFIGS / "epochgate.toml", "--set", "mutant=skip_epoch_check", "--trace-dir", directory,
                   "--quiet")
    assert p.returncode == 13, p.stderr  # a step property: TLC's exit code
    kafka = json.loads(next(directory.glob("*.itf.json")).read_text())
    foreign = copy.deepcopy(kafka)
    foreign["#meta"]["model"] = "subprocess:run"
    foreign["#meta"]["config"]["settings"] = {"touch": 1, "pwned.txt": 1}
    return {"kafka": kafka, "quint": json.loads(QUINT_TRACE), "untrusted": foreign}


def run_command(command: str, trace: Path, directory: Path) -> subprocess.CompletedProcess:
    output = {"render": ["-o", directory / "out.svg"], "html": ["-o", directory / "out.html"]}.get(command, [])
    return kraftcheck("trace", command, trace, *output, cwd=directory)


def assert_documented(command: str, p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in DOCUMENTED[command], (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    if p.returncode == 2:
        assert len(lines) == 1 and lines[0].startswith("kraftcheck: error: "), p.stderr
        assert len(lines[0]) < 600, lines[0]  # echoed values are cut
        assert "dot failed" not in lines[0]  # trace content never breaks the drawing
    elif p.returncode == 1:  # replay: the trace is not a run of its model, said on stdout
        assert p.stderr == "" and p.stdout.startswith("invalid: ") and p.stdout.count("\n") == 1, (p.stdout, p.stderr)
    else:
        assert len(lines) <= 1 and all(line.startswith("kraftcheck: note: ") for line in lines), p.stderr
    unsafe = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
    assert not unsafe.search(p.stderr) and not unsafe.search(p.stdout), (p.stdout, p.stderr)


@pytest.mark.parametrize("command", sorted(DOCUMENTED))
def test_any_trace_file_ends_in_a_documented_exit_and_one_line(command, bases, tmp_path_factory):
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.data_too_large])
    @given(mutated_traces(bases))
    def check(text):
        directory = tmp_path_factory.mktemp(f"fuzz-{command}")
        trace = directory / "t.itf.json"
        trace.write_text(text, encoding="utf-8", errors="surrogatepass")
        p = run_command(command, trace, directory)
        assert_documented(command, p)
        assert not (directory / "pwned.txt").exists()

    check()
