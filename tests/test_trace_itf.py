"""ITF in and out: every value kind round-trips, and traces written by Quint read back."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.traces.itf import MAX_SAFE_INT, decode, encode, read_trace, write_json_atomically
from kraftcheck.traces.trace import load_trace

# Text that UTF-8 can carry (no lone surrogates), "#"-keys included: they force a #map.
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
ints = st.one_of(st.integers(-1000, 1000), st.integers(), st.sampled_from([MAX_SAFE_INT, -MAX_SAFE_INT,
                                                                           MAX_SAFE_INT + 1, -MAX_SAFE_INT - 1]))
hashable_leaves = st.one_of(ints, st.booleans(), texts, st.none())
hashables = st.recursive(
    hashable_leaves,
    lambda inner: st.one_of(st.tuples(inner, inner), st.lists(inner, max_size=3).map(tuple),
                            st.frozensets(inner, max_size=3)),
    max_leaves=8,
)
values = st.recursive(
    hashables,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),                                  # sequence
        st.lists(inner, max_size=3).map(tuple),                       # #tup
        st.frozensets(hashables, max_size=4),                         # #set
        st.dictionaries(texts, inner, max_size=3),                    # record (or #map for "#" keys)
        st.dictionaries(hashables, inner, max_size=3),                # #map
    ),
    max_leaves=20,
)


def same(a, b) -> bool:
    """Equal, and of the same kinds all the way down (Python equates True with 1, (1,) with ...)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a) and all(
            same(k, next(j for j in b if j == k)) for k in a)
    return a == b


@settings(max_examples=300, deadline=None)
@given(values)
def test_every_value_kind_round_trips_through_a_file(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("itf") / "t.itf.json"
    write_json_atomically(path, {"vars": ["x"], "states": [{"#meta": {"index": 0}, "x": encode(value)}]})
    document = read_trace(path)
    assert same(decode(document["states"][0]["x"]), value)
    assert same(load_trace(path).steps[0].values["x"], value)


names = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=6)


@settings(max_examples=100, deadline=None)
@given(st.lists(names, min_size=1, max_size=4, unique=True).flatmap(lambda variables: st.lists(
    st.tuples(st.fixed_dictionaries({v: values for v in variables}), names, st.lists(hashables, max_size=3)),
    min_size=1, max_size=5)))
def test_whole_traces_round_trip(tmp_path_factory, steps):
    """States, action names and parameters, as the checker writes them, read back the same."""
    from kraftcheck.traces.counterexample import step_meta
    from kraftcheck.traces.itf import trace_document

    states = [state for state, _, _ in steps]
    metas = [step_meta(None)] + [step_meta((name, *params)) for _, name, params in steps[1:]]
    path = tmp_path_factory.mktemp("itf") / "t.itf.json"
    write_json_atomically(path, trace_document(states, metas, {"source": "kraftcheck", "model": "m:f"}))
    trace = load_trace(path)
    assert trace.variables == list(states[0]) and len(trace.steps) == len(steps)
    for step, (state, name, params) in zip(trace.steps, steps):
        assert all(same(step.values[v], state[v]) for v in state)
        if step.index == 0:
            assert (step.action, step.params) == ("Init", [])
        else:
            assert step.action == name and same(step.params, list(params))


@given(st.integers())
def test_unsafe_integers_are_bigints(n):
    encoded = encode(n)
    if abs(n) > MAX_SAFE_INT:
        assert encoded == {"#bigint": str(n)}
    else:
        assert encoded == n
    assert decode(json.loads(json.dumps(encoded))) == n


# A trace in the shape Quint writes (`quint run --out-itf`): every integer a #bigint, records,
# maps, sets, variants as {"tag", "value"} records, the action in mbt::actionTaken.
QUINT_TRACE = r"""{
  "#meta": {"format": "ITF", "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "bank.qnt", "status": "violation", "description": "Created by Quint on Sun Nov 22 2026",
            "timestamp": 1795000000000},
  "vars": ["balances", "pending", "log", "mbt::actionTaken", "mbt::nondetPicks"],
  "states": [
    {"#meta": {"index": 0},
     "balances": {"#map": [["alice", {"#bigint": "0"}], ["bob", {"#bigint": "0"}]]},
     "pending": {"#set": []},
     "log": [],
     "mbt::actionTaken": "init",
     "mbt::nondetPicks": {}},
    {"#meta": {"index": 1},
     "balances": {"#map": [["alice", {"#bigint": "100"}], ["bob", {"#bigint": "0"}]]},
     "pending": {"#set": [{"#tup": ["alice", "bob", {"#bigint": "30"}]}]},
     "log": [{"tag": "Deposit", "value": {"who": "alice", "amount": {"#bigint": "100"}}}],
     "mbt::actionTaken": "deposit",
     "mbt::nondetPicks": {"who": {"tag": "Some", "value": "alice"}, "amount": {"tag": "Some", "value": {"#bigint": "100"}}}},
    {"#meta": {"index": 2},
     "balances": {"#map": [["alice", {"#bigint": "-9007199254740993"}], ["bob", {"#bigint": "0"}]]},
     "pending": {"#set": []},
     "log": [{"tag": "Deposit", "value": {"who": "alice", "amount": {"#bigint": "100"}}},
             {"tag": "Withdraw", "value": {"who": "alice", "amount": {"#bigint": "9007199254741093"}}}],
     "mbt::actionTaken": "withdraw",
     "mbt::nondetPicks": {"who": {"tag": "Some", "value": "alice"}, "amount": {"tag": "None", "value": {"#tup": []}}}}
  ]
}"""


def test_a_quint_trace_reads_back(tmp_path):
    path = tmp_path / "bank.itf.json"
    path.write_text(QUINT_TRACE)
    trace = load_trace(path)
    assert not trace.written_by_kraftcheck
    assert trace.meta["source"] == "bank.qnt" and trace.meta["timestamp"] == 1795000000000  # unknown keys kept
    assert trace.variables == ["balances", "pending", "log", "mbt::actionTaken", "mbt::nondetPicks"]
    assert [s.action for s in trace.steps] == ["init", "deposit", "withdraw"]
    assert [s.label for s in trace.steps] == ["init", "deposit(who=alice, amount=100)", "withdraw(who=alice)"]
    assert trace.steps[0].values["balances"] == {"alice": 0, "bob": 0}
    assert trace.steps[1].values["pending"] == frozenset({("alice", "bob", 30)})
    assert trace.steps[2].values["balances"]["alice"] == -(2**53) - 1
    assert trace.steps[2].values["log"][1] == {"tag": "Withdraw", "value": {"who": "alice", "amount": 2**53 + 101}}
    assert trace.steps[1].changed == ["balances", "pending", "log", "mbt::actionTaken", "mbt::nondetPicks"]
    assert trace.steps[2].changed == ["balances", "pending", "log", "mbt::actionTaken", "mbt::nondetPicks"]
    assert trace.verdict == "the last state (3) is a violation"


def test_an_apalache_trace_with_a_loop_reads_back(tmp_path):
    path = tmp_path / "loop.itf.json"
    path.write_text(json.dumps({
        "#meta": {"format": "ITF", "description": "Created by Apalache"},
        "params": ["N"], "vars": ["x", "seen"], "loop": 1,
        "states": [{"#meta": {"index": 0}, "x": 0, "seen": {"#set": []}},
                   {"#meta": {"index": 1}, "x": 1, "seen": {"#set": [0]}},
                   {"#meta": {"index": 2}, "x": 0, "seen": {"#set": [0, 1]}}],
    }))
    trace = load_trace(path)
    assert trace.loop == 1 and [s.action for s in trace.steps] == [None, None, None]
    assert [s.label for s in trace.steps] == ["step 1", "step 2", "step 3"]
    assert trace.steps[2].values["seen"] == frozenset({0, 1}) and trace.steps[2].changed == ["x", "seen"]
