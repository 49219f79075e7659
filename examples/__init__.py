"""Small models that come with kraftcheck, to read and to start a model of your own from:
``kraftcheck check --model kraftcheck.examples.diehard:make_model`` (the Die Hard jugs) and
``kraftcheck check --model kraftcheck.examples.twophase:make_model --no-deadlock`` (two-phase commit)."""
