"""The object-level action vocabulary P-RAG and EmbodiedRAG share: its help text, grammar rules and
argument checks.

Both step-wise agents answer `name(argument)` where the argument is an object id the prompt shows,
an object class (`search`), or nothing. Each keeps its own table of actions (what an action runs
differs); the grammar and the checks that make a parser accept exactly what the grammar derives are
one piece of code here, and so is the guard against actions already known to change nothing from
the current observation: a small model decoding greedily otherwise asks for the same no-op walk
thirty times, or cycles through several.

Only admissible actions are offered, as ALFWorld's admissible commands give the paper's P-RAG
agent: an action on the objects whose type affords it (`unafforded_actions`: the object types'
AI2-THOR flags, pickupable, receptacle, openable, toggleable, sliceable, fillable, which AI2-THOR
reports with every object and the executor already checks before acting), and with the hands it
needs (`hand_refusals`: picking up with empty hands, putting or pouring while holding something,
slicing with a knife in hand, never picking up or putting into what it already holds), and only in
the state it needs (`state_refusals`: opening what is closed, closing what is open, switching on
what is off, off what is on, as the object's state in the scene graph says). Without them a 0.5B
model spends its steps on `toggle_on(Shelf_1)`, `pickup(DiningTable_1)`, ten pickups in a row while
holding a plate, or opening a cabinet it opened before, which the environment can only refuse. Walking to an object already in reach is left out as well (`walks_in_reach`): it does
not move the agent.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from helper_agent.envs.base import Observation
from helper_agent.program.cfg import Expr, Grammar, Ref, alt, seq
from helper_agent.world.catalog import Catalog, ObjectType
from helper_agent.world.effects import DRAIN_TYPES
from helper_agent.world.simulator import KNIFE_TYPES

ArgKind = Literal["id", "class", "none"]
#: What an action needs of the object it names (None: any object).
Affordance = Literal["pickupable", "receptacle", "openable", "toggleable", "sliceable", "pour_target"]
#: What an action needs in the agent's hands (None: anything): nothing, something, a knife, or
#: anything but the named object (a pickup that puts down what it holds first).
HandNeed = Literal["empty", "holding", "knife", "not_it"]
#: What an action needs of the named object's state (None: any): a tracked attribute and the value
#: it must have now (`("open", False)`: it opens what is closed).
StateNeed = tuple[str, bool]
_STATE_WORDS = {("open", True): "open", ("open", False): "closed", ("on", True): "on", ("on", False): "off"}

_AFFORDS: dict[str, Callable[[str, ObjectType], bool]] = {
    "pickupable": lambda _name, t: t.pickupable,
    "receptacle": lambda _name, t: t.receptacle,
    "openable": lambda _name, t: t.openable,
    "toggleable": lambda _name, t: t.toggleable,
    "sliceable": lambda _name, t: t.sliceable and t.sliced_type is not None,
    "pour_target": lambda name, t: t.can_fill_with_liquid or name in DRAIN_TYPES,
}
_NOT_AFFORDED = {
    "pickupable": "cannot be picked up",
    "receptacle": "is not a receptacle",
    "openable": "cannot be opened or closed",
    "toggleable": "cannot be switched on or off",
    "sliceable": "cannot be sliced",
    "pour_target": "cannot hold a liquid",
}
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class NamedAction(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def arg(self) -> ArgKind: ...
    @property
    def help(self) -> str: ...
    @property
    def needs(self) -> Affordance | None: ...
    @property
    def hands(self) -> HandNeed | None: ...
    @property
    def state(self) -> StateNeed | None: ...


def affords(catalog: Catalog, object_type: str, need: Affordance | None) -> bool:
    """Whether objects of `object_type` afford what an action `need`s; a type the catalog does not
    know (another simulator's) affords everything: the environment decides."""
    if need is None or object_type not in catalog:
        return True
    return _AFFORDS[need](object_type, catalog.get(object_type))


def unafforded_actions(actions: Sequence[NamedAction], types: Mapping[str, str], catalog: Catalog) -> dict[str, str]:
    """Every id action on a shown object (`types`: id -> object type) whose type does not afford it,
    rendered (`"toggle_on(Shelf_1)"`), with the reason a model that writes one anyway is refused."""
    out: dict[str, str] = {}
    for a in actions:
        if a.arg != "id" or a.needs is None:
            continue
        for oid, object_type in types.items():
            if not affords(catalog, object_type, a.needs):
                out[f"{a.name}({oid})"] = f"{a.name}({oid}): a {object_type} {_NOT_AFFORDED[a.needs]}; choose another action"
    return out


def hand_refusals(actions: Sequence[NamedAction], ids: Iterable[str], held: str | None,
                  held_type: str | None) -> dict[str, str]:
    """Every action on the shown ids (and every argument-less one) that needs other hands than the
    agent has (`held`: the id of what it holds, of type `held_type`), rendered, with the reason:
    the environment refuses these whatever the object, or does nothing (picking up what is held,
    putting down with empty hands)."""
    out: dict[str, str] = {}
    ids = list(ids)
    for a in actions:
        if a.hands is None or a.arg == "class":
            continue
        if a.arg == "none":
            if a.hands == "holding" and held is None:
                out[f"{a.name}()"] = f"{a.name}(): you hold nothing"
            continue
        if a.hands in ("holding", "not_it") and held in ids:  # never on what it holds itself
            out[f"{a.name}({held})"] = f"{a.name}({held}): you are holding {held}; name another object"
        if a.hands == "empty" and held is not None:
            why = f"your hands are full (you hold {held}); put it somewhere first"
        elif a.hands == "holding" and held is None:
            why = "you hold nothing; pick something up first"
        elif a.hands == "knife" and held_type not in KNIFE_TYPES:
            why = "slicing needs a knife in your hand"
        else:
            continue
        out.update({f"{a.name}({oid})": f"{a.name}({oid}): {why}" for oid in ids})
    return out


def state_refusals(actions: Sequence[NamedAction], ids: Iterable[str],
                   state_of: Callable[[str], Mapping[str, bool] | None]) -> dict[str, str]:
    """Every id action on the shown ids whose object is not in the state it needs (`state_of`: the
    object's tracked attributes, as the scene graph shows them; None when unknown), rendered, with
    the reason: opening what is open, switching on what is on, ... which the environment refuses
    or the executor skips, so it changes nothing."""
    out: dict[str, str] = {}
    states = {oid: state_of(oid) for oid in ids}  # looked up once, not once per action
    for a in actions:
        if a.arg != "id" or a.state is None:
            continue
        attribute, wanted = a.state
        for oid, attributes in states.items():
            if attributes is None or bool(attributes.get(attribute, False)) == wanted:
                continue
            word = _STATE_WORDS.get((attribute, not wanted), f"{attribute}={not wanted}")
            out[f"{a.name}({oid})"] = f"{a.name}({oid}): {oid} is already {word}; choose another action"
    return out


def walks_in_reach(ids: Iterable[str], in_reach: Callable[[str], bool], action: str = "goto") -> dict[str, str]:
    """Walking to an object already in reach (or held) is a no-op: the executor does not move. Like
    an action that changed nothing, it is known to change nothing, here before it is tried once, so
    the grammar leaves it out; rendered action -> the reason a model that writes one is refused."""
    return {f"{action}({oid})": f"{action}({oid}): {oid} is already in reach; act on it or choose another action"
            for oid in ids if in_reach(oid)}


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
                 exclude: Collection[str] = ()) -> tuple[Expr, dict[str, Expr]]:
    """The `action` expression and the rules it refers to: id actions only when some id is shown,
    `search` only with classes.

    `exclude` (rendered actions, `"goto(Mug_2)"`) are left out of the language: actions known to
    change nothing from the current observation (`futile_actions`) cannot be written."""
    for name in [*ids, *classes]:
        if not _ID.match(name):
            raise ValueError(f"{name!r} cannot be an action argument")
    banned: dict[str, set[str]] = {}
    for rendered in exclude:
        name, arg = split_action(rendered)
        banned.setdefault(name, set()).add(arg)
    id_set, class_set = sorted(set(ids)), sorted(set(classes))
    options: list[Expr | str] = []
    rules: dict[str, Expr] = {}
    # Actions allowed on the same ids share one rule: with admissibility most id lists differ by
    # action, but open/close, toggle_on/toggle_off, pickup and the macros come in groups.
    groups: dict[tuple[str, ...], list[str]] = {}
    for a in actions:
        if a.arg == "id":
            allowed = tuple(i for i in id_set if i not in banned.get(a.name, set()))
            if allowed:
                groups.setdefault(allowed, []).append(a.name)
    for n, (allowed, names) in enumerate(groups.items(), start=1):
        if allowed == tuple(id_set):  # no id banned: the shared `id` rule
            options.append(seq(Ref("idaction"), "(", Ref("id"), ")"))
            rules["idaction"] = alt(*names)
            rules["id"] = alt(*id_set)
        else:  # GBNF rule names: lower case, digits, '-'
            options.append(seq(Ref(f"idaction-{n}"), "(", Ref(f"ids-{n}"), ")"))
            rules[f"idaction-{n}"] = alt(*names)
            rules[f"ids-{n}"] = alt(*allowed)
    search_classes = [c for c in class_set if c not in banned.get("search", set())]
    if search_classes:
        options.append(seq("search(", Ref("cls"), ")"))
        rules["cls"] = alt(*search_classes)
    options += [f"{a.name}()" for a in actions if a.arg == "none" and "" not in banned.get(a.name, set())]
    return alt(*options), rules


def observation_fingerprint(obs: Observation) -> str:
    """What an action can change that the agent sees, as a short digest: its pose, what it holds,
    and every visible object's place and states. Equal fingerprints around an action mean it
    changed nothing observable; in a deterministic world it changes nothing from there again."""
    seen = sorted((v.object_id, v.parent_id, v.interactable, sorted((k, repr(x)) for k, x in v.state.items()))
                  for v in obs.visible)
    return hashlib.sha1(repr((obs.pose, obs.held_id, seen)).encode("utf-8")).hexdigest()[:16]


def futile_actions(history: Sequence[Mapping[str, Any]], now: str) -> list[str]:
    """The actions already done from the observation `now` (a fingerprint) that changed nothing:
    doing one again would change nothing either, so the step's grammar leaves them out. Steps keep
    `before` (the fingerprint they acted from) and `changed`. `done()` is never among them: ending
    the episode is always the agent's choice."""
    futile: list[str] = []
    for step in history:
        action = str(step.get("action", ""))
        if (step.get("before") == now and step.get("changed") is False and action not in futile
                and split_action(action)[0] != "done"):
            futile.append(action)
    return futile


def known_state_fingerprint(obs: Observation, objects: Iterable[Any]) -> str:
    """Everything the agent knows, as a short digest: its pose, what it holds, and every object it
    has seen (`TrackedObject`s: place, parent, states, whether it is gone). The agent's own actions
    change only what it sees as it acts, so when this digest comes round again, what it did since
    has come to nothing (a switch turned on and off, a walk there and back, a pickup put back)."""
    known = sorted((t.object_id, t.position, t.parent_id, sorted(t.attributes.items()), t.gone) for t in objects)
    return hashlib.sha1(repr((obs.pose, obs.held_id, known)).encode("utf-8")).hexdigest()[:16]


def recurrent_actions(history: Sequence[Mapping[str, Any]], state: str) -> list[str]:
    """The actions taken before from the known state `state` (a `known_state_fingerprint`; steps
    keep theirs as `state`): the agent is back where it was then, in a deterministic home the same
    action leads where it led, and a model decoding greedily otherwise goes round the same loop to
    the step cap (`toggle_on(Toaster_1)`, `toggle_off(Toaster_1)`, ..., or walking between two
    places). Only from this state: the action is offered again once anything has changed."""
    recurrent: list[str] = []
    for step in history:
        action = str(step.get("action", ""))
        if (step.get("state") == state and action not in recurrent and action != "(none)"
                and split_action(action)[0] != "done"):
            recurrent.append(action)
    return recurrent


def _only_walked(steps: Sequence[Mapping[str, Any]], walks: Collection[str]) -> bool:
    """Whether `steps` were all `walks` or changed nothing: no object was made or moved by hand."""
    return all(split_action(str(s.get("action", "")))[0] in walks or s.get("changed") is False
               or "changed" not in s for s in steps)


def failed_searches(history: Sequence[Mapping[str, Any]], search: str = "search", walk: str = "goto") -> list[str]:
    """The searches that found nothing (their observation starts with `no `) after which the agent has
    only walked or searched: such a search looks everywhere it can reach and opens what it passes, so
    until the agent does something else (slicing makes new objects) a second one finds nothing
    again, and spends the episode's steps walking the whole home once more (the 1.5B searched for a
    potato it had seen three times, until the episode's 1,000 steps ran out)."""
    failed: list[str] = []
    for i, step in enumerate(history):
        action = str(step.get("action", ""))
        if (split_action(action)[0] == search and str(step.get("observation", "")).startswith("no ")
                and action not in failed and _only_walked(history[i + 1:], (walk, search))):
            failed.append(action)
    return failed


def recurrent_reason(action: str) -> str:
    """Why a (non-grammar) model's answer that repeats a loop is refused."""
    return (f"{action} was done before when everything you know was as it is now: what you did since came "
            "to nothing, and it would lead where it led; do something else")


def failed_search_reason(action: str) -> str:
    """Why a (non-grammar) model's answer that repeats a search that found nothing is refused."""
    return (f"{action} found nothing, and you have only walked or searched since: it would find nothing again; "
            "do something else")


def futile_reason(action: str) -> str:
    """Why a (non-grammar) model's answer that is among the futile actions is refused."""
    return f"{action} was already done from here and changed nothing you can see; choose another action"


@dataclass
class StepRefusals:
    """What one step may not answer, and why: `tried` (done from this observation, changed nothing:
    the prompt names them), `futile` (`tried` and walks to objects in reach) and `inadmissible`
    (actions the object's type does not afford, or that need other hands or another state of the
    object). The grammar leaves all of them out."""

    tried: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # `recurrent_actions` and `failed_searches`, when refused
    futile: dict[str, str] = field(default_factory=dict)
    inadmissible: dict[str, str] = field(default_factory=dict)

    @property
    def excluded(self) -> list[str]:
        return [*self.futile, *self.inadmissible]


def step_refusals(actions: Sequence[NamedAction], history: Sequence[Mapping[str, Any]], now: str,
                  shown_types: Mapping[str, str], catalog: Catalog, in_reach: Callable[[str], bool],
                  held: str | None, held_type: str | None, *, refuse_futile: bool,
                  admissible: bool,
                  state_of: Callable[[str], Mapping[str, bool] | None] = lambda _id: None,
                  known_state: str | None = None) -> StepRefusals:
    """One step's `StepRefusals` for the shown ids (`shown_types`: id -> object type; `held`: the
    id the agent holds, of type `held_type`; `state_of`: an id's tracked attributes), from the
    agent's history, the current observation's fingerprint `now` and the switches
    (with `refuse_futile` and a `known_state` fingerprint, also the actions that would go round a
    loop again, `recurrent_actions`, and searches that found nothing, `failed_searches`)."""
    out = StepRefusals()
    if refuse_futile:
        out.tried = futile_actions(history, now)
        out.futile = {a: futile_reason(a) for a in out.tried} | walks_in_reach(shown_types, in_reach)
        if known_state is not None:
            loops = [a for a in recurrent_actions(history, known_state) if a not in out.futile]
            searches = [a for a in failed_searches(history) if a not in out.futile and a not in loops]
            out.repeated = [*loops, *searches]
            out.futile |= {a: recurrent_reason(a) for a in loops} | {a: failed_search_reason(a) for a in searches}
    if admissible:
        out.inadmissible = (unafforded_actions(actions, shown_types, catalog)
                            | hand_refusals(actions, shown_types, held, held_type)
                            | state_refusals(actions, shown_types, state_of))
    return out


class RenderedAction(Protocol):
    def render(self) -> str: ...


Answer = TypeVar("Answer", bound=RenderedAction)


def answer_step(attempts: int, ask: Callable[[str | None, int], str], parse: Callable[[str], Answer],
                parse_error: type[ValueError], futile: Mapping[str, str],
                refused: Callable[[str, bool], None],
                inadmissible: Mapping[str, str] | None = None) -> tuple[Answer | None, str | None]:
    """The bounded ask-parse-retry loop both step-wise agents run: `ask(reason, attempt)` is one LLM
    call (the last refusal's reason goes into the next prompt), `parse` raises `parse_error` on an
    answer outside the grammar, and an answer among `futile` (known to change nothing:
    `futile_actions`, `walks_in_reach`) or `inadmissible` (`unafforded_actions`, `hand_refusals`) is refused like
    one; both map the rendered action to the reason. Each refusal is reported as it happens,
    `refused(reason, futile)`. Returns the accepted answer (None when every attempt was refused)
    and the last refusal's reason."""
    reason: str | None = None
    inadmissible = inadmissible or {}
    for attempt in range(1, attempts + 1):
        text = ask(reason, attempt)
        try:
            candidate = parse(text)
        except parse_error as err:
            reason = str(err)
            refused(reason, False)
            continue
        rendered = candidate.render()
        if rendered in inadmissible:
            reason = inadmissible[rendered]
            refused(reason, False)
        elif rendered in futile:
            reason = futile[rendered]
            refused(reason, True)
        else:
            return candidate, reason
    return None, reason


#: The action line of an answer, `Action: name(argument)`, as the step grammars derive it.
ACTION_LINE = r"Action:[ \t]*(?P<name>[a-z_]+)\((?P<arg>[^()\n]*)\)"


@dataclass(frozen=True)
class ChosenAction:
    """An answer's action: its name and argument (None: no argument)."""

    action: str
    arg: str | None

    def render(self) -> str:
        return f"{self.action}({self.arg or ''})"


def answer_cfg(actions: Sequence[NamedAction], ids: list[str], classes: list[str], exclude: Collection[str],
               root: Any, **lines: Any) -> Grammar:
    """An answer grammar as data: `root` (which names `action` and any of `lines`), the actions on
    the ids shown (search only with classes), never the actions in `exclude`."""
    action, rules = action_rules(actions, ids, classes, exclude)
    return Grammar({"root": root, **lines, "action": action, **rules})


def parse_action(match: re.Match[str], by_name: Mapping[str, NamedAction], ids: list[str], classes: list[str],
                 error: type[ValueError], id_where: str) -> ChosenAction:
    """The action of an answer that matched `ACTION_LINE`, its argument checked (`checked_argument`)."""
    name, arg = match.group("name"), match.group("arg").strip()
    return ChosenAction(name, checked_argument(by_name, name, arg, ids, classes, error, id_where))


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
        self.type_of: dict[str, str] = {}  # short id -> object type
        self._counts: dict[str, int] = {}

    def alias_of(self, oid: str, otype: str) -> str:
        alias = self.alias.get(oid)
        if alias is None:
            n = self._counts.get(otype, 0) + 1
            self._counts[otype] = n
            alias = f"{otype}_{n}"
            self.alias[oid] = alias
            self.env_id[alias] = oid
            self.type_of[alias] = otype
        return alias

    def aliased(self, text: str) -> str:
        """`text` (an environment's error message) with every environment id it names written as its
        short id: a prompt never shows an id the model cannot use (`Cup|+1.12|+0.90|+0.25`)."""
        for oid in sorted(self.alias, key=len, reverse=True):  # a longer id may contain a shorter one
            if oid in text:
                text = text.replace(oid, self.alias[oid])
        return text

    def shown_types(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> object type for the short ids given (ids this table never gave are left out)."""
        return {i: self.type_of[i] for i in ids if i in self.type_of}
