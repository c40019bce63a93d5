"""pi (pi-coding-agent).

- reader.py: its session files (a tree of entries; the branch a replay follows),
  their compactions and usage.
"""
