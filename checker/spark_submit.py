"""The driver script for ``spark-submit``: the ``kraftcheck`` command line, run inside Spark's session.

    spark-submit --master spark://HOST:7077 --py-files kraftcheck-0.1.0-py3-none-any.whl \\
        --files spec/configs/ci.toml checker/spark_submit.py check ci.toml --engine spark

The Spark engine then uses the session spark-submit set up (its master and its conf).
Absolute imports: spark-submit runs this file as a script, not as part of the package.
"""

import sys

from kraftcheck.checker.cli import main

if __name__ == "__main__":
    sys.exit(main())
