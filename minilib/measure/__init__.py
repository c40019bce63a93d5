"""Measuring what compression costs: the fact-retention probe (`facts`),
the grounded model and its outcome (`grounded_model`, `grounding`) and
real tokenizers (`tokenizers`)."""

from .facts import Fact, load_facts, probe

__all__ = ["Fact", "load_facts", "probe"]
