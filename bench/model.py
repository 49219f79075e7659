"""States per second of the local engine on the Kafka model's default config.

    .venv/bin/python bench/model.py                  # spec/configs/default.toml, as `kraftcheck check` runs it
    .venv/bin/python bench/model.py --config ci      # another config in spec/configs/

Prints the counts (which must equal those recorded in spec/README.md), the wall time and the
engine's distinct and generated states per second, every invariant and step property checked.
"""

from __future__ import annotations

import argparse
import time

from kraftcheck.checker.bfs import explore
from kraftcheck.checker.config import build_model, embedded_config_text, parse_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="default", help="name of a config in spec/configs (default: default)")
    args = parser.parse_args()

    config = parse_config(embedded_config_text(f"{args.config}.toml"), f"<embedded {args.config}.toml>")
    model = build_model(config)
    deadlock = config.check.get("deadlock", True)

    start = time.perf_counter()
    result = explore(model, check_deadlock=deadlock)
    elapsed = time.perf_counter() - start
    print(f"config               {args.config}.toml")
    print(f"verdict              {result.verdict}")
    print(f"distinct states      {result.distinct_states:,}")
    print(f"generated states     {result.generated_states:,}")
    print(f"depth                {result.depth}")
    print(f"wall time            {elapsed:.1f} s")
    print(f"distinct states/s    {result.distinct_states / elapsed:,.0f}")
    print(f"generated states/s   {result.generated_states / elapsed:,.0f}")


if __name__ == "__main__":
    main()
