"""The documentation site: the strict build fails on a broken link or a missing page, and the reference
check fails, with the command to run, when a generated page no longer matches the code.

The builds run on a copy of docs/ with the project's own mkdocs.yml and hooks, so a page broken here
breaks nothing in the repository. `make test` also builds the real site strict (`make docs-check`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("mkdocs", reason="the dev extra installs mkdocs")
pytest.importorskip("material", reason="the dev extra installs mkdocs-material")

ROOT = Path(__file__).resolve().parents[1]


def _site(tmp_path: Path) -> Path:
    """A copy of docs/ with the project's mkdocs.yml pointing at it; returns the config's path."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(docs_dir=str(tmp_path / "docs"), site_dir=str(tmp_path / "site"),
                  hooks=[str(ROOT / hook) for hook in config["hooks"]])
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _make_docs_check_flags() -> list[str]:
    """The flags `make docs-check` (so `make test`) builds the site with: the tests build as it does."""
    recipe = (ROOT / "Makefile").read_text().split("\ndocs-check:", 1)[1].split("\n\n", 1)[0]
    line = next(line for line in recipe.splitlines() if "$(MKDOCS) build" in line)
    return line.split("$(MKDOCS) build", 1)[1].split()


def test_make_test_builds_the_site_strict() -> None:
    assert "--strict" in _make_docs_check_flags()


def _build(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", *_make_docs_check_flags(), "-f", str(config)],
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          cwd=config.parent, timeout=600)


def test_the_site_builds_strict_and_shows_the_results_files(tmp_path: Path) -> None:
    built = _build(_site(tmp_path))
    assert built.returncode == 0, built.stderr[-3000:]
    methods = (tmp_path / "site" / "results" / "methods.html").read_text()
    rows = json.loads((ROOT / "results" / "methods50" / "compare.json").read_text())
    for row in rows:  # every method's SR, read from results/methods50/compare.json, is on the page
        assert f"{row['SR']:.1f}" in methods, row["method"]
    assert (tmp_path / "site" / "_results" / "methods50" / "compare.png").is_file()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    config = _site(tmp_path)
    page = tmp_path / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing guide](guides/no-such-guide.md).\n")
    built = _build(config)
    assert built.returncode != 0
    warning = next(line for line in built.stderr.splitlines() if "guides/no-such-guide.md" in line)
    assert warning.startswith("WARNING") and "not found among documentation files" in warning


def test_a_missing_page_fails_the_strict_build(tmp_path: Path) -> None:
    config = _site(tmp_path)
    (tmp_path / "docs" / "guides" / "cluster.md").unlink()  # the nav and other pages still name it
    built = _build(config)
    assert built.returncode != 0
    assert "guides/cluster.md" in built.stderr


def test_a_results_table_whose_file_is_gone_fails_the_build(tmp_path: Path) -> None:
    config = _site(tmp_path)
    page = tmp_path / "docs" / "results" / "methods.md"
    page.write_text(page.read_text() + "\n<!-- compare: results/no-such-run/compare.json -->\n")
    built = _build(config)
    assert built.returncode != 0
    assert "results/no-such-run/compare.json: no such file under results/" in built.stderr


def test_the_reference_check_names_the_stale_page_and_the_command_to_run(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(ROOT / "docs" / "reference", reference)
    check = [sys.executable, str(ROOT / "tools" / "docs_reference.py"), "--check", "--reference-dir", str(reference)]
    fresh = subprocess.run(check, capture_output=True, text=True, timeout=600)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    settings = reference / "settings.md"
    settings.write_text(settings.read_text().replace("`HELPER_SEED`", "`HELPER_SEEDS`"))
    stale = subprocess.run(check, capture_output=True, text=True, timeout=600)
    assert stale.returncode == 1
    assert "settings.md" in stale.stderr and "run `make docs-reference`" in stale.stderr
    assert "cli.md" not in stale.stderr.splitlines()[-1]
