"""`kofs --version` / `kofs --help` import no heavy library, no command's help imports the
scientific stack, a bulk run loads only what its steps need; every option has help text."""

from __future__ import annotations

import subprocess
import sys

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


# the scientific stack: loaded by the step that needs it, never to print help
STACK = ("scipy.stats", "sklearn", "matplotlib", "pandas", "goatools", "networkx", "anndata",
         "dask", "numba", "pyarrow", "h5py")  # fmt: skip


def _probe(args: list[str], modules: tuple[str, ...]) -> list[str]:
    """A fresh interpreter's command line that runs ``kofs ARGS`` and prints which of
    ``modules`` it has loaded."""
    code = (
        "import sys\nfrom kofs.__main__ import run\n"
        f"sys.argv = ['kofs', *{args!r}]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', *sorted(m for m in {modules!r} if m in sys.modules))\n"
    )
    return [sys.executable, "-c", code]


def _loaded_by(runs: dict[str, list[str]], modules: tuple[str, ...]) -> dict[str, list[str]]:
    """Key -> the ``modules`` loaded after ``kofs ARGS``, every run in its own interpreter
    (started together)."""
    procs = {
        key: subprocess.Popen(
            _probe(args, modules), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for key, args in runs.items()
    }
    out = {}
    for key, proc in procs.items():
        stdout, stderr = proc.communicate()
        assert proc.returncode == 0, stderr
        out[key] = stdout.strip().splitlines()[-1].split()[1:]
    return out


@pytest.mark.subprocess
def test_rank_help_imports_no_scipy():
    """The options of `kofs rank` come from every knowledge plug-in: declaring them must not
    load what reading, ranking or reporting needs (numpy and yaml only)."""
    assert _loaded_by({"rank": ["rank", "--help"]}, ("scipy", *STACK)) == {"rank": []}


@pytest.mark.slow
def test_no_command_help_imports_the_scientific_stack():
    runs = {name: [name, "--help"] for name in sorted(main.commands)}
    loaded = _loaded_by(runs, STACK)
    assert {k: v for k, v in loaded.items() if v} == {}
    no_scipy = _loaded_by({"run": ["run", "--help"], "sources": ["sources", "--help"]},
                          ("scipy",))  # fmt: skip
    assert no_scipy == {"run": [], "sources": []}


@pytest.mark.subprocess
def test_a_dense_bulk_run_loads_only_what_its_steps_need(testdata, tmp_path):
    """Reading (pyarrow), the similarity and the spectral rankers (scipy.sparse, scipy.linalg)
    and the aggregation (scipy.special) are loaded; the rest is for other inputs or steps."""
    args = ["rank", str(testdata / "io" / "tiny.tsv"), "--rankers", "spec-phi2,laplacian",
            "--no-report", "-o", str(tmp_path / "out")]  # fmt: skip
    assert _loaded_by({"run": args}, STACK) == {"run": ["pyarrow"]}
    assert (tmp_path / "out" / "ranking.tsv").exists()


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
