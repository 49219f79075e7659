"""``kraftcheck graph``, and bad input to every trace command: one line, exit 2, no traceback."""

import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from kraftcheck.traces.graph import explore_graph, graph_statistics
from tests.models import diehard
from tests.trace_helpers import REPO, kraftcheck, run

SVG = "{http://www.w3.org/2000/svg}"


def jugs_by_hand():
    """The Die Hard state graph computed directly from the puzzle, not through any model code."""
    def moves(small, big):
        pour_in, pour_out = min(small, 5 - big), min(big, 3 - small)
        return {"FillSmall": (3, big), "FillBig": (small, 5), "EmptySmall": (0, big), "EmptyBig": (small, 0),
                "SmallToBig": (small - pour_in, big + pour_in), "BigToSmall": (small + pour_out, big - pour_out)}

    graph, todo = nx.MultiDiGraph(), [(0, 0)]
    graph.add_node((0, 0))
    while todo:
        state = todo.pop()
        for action, target in moves(*state).items():
            if target not in graph:
                graph.add_node(target)
                todo.append(target)
            graph.add_edge(state, target, key=action)
    return graph


def test_diehard_graph_counts():
    by_hand = jugs_by_hand()
    statistics = graph_statistics(explore_graph(diehard({}), label="diehard"))
    assert statistics == {
        "nodes": 16,          # a jug empty or full: 2 * 6 + 2 * 2
        "transitions": 96,    # six actions, always enabled
        "edges": 74,          # 96 less the actions that land where another from the same state does
        "initial": 1,
        "depth": 8,           # the longest shortest path from (0, 0): e.g. to (3, 4)... in states, as check counts
        "diameter": 7,
        "strongly_connected_components": 1,  # every state can empty both jugs, and (0, 0) reaches all
        "largest_component": 16,
        "violating": 2,       # big = 4, with small 0 or 3
        "violating_steps": 0,
        "deadlocks": 0,
    }
    assert (by_hand.number_of_nodes(), by_hand.number_of_edges(), nx.DiGraph(by_hand).number_of_edges()) == (16, 96, 74)
    assert nx.diameter(nx.DiGraph(by_hand)) == 7
    assert max(nx.single_source_shortest_path_length(nx.DiGraph(by_hand), (0, 0)).values()) == 7


def test_graph_command_draws_and_reports(capsys, tmp_path):
    out = tmp_path / "jugs.svg"
    code, stdout, err = run(capsys, "graph", "--model", "tests.models:diehard", "-o", out)
    assert (code, err) == (0, "")
    assert stdout == (
        "16 states, 96 transitions (74 edges between distinct pairs of states), 1 initial\n"
        "depth 8 states (the longest shortest path from an initial state), diameter 7\n"
        "1 strongly connected component, the largest of 16 states\n"
        "2 states violating an invariant, 0 transitions violating a step property, 0 deadlocks\n"
        f"wrote {out}\n"
    )
    root = ET.parse(out).getroot()
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert (len(nodes), len(edges)) == (16, 74)
    red = [g for g in nodes if any(p.get("fill") == "#f6c9c3" for p in g.iter(f"{SVG}path"))
           or any(p.get("fill") == "#f6c9c3" for p in g.iter(f"{SVG}polygon"))]
    assert len(red) == 2
    texts = ["".join(t.itertext()) for g in red for t in g.iter(f"{SVG}text")]
    assert texts.count("big = 4") == 2 and texts.count("violates NotFourGallons") == 2


def test_graph_of_a_deadlocking_model_as_dot(capsys, tmp_path):
    out = tmp_path / "countdown.dot"
    code, stdout, _ = run(capsys, "graph", "--model", "tests.models:countdown", "--set", "start=3", "-o", out)
    assert code == 0
    assert stdout.splitlines()[:4] == [
        "4 states, 3 transitions (3 edges between distinct pairs of states), 1 initial",
        "depth 4 states (the longest shortest path from an initial state), diameter infinite (not strongly connected)",
        "4 strongly connected components, the largest of 1 state",
        "0 states violating an invariant, 0 transitions violating a step property, 1 deadlock",
    ]
    source = out.read_text()
    assert source.startswith("digraph states {") and source.count("deadlock") == 1


class Ratchet:
    """A counter 0..3 that may also fall back to 0; the step property says it never decreases."""

    actions = ["Up", "Reset"]

    def __init__(self, config):
        self.invariants = {"Small": lambda s: s < 3}
        self.action_invariants = {"NeverDecreases": lambda s, a, t: t >= s}

    def init_states(self):
        return [0]

    def successors(self, s):
        if s < 3:
            yield "Up", s + 1
        yield "Reset", 0

    def describe(self, s):
        return {"n": s}


def ratchet(config=None):
    return Ratchet(config or {})


def test_graph_marks_steps_that_violate_a_step_property(capsys, tmp_path):
    out = tmp_path / "ratchet.svg"
    code, stdout, _ = run(capsys, "graph", "--model", "tests.test_trace_cli:ratchet", "-o", out)
    assert code == 0
    assert stdout.splitlines()[:4] == [
        "4 states, 7 transitions (7 edges between distinct pairs of states), 1 initial",
        "depth 4 states (the longest shortest path from an initial state), diameter 3",
        "1 strongly connected component, the largest of 4 states",
        "1 state violating an invariant, 3 transitions violating a step property, 0 deadlocks",
    ]
    root = ET.parse(out).getroot()
    red = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"
           and any(p.get("stroke") == "#d7301f" for p in g.iter(f"{SVG}path"))]
    assert sorted("".join(t.itertext()) for g in red for t in g.iter(f"{SVG}text") if t.text == "Reset") == ["Reset"] * 3


def test_graph_refuses_big_configs(capsys, tmp_path):
    code, stdout, err = run(capsys, "graph", REPO / "spec" / "configs" / "epochgate.toml", "-o", tmp_path / "g.svg")
    assert (code, stdout) == (2, "")
    assert err == ("kraftcheck: error: the state graph of epochgate has more than 1000 states; graph draws tiny "
                   "configs only (shrink the config, or raise --max-nodes)\n")
    code, _, err = run(capsys, "graph", "--model", "tests.models:diehard", "--max-nodes", "15", "-o", tmp_path / "g.svg")
    assert (code, err) == (2, "kraftcheck: error: the state graph of diehard has more than 15 states; graph draws "
                              "tiny configs only (shrink the config, or raise --max-nodes)\n")


# ----------------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "corrupt.itf.json").write_text('{"states": [')
    (d / "empty.itf.json").write_text("")
    (d / "object.itf.json").write_text('{"vars": ["x"]}')
    (d / "nostates.itf.json").write_text('{"vars": [], "states": []}')
    (d / "tag.itf.json").write_text('{"vars": ["x"], "states": [{"x": {"#frac": "1/2"}}]}')
    (d / "missing-var.itf.json").write_text('{"vars": ["x", "y"], "states": [{"x": 1}]}')
    (d / "float.itf.json").write_text('{"vars": ["x"], "states": [{"x": 1}, {"x": 1.5}]}')
    (d / "null.itf.json").write_text('{"vars": ["x"], "states": [{"x": null}]}')
    (d / "loop.itf.json").write_text('{"vars": ["x"], "states": [{"x": 1}], "loop": 3}')
    (d / "good.itf.json").write_text(json.dumps({"vars": ["x"], "states": [{"x": 1}, {"x": 2}]}))
    (d / "kraftcheck.itf.json").write_text(json.dumps({
        "#meta": {"source": "kraftcheck", "model": "tests.models:diehard", "kind": "invariant",
                  "invariant": "NotFourGallons", "config": {"settings": {}}},
        "vars": ["small", "big"], "states": [{"#meta": {"index": 0, "action": "Init"}, "small": 0, "big": 0}]}))
    return d


CASES = [
    (["trace", "show", "{d}/absent.itf.json"], "no such trace file: {d}/absent.itf.json"),
    (["trace", "show", "{d}/corrupt.itf.json"],
     "{d}/corrupt.itf.json is not JSON: Expecting value: line 1 column 13 (char 12)"),
    (["trace", "render", "{d}/empty.itf.json", "-o", "{d}/x.svg"],
     "{d}/empty.itf.json is not JSON: Expecting value: line 1 column 1 (char 0)"),
    (["trace", "html", "{d}/object.itf.json", "-o", "{d}/x.html"],
     "{d}/object.itf.json is not an ITF trace: it has no list of states"),
    (["trace", "show", "{d}/nostates.itf.json"], "{d}/nostates.itf.json holds no states"),
    (["trace", "show", "{d}/tag.itf.json"], "{d}/tag.itf.json: state 1: unknown ITF tag in ['#frac']"),
    (["trace", "show", "{d}/missing-var.itf.json"], "{d}/missing-var.itf.json: state 1 lacks variable 'y'"),
    (["trace", "show", "{d}/float.itf.json"], "{d}/float.itf.json: state 2: ITF has no fractional numbers: 1.5"),
    (["trace", "show", "{d}/null.itf.json"], "{d}/null.itf.json: state 1: ITF has no null value"),
    (["trace", "show", "{d}/loop.itf.json"], "{d}/loop.itf.json: 'loop' must be the index of a state"),
    (["trace", "show", "{d}"], "cannot read trace file {d}: Is a directory"),
    (["trace", "render", "{d}/good.itf.json", "-o", "{d}/x.pdf"],
     "unknown output format '.pdf' for {d}/x.pdf (expected .svg, .png or .dot)"),
    (["trace", "render", "{d}/good.itf.json", "-o", "{d}/x"],
     "unknown output format '(none)' for {d}/x (expected .svg, .png or .dot)"),
    (["trace", "render", "{d}/good.itf.json"],
     "the following arguments are required: -o/--output (see 'kraftcheck trace render --help')"),
    (["trace", "replay", "{d}/good.itf.json"],
     "{d}/good.itf.json was not written by kraftcheck (another tool): replay needs a kraftcheck model, "
     "given with --model MODULE:FACTORY (and --set KEY=VALUE for its settings)"),
    (["trace", "replay", "{d}/good.itf.json", "--model", "no_such_module:f"],
     "cannot import model module 'no_such_module': No module named 'no_such_module'"),
    (["trace", "replay", "{d}/kraftcheck.itf.json", "--model", "tests.models:diehard", "--set", "gaol=4"],
     "the model rejected its config: unknown model setting 'gaol' (known: big, goal, small)"),
    (["trace", "render", "{d}/good.itf.json", "-o", "{d}/x.svg", "--model", "tests.models:nothing"],
     "module 'tests.models' has no factory 'nothing'"),
    (["trace"], "the following arguments are required: ACTION (see 'kraftcheck trace --help')"),
    (["graph", "--model", "tests.models:diehard", "-o", "{d}/g.pdf"],
     "unknown output format '.pdf' for {d}/g.pdf (expected .svg, .png or .dot)"),
    (["graph", "{d}/absent.toml", "-o", "{d}/g.svg"], "config file not found: {d}/absent.toml"),
    (["trace", "render", "{d}/good.itf.json", "-o", "{d}/good.itf.json/x.svg"],
     "cannot write {d}/good.itf.json/x.svg: File exists"),
    (["trace", "html", "{d}/good.itf.json", "-o", "{d}/good.itf.json/x.html"],
     "cannot write {d}/good.itf.json/x.html: File exists"),
]


@pytest.mark.parametrize("args, message", CASES, ids=[" ".join(a[:2]) + f" {i}" for i, (a, _) in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_2(capsys, files, args, message):
    code, out, err = run(capsys, *[a.format(d=files) for a in args])
    assert (code, out) == (2, "")
    assert err == f"kraftcheck: error: {message.format(d=files)}\n"


def test_bad_input_through_a_real_process(files):
    p = kraftcheck("trace", "replay", files / "corrupt.itf.json")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr == (f"kraftcheck: error: {files / 'corrupt.itf.json'} is not JSON: "
                        "Expecting value: line 1 column 13 (char 12)\n")


class BrokenPicture:
    """The Die Hard jugs with a picture hook that fails, and an invariant that fails on big = 2."""

    def __init__(self, config):
        from tests.models import DieHard

        self.jugs = DieHard(config)
        self.init_states, self.successors, self.describe = self.jugs.init_states, self.jugs.successors, self.jugs.describe
        self.invariants = {"NotFourGallons": self.jugs.invariants["NotFourGallons"], "Fragile": self.fragile}

    def fragile(self, state):
        return 1 / (state[1] - 2) is not None

    def picture(self, vars, previous):
        raise ZeroDivisionError("the picture failed")


def broken_picture(config=None):
    return BrokenPicture(config or {})


@pytest.mark.parametrize("command", ["render", "html", "replay", "graph"])
def test_failing_model_code_is_one_line_and_exit_1(capsys, files, tmp_path, command):
    args = {
        "render": ["trace", "render", files / "kraftcheck.itf.json", "-o", tmp_path / "x.svg"],
        "html": ["trace", "html", files / "kraftcheck.itf.json", "-o", tmp_path / "x.html"],
        "replay": ["trace", "replay", files / "kraftcheck.itf.json"],
        "graph": ["graph", "-o", tmp_path / "x.svg"],
    }[command]
    code, out, err = run(capsys, *args, "--model", "tests.test_trace_cli:broken_picture")
    if command == "replay":  # replay never draws: a one-state trace at (0, 0) is no violation
        assert (code, out) == (1, "invalid: state 1 does not violate NotFourGallons\n")
        return
    if command == "graph":  # the graph reaches big = 2, where the invariant divides by zero
        assert code == 1
        assert re.fullmatch(r"kraftcheck: error: the model raised ZeroDivisionError: division by zero "
                            r"\(test_trace_cli\.py:\d+\)\n", err), err
        return
    assert code == 1 and out == ""
    assert re.fullmatch(r"kraftcheck: error: the model raised ZeroDivisionError: the picture failed "
                        r"\(test_trace_cli\.py:\d+\)\n", err), err
