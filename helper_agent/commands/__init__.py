"""Typer sub-applications of the `helper` command, one module per command group.

Each module exposes `app: typer.Typer`; `helper_agent.cli` mounts them.
"""
