"""What a check writes besides standard output: traces (and their pictures) and the JSON
summary; and the checks, before a search starts, that each can be written."""

from __future__ import annotations

import errno
import os
import re
import stat
import traceback
from pathlib import Path

from .config import CheckConfig, ConfigError
from .errors import error, model_failure
from .result import DEADLOCK_NAME, Result

DEFAULT_TRACE_DIR = "out"


#: Longest file name most file systems take, in bytes.
MAX_FILE_NAME = 255


#: What ``write_json_atomically`` adds to a file's name for its temporary file.
TEMPORARY_NAME_EXTRA = 10


def check_outputs(model, config: CheckConfig, trace_dir: Path, summary: str | None, junit: str | None = None) -> None:
    """Bad input, before the search starts, when its results could not be written: the trace
    directory, the summary's or the JUnit report's path is not writable, or a trace's name would
    be too long."""
    problem = unwritable(trace_dir, directory=True)
    if problem:
        raise ConfigError(f"cannot write traces to {trace_dir}: {problem}")
    for path, what in ((summary, "the summary"), (junit, "the JUnit report")):
        if path is not None:
            problem = unwritable(Path(path), directory=False)
            if problem:
                raise ConfigError(f"cannot write {what} to {path}: {problem}")
    try:
        names = [*model.invariants, *(getattr(model, "action_invariants", None) or {}), DEADLOCK_NAME]
    except Exception:
        return  # the search says what is wrong with the model
    longest = max((trace_file_name(config, str(name)) for name in names), key=lambda n: len(os.fsencode(n)))
    if len(os.fsencode(longest)) + TEMPORARY_NAME_EXTRA > MAX_FILE_NAME:
        raise ConfigError(f"cannot write traces to {trace_dir}: the name {longest[:60]}... would be longer than "
                          f"{MAX_FILE_NAME - TEMPORARY_NAME_EXTRA} bytes (rename the config file)")


def refuse_replacing(inputs: list[str], outputs: list[tuple[str, str | None]],
                     traces: list[tuple[CheckConfig, object]] = (), trace_dir: Path | None = None) -> None:
    """Bad input, before the search starts, when an output (``(what, path)``, e.g. ``("--json",
    path)``) is the same file as an input (a config, a suite) or as another output, or as a trace
    the search may write (each ``(config, model)`` with its properties' trace files in ``trace_dir``)."""
    claimed: dict[str, str] = {}

    def claim(path: str, what: str) -> None:
        key = os.path.realpath(path)
        if key in claimed:
            raise ConfigError(f"{what} would replace {claimed[key]}: give it a path of its own")
        claimed[key] = what

    for path in inputs:
        if path and not path.startswith("<"):
            claimed.setdefault(os.path.realpath(path), f"the input {path}")
    if trace_dir is not None:
        for config, model in traces:
            try:
                names = [*model.invariants, *(getattr(model, "action_invariants", None) or {}), DEADLOCK_NAME]
            except Exception:
                continue  # the search says what is wrong with the model
            for name in names:
                trace = str(trace_dir / trace_file_name(config, str(name)))
                claimed.setdefault(os.path.realpath(trace), f"the trace {trace}")
                picture = trace.removesuffix(".itf.json") + ".svg"
                claimed.setdefault(os.path.realpath(picture), f"the picture {picture}")
    for what, path in outputs:
        if path is not None:
            claim(path, f"{what} {path}")


def unwritable(path: Path, *, directory: bool) -> str | None:
    """Why ``path`` (a directory to write files in, or a file to write) cannot be written, or None.

    A missing directory is created when the first file is written: its nearest existing
    ancestor must then let it be.  A file is replaced in its directory (through a symbolic
    link, in the link's target's), except one that is not a regular file (``/dev/stdout``, a
    named pipe), which is written in place."""
    path = Path(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
        if directory and os.path.islink(path):  # a dangling link: no folder can be made there
            return "it is a symbolic link to a missing folder"
    except OSError as e:
        return e.strerror or str(e)
    if mode is not None:
        if directory:
            return _can_create_in(path) if stat.S_ISDIR(mode) else os.strerror(errno.ENOTDIR)
        if stat.S_ISDIR(mode):
            return os.strerror(errno.EISDIR)
        if not stat.S_ISREG(mode):
            return None if os.access(path, os.W_OK) else os.strerror(errno.EACCES)
    if not directory:
        path = Path(os.path.realpath(path)).parent
    while True:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            if path == path.parent:
                return os.strerror(errno.ENOENT)
            path = path.parent
            continue
        except OSError as e:
            return e.strerror or str(e)
        return _can_create_in(path) if stat.S_ISDIR(mode) else os.strerror(errno.ENOTDIR)


def _can_create_in(directory: Path) -> str | None:
    """Why files cannot be created in an existing directory, or None."""
    if os.access(directory, os.W_OK | os.X_OK):
        return None
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return os.strerror(errno.EROFS)
    except OSError:
        pass
    return os.strerror(errno.EACCES)


def trace_file_name(config: CheckConfig, name: str) -> str:
    """``<config>[,<overrides>]_<name>.itf.json``: the run's label, so that runs of one config
    with other ``--set`` overrides (another mutant) keep their own traces."""
    safe_name = re.sub(r"[^\w.=,+-]", "-", name)
    return f"{config.run_label}_{safe_name}.itf.json"


def write_traces(model, config: CheckConfig, result: Result, trace_dir: Path, *, picture: bool = True,
                 meta_for=None) -> dict[str, str | None]:
    """Write every counterexample as ITF; return invariant name -> path (None: not written).
    ``meta_for(counterexample)``: more ``#meta`` entries for its trace (a simulation's walk).

    A trace that cannot be written (the disk, or the model's ``describe`` raising) is one
    line on stderr; the others are written all the same."""
    from kraftcheck.traces.counterexample import write_counterexample
    from kraftcheck.traces.render import svg_beside

    meta = {"model": config.model, "config": config.to_json()}
    paths: dict[str, str | None] = {}
    for cx in result.counterexamples:
        path = trace_dir / trace_file_name(config, cx.name)
        paths[cx.name] = None
        try:
            write_counterexample(path, model, cx, {**meta, **(meta_for(cx) if meta_for else {})})
        except KeyboardInterrupt:
            raise
        except OSError as e:
            error(f"cannot write trace to {path}: {e.strerror or e}")
            continue
        except BaseException as e:  # describe(), describe_action(), or a value ITF cannot hold
            error(f"cannot write the trace of {cx.name}: {_unwritable_value(e)}")
            continue
        paths[cx.name] = str(path)
        if picture:
            try:
                svg_beside(path, model)  # X.svg beside X.itf.json when graphviz's dot is installed
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # svg_beside warns about what it catches; not sys.exit()
                error(f"cannot draw {path}: {model_failure(e)}")
    return paths


def _unwritable_value(e: BaseException) -> str:
    """Why a trace could not be written: a value ITF cannot hold, or the model's code failing."""
    from kraftcheck.traces import itf

    frames = traceback.extract_tb(e.__traceback__)
    if isinstance(e, TypeError) and frames and frames[-1].filename == itf.__file__:
        return f"a state or an action parameter holds a value ITF cannot hold ({e})"
    return model_failure(e)


def write_summary(path: str, summary: dict) -> None:
    """Write the ``--json`` summary; one line on stderr when it cannot be."""
    from kraftcheck.traces.itf import write_json_atomically

    try:
        write_json_atomically(path, _encodable(summary))
    except OSError as e:
        error(f"cannot write the summary to {path}: {e.strerror or e}")
    except (TypeError, ValueError) as e:  # a config value JSON cannot hold
        error(f"cannot write the summary to {path}: {e}")


def _encodable(value):
    """``value`` with every string UTF-8 can hold: a file name's undecodable bytes (lone
    surrogates, from ``surrogateescape``) become U+FFFD, as ``CheckConfig.to_json`` makes them."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encodable(v) for v in value]
    return value


def json_summary(result: Result, config: CheckConfig, options: dict, trace_paths: dict[str, str]) -> dict:
    summary = result.summary()
    summary["violations"] = [
        {"invariant": cx.name, "kind": cx.kind, "length": cx.length, "trace": trace_paths.get(cx.name),
         **({"loop": cx.loop} if cx.loop is not None else {})}
        for cx in result.violations
    ]
    summary["deadlock"] = (
        {"length": result.deadlock.length, "trace": trace_paths.get(result.deadlock.name)}
        if result.deadlock
        else None
    )
    summary["config"] = {**config.to_json(), "search": options}
    return summary
