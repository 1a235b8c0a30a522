"""Help a person can scan: option groups, an example per command, whole sentences, current
texts, no broken ranges."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.cli._help import EXAMPLES, OPTION_GROUPS

COMMANDS = sorted(main.commands)


def _help(*args: str) -> str:
    r = CliRunner().invoke(main, [*args, "--help"], terminal_width=100)
    assert r.exit_code == 0, r.output
    return r.output


def test_rank_options_come_in_groups_output_early():
    text = _help("rank")
    heads = [h for h in re.findall(r"^(\S[^\n]*):$", text, flags=re.M) if h != "Examples"]
    assert heads[:2] == ["Input data", "Output"]
    assert set(heads) <= set(OPTION_GROUPS.values()) | {"Other options"}
    assert heads.index("Output") < heads.index("Knowledge: Gene Ontology")
    assert text.index("-o, --output") < text.index("--go FILE")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_an_example_and_current_texts(command):
    text = _help(command)
    assert command in EXAMPLES and "Examples:" in text
    for line in EXAMPLES[command]:
        assert line.split("\n")[0] in text
    assert "[x<=None]" not in text and "None]" not in text
    assert "KOFS_Prob" not in text and "supervised EM" not in text


def test_group_help_keeps_whole_sentences():
    text = _help()
    for heading in ("Rank genes:", "Inspect inputs and methods:", "Evaluate:"):
        assert heading in text
    # no summary is cut with "..." mid-sentence
    commands = text[text.index("Rank genes:") :]
    assert "..." not in commands
    for name in COMMANDS:
        assert re.search(rf"^  {name}\s", text, flags=re.M), name
