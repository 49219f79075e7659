"""The workload options the Spark benchmarks share: a config file, or a model with settings.

By default twelve counters in 0..2 (531,441 states), a model whose step costs next to nothing.
"""

from __future__ import annotations

import argparse

DEFAULT_MODEL = "tests.models:counters"
DEFAULT_SETTINGS = ["n=12", "limit=2"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="a config file (default: --model's model)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="MODULE:FACTORY (default: counters)")
    parser.add_argument("--set", dest="overrides", action="append",
                        help=f"KEY=VALUE (default without --config: {', '.join(DEFAULT_SETTINGS)})")


def chosen(args) -> tuple[str | None, str | None, list[str]]:
    """``(config file, model, settings)``: a config file (its model and settings, --set on
    top), or else --model with --set (the counters' defaults when no --set is given)."""
    if args.config:
        return args.config, None, list(args.overrides or [])
    return None, args.model, list(args.overrides or DEFAULT_SETTINGS)


def check_arguments(args) -> list[str]:
    """The workload as ``kraftcheck check`` arguments."""
    config, model, settings = chosen(args)
    head = [config] if config else ["--model", model]
    return head + [f"--set={setting}" for setting in settings]
