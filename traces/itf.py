"""The Informal Trace Format (ITF) of Apalache and Quint: values and whole traces, in and out.

An ITF trace is ``{"#meta": {...}, "vars": [...], "states": [{"#meta": {...}, var: value}],
"loop": i?}``.  Values are JSON numbers, strings and booleans, lists (sequences), JSON
objects (records), and the tagged forms ``{"#tup": [...]}``, ``{"#set": [...]}``,
``{"#map": [[k, v], ...]}``, ``{"#bigint": "..."}`` (any integer outside +-(2**53 - 1),
which JSON readers would round) and ``{"#unserializable": "..."}``.

Python side: tuples are ``#tup``, lists are sequences, sets and frozensets are ``#set``,
dicts with string keys are records and other dicts ``#map``, ``None`` is the
unserializable ``"None"``.  Reading gives back hashable values where hashing is needed
(set elements and map keys).
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

from .text import excerpt

#: Largest integer a JSON number carries exactly (2**53 - 1): beyond it, ``#bigint``.
MAX_SAFE_INT = 2**53 - 1
#: Deepest nesting of arrays and objects a trace file may have, the document itself counted
#: (a checker's trace is about 10 deep).  Reading, comparing and drawing values recurse,
#: and a bound here keeps them far from Python's recursion limit.
MAX_NESTING = 100
#: Largest trace file read, in bytes: a file without end (``/dev/zero``) must not take all memory.
MAX_TRACE_BYTES = 512_000_000
#: Most digits of an integer in a trace (a JSON number or a ``#bigint``): Python's own limit
#: on converting between integers and decimal strings.
MAX_DIGITS = 4300


class TraceFormatError(ValueError):
    """A file that is not a valid ITF trace."""


def encode(value: Any) -> Any:
    """A Python value as an ITF value."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [encode(v) for v in value]
        return {"#set": sorted(items, key=_sort_key)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("#") for k in value):
            return {k: encode(v) for k, v in value.items()}
        pairs = [[encode(k), encode(v)] for k, v in value.items()]
        return {"#map": sorted(pairs, key=lambda kv: _sort_key(kv[0]))}
    if value is None:
        return {"#unserializable": "None"}
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as ITF")


def decode(value: Any) -> Any:
    """An ITF value as a Python value (the inverse of :func:`encode`)."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise TraceFormatError(f"ITF has no fractional numbers: {excerpt(repr(value))}")
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, body), = value.items()
            if tag == "#bigint":
                return _bigint(body)
            if tag == "#tup":
                return tuple(decode(v) for v in _list(tag, body))
            if tag == "#set":
                return frozenset(freeze(decode(v)) for v in _list(tag, body))
            if tag == "#map":
                pairs = _list(tag, body)
                if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                    raise TraceFormatError("#map must hold a list of [key, value] pairs")
                return {freeze(decode(k)): decode(v) for k, v in pairs}
            if tag == "#unserializable":
                if not isinstance(body, str):
                    raise TraceFormatError(f"#unserializable must hold a string, not {type(body).__name__}")
                return None if body == "None" else body
        if any(k.startswith("#") for k in value):
            raise TraceFormatError(f"unknown ITF tag in {excerpt(repr(sorted(value)))}")
        return {k: decode(v) for k, v in value.items()}
    if value is None:
        raise TraceFormatError("ITF has no null value")
    raise TraceFormatError(f"not an ITF value: {excerpt(repr(value))}")


_SCALARS = frozenset((bool, int, str))  # as JSON reads them: never a subclass


def _bigint(body: Any) -> int:
    match = _DECIMAL.fullmatch(body) if isinstance(body, str) else None
    if match is None:
        raise TraceFormatError(f"#bigint must hold a decimal integer string, not {excerpt(repr(body))}")
    digits = len(match.group(1))
    if digits > MAX_DIGITS:
        raise TraceFormatError(f"#bigint holds an integer of {digits:,} digits, more than a trace may hold ({MAX_DIGITS:,})")
    return int(body)


_DECIMAL = re.compile(r"[+-]?0*([0-9]+)")


def freeze(value: Any) -> Any:
    """A hashable form of a decoded value: lists become tuples, dicts sorted pair tuples, and so
    inside tuples (a set element may be a tuple holding a list)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((freeze(k), freeze(v)) for k, v in value.items()), key=repr))
    return value


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (for messages about a file)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "a number", float: "a number", str: "a string", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__)


def _list(tag: str, body: Any) -> list:
    if not isinstance(body, list):
        raise TraceFormatError(f"{tag} must hold a list, not {type(body).__name__}")
    return body


def _sort_key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True)


def trace_document(
    states: list[dict[str, Any]],
    steps: list[dict[str, Any] | None],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """The ITF document of a trace: ``states[i]`` is variable -> Python value, ``steps[i]``
    the ``#meta`` entries of the step that led to state ``i`` (``None`` for the first)."""
    variables = list(states[0]) if states else []
    document_states = []
    for index, (state, step) in enumerate(zip(states, steps)):
        state_meta = {"index": index, **(step or {})}
        document_states.append({"#meta": state_meta, **{k: encode(v) for k, v in state.items()}})
    return {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            **meta,
        },
        "vars": variables,
        "states": document_states,
    }


def write_json_atomically(path: str | os.PathLike, document: Any) -> Path:
    """Write JSON so that a reader never sees a half-written file, and a failure leaves the old one
    (:func:`write_atomically`)."""

    def dump(out) -> None:
        json.dump(document, out, indent=1, ensure_ascii=False)
        out.write("\n")

    return write_atomically(path, dump)


def write_text_atomically(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` as :func:`write_json_atomically` writes JSON."""
    return write_atomically(path, lambda out: out.write(text))


def write_atomically(path: str | os.PathLike, write: Callable[[IO[str]], Any]) -> Path:
    """Call ``write`` on a UTF-8 text file so that a reader never sees a half-written file, and a
    failure leaves the old one.

    The text goes to a temporary file in the target's directory, renamed over the target.
    A symbolic link is written through: its target is replaced and the link stays.  A path
    that is not a regular file (``/dev/stdout``, a named pipe) is written in place.  A new file
    gets the permissions the umask leaves (as ``open`` gives them); a replaced file keeps its own.
    """
    import stat

    path = Path(path)
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISFIFO(existing.st_mode):
        # a named pipe: written when some process reads it, an error at once when none does
        # (rather than waiting forever, after the search, for a reader that never comes)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise OSError(e.errno, "it is a named pipe that no process reads") from None
            raise
        os.set_blocking(descriptor, True)
        with open(descriptor, "w", encoding="utf-8") as out:
            write(out)
        return path
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(path, "w", encoding="utf-8") as out:  # IsADirectoryError for a directory
            write(out)
        return path
    target = Path(os.path.realpath(path))
    if existing is not None:
        mode = stat.S_IMODE(existing.st_mode)
    else:
        umask = os.umask(0o077)  # read by setting it; set back at once
        os.umask(umask)
        mode = 0o666 & ~umask
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), mode)
            write(out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_trace(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate an ITF file; values stay in their ITF form (see :func:`decode`)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_TRACE_BYTES + 1)
        if len(data) > MAX_TRACE_BYTES:
            raise _NotInTrace(f"it is larger than a trace may be ({MAX_TRACE_BYTES / 1e6:,.0f} MB)")
        document = json.loads(data.decode("utf-8"), parse_int=_parse_int, parse_constant=_parse_constant)
    except FileNotFoundError:
        raise TraceFormatError(f"no such trace file: {path}") from None
    except OSError as e:
        raise TraceFormatError(f"cannot read trace file {path}: {e.strerror}") from None
    except _NotInTrace as e:
        raise TraceFormatError(f"{path} is not a trace: {e}") from None
    except RecursionError:
        raise TraceFormatError(f"{path} is not a trace: it is nested more than {MAX_NESTING} levels deep") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TraceFormatError(f"{path} is not JSON: {e}") from None
    if _nested_deeper_than(document, MAX_NESTING):
        raise TraceFormatError(f"{path} is not a trace: it is nested more than {MAX_NESTING} levels deep")
    if not isinstance(document, dict) or not isinstance(document.get("states"), list):
        raise TraceFormatError(f"{path} is not an ITF trace: it has no list of states")
    variables = document.get("vars", [])
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise TraceFormatError(f"{path}: 'vars' must be a list of variable names")
    for i, state in enumerate(document["states"]):
        if not isinstance(state, dict):
            raise TraceFormatError(f"{path}: state {i + 1} is not a JSON object")
        missing = [v for v in variables if v not in state]
        if missing:
            raise TraceFormatError(f"{path}: state {i + 1} lacks variable {excerpt(repr(missing[0]))}")
    loop = document.get("loop")
    if loop is not None and not (type(loop) is int and 0 <= loop < len(document["states"])):
        raise TraceFormatError(f"{path}: 'loop' must be the index of a state")
    return document


class _NotInTrace(Exception):
    """JSON that no trace holds: a number past what the readers take, or a non-JSON constant."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _NotInTrace(f"it holds an integer of {digits:,} digits, more than a trace may hold ({MAX_DIGITS:,})")
    return int(text)


def _parse_constant(name: str):
    # Python's json reads NaN, Infinity and -Infinity, which JSON does not have
    raise _NotInTrace(f"it holds {name}, which is not JSON")


def _nested_deeper_than(document: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (the document is level 1).
    A loop, not recursion: this is what keeps the recursive readers safe."""
    if type(document) is not list and type(document) is not dict:
        return False
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if type(value) is dict else value
        stack.extend((v, depth + 1) for v in children if type(v) is list or type(v) is dict)
    return False
