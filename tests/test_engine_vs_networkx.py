"""Random directed graphs as models: the engine must agree with networkx."""

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.bfs import explore


class GraphModel:
    """A directed graph as a model: states are nodes, one action per edge."""

    def __init__(self, graph: nx.DiGraph, starts: list[int], bad: set[int]):
        self.graph, self.starts, self.bad = graph, starts, bad
        self.invariants = {"NotBad": lambda node: node not in self.bad}

    def init_states(self):
        return list(self.starts)

    def successors(self, node):
        return [(("Edge", node, target), target) for target in sorted(self.graph.successors(node))]


@st.composite
def graph_models(draw):
    n = draw(st.integers(1, 25))
    nodes = st.integers(0, n - 1)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(draw(st.lists(st.tuples(nodes, nodes), max_size=3 * n)))
    starts = draw(st.lists(nodes, min_size=1, max_size=3))
    bad = set(draw(st.lists(nodes, max_size=3)))
    return GraphModel(graph, starts, bad)


def distances(model: GraphModel) -> dict[int, int]:
    """Shortest distance (in edges) of every reachable node from the nearest start."""
    return nx.multi_source_dijkstra_path_length(model.graph, set(model.starts))


@settings(max_examples=300, deadline=None)
@given(graph_models())
def test_reachable_states_depth_and_counts_match_networkx(model):
    r = explore(model, stop_on_violation=False, check_deadlock=False)
    dist = distances(model)
    assert r.distinct_states == len(dist)
    assert r.depth == max(dist.values()) + 1
    assert r.generated_states == len(model.starts) + sum(model.graph.out_degree(v) for v in dist)


@settings(max_examples=300, deadline=None)
@given(graph_models())
def test_counterexample_is_a_shortest_path(model):
    r = explore(model, check_deadlock=False)
    dist = distances(model)
    reachable_bad = [v for v in model.bad if v in dist]
    if not reachable_bad:
        assert r.verdict == "ok"
        return
    [cx] = r.violations
    assert cx.length == min(dist[v] for v in reachable_bad) + 1
    nodes = [s for _, s in cx.trace]
    assert nodes[0] in model.starts and nodes[-1] in model.bad
    assert all(model.graph.has_edge(a, b) for a, b in zip(nodes, nodes[1:]))


@settings(max_examples=200, deadline=None)
@given(graph_models())
def test_deadlock_is_a_nearest_sink(model):
    r = explore(model, stop_on_violation=False)
    dist = distances(model)
    sinks = [v for v in dist if model.graph.out_degree(v) == 0]
    if not sinks:
        assert r.deadlock is None
        return
    assert r.deadlock.length == min(dist[v] for v in sinks) + 1
    assert r.deadlock.trace[-1][1] in sinks
