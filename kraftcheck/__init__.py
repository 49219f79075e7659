"""kraftcheck: a TLA+-style model of Kafka's KRaft controller and an explicit-state model checker.

The repository's top-level folders are this package's parts: ``checker/`` (engines, CLI),
``model/`` (the Kafka state machine), ``traces/`` (counterexamples) and ``spec/`` (the TLA+
module and the configs).

``kraftcheck.check(config_or_model, **settings)`` runs a search from Python and returns its
``CheckResult``, which writes (``write_trace``) and prints (``trace_text``) its counterexamples
(``checker/api.py``).
"""

__version__ = "0.1.0"

__all__ = ["check", "Result", "CheckResult", "Counterexample", "__version__"]


def __getattr__(name: str):
    # kraftcheck.check and its results, imported when first used: `import kraftcheck`
    # (the CLI reading __version__) loads no engine
    if name in ("check", "Result", "CheckResult", "Counterexample"):
        from kraftcheck.checker import api

        return getattr(api, name)
    raise AttributeError(f"module 'kraftcheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
