"""opencode: what it writes and how its client behaved."""
