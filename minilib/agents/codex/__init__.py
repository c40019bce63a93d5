"""Codex CLI (OpenAI's open-source agent).

- reader.py: its rollout files (`~/.codex/sessions/.../rollout-*.jsonl`), their
  compactions and `token_count` usage;
- policy.py: its compaction and output truncation, ported from its source.

Its client is followed as the log records it (the generic client).
"""
