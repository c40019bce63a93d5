"""What a real agent's harness did, by the version that wrote its log.

A replay of an agent's own policy, and the count of what its calls sent, follow the
version named in the log: the numbers here changed between releases. Each module is
one agent; each number names its source in docs/references.md.
"""
