"""Errors raised for bad input to the world.

A failed *action* (holding something already, a closed fridge, ...) is not an exception: it is an
`ActionResult` with `success=False`, as in AI2-THOR. Exceptions are for input that is not an action
at all: an unknown action name, an object id that does not exist, a malformed state file. They leave
the world exactly as it was, so the caller can correct the input and go on.
"""


class WorldError(ValueError):
    """Base class for invalid input to the world."""


class InvalidActionError(WorldError):
    """The action name is not one of TEACh's actions, or its arguments are malformed."""


class UnknownObjectError(WorldError):
    """The object id names no object in the current scene."""


class StateFormatError(WorldError):
    """A state or metadata file is malformed; the message names the file and the field."""
