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


def _long_options(command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_only_options_the_command_has(command):
    """An option named in a command's help is one of its own (or a global option), unless the
    text names the command it belongs to (`kofs rank ... --aggregate em`): `kofs sources
    --help` told of `--supervision genes`, an option `kofs sources` does not have."""
    cmd = main.commands[command]
    own = _long_options(cmd) | _long_options(main)
    texts = [
        cmd.help or "",
        cmd.epilog or "",
        *(getattr(p, "help", None) or "" for p in cmd.params),
    ]
    option = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
    for text in texts:

        def other_command(span: re.Match) -> str:
            other = main.commands.get(span.group(1))
            if other is not None:
                allowed = _long_options(other) | _long_options(main)
                assert set(option.findall(span.group(0))) <= allowed, (command, span.group(0))
            return ""

        rest = re.sub(r"`kofs ([a-z]+)[^`]*`", other_command, text)
        assert set(option.findall(rest)) <= own, (command, text)
