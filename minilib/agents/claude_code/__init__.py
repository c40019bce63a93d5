"""Claude Code (Anthropic's CLI agent; closed source, so what is here is read from its
changelog, docs and real session files, each number with its source).

- reader.py: its session files (`~/.claude/projects/<project>/<session>.jsonl`);
  stream.py: its print-mode output (`claude -p --output-format stream-json`);
- behaviour.py: its numbers by version (the auto-compact trigger, the token-rule
  microcompact, what a resume lost, what it re-attaches after a compaction);
- text.py: how Claude's API counts its text, by character class;
- client.py: what its client sent at each call, the one simulation every path uses;
- policy.py: its policy replayed on any log, and what its own row replays.
"""
