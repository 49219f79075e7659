"""Traces this user's kraftcheck wrote, told from all others without trusting their data.

A trace names the model it was written from (``#meta.model``), and reading it with that model
imports the model's code.  A data file must never decide what code runs, so a trace naming a
model kraftcheck does not ship needs ``--model`` on the command line, except when the trace is
one this user's own kraftcheck wrote: as Jupyter trusts the notebooks its user saved,
kraftcheck signs each counterexample it writes with an HMAC-SHA256 under a secret key of the
user's (``$XDG_CONFIG_HOME/kraftcheck/trace-key``, else ``~/.config/...``; mode 0600, made on
first use), and trusts the model a trace names when the signature is right.  An edited trace,
a trace from another user or machine, or an unsigned one still needs ``--model``.

The signature covers the whole document but itself: its JSON with sorted keys, ASCII only,
no spaces (:func:`_canonical`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

#: ``#meta`` key of the signature, and the scheme its value starts with.
SIGNATURE_KEY = "signature"
SCHEME = "hmac-sha256:"


def key_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "kraftcheck" / "trace-key"


def _key(create: bool) -> bytes | None:
    """The user's key; made when missing and ``create``.  None when it cannot be had: traces are
    then written unsigned, and read as untrusted."""
    path = key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)  # whole or not at all, and the first process to make it wins
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
        return _read_key(path)
    except OSError:
        return None


def _read_key(path: Path) -> bytes | None:
    text = path.read_text(encoding="ascii", errors="replace").strip()
    return text.encode("ascii", errors="replace") if len(text) >= 32 else None


def _canonical(document: dict[str, Any]) -> bytes:
    meta = {k: v for k, v in document.get("#meta", {}).items() if k != SIGNATURE_KEY}
    unsigned = {**document, "#meta": meta}
    return json.dumps(unsigned, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def sign(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its ``#meta`` signed with this user's key (unchanged when there is none)."""
    key = _key(create=True)
    if key is None:
        return document
    digest = hmac.new(key, _canonical(document), hashlib.sha256).hexdigest()
    return {**document, "#meta": {**document.get("#meta", {}), SIGNATURE_KEY: SCHEME + digest}}


def signed_here(document: dict[str, Any]) -> bool:
    """Whether ``document`` is, byte for byte in its values, a trace this user's kraftcheck signed."""
    meta = document.get("#meta")
    signature = meta.get(SIGNATURE_KEY) if isinstance(meta, dict) else None
    if not isinstance(signature, str) or not signature.startswith(SCHEME):
        return False
    key = _key(create=False)
    if key is None:
        return False
    try:
        expected = hmac.new(key, _canonical(document), hashlib.sha256).hexdigest()
    except (TypeError, ValueError):
        return False
    return hmac.compare_digest(expected, signature[len(SCHEME):])
