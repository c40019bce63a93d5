"""Measuring what compression costs: the fact-retention probe and real tokenizers."""
