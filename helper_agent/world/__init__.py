"""world layer of helper-agent (see docs/architecture.md)."""
