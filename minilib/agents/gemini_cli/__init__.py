"""Gemini CLI (Google's open-source agent).

- reader.py: its chat files (a session's JSON or JSON lines) and their usage;
- policy.py: its compression of the history, ported from its source.
"""
