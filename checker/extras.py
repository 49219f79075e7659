"""The optional parts of kraftcheck and the pip extras that install them.

``pip install kraftcheck`` checks models on one machine, and stays small for it.  The Spark
engine (``--engine spark``) needs ``kraftcheck[spark]``, about 600 MB of pyspark, pyarrow and
pandas; ``prove`` needs ``kraftcheck[prove]``, z3.  A command that needs an extra that is not
installed says which, in one line, before it starts any work."""

from __future__ import annotations

import importlib

#: the modules each extra brings, imported in this order to find the first one missing
EXTRAS: dict[str, tuple[str, ...]] = {
    "spark": ("pyspark", "py4j", "pyarrow", "numpy", "pandas"),
    "prove": ("z3",),
}


class MissingExtra(Exception):
    """A command needs an extra that is not installed (exit code 2, as for any bad request)."""


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra`, naming the extra, when one of its modules cannot be imported."""
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as e:
            missing = getattr(e, "name", None) or module
            raise MissingExtra(f"{what} needs kraftcheck[{extra}], which is not installed here (no module "
                               f"{missing!r}): pip install 'kraftcheck[{extra}]'") from None
