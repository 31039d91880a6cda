"""What the environment declares, used by every method through this one module.

An environment may declare what its actions make true (`envs/base.ActionVocabulary.effects`), what a
failed step lacked (`envs/base.ReportsMissing`) and which steps can never succeed
(`envs/base.ReportsImpossibleSteps`); it may show what holds now (`envs/base.ShowsFacts`). Issue 53
gave these to LLM-Planner's named plans and lifted it from 10.5 to 43.0 on EAI; issue 62 gives them
to every method. Each use is a switch (`Aids`, read from `-o` by `aids_from_options`), off by default,
so a run without them is the published method; a method's paper decides how it uses what is on:

- `goal_steps=on`: the steps that make the task's stated conditions true
  (`goal_conditions.goal_instructions`) go into the method's prompt as step-by-step instructions,
  for the task (the conditions not met yet) and for each example (the steps its plan took);
- `preconditions=on|reported`: a step that fails is tried again after approaching its object, and
  with `reported` first after the steps that make true what the environment says it lacked
  (`approach.act_approaching`: HELPER's pre-condition check);
- `subgoals=on` (the step-wise methods): each step chooses among the subgoals still open, the
  achieving step of each stated condition not met yet and each action goal not done yet
  (`subgoal_steps`), instead of among every action on every object; the chosen subgoal is taken with
  the pre-condition check on the reported lacks. What a 0.5B model cannot do is pick one primitive
  step among hundreds (`benchmarks/prag_step_probe.py`: `goto` at p = 0.72 whatever the task); it can
  pick one of a few named subgoals. The environment declares the subgoals; the model orders them,
  and says when it is done.

On the embedded world (TEACh's dialogues state no conditions) `subgoals=on` offers the request's
open parts instead (`understanding/parts.py`: the shared reading of what the words ask, checked
against the household the agent acts in, each part a short program of the shared executor's API):
`open_parts` and `run_part` here, chosen among by each step-wise method in its own form.

Nothing here reads a benchmark's verdict or a task's data: the effects are the environment's
semantics, the same for every task, and the conditions are those the task states to every agent.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from helper_agent.envs.base import ActionVocabulary, step_by_name
from helper_agent.graphs.approach import Approached, act_approaching
from helper_agent.graphs.goal_conditions import (
    Step,
    achieving_steps,
    conditions,
    goal_instructions,
    settling,
    stated_goals,
    unmet_now,
)
from helper_agent.graphs.named_actions import DONE, THOUGHT
from helper_agent.graphs.options import option
from helper_agent.program.cfg import Grammar, Ref, alt, seq
from helper_agent.program.compiler import compile_program
from helper_agent.program.errors import ProgramError
from helper_agent.tools.errors import EpisodeLimit
from helper_agent.understanding.parts import Part
from helper_agent.understanding.parts import open_parts as request_parts

Preconditions = Literal["off", "on", "reported"]
PRECONDITIONS: tuple[Preconditions, ...] = ("off", "on", "reported")
#: the `-o` switches this module reads
SWITCHES = ("goal_steps", "preconditions", "subgoals")


@dataclass(frozen=True)
class Aids:
    """Which of the environment's declarations a run uses (all off: the published method)."""

    goal_steps: bool = False
    preconditions: Preconditions = "off"
    subgoals: bool = False

    @property
    def reported(self) -> bool:
        return self.preconditions == "reported"

    @property
    def checks(self) -> Preconditions:
        """The pre-condition check a step is taken with: a subgoal always with the reported one
        (it is done with the steps it lacks), any other step as `preconditions` says."""
        return "reported" if self.subgoals else self.preconditions

    def labels(self) -> list[str]:
        """The switches that are on, as `-o` spells them (a row's label of its aids)."""
        out = ["goal_steps=on"] if self.goal_steps else []
        out += [f"preconditions={self.preconditions}"] if self.preconditions != "off" else []
        return out + (["subgoals=on"] if self.subgoals else [])


def aids_from_options(options: Mapping[str, str], allowed: Collection[str] = SWITCHES) -> Aids:
    """The switches of `SWITCHES` a method takes (`allowed`); a `ValueError` names a bad value."""
    given = dict(options)
    read = {name: name in allowed for name in SWITCHES}
    return Aids(goal_steps=read["goal_steps"] and option(given, "goal_steps", "off", ("on", "off")) == "on",
                preconditions=option(given, "preconditions", "off", PRECONDITIONS)  # type: ignore[arg-type]
                if read["preconditions"] else "off",
                subgoals=read["subgoals"] and option(given, "subgoals", "off", ("on", "off")) == "on")


def pending(env: Any, request: str, executed: Sequence[str]) -> list[str] | None:
    """The stated conditions `env` does not show yet, given the actions executed (None: the request
    states none, or the environment shows no facts, so there is nothing to check)."""
    return unmet_now(env, stated_goals(request), executed)


def task_instructions(request: str, vocabulary: ActionVocabulary, still_open: Sequence[str] | None) -> list[str]:
    """The task's step-by-step instructions: the steps that make its stated conditions true, those
    in `still_open` only (all when None: nothing could be checked)."""
    return goal_instructions(request, vocabulary.effects, vocabulary.actions, vocabulary.objects,
                             keep=None if still_open is None else lambda condition, _step: condition in still_open,
                             settled_last=vocabulary.settled_last)


def open_instructions(env: Any, request: str, vocabulary: ActionVocabulary, executed: Sequence[str]) -> list[str]:
    """`task_instructions` for the conditions `env` does not show yet, given the actions executed."""
    return task_instructions(request, vocabulary, pending(env, request, executed))


def step_lines(steps: Sequence[Step]) -> list[str]:
    """Steps as instruction sentences, the form `goal_instructions` writes: "SWITCHON tv."."""
    return [" ".join([action, *objects]) + "." for action, objects in steps]


def example_instructions(request: str, steps: Sequence[Step], objects: Collection[str],
                         vocabulary: ActionVocabulary) -> list[str]:
    """A solved example's step-by-step instructions: the achieving steps of its stated conditions that
    its plan took (so an example shows instructions and a plan that agree)."""
    taken = {(a, tuple(o)) for a, o in steps}
    return goal_instructions(request, vocabulary.effects, vocabulary.actions, objects,
                             keep=lambda _condition, step: step in taken, settled_last=vocabulary.settled_last)


def example_subgoals(request: str, steps: Sequence[Step], objects: Collection[str],
                     vocabulary: ActionVocabulary) -> list[Step]:
    """A solved example in the subgoals' form: the steps of its sequence that achieve one of its
    stated conditions, in its order, once each (what a writer choosing among subgoals would have
    written for it)."""
    goals = stated_goals(request)
    achieving = set(achieving_steps(conditions(goals), vocabulary.effects, vocabulary.actions, objects).values())
    acted = {a for alternatives in goals.actions for a in alternatives}
    chosen = [(a, tuple(o)) for a, o in steps if (a, tuple(o)) in achieving or a in acted]
    return list(dict.fromkeys(chosen))


def take_step(env: Any, vocabulary: ActionVocabulary, step: Step, preconditions: Preconditions) -> Approached:
    """One step with the pre-condition check the switch asks for (none when "off")."""
    action, objects = step
    if preconditions == "off":
        return Approached(step_by_name(env, action, tuple(objects)))
    return act_approaching(env, vocabulary, action, tuple(objects), reported=preconditions == "reported")


def subgoal_steps(request: str, vocabulary: ActionVocabulary, still_open: Sequence[str] | None) -> list[Step]:
    """The subgoals open now, as the steps that achieve them: for each stated condition in
    `still_open` its achieving step (by the environment's effects), then for each action goal not
    done yet ("do LOOKAT or WATCH") each of its actions on each object the stated conditions name
    (on every object of the vocabulary when they name none), in the order the conditions are stated
    with what moving about undoes last (`ActionVocabulary.settled_last`). Empty when the request
    states no goal, or `still_open` is None (nothing could be checked)."""
    goals = stated_goals(request)
    if not goals or still_open is None:
        return []
    open_lines = set(still_open)
    open_conditions = [c for c in conditions(goals) if c in open_lines]
    found = achieving_steps(open_conditions, vocabulary.effects, vocabulary.actions, vocabulary.objects)
    steps = [found[c] for c in open_conditions if c in found]
    steps.sort(key=lambda step: settling(step[0], vocabulary.effects, vocabulary.settled_last))
    named = [o for o in goals.objects if o in set(vocabulary.objects)] or list(vocabulary.objects)
    for alternatives in goals.actions:
        if "do " + " or ".join(alternatives) not in open_lines:
            continue
        for action in alternatives:
            arity = vocabulary.actions.get(action)
            if arity == 0:
                steps.append((action, ()))
            elif arity == 1:
                steps += [(action, (o,)) for o in named]
    return list(dict.fromkeys(steps))


def open_subgoals(env: Any, request: str, vocabulary: ActionVocabulary, executed: Sequence[str],
                  closed: Collection[Step] = ()) -> tuple[list[str], list[Step]] | None:
    """What `subgoals=on` offers now: the stated conditions not met yet and the subgoals open for
    them (`subgoal_steps`), less the steps in `closed` (those the environment said can never succeed,
    or a method's own "tried from here already"). None when the request states no goal or the
    environment shows no facts: the method then answers over its whole vocabulary, as without the
    switch."""
    still_open = pending(env, request, executed)
    if still_open is None:
        return None
    leave_out = set(closed)
    return still_open, [s for s in subgoal_steps(request, vocabulary, still_open) if s not in leave_out]


def refuse_declared_aids(aids: Aids, env: Any) -> None:
    """A `ValueError` when a step-wise method is asked for aids on an environment its loop there
    does not read them from: the embedded world's loop acts on ids, not on stated conditions, so only
    `subgoals=on` (the request's open parts, `open_parts`) serves it."""
    refused = [label for label in aids.labels() if label != "subgoals=on"]
    if refused:
        raise ValueError(f"{', '.join(refused)}: this method reads them where it acts by names "
                         f"(envs/base.ActsByName); {type(env).__name__} does not")


@dataclass(frozen=True)
class OpenParts:
    """What `subgoals=on` offers on the embedded world now: the sentences of what the request asked
    and the household does not show yet, and the parts (each a program) that would meet them."""

    unmet: list[str]
    parts: list[Part]

    def by_label(self, label: str) -> Part | None:
        return next((p for p in self.parts if p.label == label), None)


def open_parts(env: Any, request: str, closed: Collection[str] = ()) -> OpenParts:
    """The request's open parts in the household `env` holds now (its objects' metadata, as
    AI2-THOR gives every agent with each event), less those labelled in `closed` (run already and
    still open: a method's "tried from here"). The parts are empty when nothing the words ask is
    open, or no part makes what is (the method then takes its own steps)."""
    unmet, parts = request_parts(request, env.objects_metadata())
    leave_out = set(closed)
    return OpenParts(unmet, [p for p in parts if p.label not in leave_out])


def run_part(executor: Any, part: Part) -> str:
    """Act `part` out with the shared executor (`tools/executor.Executor`); the observation text.
    `EpisodeLimit` passes through: the episode is over."""
    try:
        compiled = compile_program(part.program)
    except ProgramError as err:  # the reading's programs compile; a class the catalog lacks does not
        return f"failed: {err}"
    # The bindings are kept from part to part: a program's first Plate is the same plate in every
    # part ("plate#1"), so a salad's lettuce and tomato go on one plate, and the bread slice a part
    # toasted is the slice the next part puts on it.
    result = executor.run(compiled.subgoals)
    if result.ended_by_limit:
        raise EpisodeLimit(result.status)
    if result.status == "done":
        return f"done: {part.label}"
    return f"failed: {part.label}: {result.error or result.status}"


SUBGOAL = "subgoal"
"""The action a step-wise method takes a part with on the embedded world: `subgoal(<label>)`."""
REFUSED = "(none)"
"""The action of a step whose every answer was refused (as the step loops record it)."""


def part_action(part: Part) -> str:
    return f"{SUBGOAL}({part.label})"


def part_lines(offered: OpenParts) -> list[str]:
    """The prompt's lines for `subgoals=on` on the embedded world: what is unmet, and the parts to
    choose among (the EAI loops' `named_steps.subgoal_lines`, in the same words)."""
    return ["Goals not met yet: " + ("; ".join(offered.unmet) or "none"),
            "Subgoals you can take now (each is done with the steps it needs; choose the one to do next, "
            f"answer {SUBGOAL}(<one of them>)): " + ("; ".join(p.label for p in offered.parts) or "none")]


def part_rules(parts: Sequence[Part], thought: bool = False) -> Grammar:
    """`Action: subgoal(<label>)` for one of `parts` (after `Thought: <one line>` with `thought`);
    `done()` is not among them: while a part is open the episode goes on."""
    action = seq(f"{SUBGOAL}(", alt(*(p.label for p in parts)), ")")
    if not thought:
        return Grammar({"root": seq("Action: ", Ref("action")), "action": action})
    return Grammar({"root": seq("Thought: ", Ref("thought"), "\nAction: ", Ref("action")),
                    "thought": THOUGHT, "action": action})


def parse_part(text: str, offered: OpenParts) -> tuple[str, Part]:
    """The answer to `part_rules`: the thought ("" without one) and the part chosen; a `ValueError`
    says what is wrong, with the labels to choose from."""
    thought, action = "", ""
    for line in text.strip().splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "thought":
            thought = value.strip()
        elif key.strip().lower() == "action":
            action = value.strip()
    label = action[len(SUBGOAL) + 1:-1].strip() if action.startswith(f"{SUBGOAL}(") and action.endswith(")") else ""
    part = offered.by_label(label)
    if part is None:
        raise ValueError(f"answer Action: {SUBGOAL}(<one of: {'; '.join(p.label for p in offered.parts)}>)")
    return thought, part


def taken_parts(actions: Sequence[str]) -> list[str]:
    """The labels of the parts taken already (the actions `subgoal(<label>)` among `actions`): each is
    tried once, so one that is still open after it ran is not offered again (`open_parts`' `closed`)."""
    return [a[len(SUBGOAL) + 1:-1] for a in actions if a.startswith(f"{SUBGOAL}(") and a.endswith(")")]


@dataclass(frozen=True)
class PartChoice:
    """A step's decision with `subgoals=on` on the embedded world: the action (`subgoal(<label>)`,
    `done()`, or "(none)" when every answer was refused), the thought, and the part's program."""

    action: str
    thought: str = ""
    program: str = ""
    rejected: str = ""  # why the last answer was refused, when action is "(none)"

    def step_fields(self) -> dict[str, str]:
        """The fields of the step loops' record (`graphs/steps.Step`) this decision fills: the
        action and thought, the part's program for the act node to run, and for a refused answer
        the observation that ends the step there."""
        fields = {"action": self.action, "thought": self.thought}
        if self.program:
            fields["program"] = self.program
        if self.action == REFUSED:
            fields["observation"] = f"invalid answer: {self.rejected}"
        return fields


def choose_part(env: Any, request: str, taken: Sequence[str], attempts: int,
                ask: Callable[[OpenParts, str | None, int], str],
                rejected: Callable[[str], None] = lambda _why: None) -> PartChoice | None:
    """One step of a step-wise method with `subgoals=on` on the embedded world. The model chooses
    among the request's open parts (`ask(offered, reason, attempt)` returns its answer to
    `part_rules`; a refused answer is asked again with the reason, `attempts` times in all); a lone
    part is taken without asking; `done()` when a part was taken (`taken`: the actions so far) and
    nothing the words asked is open now. None when the method takes its own step: the reading
    found nothing open and no part was taken, or what is open has no part (coffee, a watered plant)."""
    parts_taken = taken_parts(taken)
    offered = open_parts(env, request, closed=parts_taken)
    if not offered.parts:
        if parts_taken and not offered.unmet:
            return PartChoice(DONE, "no open subgoal: every goal read from the request is met")
        return None
    if len(offered.parts) == 1:
        only = offered.parts[0]
        return PartChoice(part_action(only), "the one open subgoal", only.program)
    reason: str | None = None
    for attempt in range(1, attempts + 1):
        try:
            thought, part = parse_part(ask(offered, reason, attempt), offered)
        except ValueError as err:
            reason = str(err)
            rejected(reason)
            continue
        return PartChoice(part_action(part), thought, part.program)
    return PartChoice(REFUSED, rejected=reason or "")
