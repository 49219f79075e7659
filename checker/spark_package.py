"""``kraftcheck spark-package``: what ``spark-submit`` ships to executors that lack kraftcheck.

PySpark puts on an executor's ``sys.path`` only the ``.zip``, ``.egg`` and ``.py`` files of
``--py-files`` (and ``.jar``), not a ``.whl``.  So kraftcheck travels as ``kraftcheck.zip``:
the installed package laid out as a wheel lays it out (``kraftcheck/``, ``kraftcheck/checker/``,
``kraftcheck/model/``, ``kraftcheck/traces/``, ``kraftcheck/spec/`` with its configs), which
``zipimport`` imports as it is.  Beside it goes ``spark_submit.py``, the driver script, so that
an installed kraftcheck needs no checkout to be submitted.

The zip is built from the package this command imports (a checkout's, installed editable, or a
wheel's), with fixed timestamps and sorted entries: the same sources give the same bytes.
"""

from __future__ import annotations

import importlib
import importlib.resources
import os
import tempfile
import zipfile
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from .config import ConfigError

#: The packages of the distribution, as pyproject.toml lists them (a test holds them equal).
PACKAGES = ("kraftcheck", "kraftcheck.checker", "kraftcheck.examples", "kraftcheck.model", "kraftcheck.proofs", "kraftcheck.traces", "kraftcheck.spec",
            "kraftcheck.spec.configs", "kraftcheck.spec.findings", "kraftcheck.spec.scenarios", "kraftcheck.spec.simulation",
            "kraftcheck.conform", "kraftcheck.cluster", "kraftcheck.harness", "kraftcheck.harness.src.main.java.org.apache.kafka.controller")
#: Files other than modules that a package carries, as pyproject.toml's package-data: the
#: configs, so that ``check`` without a config file finds the embedded default in the zip too.
PACKAGE_DATA = {
    "kraftcheck.spec": ("*.tla", "*.cfg", "README.md", "suite.toml"),
    "kraftcheck.spec.configs": ("*.toml",),
    "kraftcheck.spec.findings": ("*.itf.json",),
    "kraftcheck.spec.scenarios": ("*.toml",),
    "kraftcheck.spec.simulation": ("*.toml",),
    "kraftcheck.harness": ("pom.xml", "README.md"),
    "kraftcheck.harness.src.main.java.org.apache.kafka.controller": ("*.java",),
}
ZIP_NAME = "kraftcheck.zip"
DRIVER_SCRIPT = "spark_submit.py"
DEFAULT_OUT = "dist"
#: What the modules the executors run import besides kraftcheck and pyspark: their Python
#: must have these installed (pyspark comes with Spark itself).
EXECUTOR_REQUIREMENTS = ("xxhash", "pyarrow", "numpy")
#: zip entries' time: 1980-01-01, the earliest a zip can hold, so that a build is reproducible.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass
class Built:
    archive: Path
    driver_script: Path
    files: int
    version: str


def package_files() -> list[tuple[str, bytes]]:
    """(path in the zip, contents) of every module and data file of the distribution, sorted."""
    entries = []
    for package in PACKAGES:
        root = importlib.resources.files(package)
        prefix = package.replace(".", "/")
        patterns = ("*.py", *PACKAGE_DATA.get(package, ()))
        for relative, item in _walk(root):
            if any(fnmatch(relative, pattern) and ("/" in pattern or "/" not in relative) for pattern in patterns):
                entries.append((f"{prefix}/{relative}", item.read_bytes()))
    return sorted(entries)


def _walk(root, below: str = ""):
    """(relative path, traversable) of every file under ``root``, caches left out."""
    for item in root.iterdir():
        relative = f"{below}{item.name}"
        if item.is_dir():
            if item.name != "__pycache__":
                yield from _walk(item, relative + "/")
        elif item.is_file():
            yield relative, item


def build(out: str | os.PathLike = DEFAULT_OUT) -> Built:
    """Write ``OUT/kraftcheck.zip`` and ``OUT/spark_submit.py``; ConfigError when ``out`` cannot hold them."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ConfigError(f"cannot write to {out}: it is not a directory") from None
    except OSError as e:
        raise ConfigError(f"cannot create {out}: {e.strerror or e}") from None
    files = package_files()
    archive = out / ZIP_NAME
    _write_atomically(archive, lambda f: _write_zip(f, files))
    driver = importlib.resources.files("kraftcheck.checker").joinpath(DRIVER_SCRIPT).read_bytes()
    driver_script = out / DRIVER_SCRIPT
    _write_atomically(driver_script, lambda f: f.write(driver))
    version = importlib.import_module("kraftcheck").__version__
    return Built(archive, driver_script, len(files), version)


def _write_zip(stream, files: list[tuple[str, bytes]]) -> None:
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, _ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def _write_atomically(path: Path, write) -> None:
    """Write through a temporary file renamed over ``path``: a file Spark is reading is never half-written."""
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as e:
        raise ConfigError(f"cannot write to {path.parent}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except OSError as e:
        os.unlink(temporary)
        raise ConfigError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def run_spark_package(args) -> int:
    built = build(args.out)
    print(f"wrote {built.archive}: kraftcheck {built.version}, {built.files} files (spark-submit --py-files)")
    print(f"wrote {built.driver_script}: the driver script (spark-submit's application)")
    print(f"the executors' Python needs {', '.join(EXECUTOR_REQUIREMENTS)} installed")
    return 0
