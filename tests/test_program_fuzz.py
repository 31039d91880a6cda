"""Property tests: whatever the text, checking a program raises nothing but ProgramError; programs
generated from the accepted grammar compile, and their subgoals respect the rewrite invariants."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helper_agent.program import ProgramError, SubgoalKind, compile_program, parse_program, render_program
from helper_agent.program import api as program_api

GOOD = sorted((Path(__file__).parent / "data" / "programs" / "good").glob("*.txt"))
CATALOG = ["Mug", "Cup", "CoffeeMachine", "SinkBasin", "Fridge", "Cabinet", "Plate", "Bread", "BreadSliced",
           "Knife", "Toaster", "Tomato", "TomatoSliced", "CounterTop", "HousePlant"]
# the recursive AST strategies have long reprs; hypothesis warns when it builds them
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")
PRELUDE = 'mug = InteractionObject("Mug")\nplate = InteractionObject("Plate", attributes=["clean"])\n'
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    """Parse and compile; only ProgramError may escape."""
    try:
        compile_program(text, catalog=CATALOG)
    except ProgramError as exc:
        assert str(exc)
        assert exc.line is None or exc.line >= 1


# ---------------------------------------------------------------------------------- random text


@FUZZ
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    check(text)


ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyz_()[]{}.,:;='\"#\n    \t*+-0123456789`@\\")
    + ["InteractionObject", "AgentCorrective", "for ", " in ", "range(", "def main():", "```python", "```",
       ".pickup()", ".place(", "import ", "__class__", "lambda", "while ", "if ", "\n    ", "attributes=[",
       '"Mug"', '"clean"', "move_back()"]
)


@FUZZ
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_random_token_soup(text: str) -> None:
    check(text)


@FUZZ
@given(st.sampled_from(GOOD), st.data())
def test_mutated_good_programs(path: Path, data: st.DataObject) -> None:
    text = path.read_text(encoding="utf-8")
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(ALPHABET)
        if op == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 8)):]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        else:
            text = text[:i] + piece + text[i + len(piece):]
    check(text)


# ---------------------------------------------------------------------------------- random ASTs

NAMES = ["mug", "plate", "x", "i", "InteractionObject", "AgentCorrective", "move_back", "range", "print",
         "main", "__import__", "__builtins__", "eval", "open", "getattr", "os"]
ATTRS = [*program_api.OBJECT_METHODS, *program_api.AGENT_METHODS, "__class__", "__subclasses__", "system",
         "object_class", "attributes"]
CONSTANTS = st.one_of(
    st.sampled_from(["Mug", "Plate", "CoffeeMachine", "clean", "sliced", "shiny", "", "../x", "__main__"]),
    st.integers(-3, 30),
    st.sampled_from([None, True, 10**9, 2.5]),
)


def _name(n: str) -> ast.expr:
    return ast.Name(id=n, ctx=ast.Load())


def expressions() -> st.SearchStrategy[ast.expr]:
    leaves = st.one_of(st.sampled_from(NAMES).map(_name), CONSTANTS.map(lambda v: ast.Constant(value=v)))

    def extend(children: st.SearchStrategy[ast.expr]) -> st.SearchStrategy[ast.expr]:
        keywords = st.lists(
            st.builds(lambda k, v: ast.keyword(arg=k, value=v),
                      st.sampled_from(["object_class", "landmark", "attributes", "receptacle", "target", "color"]),
                      children),
            max_size=2, unique_by=lambda k: k.arg,
        )
        return st.one_of(
            st.builds(lambda f, a, k: ast.Call(func=f, args=a, keywords=k),
                      st.one_of(st.sampled_from(NAMES).map(_name),
                                st.builds(lambda v, a: ast.Attribute(value=v, attr=a, ctx=ast.Load()),
                                          children, st.sampled_from(ATTRS))),
                      st.lists(children, max_size=3), keywords),
            st.builds(lambda v, a: ast.Attribute(value=v, attr=a, ctx=ast.Load()), children, st.sampled_from(ATTRS)),
            st.lists(children, max_size=4).map(lambda e: ast.List(elts=e, ctx=ast.Load())),
            st.lists(children, max_size=3).map(lambda e: ast.Tuple(elts=e, ctx=ast.Load())),
            st.builds(lambda a, b: ast.BinOp(left=a, op=ast.Pow(), right=b), children, children),
            st.builds(lambda a: ast.UnaryOp(op=ast.USub(), operand=a), children),
            st.builds(lambda v, s: ast.Subscript(value=v, slice=s, ctx=ast.Load()), children, children),
            st.builds(lambda b: ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                              defaults=[]), body=b), children),
            st.builds(lambda e, it: ast.ListComp(elt=e, generators=[ast.comprehension(
                target=ast.Name(id="c", ctx=ast.Store()), iter=it, ifs=[], is_async=0)]), children, children),
            st.builds(lambda e: ast.JoinedStr(values=[ast.Constant(value="a"), ast.FormattedValue(
                value=e, conversion=-1, format_spec=None)]), children),
            st.builds(lambda e: ast.Starred(value=e, ctx=ast.Load()), children),
        )

    return st.recursive(leaves, extend, max_leaves=8)


def statements() -> st.SearchStrategy[ast.stmt]:
    exprs = expressions()
    target = st.one_of(
        st.sampled_from(["mug", "plate", "x", "i", "InteractionObject", "__x__"]).map(
            lambda n: ast.Name(id=n, ctx=ast.Store())),
        st.builds(lambda v, a: ast.Attribute(value=v, attr=a, ctx=ast.Store()),
                  st.sampled_from(NAMES).map(_name), st.sampled_from(ATTRS)),
    )
    simple = st.one_of(
        exprs.map(lambda e: ast.Expr(value=e)),
        st.builds(lambda t, v: ast.Assign(targets=[t], value=v, lineno=1), target, exprs),
        st.just(ast.Pass()),
        st.just(ast.Break()),
        st.just(ast.Return(value=None)),
        st.sampled_from(["os", "sys", "subprocess"]).map(lambda m: ast.Import(names=[ast.alias(name=m)])),
    )

    def extend(children: st.SearchStrategy[ast.stmt]) -> st.SearchStrategy[ast.stmt]:
        body = st.lists(children, min_size=1, max_size=3)
        return st.one_of(
            st.builds(lambda n, it, b: ast.For(target=ast.Name(id=n, ctx=ast.Store()), iter=it, body=b, orelse=[],
                                               lineno=1),
                      st.sampled_from(["i", "c", "mug"]), exprs, body),
            st.builds(lambda t, b: ast.While(test=t, body=b, orelse=[]), exprs, body),
            st.builds(lambda t, b: ast.If(test=t, body=b, orelse=[]), exprs, body),
            st.builds(lambda n, b: ast.FunctionDef(
                name=n, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=b, decorator_list=[], returns=None, type_params=[], lineno=1), st.sampled_from(["main", "go"]), body),
        )

    return st.recursive(simple, extend, max_leaves=10)


MODULE_BODIES = st.deferred(lambda: st.lists(statements(), min_size=1, max_size=8))


@FUZZ
@given(MODULE_BODIES)
def test_random_asts(body: list[ast.stmt]) -> None:
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    try:
        text = ast.unparse(module)
    except Exception:  # noqa: BLE001 - some generated trees cannot be unparsed; not our concern
        assume(False)
    check(text)
    check(PRELUDE + text)


# ---------------------------------------------------------------------------------- valid programs

CLASSES = st.sampled_from(["Mug", "Cup", "Plate", "Fridge", "Cabinet", "BreadSliced", "Tomato", "SinkBasin",
                           "coffee mug", "refrigerator", "plates"])
ATTRIBUTE_LISTS = st.lists(st.sampled_from(list(program_api.ATTRIBUTE_METHODS)), max_size=3, unique=True)


@st.composite
def valid_programs(draw: st.DrawFn) -> str:
    lines: list[str] = []
    bound: list[str] = []
    for n in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["new", "call", "call", "call2", "loop", "agent"]))
        if kind == "new" or not bound:
            name = f"o{n}"
            lines.append(f"{name} = InteractionObject({draw(CLASSES)!r}, attributes={draw(ATTRIBUTE_LISTS)!r})")
            bound.append(name)
        elif kind == "call":
            method = draw(st.sampled_from([m for m, s in program_api.OBJECT_METHODS.items() if s.param is None]))
            lines.append(f"{draw(st.sampled_from(bound))}.{method}()")
        elif kind == "call2":
            method = draw(st.sampled_from([m for m, s in program_api.OBJECT_METHODS.items() if s.param]))
            a, b = draw(st.lists(st.sampled_from(bound), min_size=2, max_size=2))
            if a == b:
                b = f"InteractionObject({draw(CLASSES)!r})"
            lines.append(f"{a}.{method}({b})")
        elif kind == "loop":
            items = draw(st.lists(CLASSES, min_size=0, max_size=3))
            lines.append(f"for c in {items!r}:")
            lines.append(f"    t = InteractionObject(c, attributes={draw(ATTRIBUTE_LISTS)!r})")
            lines.append(f"    t.{draw(st.sampled_from(list(program_api.OBJECT_METHODS)[:2]))}()")
        else:
            lines.append(f"{draw(st.sampled_from(list(program_api.AGENT_METHODS)))}()")
    return "\n".join(lines) + "\n"


@FUZZ
@given(valid_programs())
def test_valid_programs_compile_with_invariants(text: str) -> None:
    try:
        compiled = compile_program(text, catalog=CATALOG)
    except ProgramError as exc:
        assert "does nothing" in str(exc)
        return
    subgoals = compiled.subgoals
    assert 0 < len(subgoals) <= program_api.MAX_SUBGOALS
    # no two identical object subgoals in a row
    for a, b in itertools.pairwise(subgoals):
        if a.target is not None:
            assert (a.kind, a.target, a.receptacle) != (b.kind, b.target, b.receptacle)
    # every Place/Pour acts on the object picked up last, with no release in between
    held = None
    for s in subgoals:
        if s.kind is SubgoalKind.PICKUP:
            held = s.target
        elif s.kind in (SubgoalKind.PLACE, SubgoalKind.POUR):
            assert s.target == held
            if s.kind is SubgoalKind.PLACE:
                held = None
        elif s.kind in (SubgoalKind.PUT_DOWN,) or s.kind.value in {"Clean", "Cook", "Toast", "FillUp", "Empty"}:
            held = None
    # objects are only opened/closed if openable; classes are all known
    for s in subgoals:
        if s.kind in (SubgoalKind.OPEN, SubgoalKind.CLOSE):
            assert s.target is not None and s.target.object_class in {"Fridge", "Cabinet"}
        for ref in (s.target, s.receptacle):
            assert ref is None or ref.object_class in CATALOG
    # parse_program agrees with compile_program on the objects
    assert len(parse_program(text).objects) == len(compiled.objects)
    keys = [o.instance_key for o in compiled.objects]
    assert len(keys) == len(set(keys))
    # rendering the subgoals as a program and compiling that gives the same subgoals (up to key names)
    again = compile_program(render_program(subgoals), catalog=CATALOG)
    assert canonical(again.signature()) == canonical(compiled.signature())


def canonical(signature: list[str]) -> list[str]:
    """Renumber instance keys by order of first appearance, keeping their class."""
    names: dict[str, str] = {}

    def rename(word: str) -> str:
        if "#" not in word:
            return word
        return names.setdefault(word, f"{word.split('#')[0]}@{len(names)}")

    return [" ".join(rename(w) for w in line.split()) for line in signature]

