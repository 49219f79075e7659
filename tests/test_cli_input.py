"""Hostile and careless input to check, list and graph: one line on stderr and a documented exit
code, never a traceback, no code run that the user did not name, nothing computed lost."""

import json
import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The installed command, which (unlike `python -m`) does not put the current directory on sys.path.
CONSOLE_SCRIPT = Path(sys.executable).parent / "kraftcheck"
HINT = ("states are made of ints, bools, None, strings, bytes, tuples and frozensets "
        "(a set goes in as a frozenset, a map as a sorted tuple of pairs)")
OUT_OF_MEMORY = ("bound the search with --max-states N or --max-depth N, or run it with --engine spark, "
                 "whose visited states are spread over the executors")


def kraftcheck(*args, cwd=REPO, **options):
    options.setdefault("capture_output", True)
    options.setdefault("env", {**os.environ, "PYTHONPATH": str(REPO)})
    return subprocess.run(
        [sys.executable, "-m", "kraftcheck.checker.cli", *map(str, args)], text=True, cwd=cwd, timeout=600, **options,
    )


def line_of(text: str) -> int:
    """The number of the line of tests/broken_models.py that holds ``text``."""
    lines = (REPO / "tests" / "broken_models.py").read_text().splitlines()
    [number] = [i for i, line in enumerate(lines, start=1) if text in line]
    return number


def error_line(p) -> str:
    """The one line a failed command printed on stderr."""
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


# ---------------------------------------------------------------- 2. the current directory


PLANTED = ("graphviz", "rich", "networkx")
MODEL_BESIDE = '''
import graphviz  # a model may import what kraftcheck uses: it gets the installed module

class Up:
    actions = ["Up"]
    invariants = {"BelowThree": lambda s: s < 3}
    def init_states(self):
        return [0]
    def successors(self, s):
        if s < 5:
            yield "Up", s + 1

def make(config):
    return Up()
'''


def plant(directory: Path) -> None:
    """Modules named like kraftcheck's dependencies, each leaving a marker file if it ever runs,
    and a model of the user's own beside them."""
    for name in PLANTED:
        (directory / f"{name}.py").write_text(f"open({f'MARKER-{name}'!r}, 'w').write('ran')\n")
    (directory / "mymodel.py").write_text(MODEL_BESIDE)


@pytest.mark.parametrize("command", [
    [str(CONSOLE_SCRIPT)],
    [sys.executable, "-m", "kraftcheck.checker.cli"],
])
def test_modules_in_the_current_directory_never_stand_in_for_installed_ones(tmp_path, command):
    plant(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for args in (["check", "--model", "mymodel:make"], ["list", "--model", "mymodel:make"],
                 ["graph", "--model", "mymodel:make", "-o", "g.svg"]):
        p = subprocess.run([*command, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        assert p.returncode == (12 if args[0] == "check" else 0), p.stderr
        assert "Traceback" not in p.stderr
    assert sorted(path.name for path in tmp_path.glob("MARKER-*")) == []
    # the model module itself came from the current directory, and graphviz drew its trace
    # a factory named `make` names its run after its module
    assert (tmp_path / "out" / "mymodel_BelowThree.svg").is_file() and (tmp_path / "g.svg").is_file()


def test_a_model_module_named_like_an_installed_module_is_refused(tmp_path):
    plant(tmp_path)
    (tmp_path / "graphviz.py").write_text(MODEL_BESIDE.replace("import graphviz", "import os"))
    import graphviz

    p = subprocess.run([str(CONSOLE_SCRIPT), "check", "--model", "graphviz:make"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600)
    assert p.returncode == 2
    assert error_line(p) == (
        "kraftcheck: error: model module 'graphviz' in the current directory has the name of an installed module "
        f"({os.path.realpath(graphviz.__file__)}): rename it")
    assert not list(tmp_path.glob("MARKER-*"))


# ---------------------------------------------------------------- 4. output files


def test_json_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--quiet", "--json", "link.json", cwd=tmp_path)
    assert p.returncode == 12, p.stderr
    assert (tmp_path / "link.json").is_symlink() and os.readlink(tmp_path / "link.json") == "real.json"
    assert json.loads((tmp_path / "real.json").read_text())["verdict"] == "violation"


def test_json_to_a_file_that_is_not_regular_is_written_in_place(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--quiet", "--json", "/dev/stdout",
                   "--trace-dir", tmp_path)
    assert p.returncode == 12, p.stderr
    summary, end = json.JSONDecoder().raw_decode(p.stdout)
    assert summary["verdict"] == "violation"
    assert p.stdout[end:].lstrip().startswith("error: invariant NotFourGallons is violated")


def test_outputs_get_the_permissions_the_umask_leaves(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o604)

    def umask_027():
        os.umask(0o027)

    for summary in ("new.json", "kept.json"):
        p = kraftcheck("check", "--model", "tests.models:diehard", "--quiet", "--json", tmp_path / summary,
                       "--trace-dir", tmp_path / "t", preexec_fn=umask_027)
        assert p.returncode == 12, p.stderr
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in [*tmp_path.glob("*.json"), *tmp_path.glob("t/*")]}
    assert modes == {"new.json": 0o640, "kept.json": 0o604,
                     "diehard_NotFourGallons.itf.json": 0o640, "diehard_NotFourGallons.svg": 0o640}


# ---------------------------------------------------------------- 5, 8. settings


@pytest.mark.parametrize("value, shown", [
    ("inf", "inf"), ("-inf", "-inf"), ("1e400", "inf"), ("1.9", "1.9"), ("2.0", "2.0"), ("nan", "nan"),
    ('"two"', "'two'"), ("true", "True"),
])
@pytest.mark.parametrize("command", [["check"], ["list"], ["graph", "-o", "x.dot"]])
def test_an_integer_setting_takes_an_integer_only(tmp_path, command, value, shown):
    message = f"kraftcheck: error: the model rejected its config: model setting 'brokers' must be an integer, not {shown}"
    p = kraftcheck(*command, "--set", f"brokers={value}", cwd=tmp_path)
    assert (p.returncode, error_line(p)) == (2, message)
    config = tmp_path / "c.toml"
    config.write_text(f"[model]\nbrokers = {value}\n")
    p = kraftcheck(*command, config, cwd=tmp_path)
    assert (p.returncode, error_line(p)) == (2, message)


@pytest.mark.parametrize("setting, message", [
    ("restarts=1e30", "model setting 'restarts' must be an integer, not 1e+30"),
    ("restarts=101", "model setting 'restarts' must be between 0 and 100, not 101"),
    ("max_messages=1000000000000000000000000", "model setting 'max_messages' must be between 1 and 100, "
                                               "not 1000000000000000000000000"),
    ("moves=-1", "model setting 'moves' must be between 0 and 100, not -1"),
])
def test_absurd_counts_are_refused(setting, message):
    p = kraftcheck("list", "--set", setting)
    assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: the model rejected its config: {message}")


def test_an_integer_given_as_text_is_taken():
    p = kraftcheck("list", "--set", 'brokers="3"', "--json")
    assert p.returncode == 0, p.stderr


def test_set_takes_one_line():
    p = kraftcheck("list", "--set", "brokers=1\nfoo=2")
    assert (p.returncode, error_line(p)) == (
        2, "kraftcheck: error: --set expects one KEY=VALUE on one line, got 'brokers=1\\nfoo=2'")


@pytest.mark.parametrize("value, message", [
    ("1979-05-27", "--set x: expected a string, a number or a boolean, got '1979-05-27'"),
    ("[1, 2]", "--set x: expected a string, a number or a boolean, got '[1, 2]'"),
    ("[" * 2000, "--set x: '" + "[" * 27 + "..." + "[" * 28 + "' is not a TOML value"),
    ("9" * 5000, "--set x: '" + "9" * 27 + "..." + "9" * 28 + "' is not a TOML value"),
])
def test_set_takes_a_scalar(value, message):
    p = kraftcheck("list", "--model", "tests.models:diehard", "--set", f"x={value}")
    assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: {message}")


# ---------------------------------------------------------------- 5. config files


def test_config_files_that_are_no_configs(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 1000 + "]" * 1000 + "\n")
    nested = tmp_path / "nested.toml"
    nested.write_text("[model]\nx = " + "[" * 40 + "]" * 40 + "\n")
    dated = tmp_path / "dated.toml"
    dated.write_text("[model]\nwhen = 1979-05-27\n")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    long_name = "a" * 300 + ".toml"
    cases = {
        deep: f"{deep} is not valid TOML: arrays or tables nested too deeply",
        nested: f"{nested}: arrays or tables nested more than 32 deep",
        dated: f"{dated}: datetime.date(1979, 5, 27) is a date: a config holds strings, numbers, booleans, "
               "arrays and tables",
        "loop1": "cannot read config file loop1: Too many levels of symbolic links",
        long_name: f"cannot read config file {long_name}: File name too long",
        "/dev/zero": "config file /dev/zero is larger than 1 MiB: not a config",
        tmp_path: f"cannot read config file {tmp_path}: Is a directory",
    }
    for command in (["check"], ["list"], ["graph", "-o", "x.dot"]):
        for config, message in cases.items():
            p = kraftcheck(*command, config, cwd=tmp_path)
            assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: {message}"), (command, config)


@pytest.mark.parametrize("line, message", [
    ("max_states = 0", "[check] max_states must be at least 1, not 0"),
    ("max_states = -5", "[check] max_states must be at least 1, not -5"),
    ("max_depth = 0", "[check] max_depth must be at least 1, not 0"),
    ("max_depth = 2.5", "[check] max_depth must be a int, not 2.5"),
])
def test_bounds_in_a_config_are_checked_as_the_flags_are(tmp_path, line, message):
    config = tmp_path / "c.toml"
    config.write_text(f'[check]\nmodel = "tests.models:diehard"\n{line}\n')
    p = kraftcheck("check", config)
    assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: {config}: {message}")


def test_a_huge_value_is_cut_in_the_message(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[model]\nmutant = "' + "x" * 500_000 + '"\n')
    p = kraftcheck("list", config)
    assert p.returncode == 2
    assert error_line(p).startswith("kraftcheck: error: the model rejected its config: "
                                    "unknown mutant 'xxxxxxxxxxxx...xxxxxxxxxxxxx' (known: ")
    p = kraftcheck("list", "--set", "mutant=" + "y" * 100_000)
    # the value cut to its first 12 and last 13 characters, every known mutant named whole
    from kraftcheck.model import MUTANTS

    known = ", ".join(MUTANTS)
    assert (p.returncode, error_line(p)) == (2, "kraftcheck: error: the model rejected its config: unknown mutant "
                                                f"'{'y' * 12}...{'y' * 13}' (known: {known})")
    p = kraftcheck("list", "--set", "y" * 100_000)
    assert (p.returncode, error_line(p)) == (
        2, "kraftcheck: error: --set expects KEY=VALUE, got '" + "y" * 27 + "..." + "y" * 28 + "'")


def test_a_message_of_the_model_stays_one_line():
    p = kraftcheck("check", "--model", "tests.broken_models:factory_raises", "--set", "error=ValueError")
    assert (p.returncode, error_line(p)) == (
        2, "kraftcheck: error: the model rejected its config: first line\\nsecond line")


@pytest.mark.parametrize("reference, message", [
    ("a\x1b[2J:f", "model module 'a\\x1b[2J' is not a Python module name"),
    (".models:f", "model module '.models' is not a Python module name"),
    ("tests..models:f", "model module 'tests..models' is not a Python module name"),
])
def test_model_references_that_are_no_module_names(reference, message):
    p = kraftcheck("check", "--model", reference)
    assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: {message}")


# ---------------------------------------------------------------- 5, 6. the model's own code


@pytest.mark.parametrize("error, message", [
    ("RuntimeError", "the model raised RuntimeError: the factory gave up "
                     f"(broken_models.py:{line_of('the factory gave up')})"),
    ("RecursionError", "the model raised RecursionError: maximum recursion depth exceeded "
                       f"(broken_models.py:{line_of('error = _setting(config')})"),
    ("exit", f"the model called sys.exit(9) (broken_models.py:{line_of('the factory leaves')})"),
    ("MemoryError", f"out of memory: {OUT_OF_MEMORY}"),
])
@pytest.mark.parametrize("command", [["check"], ["list"], ["graph", "-o", "x.dot"]])
def test_a_factory_that_fails_is_one_line_and_exit_1(tmp_path, command, error, message):
    p = kraftcheck(*command, "--model", "tests.broken_models:factory_raises", "--set", f"error={error}", cwd=tmp_path)
    assert (p.returncode, error_line(p)) == (1, f"kraftcheck: error: {message}")


def test_a_model_module_that_exits_while_imported(tmp_path):
    (tmp_path / "leaving.py").write_text("import sys\nsys.exit(9)\n")
    for command in (["check"], ["list"], ["graph", "-o", "x.dot"]):
        p = kraftcheck(*command, "--model", "leaving:make", cwd=tmp_path)
        assert (p.returncode, error_line(p)) == (1, "kraftcheck: error: the model called sys.exit(9) (leaving.py:2)")


@pytest.mark.parametrize("model, message", [
    ("exiting_successors", f"the model called sys.exit(9) (broken_models.py:{line_of('the search leaves')})"),
    ("greedy_successors", f"out of memory after 3 distinct states: {OUT_OF_MEMORY}"),
])
def test_the_model_failing_during_the_search(model, message):
    p = kraftcheck("check", "--model", f"tests.broken_models:{model}")
    assert (p.returncode, error_line(p)) == (1, f"kraftcheck: error: {message}")


def test_out_of_memory_in_graph():
    p = kraftcheck("graph", "--model", "tests.broken_models:greedy_successors", "-o", "x.dot")
    assert (p.returncode, error_line(p)) == (1, f"kraftcheck: error: out of memory: {OUT_OF_MEMORY}")


# ---------------------------------------------------------------- 5, 7. the verdict is always printed


def test_describe_raising_loses_the_trace_only(tmp_path):
    p = kraftcheck("check", "--model", "tests.broken_models:describe_raises", "--trace-dir", tmp_path,
                   "--json", tmp_path / "s.json")
    assert p.returncode == 12
    assert error_line(p) == ("kraftcheck: error: cannot write the trace of NotFourGallons: the model raised "
                             f"ValueError: describe is broken (broken_models.py:{line_of('describe is broken')})")
    assert "error: invariant NotFourGallons is violated; shortest trace: 7 states\n" in p.stdout
    assert "  trace: not written (the reason is on stderr)\n" in p.stdout
    assert "14 distinct states, 73 generated, depth 7" in p.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["verdict"] == "violation" and summary["violations"][0]["trace"] is None
    assert sorted(path.name for path in tmp_path.iterdir()) == ["s.json"]


def test_describe_action_raising_labels_steps_plainly(tmp_path):
    p = kraftcheck("check", "--model", "tests.broken_models:describe_action_raises", "--trace-dir", tmp_path)
    assert p.returncode == 12
    where = f"(broken_models.py:{line_of('describe_action is broken')})"
    assert p.stderr.splitlines() == [
        "kraftcheck: error: cannot write the trace of NotFourGallons: the model raised RuntimeError: "
        f"describe_action is broken {where}",
        f"kraftcheck: error: cannot label the steps: the model raised RuntimeError: describe_action is broken {where}",
    ]
    assert "    2  FillBig\n" in p.stdout and "14 distinct states" in p.stdout


def test_a_float_parameter_loses_the_trace_only(tmp_path):
    p = kraftcheck("check", "--model", "tests.broken_models:float_parameters", "--trace-dir", tmp_path)
    assert p.returncode == 12
    assert error_line(p) == ("kraftcheck: error: cannot write the trace of Small: a state or an action parameter "
                             "holds a value ITF cannot hold (cannot write float value 0.5 as ITF)")
    assert "    5  Tick(2.0)\n  trace: not written (the reason is on stderr)\n" in p.stdout


def test_a_trace_that_cannot_be_written_after_the_search(tmp_path):
    (tmp_path / "diehard_NotFourGallons.itf.json").mkdir()
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", tmp_path, "--quiet")
    assert p.returncode == 12
    assert error_line(p) == (f"kraftcheck: error: cannot write trace to {tmp_path}/diehard_NotFourGallons.itf.json: "
                             "Is a directory")
    assert p.stdout.startswith("error: invariant NotFourGallons is violated; shortest trace: 7 states\n")


def test_a_summary_that_cannot_be_written_after_the_search(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:countdown", "--no-deadlock", "--quiet", "--json", "/dev/full")
    assert p.returncode == 0
    assert error_line(p) == "kraftcheck: error: cannot write the summary to /dev/full: No space left on device"
    assert p.stdout.startswith("ok: every invariant holds in every reachable state\n")


def test_a_trace_dir_that_is_a_file_is_refused_before_the_search(tmp_path):
    (tmp_path / "file").write_text("x")
    for trace_dir in ("file", "file/sub"):
        p = kraftcheck("check", "--model", "tests.models:countdown", "--no-deadlock", "--trace-dir", trace_dir,
                       cwd=tmp_path)
        assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: cannot write traces to {trace_dir}: "
                                                    "Not a directory")
        assert p.stdout == ""


def _as_nobody():
    """Run a command as an ordinary user: root writes into read-only directories."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only directory is writable")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@contextlib.contextmanager
def _reachable_by_others(path: Path):
    """Let other users read and pass through every folder down to ``path`` while the block runs
    (a clone made with ``mktemp -d`` is a folder only its owner may enter), then put the modes
    back."""
    changed = []
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
            folder.chmod(stat.S_IMODE(mode) | stat.S_IROTH | stat.S_IXOTH)
            changed.append((folder, stat.S_IMODE(mode)))
    try:
        yield
    finally:
        for folder, mode in changed:
            folder.chmod(mode)


def test_a_read_only_trace_dir_or_summary_is_refused_before_the_search():
    root = Path(tempfile.mkdtemp(prefix="kraftcheck-read-only-"))
    try:
        root.chmod(0o777)
        (root / "ro").mkdir(mode=0o555)
        (root / "ro").chmod(0o555)
        cases = [
            (["--trace-dir", root / "ro"], f"cannot write traces to {root / 'ro'}: Permission denied"),
            (["--trace-dir", root / "ro" / "sub"], f"cannot write traces to {root / 'ro' / 'sub'}: Permission denied"),
            (["--trace-dir", root / "t", "--json", root / "ro" / "s.json"],
             f"cannot write the summary to {root / 'ro' / 's.json'}: Permission denied"),
        ]
        for options, message in cases:
            with _reachable_by_others(REPO), _reachable_by_others(Path(sys.prefix)):
                p = subprocess.run(
                    [*_as_nobody(), sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model",
                     "tests.models:diehard", *map(str, options)],
                    capture_output=True, text=True, cwd=root, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
            assert (p.returncode, error_line(p)) == (2, f"kraftcheck: error: {message}")
            assert p.stdout == ""
    finally:
        (root / "ro").chmod(0o755)
        shutil.rmtree(root)


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    for args, code in ((["check", "--model", "tests.models:diehard", "--trace-dir", tmp_path], 12),
                       (["list"], 0)):
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write to standard output fails with EPIPE
        try:
            p = kraftcheck(*args, stdout=write_end, stderr=subprocess.PIPE, capture_output=False)
        finally:
            os.close(write_end)
        assert (p.returncode, p.stderr) == (code, "")
    assert (tmp_path / "diehard_NotFourGallons.itf.json").is_file()


@pytest.mark.parametrize("closed", ["1", "2"])
def test_standard_output_or_error_closed_from_the_start(tmp_path, closed):
    p = subprocess.run(f"exec {sys.executable} -m kraftcheck.checker.cli check --model tests.models:diehard "
                       f"--trace-dir {tmp_path} {closed}>&-", shell=True, capture_output=True, text=True,
                       timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 12
    assert (tmp_path / "diehard_NotFourGallons.itf.json").is_file()


def test_a_full_disk_on_standard_output(tmp_path):
    with open("/dev/full", "w") as full:
        p = kraftcheck("list", stdout=full, stderr=subprocess.PIPE, capture_output=False)
        assert (p.returncode, error_line(p)) == (
            2, "kraftcheck: error: cannot write to standard output: No space left on device")
        # check: the verdict's exit code stands, and the trace is written
        p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", tmp_path, stdout=full,
                       stderr=subprocess.PIPE, capture_output=False)
        assert (p.returncode, error_line(p)) == (
            12, "kraftcheck: error: cannot write to standard output: No space left on device")
    assert (tmp_path / "diehard_NotFourGallons.itf.json").is_file()


def test_names_the_output_encoding_cannot_hold(tmp_path):
    config = 'model = "tests.models:diehard"'
    (tmp_path / "é.toml").write_text(f"[check]\n{config}\n")
    p = kraftcheck("check", "é.toml", "--quiet", cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO),
                                                                  "PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert (p.returncode, p.stderr) == (12, "")
    assert "  trace: out/\\xe9_NotFourGallons.itf.json\n" in p.stdout
    assert (tmp_path / "out" / "é_NotFourGallons.itf.json").is_file()


def test_a_config_name_that_is_not_utf8(tmp_path):
    name = os.fsdecode(b"\xff.toml")
    (tmp_path / name).write_text('[check]\nmodel = "tests.models:diehard"\n')
    p = kraftcheck("check", name, "--quiet", "--json", "s.json", cwd=tmp_path, errors="surrogateescape")
    assert p.returncode == 12 and "Traceback" not in p.stderr
    trace = json.loads((tmp_path / "out" / os.fsdecode(b"\xff_NotFourGallons.itf.json")).read_text())
    assert trace["#meta"]["config"]["source"] == "\ufffd.toml"


# ---------------------------------------------------------------- 11. silent wrong answers


@pytest.mark.parametrize("kind, shown", [
    ("list", "a list at [1] ([2])"), ("set", "a set at [1] ({2})"), ("dict", "a dict at [1] ({2: 2})"),
    ("float", "a float at [1] (1.0)"),
])
def test_states_of_other_types_are_rejected_where_they_first_appear(tmp_path, kind, shown):
    message = f"kraftcheck: error: the state Tick(2) led to holds {shown}: {HINT}"
    p = kraftcheck("check", "--model", "tests.broken_models:badly_typed_states", "--set", f"kind={kind}")
    assert (p.returncode, error_line(p)) == (1, message)
    p = kraftcheck("graph", "--model", "tests.broken_models:badly_typed_states", "--set", f"kind={kind}",
                   "-o", tmp_path / "g.dot")
    assert (p.returncode, error_line(p)) == (1, message)


@pytest.mark.parametrize("kind, shown", [
    ("list", "a list at [1] ([1500])"), ("set", "a set at [1] ({1500})"), ("dict", "a dict at [1] ({1500: 1500})")])
def test_an_unhashable_value_past_the_checked_states_is_found_where_it_appears(kind, shown):
    """Past the first 1,000 states the local engine hashes each new one."""
    p = kraftcheck("check", "--model", "tests.broken_models:badly_typed_states", "--set", f"kind={kind}",
                   "--set", "at=1500", "--set", "limit=2000", "--quiet")
    assert (p.returncode, error_line(p)) == (1, f"kraftcheck: error: the state Tick(1500) led to holds {shown}: {HINT}")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_states_hold_frozensets_each_counted_once_whatever_its_history(tmp_path, workers):
    """2**11 sets of 11 tokens, each reached by many orders of taking and giving back."""
    summary = tmp_path / "s.json"
    p = kraftcheck("check", "--model", "tests.models:tokens", "--set", "size=11", "--continue", "--workers", workers,
                   "--json", str(summary), "--trace-dir", str(tmp_path), "--quiet", "--no-picture")
    assert p.returncode == 12, p.stderr
    data = json.loads(summary.read_text())
    assert (data["distinct_states"], data["generated_states"], data["depth"]) == (2 ** 11, 11 * 2 ** 11 + 1, 12)  # the initial state is generated too, as TLC counts
    assert data["workers"] == int(workers)
    [violation] = data["violations"]
    assert (violation["invariant"], violation["length"]) == ("AllTaken", 12)
    # the trace holds each set as ITF's #set, and replays
    trace = json.loads(Path(violation["trace"]).read_text())
    assert trace["states"][2]["state"] == {"#set": ["token-0", "token-1"]}
    assert kraftcheck("trace", "replay", violation["trace"]).returncode == 0


def test_a_frozensets_fingerprint_does_not_depend_on_the_hash_seed():
    code = ("from kraftcheck.checker.fingerprint import fingerprint\n"
            "print(fingerprint((1, frozenset(f'token-{i}' for i in range(20)))))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(seen) == 1


@pytest.mark.parametrize("model, message", [
    ("no_initial_states", "the model has no initial state: init_states() returned nothing"),
    ("silent_invariant", "invariant Quiet returned None, not True or False"),
    ("silent_step_property", "step property Forward returned None, not True or False"),
])
@pytest.mark.parametrize("command", [["check"], ["graph", "-o", "x.dot"]])
def test_models_that_break_the_protocol(tmp_path, command, model, message):
    p = kraftcheck(*command, "--model", f"tests.broken_models:{model}", cwd=tmp_path)
    assert (p.returncode, error_line(p)) == (1, f"kraftcheck: error: {message}")


# ---------------------------------------------------------------- 12. smaller things


def test_no_command_is_a_usage_error():
    p = kraftcheck()
    assert (p.returncode, p.stdout) == (2, "")
    assert error_line(p) == ("kraftcheck: error: a command is required: check, simulate, mutants, prove, conform, cluster, list, trace, graph or "
                             "spark-package "
                             "(see 'kraftcheck --help')")


def test_help_is_printed_on_request():
    p = kraftcheck("--help")
    assert (p.returncode, p.stderr) == (0, "") and p.stdout.startswith("usage: kraftcheck")


def test_runs_with_other_overrides_keep_their_own_traces(tmp_path):
    for goal in (3, 4):
        p = kraftcheck("check", "--model", "tests.models:diehard", "--set", f"goal={goal}", "--trace-dir", tmp_path,
                       "--quiet")
        assert p.returncode == 12, p.stderr
    p = kraftcheck("check", "--model", "tests.models:diehard", "--set", "goal=2", "--set", "big=5",
                   "--set", "goal=1", "--trace-dir", tmp_path, "--quiet", "--no-picture")
    assert p.returncode == 12, p.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "diehard,goal=1,big=5_NotFourGallons.itf.json",
        "diehard,goal=3_NotFourGallons.itf.json", "diehard,goal=3_NotFourGallons.svg",
        "diehard,goal=4_NotFourGallons.itf.json", "diehard,goal=4_NotFourGallons.svg",
    ]
    lengths = {path.name: len(json.loads(path.read_text())["states"]) for path in tmp_path.glob("*.itf.json")}
    assert lengths["diehard,goal=3_NotFourGallons.itf.json"] == 3
    assert lengths["diehard,goal=4_NotFourGallons.itf.json"] == 7


def test_overrides_unsafe_in_a_file_name_are_made_safe_and_short():
    from kraftcheck.checker.config import load_config

    config = load_config(None, "tests.models:diehard", ["mutant=a/b c", "x=" + "a/b " * 40])
    label = config.run_label
    assert label.startswith("diehard,mutant=a-b-c,x=a-b-a-b-") and len(label) == len("diehard,") + 80
    assert "/" not in label and label != load_config(None, "tests.models:diehard", ["mutant=a/b c"]).run_label


def test_no_picture_draws_no_svg(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", tmp_path, "--no-picture")
    assert p.returncode == 12
    assert [path.name for path in tmp_path.iterdir()] == ["diehard_NotFourGallons.itf.json"]
    assert "  picture:" not in p.stdout
