"""`kofs --version` / `kofs --help` import no heavy library; every option has help text."""

from __future__ import annotations

import click
import pytest

from kofs.cli import main

HEAVY = ("numpy", "pandas", "scipy", "sklearn", "goatools", "matplotlib", "networkx", "rich")

_PROBE = """
import sys
from kofs.cli import main
try:
    main([{arg!r}], prog_name="kofs")
except SystemExit:
    pass
print("LOADED", *sorted(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("arg", ["--version", "--help"])
def test_version_and_help_import_no_heavy_library(arg, python_process):
    proc = python_process.run("-c", _PROBE.format(arg=arg, heavy=HEAVY), check=True)
    loaded = proc.stdout.strip().splitlines()[-1].split()[1:]
    assert loaded == [], f"kofs {arg} imported {loaded}"


def _commands(cmd: click.Command, path: tuple[str, ...]):
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, (*path, name))


def test_every_option_of_every_command_has_help():
    missing = [
        f"{' '.join(path)} {p.opts[0]}"
        for path, cmd in _commands(main, ("kofs",))
        for p in cmd.params
        if isinstance(p, click.Option) and not (p.help or "").strip()
    ]
    assert missing == []


def test_every_command_has_a_docstring():
    assert all((cmd.help or "").strip() for _, cmd in _commands(main, ("kofs",)))


def test_lazy_choices_still_validate():
    from click.testing import CliRunner

    res = CliRunner().invoke(main, ["gosim", "--help"])
    assert res.exit_code == 0 and "lin|resnik" in res.output
    res = CliRunner().invoke(main, ["rank", "x.tsv", "--aggregate", "nope"])
    assert res.exit_code == 2 and "borda" in res.output
