"""pi (pi-coding-agent): what it writes and how its client behaved."""
