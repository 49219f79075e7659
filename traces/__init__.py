"""Counterexample traces: ITF JSON in and out."""
