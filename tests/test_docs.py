"""README stays in step with the code: every method, command and link it must mention."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kofs.aggregate import AGGREGATORS
from kofs.cli import main
from kofs.rankers import RANKERS

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands():
    blocks = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)
    assert "kofs demo" in blocks[0] and "pip install" in blocks[0]
    assert "pytest" in blocks[1] and "pip install" in blocks[1]
    assert "--full" in blocks[1]  # command 2 runs the whole suite, not the fast tier
    assert README.index(blocks[1]) < README.index("## Contents")


@pytest.mark.parametrize("name", RANKERS.names() + AGGREGATORS.names())
def test_every_method_is_documented(name):
    assert re.search(rf"(^|[\s|`]){re.escape(name)}([\s|`,]|$)", README, flags=re.M), name


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_is_documented(command):
    assert f"kofs {command}" in README


def test_relative_links_exist():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links
    missing = [link for link in links if not (REPO / link).exists()]
    assert not missing, missing
