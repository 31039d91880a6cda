"""The grammar data model: checks on construction, GBNF rendering, and recognizer and sampler agreeing."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helper_agent.program.cfg import Grammar, Lit, Ref, Repeat, alt, chars, opt, render, seq
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.cfg_sample import Sampler

TINY = Grammar({
    "root": seq(Ref("word"), Repeat(seq(" ", Ref("word")), 0, 2), opt("!")),
    "word": alt("a", seq(chars("b-d"), Repeat(chars("xyz"), 1, 2))),
})


def test_rendering() -> None:
    assert render(Lit('say "hi"\\\n\t')) == '"say \\"hi\\"\\\\\\n\\t"'
    assert render(Lit("\x00\x7f")) == '"\\x00\\x7F"'
    assert render(chars("a-z0-9_")) == "[a-z0-9_]"
    assert render(chars("]^\\\n-", negated=True)) == "[^\\]\\x5E\\\\\\n\\-]"
    assert render(chars("^-a")) == "[\\x5E-a]"  # a range from ^ to a
    assert render(seq("a", "b", Ref("x"))) == '"ab" x'
    assert render(Repeat(alt("a", "b"), 0, 1)) == '("a" | "b")?'
    assert render(Repeat(seq("a", Ref("x")), 2, 2)) == '("a" x){2}'
    assert render(Repeat(Repeat(Lit("a"), 0, 1), 1, 3)) == '("a"?){1,3}'
    assert render(seq()) == render(Lit("")) == '""'
    assert TINY.to_gbnf("two\nlines").startswith("# two\n# lines\nroot ::= word")


def test_llama_cpp_parses_every_escape() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    awkward = "".join(chr(c) for c in range(1, 128)) + "é€ｍ"
    grammar = Grammar({"root": seq(Lit(awkward), Ref("one")), "one": alt(*(chars(c) for c in awkward),
                                                                       chars(awkward[:40], negated=True))})
    sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.to_gbnf().encode("utf-8"), b"root")
    assert sampler
    llama_cpp.llama_sampler_free(sampler)


def test_unreachable_rules_are_not_rendered() -> None:
    grammar = Grammar({"root": Lit("a"), "unused": Lit("b")})
    assert grammar.to_gbnf() == 'root ::= "a"\n'


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"root": Ref("missing")}, "undefined rule 'missing'"),
        ({"root": Ref("a"), "a": seq("x", Ref("b")), "b": opt(Ref("a"))}, "refers to itself"),
        ({"root": Ref("root")}, "refers to itself"),
        ({"root": Lit("a"), "Bad_Name": Lit("b")}, "not valid in GBNF"),
        ({"root": Repeat(Lit("a"), 3, 2)}, "repetition {3,2}"),
        ({"start": Lit("a")}, "no root rule"),
    ],
)
def test_bad_grammars_are_refused(rules: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        Grammar(rules)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a", True), ("a!", True), ("bx a cyz", True), ("a a a", True), ("a a a a", False), ("b", False),
     ("bxyz", False), ("e", False), ("", False), ("a !", False), ("a a!", True)],
)
def test_matcher(text: str, expected: bool) -> None:
    assert Matcher(TINY).matches(text) is expected


@given(st.integers(0, 10**9))
def test_sampler_derives_what_the_matcher_accepts(seed: int) -> None:
    assert Matcher(TINY).matches(Sampler(TINY, random.Random(seed)).sample())


def test_sampler_can_be_steered_and_watched() -> None:
    seen: list[tuple[str, str]] = []
    sampler = Sampler(TINY, random.Random(1), choose={"word": lambda: "a"}, seen=lambda r, t: seen.append((r, t)))
    text = sampler.sample()
    assert set(text.replace(" ", "").rstrip("!")) == {"a"}
    assert seen[-1][0] == "root" and seen[-1][1] == text
    assert all(t == "a" for r, t in seen if r == "word")
