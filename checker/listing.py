"""``kraftcheck list``: a model's invariants, temporal properties, actions, fairness and mutants."""

from __future__ import annotations

import json

from .config import ModelFailed, build_model, load_config
from .meanings import action_meanings, property_meanings
from kraftcheck.traces.text import visible

def run_list(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    try:
        meanings = {**property_meanings(model), **action_meanings(model)}
        caught_at = dict(getattr(model, "mutant_configs", None) or {})
        listing = {
            "invariants": [str(n) for n in [*model.invariants, *(getattr(model, "action_invariants", None) or {})]],
            "actions": [str(n) for n in getattr(model, "actions", None) or []],
            "temporal properties": [str(n) for n in getattr(model, "temporal_properties", None) or {}],
            "fairness": [f.formula for f in getattr(model, "fairness", None) or []],
            "mutants": [{"name": str(n), "description": str(d), **({"caught_at": str(caught_at[n])} if n in caught_at else {})}
                        for n, d in (getattr(model, "mutants", None) or {}).items()],
            "meanings": meanings,
        }
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the model's members are its own code (properties, odd types)
        raise ModelFailed() from e
    if args.json:
        print(json.dumps(listing, indent=1))
        return 0
    for title in ("invariants", "temporal properties", "actions"):
        if title == "temporal properties" and not listing[title]:
            continue
        print(f"{title}:")
        width = max((len(name) for name in listing[title]), default=0)
        for name in listing[title]:
            meaning = meanings.get(name)
            print(f"  {name:<{width}}  {visible(meaning)}" if meaning else f"  {name}")
    if listing["fairness"]:
        print(f"fairness: {', '.join(listing['fairness'])}")
    print("mutants:" if listing["mutants"] else "mutants: none")
    for m in listing["mutants"]:
        where = f" (caught by {m['caught_at']})" if "caught_at" in m else ""
        print(f"  {m['name']}: {m['description']}{where}")
    return 0
