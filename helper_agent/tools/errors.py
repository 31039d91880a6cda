"""How acting, grounding, macros and searching report to the executor's loop.

They live apart from the executor so that the modules it is built from (grounding, macros, search,
the locators) can raise and catch them without importing the executor: the dependencies of the
tools layer then point one way only, towards this module.
"""

from __future__ import annotations

from helper_agent.program.subgoals import ObjectRef


class EpisodeLimit(Exception):
    """TEACh's step or failure limit is reached: the episode is over, whatever the caller does."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StepFailed(Exception):
    """An action failed; carries the simulator's error and the object acted on.

    The error text is what failure diagnosis reads, so it is kept verbatim.
    """

    def __init__(self, action: str, object_id: str | None, error: str) -> None:
        super().__init__(f"{action} {object_id or ''}: {error}".strip())
        self.action = action
        self.object_id = object_id
        self.error = error


class ObjectNotFound(Exception):
    """No seen object can stand for a program object, even after searching.

    The loop turns it into a "not_found" result naming the class and the program object, so the
    graph's locate node can search again as that program object.
    """

    def __init__(self, ref: ObjectRef, pieces: int = 0) -> None:
        # `pieces`: slices of the class that were seen. "could not find Apple" beside 8 apple slices
        # read as a blind search; it was a search for a whole apple, and the message says so.
        if pieces:
            super().__init__(f"could not find a whole {ref.describe()} ({pieces} {ref.object_class} slice"
                             f"{'s' if pieces > 1 else ''} seen, but this step needs an uncut one)")
        else:
            super().__init__(f"could not find {ref.describe()}")
        self.ref = ref
