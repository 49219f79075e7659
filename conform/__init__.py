"""Conformance: the Kafka model's controller steps replayed against Kafka's own controller code.

``harness`` runs the Java harness (``harness/``), ``mapping`` states how the model's terms map
to Kafka's, ``compare`` replays one run step by step, and ``run`` is ``kraftcheck conform``.
"""
