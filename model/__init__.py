"""The Kafka state machine: KRaft controller, brokers and log directories, as a TLA+-style model.

``make_model(config)`` builds the model from a config's ``[model]`` table; the engines in
``kraftcheck.checker`` see it only through the model protocol.
"""

from .config import KNOWN as SETTINGS, MUTANTS, Settings, parse_settings
from .kraft import KRaftJBOD
from .state import ACTIONS, VARIABLES


def make_model(config: dict | None = None) -> KRaftJBOD:
    """The model for a ``[model]`` table; ``ValueError`` (one line) on an unknown key or bad value."""
    return KRaftJBOD(parse_settings(config))


__all__ = ["make_model", "KRaftJBOD", "Settings", "parse_settings", "MUTANTS", "SETTINGS", "ACTIONS", "VARIABLES"]
