"""The controller's rules proven for every input with z3 (``kraftcheck prove``)."""
