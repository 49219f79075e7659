"""``kraftcheck list``: a model's invariants, actions and mutants."""

from __future__ import annotations

import json

from .config import ModelFailed, build_model, load_config

def run_list(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    try:
        listing = {
            "invariants": [str(n) for n in [*model.invariants, *(getattr(model, "action_invariants", None) or {})]],
            "actions": [str(n) for n in getattr(model, "actions", None) or []],
            "mutants": [{"name": str(n), "description": str(d)}
                        for n, d in (getattr(model, "mutants", None) or {}).items()],
        }
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the model's members are its own code (properties, odd types)
        raise ModelFailed() from e
    if args.json:
        print(json.dumps(listing, indent=1))
        return 0
    print("invariants:")
    for name in listing["invariants"]:
        print(f"  {name}")
    print("actions:")
    for name in listing["actions"]:
        print(f"  {name}")
    print("mutants:" if listing["mutants"] else "mutants: none")
    for m in listing["mutants"]:
        print(f"  {m['name']}: {m['description']}")
    return 0
