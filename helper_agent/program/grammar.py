"""The program grammar for constrained decoding, generated from the API tables and the object catalog.

`program_grammar()` is GBNF text (llama.cpp's grammar format; pass it to
`llama_cpp.LlamaGrammar.from_string`) for exactly the canonical form of the documented language:

    ```python
    # a comment
    mug = InteractionObject("Mug", landmark="CounterTop", attributes=["clean"])
    agent = AgentCorrective()
    mug.pickup_and_place(coffee_machine)
    agent.move_back()
    move_back()
    for i in range(2):
        plate = InteractionObject("Plate")
        plate.go_to()
    for landmark in ["CounterTop", "DiningTable"]:
        cup = InteractionObject("Cup", landmark=landmark)
    ```

One statement per line, single spaces, four-space loop bodies, no nested loops. What comes from
where: the methods and which take an object argument from `api.OBJECT_METHODS`, the agent moves from
`api.AGENT_METHODS`, the constructors and their keywords from `api.OBJECT_CONSTRUCTOR`,
`api.AGENT_CONSTRUCTOR` and `api.CONSTRUCTOR_PARAMS`, the attribute words from
`api.ATTRIBUTE_METHODS`, loop counts and list lengths from `api.MAX_LOOP_LENGTH`, and the class names
from the catalog (or the `classes` a caller passes, e.g. the types a scene has). Names are snake_case
ASCII identifiers of at most 32 characters that are not Python keywords nor API names.

The fence. By default the program is wrapped in a ```python fence, because that is how chat models
answer with code and how the planner's few-shot examples show the answers (`_fence` in
graphs/helper/prompts.py), so the constrained output starts the way the model expects to start;
the closing fence ends the grammar, and with it the answer. `fence=False` gives the bare program.

The cap. A program has at most `max_statements` lines, counting every line: statements, loop headers,
loop-body lines, comments and blank lines. Each line is bounded too (names of 32 characters, comments
of 120, lists of `MAX_LOOP_LENGTH` classes), so a model repeating itself cannot run to the token
limit: the grammar ends. Counting is done by chains of rules (`more-K`: at most K lines left), so
the rule count grows linearly with `max_statements`.

What the grammar cannot promise. A context-free grammar does not know which names are bound, so text
it accepts may still be a `SemanticError` (a name used before it is defined, a method on the wrong
kind of value, a CoffeeMachine picked up) or a `LimitError` (a loop of 20 over 38 lines is more than
300 actions); it is never a syntax error or a construct outside the language. The tests check this
on random derivations (`cfg_sample.py`) and check with a recognizer (`cfg_match.py`) that every
seed example and every example in the API text is accepted and that programs outside the language
are not.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Iterable, Sequence

from helper_agent.program import api
from helper_agent.program.cfg import Chars, Expr, Grammar, Lit, Ref, Repeat, alt, chars, opt, seq
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.classes import default_catalog
from helper_agent.program.interpreter import CLASS_NAME

DEFAULT_MAX_STATEMENTS = 40
MAX_NAME_CHARS = 32
MAX_COMMENT_CHARS = 120
INDENT = "    "
FENCE_OPEN = "```python\n"
FENCE_CLOSE = "```"

_FIRST = "abcdefghijklmnopqrstuvwxyz"
_REST = _FIRST + "0123456789_"


def reserved_names() -> frozenset[str]:
    """Names a program may not bind: Python keywords, and what the API and the language define."""
    api_names = {n for n in api.API_NAMES if n[:1].islower()}
    return frozenset({*keyword.kwlist, *api_names, "range", "print"})


def _char_class(allowed: Iterable[str]) -> Chars:
    """The smallest list of ranges covering exactly `allowed`."""
    codes = sorted({ord(c) for c in allowed})
    ranges: list[tuple[str, str]] = []
    for code in codes:
        if ranges and ord(ranges[-1][1]) == code - 1:
            ranges[-1] = (ranges[-1][0], chr(code))
        else:
            ranges.append((chr(code), chr(code)))
    return Chars(tuple(ranges))


def _name_rules(excluded: frozenset[str], max_chars: int) -> dict[str, Expr]:
    """Rules for [a-z][a-z0-9_]* names of at most `max_chars`, except the `excluded` words.

    One rule per prefix of an excluded word (a trie): from a prefix the name may end (unless the
    prefix is excluded), go on along the trie, or leave it with any other character and then be
    free. Context-free grammars have no "except", so the exception is spelled out this way.
    """
    words = sorted(w for w in excluded if w[:1] in _FIRST and set(w) <= set(_REST))
    prefixes = sorted({w[:i] for w in words for i in range(len(w) + 1)}, key=lambda p: (len(p), p))
    ids = {p: f"name-{i}" for i, p in enumerate(prefixes)}
    rules: dict[str, Expr] = {"name": Ref(ids[""])}
    for prefix in prefixes:
        depth = len(prefix)
        options: list[Expr] = []
        if prefix and prefix not in excluded:
            options.append(Lit(""))
        if depth < max_chars:
            children = sorted({w[depth] for w in words if w.startswith(prefix) and len(w) > depth})
            options += [seq(c, Ref(ids[prefix + c])) for c in children]
            others = [c for c in (_FIRST if depth == 0 else _REST) if c not in children]
            if others:
                options.append(seq(_char_class(others), Repeat(_char_class(_REST), 0, max_chars - depth - 1)))
        rules[ids[prefix]] = alt(*options)
    return rules


def _check_classes(classes: Sequence[str]) -> tuple[str, ...]:
    names = tuple(sorted(set(classes)))
    if not names:
        raise ValueError("the grammar needs at least one object class")
    for name in names:
        if not CLASS_NAME.match(name):
            raise ValueError(f"{name!r} is not an object class name the parser accepts")
    return names


def _default_classes() -> tuple[str, ...]:
    view = default_catalog()
    if view is None:  # pragma: no cover - only while the world layer is absent
        raise ValueError("the object catalog is not available: pass classes=[...]")
    return tuple(view.names())


def default_class_names() -> tuple[str, ...]:
    """The object classes a program may name: the catalog's, sorted."""
    return tuple(sorted(_default_classes()))


def _statement(class_arg: Expr) -> Expr:
    """The constructor for a statement whose class argument is `class_arg` (a string, or in a list
    loop also the loop variable)."""
    _, landmark, attributes = api.CONSTRUCTOR_PARAMS
    return seq(
        f"{api.OBJECT_CONSTRUCTOR}(",
        class_arg,
        opt(seq(f", {landmark}=", Ref("landmark"))),
        opt(seq(f", {attributes}=", Ref("attribute-list"))),
        ")",
    )


def _statements(new_object: str) -> Expr:
    return alt(
        seq(Ref("obj-def-name"), " = ", Ref(new_object)),
        seq(Ref("agent-def-name"), f" = {api.AGENT_CONSTRUCTOR}()"),
        seq(Ref("obj-name"), ".", Ref("object-call")),
        seq(Ref("agent-name"), ".", Ref("agent-move"), "()"),
        seq(Ref("agent-move"), "()"),
    )


def build_program_grammar(
    max_statements: int = DEFAULT_MAX_STATEMENTS,
    classes: Sequence[str] | None = None,
    *,
    fence: bool = True,
) -> Grammar:
    """The program grammar as data (`cfg.Grammar`); `program_grammar` renders it, cached."""
    if max_statements < 1:
        raise ValueError("max_statements must be at least 1")
    names = _check_classes(classes) if classes is not None else _default_classes()
    n_loop = api.MAX_LOOP_LENGTH
    attribute_words = list(api.ATTRIBUTE_METHODS)
    rules: dict[str, Expr] = {
        "root": seq(FENCE_OPEN, Ref("program"), FENCE_CLOSE) if fence else Ref("program"),
        "program": Ref(f"first-{max_statements}"),
        # one line's statements
        "stmt": _statements("new-object"),
        "stmt-in-list": _statements("new-object-in-list"),
        "new-object": _statement(Ref("class-str")),
        "new-object-in-list": _statement(alt(Ref("class-str"), Ref("class-var"))),
        "landmark": alt(Ref("class-str"), Ref("landmark-name")),
        "attribute-list": seq("[", Ref("attribute"), Repeat(seq(", ", Ref("attribute")), 0, len(attribute_words) - 1), "]"),
        "attribute": alt(*(f'"{a}"' for a in attribute_words)),
        "object-call": alt(
            *(seq(m, "()") for m, spec in api.OBJECT_METHODS.items() if spec.param is None),
            *(seq(m, "(", Ref("obj-name"), ")") for m, spec in api.OBJECT_METHODS.items() if spec.param),
        ),
        "agent-move": alt(*api.AGENT_METHODS),
        "class-str": seq('"', Ref("class-name"), '"'),
        "class-name": alt(*names),
        "comment": seq("#", Repeat(chars("\n\r\x00", negated=True), 0, MAX_COMMENT_CHARS)),
        # loop headers
        "range-header": seq("for ", Ref("range-var"), " in range(", Ref("count"), "):"),
        "list-header": seq("for ", Ref("list-var"), " in [", Ref("class-str"),
                           Repeat(seq(", ", Ref("class-str")), 0, n_loop - 1), "]:"),
        "count": alt(*(str(n) for n in range(1, n_loop + 1))),
        # where names are bound or used (all plain names; separate rules so a sampler can bind them)
        **{role: Ref("name") for role in ("obj-def-name", "agent-def-name", "obj-name", "agent-name",
                                          "range-var", "list-var", "class-var", "landmark-name")},
        **_name_rules(reserved_names(), MAX_NAME_CHARS),
        "top-0": Lit(""),
    }
    bodies = {"range": "stmt", "list": "stmt-in-list"}
    for k in range(1, max_statements + 1):
        rest = Ref(f"top-{k - 1}")
        lines: list[Expr] = [seq(Ref("stmt"), "\n", rest), seq(Ref("comment"), "\n", rest)]
        if k >= 2:
            lines += [seq(Ref(f"{kind}-header"), "\n", Ref(f"body-{kind}-{k - 1}")) for kind in bodies]
        rules[f"first-{k}"] = alt(*lines)  # the first line of a program is not blank
        rules[f"more-{k}"] = alt(*lines, seq("\n", rest))
        rules[f"top-{k}"] = alt("", Ref(f"more-{k}"))
    for kind, stmt in bodies.items():
        rules[f"in-{kind}-0"] = Ref("top-0")
        for k in range(1, max_statements):
            rest = Ref(f"in-{kind}-{k - 1}")
            rules[f"body-{kind}-{k}"] = seq(INDENT, Ref(stmt), "\n", rest)
            rules[f"in-{kind}-{k}"] = alt(
                Ref(f"top-{k}"),
                seq(INDENT, Ref(stmt), "\n", rest),
                seq(INDENT, Ref("comment"), "\n", rest),
            )
    return Grammar(rules)


def _key(classes: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if classes is None else tuple(sorted(set(classes)))


@functools.lru_cache(maxsize=32)
def _cached(max_statements: int, classes: tuple[str, ...] | None, fence: bool) -> tuple[Grammar, str]:
    grammar = build_program_grammar(max_statements, classes, fence=fence)
    header = (
        "helper-agent program grammar, generated by helper_agent.program.grammar from the action API\n"
        f"and {'the given' if classes is not None else 'the catalog'} object classes; "
        f"at most {max_statements} lines{', in a ```python fence' if fence else ''}."
    )
    return grammar, grammar.to_gbnf(header)


def program_grammar(
    max_statements: int = DEFAULT_MAX_STATEMENTS,
    classes: Sequence[str] | None = None,
    *,
    fence: bool = True,
) -> str:
    """The GBNF text that constrains an LLM to write a program (see the module docstring).

    `max_statements` caps the program's lines; `classes` restricts the object class names (default:
    every catalog type); `fence` wraps the program in a ```python fence. Cached per arguments.
    """
    return _cached(max_statements, _key(classes), fence)[1]


def program_grammar_rules(
    max_statements: int = DEFAULT_MAX_STATEMENTS,
    classes: Sequence[str] | None = None,
    *,
    fence: bool = True,
) -> Grammar:
    """The grammar `program_grammar` renders, as data (cached; do not modify)."""
    return _cached(max_statements, _key(classes), fence)[0]


def matches_program_grammar(
    text: str,
    max_statements: int = DEFAULT_MAX_STATEMENTS,
    classes: Sequence[str] | None = None,
    *,
    fence: bool = True,
) -> bool:
    """Whether the program grammar derives exactly `text` (what a constrained model could write)."""
    return Matcher(program_grammar_rules(max_statements, classes, fence=fence)).matches(text)
