"""graphs layer of helper-agent (see docs/architecture.md)."""
