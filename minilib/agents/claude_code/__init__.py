"""Claude Code: what it writes and how its client behaved."""
