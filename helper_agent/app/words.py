"""The page's words for what the routine memory stores as identifiers.

The routines table once read "confirmed_success" and "2026-12-06T14:03:07.123456Z": the memory's
field values, not what a person says. The memory keeps them as they are (the CLI's JSON Lines
export and import use them); the page shows these words.
"""

from __future__ import annotations

from datetime import UTC, datetime, timezone

ROUTINE_SOURCES = {"taught": "taught", "confirmed_success": "taught and confirmed", "imported": "imported"}
"""A routine version's `source` in words: `helper routines add` (taught), a request the person
confirmed (`--confirmed` too), or a routines file imported."""


def routine_source(source: str) -> str:
    return ROUTINE_SOURCES.get(source, source.replace("_", " "))


def local_time(stamp: str, zone: timezone | None = None) -> str:
    """An ISO timestamp of the memory (UTC, "2026-12-06T14:03:07.123456Z") as a date and time of the
    app's machine ("6 Dec 2026, 15:03"; `zone` for another one); a stamp it cannot read as it is."""
    try:
        when = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(zone)
    return f"{when.day} {when:%b %Y, %H:%M}"
