"""A method's switches as `--agent-option KEY=VALUE` gives them: parsed, checked, refused early.

Every switch arrives as a string; a method reads it with `option` (one of a few words),
`positive_option` or `count_option` (whole numbers), and refuses a key it does not have with
`check_known`, so a typo never silently runs the default.
"""

from __future__ import annotations

from typing import Any


def parse_agent_options(pairs: list[str] | None) -> dict[str, str]:
    """`["k=9", "replan=off"]` -> `{"k": "9", "replan": "off"}`; a pair without `=` is an error."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--agent-option takes KEY=VALUE, not {pair!r}")
        options[key.strip()] = value.strip()
    return options


def option(options: dict[str, str], key: str, default: Any, allowed: tuple[str, ...] | None = None) -> str:
    """One switch's value (string), checked against `allowed` when given."""
    value = options.get(key, str(default))
    if allowed is not None and value not in allowed:
        raise ValueError(f"agent option {key}={value!r}: choose from {', '.join(allowed)}")
    return value


def on_off(options: dict[str, str], key: str, default: str = "on") -> bool:
    """A switch that is `on` or `off`."""
    return option(options, key, default, ("on", "off")) == "on"


def _whole_number(options: dict[str, str], key: str, default: int, minimum: int) -> int:
    value = option(options, key, default)
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"agent option {key}={value!r}: expected a whole number") from None
    if number < minimum:
        raise ValueError(f"agent option {key}={value!r}: expected a number >= {minimum}")
    return number


def positive_option(options: dict[str, str], key: str, default: int) -> int:
    """A switch that is a whole number >= 1 (k, max_steps, ...)."""
    return _whole_number(options, key, default, 1)


def count_option(options: dict[str, str], key: str, default: int) -> int:
    """A switch that is a whole number >= 0 (0 turns the feature off)."""
    return _whole_number(options, key, default, 0)


def check_known(options: dict[str, str], known: tuple[str, ...], agent: str) -> None:
    """Reject a switch the method does not have (a typo must not silently run the default)."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"agent {agent!r} has no option {', '.join(unknown)}; it takes {', '.join(known) or 'none'}")
