"""world layer of helper-agent (see DESIGN.md)."""
