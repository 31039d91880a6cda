"""`helper program check FILE` and `helper program api`, and the API text itself."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from helper_agent.commands.program import app
from helper_agent.program import api as program_api
from helper_agent.program import api_documentation, compile_program

DATA = Path(__file__).parent / "data" / "programs"
runner = CliRunner()


def test_check_good_program_exits_0() -> None:
    result = runner.invoke(app, ["check", str(DATA / "good" / "coffee.txt")])
    assert result.exit_code == 0, result.output
    assert "6 subgoals" in result.output
    assert "ToggleOn" in result.output and "coffeemachine#1" in result.output
    assert "attribute" in result.output and "'clean'" in result.output  # the table may wrap cells


def test_check_bad_program_exits_1_with_reason() -> None:
    result = runner.invoke(app, ["check", str(DATA / "bad" / "import_os.txt")])
    assert result.exit_code == 1
    assert "rejected" in result.output
    assert "'import os' is not allowed" in result.output


def test_check_reads_stdin() -> None:
    result = runner.invoke(app, ["check", "-"], input='m = InteractionObject("Mug")\nm.pickup()\n')
    assert result.exit_code == 0, result.output
    assert "Pickup" in result.output
    result = runner.invoke(app, ["check", "-"], input="while True:\n    pass\n")
    assert result.exit_code == 1
    assert "'while' loops are not allowed" in result.output


def test_check_prints_notes() -> None:
    result = runner.invoke(app, ["check", "-"], input='m = InteractionObject("coffee mug")\nm.pickup()\n')
    assert result.exit_code == 0
    assert "mapped to Mug" in result.output
    quiet = runner.invoke(app, ["check", "--no-notes", "-"], input='m = InteractionObject("mug")\nm.pickup()\n')
    assert quiet.exit_code == 0
    assert "note:" not in quiet.output


def test_check_missing_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "absent.py")])
    assert result.exit_code == 2


def test_markup_in_programs_is_not_interpreted() -> None:
    result = runner.invoke(app, ["check", "-"], input='m = InteractionObject("[bold]Mug")\n')
    assert result.exit_code == 1
    assert "[bold]Mug" in result.output


def test_api_command_prints_the_api_text() -> None:
    result = runner.invoke(app, ["api"])
    assert result.exit_code == 0
    assert result.output == api_documentation()


def test_mounted_in_main_cli() -> None:
    from helper_agent.cli import app as main_app

    result = runner.invoke(main_app, ["program", "check", str(DATA / "good" / "toast.txt")])
    assert result.exit_code == 0, result.output
    assert "11 subgoals" in result.output


# ---------------------------------------------------------------------------------- the API text


def test_api_text_is_compact() -> None:
    doc = api_documentation()
    assert len(doc) < 3200
    # a rough token count (words and punctuation marks); BPE tokenizers come out close to it for code
    assert len(re.findall(r"\w+|[^\w\s]", doc)) < 800


def test_api_text_names_every_method_attribute_and_move() -> None:
    doc = api_documentation()
    for name in [*program_api.OBJECT_METHODS, *program_api.AGENT_METHODS]:
        assert re.search(rf"\b{name}\(", doc), name
    for attribute in program_api.ATTRIBUTE_METHODS:
        assert f'"{attribute}"' in doc
    assert "InteractionObject(object_class, landmark=None, attributes=[])" in doc
    assert "AgentCorrective()" in doc


def test_api_text_documents_no_method_that_does_not_exist() -> None:
    doc = api_documentation()
    documented = set(re.findall(r"^\s{4}(\w+)\(", doc, flags=re.MULTILINE))
    known = set(program_api.OBJECT_METHODS) | set(program_api.AGENT_METHODS) | {"InteractionObject"}
    assert documented <= known, documented - known


def test_api_text_examples_are_valid_programs() -> None:
    doc = api_documentation()
    example = textwrap.dedent(doc.split("Example:", 1)[1].split("\n", 1)[1])
    assert compile_program(example).signature()[-1] == "ToggleOn coffeemachine#1"
    loop = textwrap.dedent(doc.split("make a new object each time:", 1)[1].split("\n\n", 1)[0].strip("\n"))
    compiled = compile_program(loop)
    assert compiled.signature().count("Place tomatosliced#2 -> plate#1") == 1
    corrective = "\n".join(line for line in doc.split("\n") if "target_agent" in line)
    assert compile_program(corrective).signature() == ["MoveBack"]


def test_api_text_limits_come_from_the_api() -> None:
    doc = api_documentation()
    assert f"n <= {program_api.MAX_LOOP_LENGTH}." in doc
    assert "$" not in doc
