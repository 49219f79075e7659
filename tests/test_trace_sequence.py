"""Sequence charts: the Kafka model's chart of a trace, the generic drawing, the CLI and the page."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from kraftcheck.checker.protocol import ModelProtocolError
from kraftcheck.model import MUTANTS, make_model
from kraftcheck.model.state import NETWORK, REGISTER
from kraftcheck.traces.counterexample import state_variables, step_meta
from kraftcheck.traces.itf import trace_document, write_json_atomically
from kraftcheck.traces.sequence import Message, _checked, chart_of, sequence_graph
from kraftcheck.traces.trace import load_trace
from tests.test_kafka_scenarios import step
from tests.trace_helpers import REPO, kafka_traces, kraftcheck, mutant_params

FINDING_1 = REPO / "spec" / "findings" / "heartbeat_LeaderOnOnlineDir.itf.json"


def kafka_model():
    return make_model({})


def test_finding_1_as_a_chart():
    chart = chart_of(load_trace(FINDING_1), kafka_model())
    assert chart.lanes == ["controller", "b0"]
    assert chart.messages == [
        Message("Register(b0, incarnation 1, dirs ['dir-0', 'dir-1'])", "b0", "controller", 2, 3, False),
        Message("RegisterResponse(b0, incarnation 1, epoch 1)", "controller", "b0", 3, 4, False),
        Message("Heartbeat(b0, epoch 1, offline [])", "b0", "controller", 5, 6, False),
        Message("Heartbeat(b0, epoch 1, offline ['dir-0'])", "b0", "controller", 10, 15, False),
        Message("AssignReplicasToDirs(b0, epoch 1, p0 -> dir-0)", "b0", "controller", 11, 14, False),
        Message("AssignReplicasToDirsResponse(b0, epoch 1, p0 -> dir-0, ok)", "controller", "b0", 14, None, False),
        Message("HeartbeatResponse(b0, epoch 1, offline ['dir-0'])", "controller", "b0", 15, None, False),
    ]
    assert chart.notes == {
        (1, "b0"): ["incarnation 1", "STARTING"],
        (3, "controller"): ["b0 epoch 1", "b0 dirs [dir-0, dir-1]"],
        (4, "b0"): ["RUNNING", "epoch 1"],
        (6, "controller"): ["b0 unfenced"],
        (7, "controller"): ["p0 created: leader 0, isr [0]"],
        (8, "b0"): ["p0 log on dir-0", "queued p0 → dir-0"],
        (9, "b0"): ["dir-0 FAILED"],
        (12, "b0"): ["OFF"],
        (13, "controller"): ["b0 fenced", "p0 leader -1"],
        (14, "controller"): ["p0 dirs ['dir-0']"],
        (15, "controller"): ["b0 unfenced", "b0 dirs [dir-1]", "p0 leader 0"],
    }


def lossy_run(tmp_path):
    """Broker 0's first registration is lost; it sends another, which the controller handles."""
    model = make_model({"brokers": 1, "replication_factor": 1, "max_losses": 1, "semantics": "kip"})
    s0 = next(iter(model.init_states()))
    s1 = step(model, s0, "BrokerStarts", 0, ())
    s2 = step(model, s1, "BrokerSendsRegistration", 0)
    s3 = step(model, s2, "NetworkLosesMessage", match=lambda m: m[0] == REGISTER)
    s4 = step(model, s3, "BrokerSendsRegistration", 0)
    s5 = step(model, s4, "ControllerHandlesRegistration", match=lambda m: m[0] == REGISTER)
    (register,) = s2[NETWORK]
    actions = [None, ("BrokerStarts", 0, ()), ("BrokerSendsRegistration", 0), ("NetworkLosesMessage", register),
               ("BrokerSendsRegistration", 0), ("ControllerHandlesRegistration", register)]
    states = [s0, s1, s2, s3, s4, s5]
    document = trace_document([state_variables(model, s) for s in states], [step_meta(a, model) for a in actions],
                              {"source": "kraftcheck", "model": "kraftcheck.model:make_model",
                               "config": {"settings": dict(model.settings.__dict__)}})
    path = tmp_path / "lossy.itf.json"
    write_json_atomically(path, document)
    return model, path


def test_a_lost_message_ends_in_a_cross(tmp_path):
    model, path = lossy_run(tmp_path)
    trace = load_trace(path)
    chart = chart_of(trace, model)
    label = "Register(b0, incarnation 1, dirs ['dir-0', 'dir-1'])"
    assert chart.messages == [
        Message(label, "b0", "controller", 2, 3, True),
        Message(label, "b0", "controller", 4, 5, False),
        Message("RegisterResponse(b0, incarnation 1, epoch 1)", "controller", "b0", 5, None, False),
    ]
    source = sequence_graph(trace, chart).source
    # the lost one: a dashed arrow from b0 at step 2 to a cross in row 3
    assert re.search(r'\tr2_lane1 -> m0 \[[^\]]*style=dashed', source)
    assert '\tm0 [label=<<FONT COLOR="#b03a2e"><B>✕ lost</B></FONT>> shape=plaintext]\n\t\tr3_step\n' in source
    # the one delivered: from b0 at step 4 to the controller at step 5; the answer still in flight
    assert re.search(r"\tr4_lane1 -> r5_lane0 \[[^\]]*constraint=false", source)
    assert re.search(r"\tr5_lane0 -> m2 \[", source) and "<I>in flight</I>" in source


@pytest.mark.parametrize("mutant", mutant_params(MUTANTS))
def test_every_mutants_trace_charts_every_message_once(mutant):
    """For every mutant's trace: one arrow per message that entered the network, each received
    (or lost) after it was sent, and the lanes the controller and each broker."""
    model = kafka_model()
    trace = load_trace(kafka_traces()[mutant][0])
    chart = chart_of(trace, model)
    brokers = len(trace.steps[0].values["brokerStatus"])
    assert chart.lanes == ["controller"] + [f"b{b}" for b in range(brokers)], mutant
    entered = sum(sum((Counter(b.values["network"]) - Counter(a.values["network"])).values())
                  for a, b in zip(trace.steps, trace.steps[1:]))
    assert len(chart.messages) == entered, mutant
    for m in chart.messages:
        assert m.delivered is None or m.delivered > m.sent, (mutant, m)
        assert (m.sender == "controller") != (m.receiver == "controller"), (mutant, m)
        assert m.lost == (m.delivered is not None and trace.steps[m.delivered].action == "NetworkLosesMessage")


def test_render_sequence_from_the_command_line(tmp_path):
    dot, svg = tmp_path / "chart.dot", tmp_path / "chart.svg"
    p = kraftcheck("trace", "render", FINDING_1, "-o", dot, "--style", "sequence")
    assert (p.returncode, p.stdout, p.stderr) == (0, f"wrote {dot}\n", "")
    source = dot.read_text()
    assert "head_lane0 [label=<<B>controller</B>>" in source and "head_lane1 [label=<<B>b0</B>>" in source
    assert 'state 16 violates the invariant LeaderOnOnlineDir' in source
    assert len(re.findall(r"r\d+_lane\d -> r\d+_lane\d \[[^\]]*xlabel=", source)) == 5  # five messages received
    p = kraftcheck("trace", "render", FINDING_1, "-o", svg, "--style", "sequence")
    assert p.returncode == 0 and svg.read_text().lstrip().startswith("<?xml")


def test_the_compact_style_is_the_default(tmp_path):
    default, compact = tmp_path / "a.dot", tmp_path / "b.dot"
    assert kraftcheck("trace", "render", FINDING_1, "-o", default).returncode == 0
    assert kraftcheck("trace", "render", FINDING_1, "-o", compact, "--style", "compact").returncode == 0
    assert default.read_text() == compact.read_text() and "head_lane0" not in default.read_text()


def test_a_model_without_a_chart_is_one_line(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", tmp_path, "--quiet", "--no-picture")
    assert p.returncode == 12
    signed = tmp_path / "diehard_NotFourGallons.itf.json"
    # the trace this user's kraftcheck wrote: its model is trusted, and draws no chart
    p = kraftcheck("trace", "render", signed, "-o", tmp_path / "x.svg", "--style", "sequence")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: a sequence chart needs a model that draws one (the model's sequence "
                        "member); this trace's model does not, or none was given (--model MODULE:FACTORY)\n")
    # without its signature, the model it names is not imported
    document = json.loads(signed.read_text())
    del document["#meta"]["signature"]
    trace = tmp_path / "unsigned.itf.json"
    trace.write_text(json.dumps(document))
    p = kraftcheck("trace", "render", trace, "-o", tmp_path / "x.svg", "--style", "sequence")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (f"kraftcheck: error: a sequence chart needs the trace's model: {trace}: the trace names "
                        "model tests.models:diehard, which kraftcheck does not ship, and it is not a trace this user's kraftcheck wrote as it stands; pass --model "
                        "tests.models:diehard to trust it\n")
    p = kraftcheck("trace", "render", trace, "-o", tmp_path / "x.svg", "--style", "sequence",
                   "--model", "tests.models:diehard")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: a sequence chart needs a model that draws one (the model's sequence "
                        "member); this trace's model does not, or none was given (--model MODULE:FACTORY)\n")
    assert not (tmp_path / "x.svg").exists()
    p = kraftcheck("trace", "render", trace, "-o", tmp_path / "x.svg", "--style", "chart")
    assert p.returncode == 2 and "argument --style: invalid choice: 'chart' (choose from 'compact', 'state', 'sequence')" in p.stderr


def test_a_trace_the_kafka_chart_does_not_take(tmp_path):
    edited = tmp_path / "edited.itf.json"
    edited.write_text(FINDING_1.read_text().replace('"network": []', '"network": [7]', 1))
    p = kraftcheck("trace", "render", edited, "-o", tmp_path / "x.dot", "--style", "sequence")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (f"kraftcheck: error: the model's sequence chart does not take {edited}: "
                        "the network is not a list of messages\n")


@pytest.mark.parametrize("drawn, message", [
    ([], "the model's sequence() returned a list, not a dict of lanes, messages and notes"),
    ({"lanes": ["a", "a"]}, "the model's sequence() returned no list of distinct lane names"),
    ({"lanes": ["a"], "messages": [{"label": "m", "sender": "a", "receiver": "z", "sent": 0, "delivered": None}]},
     "the model's sequence() returned a message it cannot draw: {'label': 'm', 'sender': 'a', 'receiver': 'z', "
     "'sent': 0, 'delivered': None}"),
    ({"lanes": ["a"], "notes": [{"step": 9, "lane": "a", "text": "x"}]},
     "the model's sequence() returned a note it cannot draw: {'step': 9, 'lane': 'a', 'text': 'x'}"),
])
def test_a_malformed_chart_is_the_models_fault(drawn, message):
    with pytest.raises(ModelProtocolError) as e:
        _checked(drawn, steps=3)
    assert str(e.value) == message


def test_the_page_holds_the_chart(tmp_path):
    page = tmp_path / "page.html"
    assert kraftcheck("trace", "html", FINDING_1, "-o", page).returncode == 0
    text = page.read_text()
    chart = text[text.index('<details class="sequence" id="sequence-chart">'):text.index("<main>")]
    assert chart.count("<svg") == 1 and ">controller<" in chart and "✕" not in chart
    assert "in flight" in chart
    bare = tmp_path / "bare.html"
    assert kraftcheck("trace", "html", FINDING_1, "-o", bare, "--no-picture").returncode == 0
    assert 'id="sequence-chart"' not in bare.read_text()


def test_the_chart_hook_gets_each_whole_step():
    """Action, values, parameters and label: what the trace says of each step."""
    seen = []

    class Recorder:
        def sequence(self, steps):
            seen.extend(steps)
            return {"lanes": ["a"], "messages": [], "notes": []}

    trace = load_trace(FINDING_1)
    chart_of(trace, Recorder())
    assert len(seen) == len(trace.steps) == 16
    assert [type(step).__name__ for step in seen[:1]] == ["ChartStep"]
    assert (seen[0].action, seen[0].params, seen[0].label) == ("Init", [], "Init")
    registration = seen[3]
    assert registration.action == "ControllerHandlesRegistration"
    assert registration.params == trace.steps[3].params and len(registration.params) == 1
    assert registration.label == trace.steps[3].label and registration.values == trace.steps[3].values
