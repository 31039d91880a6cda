"""Errors raised by the TEACh layer."""

from __future__ import annotations


class TeachError(Exception):
    """Base class of every error raised by `helper_agent.teach`."""


class TeachFormatError(TeachError, ValueError):
    """A TEACh JSON file (game, EDH or TfD instance) is malformed.

    The message names the file and the offending key path, for example
    ``data/x.edh0.json: key 'driver_action_history[3].action_name': field required``.
    """

    def __init__(self, source: str, key: str | None, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = f"{source}: key '{key}': " if key else f"{source}: "
        super().__init__(where + problem)


class TaskDefinitionError(TeachError, ValueError):
    """A task definition is malformed, or references a task that cannot be resolved."""
