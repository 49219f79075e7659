"""SIGINT, SIGTERM and SIGHUP stop ``check`` cleanly, wherever they arrive: the figures so far,
one error line, 128 + the signal's number, the cursor shown, no ``dot`` left running, no
temporary file left behind.

Each test waits for a sign that ``check`` has reached the point it stops it at (a file that
the test model ``tests.models:slow`` creates, a temporary file, a child process), so what is
tested does not depend on timing.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import default_stopping_signals
from tests.spark_helpers import alive, descendants

REPO = Path(__file__).resolve().parent.parent
STOPPING = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
SEARCH_STOPPED = re.compile(
    r"^interrupted by (SIG[A-Z]+): the search stopped after ([\d,]+) distinct states, ([\d,]+) generated, "
    r"depth ([\d,]+) \(\d+\.\d\d s\); the rest is unexplored$")


def start(*args, env=None, **streams) -> subprocess.Popen:
    """``kraftcheck check ...`` in a session of its own (a signal to it reaches nothing else)."""
    return subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model", "tests.models:slow", *args],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, start_new_session=True,
        **({"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True,
            "preexec_fn": default_stopping_signals} | streams),
    )


def wait_for(condition, what: str, process: subprocess.Popen, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(f"kraftcheck ended (exit {process.returncode}) before {what}")
        time.sleep(0.005)
    process.kill()
    pytest.fail(f"no {what} within {timeout} s")


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


@pytest.mark.parametrize("signum, code", STOPPING, ids=lambda v: getattr(v, "name", str(v)))
def test_a_signal_during_the_search_prints_the_figures_so_far(tmp_path, signum, code):
    ready = tmp_path / "ready"
    process = start("--set", "limit=100000", "--set", "step_ms=20", "--set", f"ready={ready}",
                    "--trace-dir", str(tmp_path / "out"))
    wait_for(ready.exists, "the search's third level", process)
    process.send_signal(signum)
    returncode, out, err = finish(process)
    assert returncode == code, err
    assert err == f"kraftcheck: error: interrupted by {signal.Signals(signum).name}\n"
    stopped = SEARCH_STOPPED.match(out.splitlines()[-1])
    assert stopped, out
    name, distinct, generated, depth = stopped.groups()
    assert name == signal.Signals(signum).name
    # the counter's states are one per level: every level reached holds one, generated once
    assert int(distinct) == int(generated) == int(depth) >= 3
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_signal_reports_the_violations_found_before_it(tmp_path):
    """--continue: the invariant broken at count 1 was found at the second level; a SIGTERM at
    the third reports it, with its shortest trace's length, before the figures."""
    ready = tmp_path / "ready"
    process = start("--set", "limit=100000", "--set", "step_ms=20", "--set", f"ready={ready}", "--set", "early=1",
                    "--continue", "--trace-dir", str(tmp_path / "out"))
    wait_for(ready.exists, "the search's third level", process)
    process.send_signal(signal.SIGTERM)
    returncode, out, err = finish(process)
    assert (returncode, err) == (143, "kraftcheck: error: interrupted by SIGTERM\n")
    lines = out.splitlines()
    assert lines[-2] == ("error: invariant NotEarly is violated; shortest trace: 2 states (found before the "
                         "interruption; its trace is not written)")
    assert SEARCH_STOPPED.match(lines[-1]), out


def test_a_signal_while_a_trace_is_written_removes_its_temporary_file(tmp_path):
    out_dir = tmp_path / "out"
    # a long list in every state: the trace takes a second or more to write
    process = start("--set", "payload=400000", "--trace-dir", str(out_dir), "--quiet")
    wait_for(lambda: list(out_dir.glob(".*.itf.json.*")), "a temporary trace file", process)
    process.send_signal(signal.SIGTERM)
    returncode, out, err = finish(process)
    assert returncode == 143, err
    assert err == "kraftcheck: error: interrupted by SIGTERM\n"
    assert re.fullmatch(r"interrupted by SIGTERM while writing the results of the search \(violation\): "
                        r"4 distinct states, 4 generated, depth 4 \(\d+\.\d\d s\)\n", out), out
    assert list(out_dir.iterdir()) == []


def test_a_signal_while_describing_stops_before_any_file(tmp_path):
    describing = tmp_path / "describing"
    out_dir = tmp_path / "out"
    process = start("--set", f"describing={describing}", "--set", "describe_ms=600000", "--trace-dir", str(out_dir))
    wait_for(describing.exists, "describe", process)
    process.send_signal(signal.SIGHUP)
    returncode, out, err = finish(process)
    assert returncode == 129, err
    assert err == "kraftcheck: error: interrupted by SIGHUP\n"
    assert re.fullmatch(r"checking tests.models:slow with no config file \(local engine\)\n"
                        r"interrupted by SIGHUP while writing the results of the search \(violation\): "
                        r"4 distinct states, 4 generated, depth 4 \(\d+\.\d\d s\)\n", out), out
    assert not out_dir.exists() or list(out_dir.iterdir()) == []


@pytest.fixture
def stalling_dot(tmp_path) -> dict[str, str]:
    """A ``dot`` first on PATH that reads its input and then sleeps: ``check`` is drawing a
    picture for as long as the test needs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dot = bin_dir / "dot"
    dot.write_text("#!/bin/sh\ncat > /dev/null\nexec sleep 600\n")
    dot.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("signum, code", STOPPING, ids=lambda v: getattr(v, "name", str(v)))
def test_a_signal_while_dot_draws_stops_dot(tmp_path, stalling_dot, signum, code):
    out_dir = tmp_path / "out"
    process = start("--trace-dir", str(out_dir), "--quiet", env=stalling_dot)

    def drawing() -> set[int]:
        return {pid for pid in descendants(process.pid) if _command(pid).startswith("sleep 600")}

    [dot] = wait_for(drawing, "dot", process)
    process.send_signal(signum)
    returncode, out, err = finish(process)
    assert returncode == code, err
    assert err == f"kraftcheck: error: interrupted by {signal.Signals(signum).name}\n"
    assert not alive(dot)
    # the trace was written before the picture was begun; no picture, no temporary file
    [written] = out_dir.iterdir()
    assert written.name.endswith(".itf.json") and not written.name.startswith(".")


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


HIDE_CURSOR, SHOW_CURSOR = b"\x1b[?25l", b"\x1b[?25h"


@pytest.mark.parametrize("signum, code", STOPPING, ids=lambda v: getattr(v, "name", str(v)))
def test_a_signal_on_a_terminal_shows_the_cursor_again(tmp_path, signum, code):
    ready = tmp_path / "ready"
    terminal, stderr = pty.openpty()
    try:
        process = start("--set", "limit=100000", "--set", "step_ms=20", "--set", f"ready={ready}",
                        "--trace-dir", str(tmp_path / "out"), stderr=stderr, env={"TERM": "xterm"})
        os.close(stderr)
        shown = bytearray()

        def cursor_hidden() -> bool:
            shown.extend(_read_available(terminal))
            return ready.exists() and HIDE_CURSOR in shown

        wait_for(cursor_hidden, "a live progress line", process)
        process.send_signal(signum)
        assert process.wait(60) == code
        shown.extend(_read_available(terminal, until_closed=True))
    finally:
        os.close(terminal)
    assert shown.rfind(SHOW_CURSOR) > shown.rfind(HIDE_CURSOR) >= 0, bytes(shown[-300:])
    assert f"kraftcheck: error: interrupted by {signal.Signals(signum).name}".encode() in shown
    assert SEARCH_STOPPED.match(process.stdout.read().splitlines()[-1])


def _read_available(fd: int, until_closed: bool = False) -> bytes:
    """What the terminal has received so far (until its other end closes, with ``until_closed``)."""
    import select

    data = bytearray()
    while select.select([fd], [], [], 1.0 if until_closed else 0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        data.extend(chunk)
    return bytes(data)


def test_a_signal_while_trace_render_draws_stops_dot(tmp_path, stalling_dot):
    check = subprocess.run(
        [sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model", "tests.models:slow", "--quiet",
         "--trace-dir", str(tmp_path)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60)
    assert check.returncode == 12, check.stderr
    [trace] = tmp_path.glob("*.itf.json")
    picture = tmp_path / "drawn.svg"
    process = subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "trace", "render", str(trace), "--model", "tests.models:slow", "-o", str(picture)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **stalling_dot}, start_new_session=True,
        preexec_fn=default_stopping_signals,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    [dot] = wait_for(lambda: {pid for pid in descendants(process.pid) if _command(pid).startswith("sleep 600")},
                     "dot", process)
    process.send_signal(signal.SIGTERM)
    returncode, out, err = finish(process)
    assert (returncode, out, err) == (143, "", "kraftcheck: error: interrupted by SIGTERM\n")
    assert not alive(dot)
    assert not picture.exists()


def test_sighup_under_nohup_is_ignored(tmp_path):
    ready = tmp_path / "ready"
    # nohup's way: SIGHUP ignored before the command starts
    process = start("--set", "limit=60", "--set", "step_ms=20", "--set", f"ready={ready}",
                    "--trace-dir", str(tmp_path / "out"), "--quiet",
                    preexec_fn=lambda: (default_stopping_signals(), signal.signal(signal.SIGHUP, signal.SIG_IGN)))
    wait_for(ready.exists, "the search's third level", process)
    process.send_signal(signal.SIGHUP)
    returncode, out, err = finish(process)
    assert (returncode, err) == (12, "")
    assert "error: invariant BelowLimit is violated; shortest trace: 61 states" in out
