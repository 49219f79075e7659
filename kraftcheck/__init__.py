"""kraftcheck: a TLA+-style model of Kafka's KRaft controller and an explicit-state model checker.

The repository's top-level folders are this package's parts: ``checker/`` (engines, CLI),
``model/`` (the Kafka state machine), ``traces/`` (counterexamples) and ``spec/`` (the TLA+
module and the configs).
"""

__version__ = "0.1.0"
