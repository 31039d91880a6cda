"""The object-level action vocabulary P-RAG and EmbodiedRAG share: its help text, grammar rules and
argument checks.

Both step-wise agents answer `name(argument)` where the argument is an object id the prompt shows,
an object class (`search`), or nothing. Each keeps its own table of actions (what an action runs
differs); the grammar and the checks that make a parser accept exactly what the grammar derives are
one piece of code here, and so is the guard against a step that repeats an action which changed
nothing: a small model decoding greedily otherwise asks for the same no-op walk thirty times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from helper_agent.envs.base import Observation
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


def split_action(rendered: str) -> tuple[str, str]:
    """`"goto(Mug_2)"` -> `("goto", "Mug_2")`; `"done()"` -> `("done", "")`."""
    name, _, rest = rendered.partition("(")
    return name, rest[:-1] if rest.endswith(")") else rest


def action_rules(actions: Sequence[NamedAction], ids: list[str], classes: list[str],
                 exclude: str | None = None) -> tuple[Expr, dict[str, Expr]]:
    """The `action` expression and the rules it refers to: id actions only when some id is shown,
    `search` only with classes.

    `exclude` (a rendered action, `"goto(Mug_2)"`) is left out of the language: the retry after an
    action that repeated one which changed nothing cannot write it again."""
    for name in [*ids, *classes]:
        if not _ID.match(name):
            raise ValueError(f"{name!r} cannot be an action argument")
    banned, banned_arg = split_action(exclude) if exclude else ("", "")
    id_names = [a.name for a in actions if a.arg == "id"]
    id_set, class_set = sorted(set(ids)), sorted(set(classes))
    options: list[Expr | str] = []
    rules: dict[str, Expr] = {}
    if id_set:
        free_names = [n for n in id_names if n != banned]
        if free_names:
            options.append(seq(Ref("idaction"), "(", Ref("id"), ")"))
            rules["idaction"] = alt(*free_names)
            rules["id"] = alt(*id_set)
        other_ids = [i for i in id_set if i != banned_arg]
        if banned in id_names and other_ids:
            options.append(seq(f"{banned}(", Ref("otherid"), ")"))
            rules["otherid"] = alt(*other_ids)
    search_classes = [c for c in class_set if not (banned == "search" and c == banned_arg)]
    if search_classes:
        options.append(seq("search(", Ref("cls"), ")"))
        rules["cls"] = alt(*search_classes)
    options += [f"{a.name}()" for a in actions if a.arg == "none" and a.name != banned]
    return alt(*options), rules


def observation_fingerprint(obs: Observation) -> tuple[Any, ...]:
    """What an action can change that the agent sees: its pose, what it holds, and every visible
    object's place and states. Two equal fingerprints around an action mean it changed nothing
    observable, and in a deterministic world doing it again changes nothing either."""
    return (obs.pose, obs.held_id,
            tuple(sorted((v.object_id, v.parent_id, v.interactable, tuple(sorted((k, repr(x)) for k, x in v.state.items())))
                         for v in obs.visible)))


def futile_repeat(action: str, history: Sequence[Mapping[str, Any]]) -> str | None:
    """Why `action` should not be done now, or None: it is the previous step's action again and
    that step changed nothing the agent can see (its `changed` flag is False). `done()` is never
    refused: ending the episode is always the agent's choice."""
    if not history or split_action(action)[0] == "done":
        return None
    last = history[-1]
    if last.get("action") != action or last.get("changed", True):
        return None
    return f"{action} again: the last {action} changed nothing you can see, so it would change nothing now; choose another action"


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
