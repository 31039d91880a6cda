"""The object-level action vocabulary P-RAG and EmbodiedRAG share: its help text, grammar rules and
argument checks.

Both step-wise agents answer `name(argument)` where the argument is an object id the prompt shows,
an object class (`search`), or nothing. Each keeps its own table of actions (what an action runs
differs); the grammar and the checks that make a parser accept exactly what the grammar derives are
one piece of code here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

from helper_agent.program.cfg import Expr, Ref, alt, seq

ArgKind = Literal["id", "class", "none"]
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class NamedAction(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def arg(self) -> ArgKind: ...
    @property
    def help(self) -> str: ...


def action_help(actions: Sequence[NamedAction]) -> str:
    """The action list for a system prompt, one `- name(ARG): help` line each."""
    lines = []
    for a in actions:
        arg = {"id": "ID", "class": "ObjectClass", "none": ""}[a.arg]
        lines.append(f"- {a.name}({arg}): {a.help}")
    return "\n".join(lines)


def action_rules(actions: Sequence[NamedAction], ids: list[str], classes: list[str]) -> tuple[Expr, dict[str, Expr]]:
    """The `action` expression and the rules it refers to: id actions only when some id is shown,
    `search` only with classes."""
    for name in [*ids, *classes]:
        if not _ID.match(name):
            raise ValueError(f"{name!r} cannot be an action argument")
    options: list[Expr | str] = []
    if ids:
        options.append(seq(Ref("idaction"), "(", Ref("id"), ")"))
    if classes:
        options.append(seq("search(", Ref("cls"), ")"))
    options += [f"{a.name}()" for a in actions if a.arg == "none"]
    rules: dict[str, Expr] = {}
    if ids:
        rules["idaction"] = alt(*[a.name for a in actions if a.arg == "id"])
        rules["id"] = alt(*sorted(set(ids)))
    if classes:
        rules["cls"] = alt(*sorted(set(classes)))
    return alt(*options), rules


def checked_argument(by_name: Mapping[str, NamedAction], name: str, arg: str, ids: list[str], classes: list[str],
                     error: type[ValueError], id_where: str) -> str | None:
    """The call's argument if `name(arg)` is one the grammar derives (None for no argument);
    otherwise `error` says what is wrong, for the bounded retry."""
    spec = by_name.get(name)
    if spec is None:
        raise error(f"unknown action {name!r}; use one of {', '.join(by_name)}")
    if spec.arg == "none":
        if arg:
            raise error(f"{name}() takes no argument")
        return None
    if spec.arg == "id":
        if arg not in ids:
            raise error(f"{name}({arg}): {arg or 'nothing'} is not an object id {id_where}")
        return arg
    if arg not in classes:
        raise error(f"search({arg}): {arg or 'nothing'} is not a known object class")
    return arg


class ShortIds:
    """The short ids a prompt shows (`Mug_2`) for environment object ids, both ways: numbered per
    class in the order objects are first seen, so an id never changes within an episode."""

    def __init__(self) -> None:
        self.alias: dict[str, str] = {}  # environment id -> short id
        self.env_id: dict[str, str] = {}  # short id -> environment id
        self._counts: dict[str, int] = {}

    def alias_of(self, oid: str, otype: str) -> str:
        alias = self.alias.get(oid)
        if alias is None:
            n = self._counts.get(otype, 0) + 1
            self._counts[otype] = n
            alias = f"{otype}_{n}"
            self.alias[oid] = alias
            self.env_id[alias] = oid
        return alias
