"""The article's four other compression paths, and the six side by side.

truncation (drop the oldest closed range), hierarchical (map-reduce summary),
store (external store + recall), budgeting (input side); `registry` runs any of
them, or the article's two, on one session with the fact probe.
"""
