"""The driver script for ``spark-submit``: the ``kraftcheck`` command line, run inside Spark's session.

    kraftcheck spark-package --out dist
    spark-submit --master spark://HOST:7077 --py-files dist/kraftcheck.zip \\
        --files spec/configs/ci.toml dist/spark_submit.py check ci.toml --engine spark

The Spark engine then uses the session spark-submit set up (its master and its conf).

A file shipped with ``--files`` is named by its file name, wherever the driver runs: in
cluster deploy mode (YARN, Kubernetes) spark-submit puts it in the driver's working
directory; in client mode it stays where it is on this machine, and an argument naming it
that is no file in the working directory is replaced by its path here.

Absolute imports: spark-submit runs this file as a script, not as part of the package.
"""

import os
import sys

try:
    from kraftcheck.checker.cli import main
except ModuleNotFoundError as missing:
    if missing.name and missing.name.split(".")[0] == "kraftcheck":
        # submitted without the zip (and kraftcheck not installed where the driver runs)
        sys.stderr.write("kraftcheck: error: this driver script needs kraftcheck: pass the zip `kraftcheck spark-package` "
                         "wrote beside it, with spark-submit --py-files kraftcheck.zip\n")
        sys.exit(2)
    raise


def shipped_files() -> dict[str, str]:
    """File name -> path on this machine of each file of ``--files`` that is here (client mode)."""
    from urllib.parse import unquote, urlsplit

    from kraftcheck.checker.spark_session import quiet_pyspark_warnings

    quiet_pyspark_warnings()
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # joins spark-submit's JVM: its conf holds --files
    shipped = {}
    for uri in filter(None, SparkConf().get("spark.files", "").split(",")):
        parts = urlsplit(uri)
        path = unquote(parts.path) if parts.scheme in ("", "file", "local") else None
        if path and os.path.isfile(path):
            shipped.setdefault(os.path.basename(path), path)
    return shipped


def with_shipped_paths(argv: list[str], shipped: dict[str, str]) -> list[str]:
    """``argv`` with each argument that names a shipped file, and no file here, made its path."""
    return [shipped[arg] if arg in shipped and not os.path.exists(arg) else arg for arg in argv]


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        arguments = with_shipped_paths(arguments, shipped_files())
    sys.exit(main(arguments))
