"""opencode (an open-source coding agent).

- reader.py: its exported sessions, their pruned outputs and compactions;
- policy.py: its prune of old tool outputs, ported from its source.
"""
