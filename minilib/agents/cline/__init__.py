"""Cline (a VS Code agent).

- reader.py: a task's `api_conversation_history.json`, with the usage of its
  `ui_messages.json` beside it, or of its replies' `metrics`.
"""
