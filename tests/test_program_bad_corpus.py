"""The corpus of malicious and malformed programs: each is rejected with its specific message,
and rejecting it has no side effects (nothing is executed, imported, opened or written)."""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import sys
from pathlib import Path

import pytest

from helper_agent.program import ProgramError, compile_program, parse_program

BAD = Path(__file__).parent / "data" / "programs" / "bad"
FILES = sorted(BAD.glob("*.txt"))


def expectation(path: Path) -> str:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    assert first.startswith("# expect: "), f"{path.name} needs a '# expect: ...' first line"
    return first.removeprefix("# expect: ")


def test_corpus_is_large() -> None:
    assert len(FILES) >= 60


@contextlib.contextmanager
def trapped():
    """Within the block, executing, importing, opening or running anything fails the test.

    `compile` stays usable only in its parse-only form (`ast.parse` calls it with PyCF_ONLY_AST),
    and `import` only of modules already loaded (the standard library's function-level imports).
    """
    calls: list[str] = []
    real_compile = builtins.compile

    def trap(name: str):
        def _trapped(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} called while checking a program")

        return _trapped

    def parse_only_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile")
            raise AssertionError("compile to code called while checking a program")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    real_import = builtins.__import__

    def known_import(name, *args, **kwargs):
        if name not in sys.modules:
            calls.append(f"import {name}")
            raise AssertionError(f"import of {name} while checking a program")
        return real_import(name, *args, **kwargs)

    saved = {name: getattr(builtins, name) for name in ("exec", "eval", "compile", "__import__", "open")}
    saved_os = {name: getattr(os, name) for name in ("system", "popen")}
    modules_before = set(sys.modules)
    try:
        for name in ("exec", "eval", "open"):
            setattr(builtins, name, trap(name))
        builtins.__import__ = known_import
        builtins.compile = parse_only_compile
        os.system = trap("os.system")  # type: ignore[assignment]
        os.popen = trap("os.popen")  # type: ignore[assignment]
        yield calls
    finally:
        for name, value in saved.items():
            setattr(builtins, name, value)
        for name, value in saved_os.items():
            setattr(os, name, value)
    assert calls == []
    assert not Path("/tmp/helper_agent_pwned").exists()
    assert not {"subprocess", "this", "antigravity"} & (set(sys.modules) - modules_before)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_bad_program_is_rejected(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = expectation(path)
    with pytest.raises(ProgramError) as info:
        compile_program(text)
    message = str(info.value)
    assert expected in message
    assert message == info.value.message
    assert info.value.reason in message
    if info.value.line is not None:
        assert message.startswith(f"line {info.value.line}")


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_bad_program_has_no_side_effects(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    catalog = ["Mug", "CoffeeMachine", "SinkBasin", "Cup"]
    rejected = False
    with trapped():
        try:
            compile_program(text, catalog=catalog)
        except ProgramError:
            rejected = True
    assert rejected


def test_nul_bytes_rejected() -> None:
    with pytest.raises(ProgramError, match="NUL"):
        parse_program('mug = InteractionObject("Mug")\x00\nmug.pickup()')


def test_huge_integer_literal_rejected() -> None:
    with pytest.raises(ProgramError, match="syntax error|integer"):
        parse_program("for i in range(" + "9" * 5000 + "):\n    pass")


def test_deep_nesting_rejected() -> None:
    with pytest.raises(ProgramError):
        parse_program("x = " + "(" * 300 + "1" + ")" * 300)
    deep = "".join(" " * i + "for i in range(1):\n" for i in range(90)) + " " * 90 + "pass\n"
    parse_program(deep + 'mug = InteractionObject("Mug")\nmug.pickup()')


def test_too_long_rejected() -> None:
    program = 'mug = InteractionObject("Mug")\n' + "mug.go_to()\n" * 800
    with pytest.raises(ProgramError, match="too long"):
        parse_program(program)
    with pytest.raises(ProgramError, match="too long"):
        parse_program("x" * 40000)


def test_not_text_rejected() -> None:
    with pytest.raises(ProgramError, match="must be text, not int"):
        parse_program(42)  # type: ignore[arg-type]
