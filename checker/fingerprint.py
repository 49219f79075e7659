"""64-bit state fingerprints that are equal in every process and on every machine.

Python's built-in ``hash`` is not usable: ``hash(-1) == hash(-2)``, so states that differ
only in a ``-1`` (a common "no leader") and a ``-2`` collide every time, and ``str`` hashes
are salted per process, so a Spark executor would disagree with the driver.

A fingerprint is XXH3-64 over the ``marshal`` encoding of the state.  Marshal format 2
is used on purpose: from format 3 on, marshal writes back-references for objects that are
shared in memory, so two equal states built differently would encode differently.

States are made of ints, bools, ``None``, strings, bytes, tuples (``NamedTuple``
included) and frozensets.  A frozenset's iteration order depends on how it was built and, for
strings, on the process's hash seed; but marshal (from Python 3.11, bpo-37596) writes a set's
elements sorted by their own marshal bytes, so equal frozensets encode alike in every process,
and a state holding one costs no more than a state of tuples.
"""

from __future__ import annotations

import marshal
from typing import Any, Callable

from xxhash import xxh3_64_intdigest

from .protocol import STATE_TYPES_HINT, ModelProtocolError, state_problem

_MARSHAL_VERSION = 2


def fingerprint(state: Any) -> int:
    """The 64-bit fingerprint of ``state`` (an int in ``[0, 2**64)``)."""
    try:
        return xxh3_64_intdigest(marshal.dumps(state, _MARSHAL_VERSION))
    except ValueError:
        pass
    # marshal refuses tuple subclasses such as NamedTuple: encode their plain form.
    # A NamedTuple of plain fields needs only its top level converted.
    try:
        return xxh3_64_intdigest(marshal.dumps(tuple(state), _MARSHAL_VERSION))
    except (ValueError, TypeError):
        pass
    try:
        return xxh3_64_intdigest(marshal.dumps(plain(state), _MARSHAL_VERSION))
    except TypeError:
        problem = state_problem(state) or "a value marshal cannot encode"
        raise ModelProtocolError(f"a state holds {problem}: {STATE_TYPES_HINT}") from None


def plain(value: Any) -> Any:
    """``value`` with every tuple subclass turned into a plain tuple and every ``int`` or ``str``
    subclass (an ``IntEnum``) into its plain value, inside frozensets too, ready for marshal."""
    if isinstance(value, tuple):
        return tuple(plain(item) for item in value)
    if isinstance(value, frozenset):
        return frozenset(plain(item) for item in value)
    kind = type(value)
    if value is None or kind in (int, bool, str, bytes):
        return value
    for base in (int, str, bytes):
        if isinstance(value, base):
            return base(value)
    raise TypeError(
        f"states must be made of ints, bools, None, strings, bytes, tuples and frozensets; found {type(value).__name__}: {value!r}"
    )


def fingerprint_function(canonical: Callable[[Any], Any] | None = None) -> Callable[[Any], int]:
    """A function from state to fingerprint, through the model's symmetry reduction when it has one.

    Engines inline the common case (no symmetry, states that marshal as they are) and
    call this only otherwise.
    """
    if canonical is None:
        return fingerprint
    return lambda state: fingerprint(canonical(state))


def marshals_directly(state: Any) -> bool:
    """Whether ``state`` marshals as it is (plain tuples), so the fast path applies."""
    try:
        marshal.dumps(state, _MARSHAL_VERSION)
    except ValueError:
        return False
    return True
