"""``kofs aggregate``, ``evaluate``, ``gosim`` and ``fetch`` declare their options once (an
``opt()`` dataclass), as ``kofs rank`` does: the command's options are generated from the
declaration field for field, click applies no default of its own, and the command's work is one
library call reachable from Python with the same names."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import ParameterError
from kofs.options import options_of


def _declared():
    from data_fetchers import FetchOptions
    from kofs.evaluate.config import EvaluateConfig
    from kofs.knowledge.gosim import GosimConfig
    from kofs.pipeline.user_lists_config import AggregateListsConfig

    return {
        "aggregate": (AggregateListsConfig, ()),
        "evaluate": (EvaluateConfig, ("rankings", "expression")),
        "gosim": (GosimConfig, ()),
        "fetch": (FetchOptions, ()),
    }


@pytest.mark.parametrize("command", ["aggregate", "evaluate", "gosim", "fetch"])
def test_options_are_generated_from_the_declaration(command):
    cls, arguments = _declared()[command]
    declared = {o.name: o for o in options_of(cls)}
    cmd = main.commands[command]
    options = {p.name: p for p in cmd.params if isinstance(p, click.Option) and p.name != "help"}
    assert set(options) == set(declared) - set(arguments)
    for name, p in options.items():
        o = declared[name]
        assert p.opts[0] == o.flag and (p.help or "").startswith(o.help)
        assert p.default is None or (p.is_flag and not p.default)  # the library's defaults
        assert p.required == o.required
    args = {p.name for p in cmd.params if isinstance(p, click.Argument)}
    assert args == set(arguments) | ({"lists"} if command == "aggregate" else set()) | (
        {"source", "accession"} if command == "fetch" else set()
    )


def test_every_parameter_of_every_fetch_source_is_an_option():
    from data_fetchers import SOURCES, FetchOptions
    from data_fetchers._options import SOURCE_OPTIONS

    names = {o.name for o in options_of(FetchOptions)}
    params = {p.name for spec in SOURCES.values() for p in spec.params} - {"accession"}
    assert params <= set(SOURCE_OPTIONS) <= names


def test_fetch_source_checks_its_options_from_python(tmp_path):
    from data_fetchers import fetch_source

    with pytest.raises(ParameterError, match="did you mean 'timeout'"):
        fetch_source("go-basic", options={"timout": 3})
    with pytest.raises(ParameterError, match="takes no argument"):
        fetch_source("go-basic", "GSE1", options={"cache": str(tmp_path), "offline": True})
    with pytest.raises(ParameterError, match="--timeout"):
        fetch_source("go-basic", options={"timeout": "soon"})


def test_gosim_from_python_writes_what_the_command_writes(testdata, tmp_path):
    from kofs.knowledge.gosim import run_gosim

    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("1\n2\n5\n3\n")
    files = {"go": str(go / "tiny.obo"), "go_annotations": str(go / "tiny_annotations.tsv"),
             "genes": str(genes)}  # fmt: skip
    r = CliRunner().invoke(
        main, ["gosim", *[f"--{k.replace('_', '-')}={v}" for k, v in files.items()],
               "--measure", "resnik", "-o", str(tmp_path / "cli.tsv")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    table = run_gosim({**files, "measure": "resnik", "output": str(tmp_path / "py.tsv")})
    assert (tmp_path / "py.tsv").read_bytes() == (tmp_path / "cli.tsv").read_bytes()
    assert table.genes == ["1", "2", "3"] and table.info["measure"] == "resnik"
    with pytest.raises(ParameterError, match="--genes is required"):
        run_gosim({k: v for k, v in files.items() if k != "genes"} | {"output": "-"})
    with pytest.raises(ParameterError, match="did you mean 'measure'"):
        run_gosim({**files, "output": "-", "mesure": "lin"})


def test_evaluate_settings_are_checked_when_made():
    from kofs.evaluate.config import EvaluateConfig
    from kofs.evaluate.run import evaluate_files

    base = {"rankings": ["r.tsv"], "expression": "e.tsv", "labels": "l.tsv"}
    c = EvaluateConfig.from_mapping(base)
    assert c.top == (10, 30, 50) and c.classifiers == ("1nn", "svm-rbf", "svm-linear")
    assert c.split() is None
    with pytest.raises(ParameterError, match="--split-top needs --split-known"):
        EvaluateConfig.from_mapping({**base, "split_top": "5,10"})
    with pytest.raises(ParameterError, match="'x' is not a --known-genes set"):
        EvaluateConfig.from_mapping({**base, "split_known": "x", "known_genes": ["k=k.txt"]})
    split = EvaluateConfig.from_mapping(
        {**base, "split-known": "k", "known-genes": ["k=k.txt"], "seed": 4}
    ).split()
    assert split.known == "k" and split.seed == 4
    with pytest.raises(ParameterError, match="--labels is required"):
        EvaluateConfig.from_mapping({k: v for k, v in base.items() if k != "labels"})
    with pytest.raises(ParameterError, match="did you mean 'folds'"):
        EvaluateConfig.from_mapping({**base, "fold": 3})
    with pytest.raises(ParameterError, match="evaluate options as a mapping .*, not a list"):
        EvaluateConfig.from_mapping(["r.tsv", "e.tsv"])  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="--sim-anno 'y' is not a --known-genes set; sets: k"):
        EvaluateConfig.from_mapping({**base, "sim_anno": "k,y", "known_genes": ["k=k.txt"]})
    assert EvaluateConfig.from_mapping(
        {**base, "sim_anno": "k", "known_genes": ["k=k.txt"]}
    ).sim_anno == ("k",)
    # the command line needs one ranking; Python read [] as given, then had none to evaluate
    with pytest.raises(ParameterError, match="--rankings: an empty list of paths was given"):
        EvaluateConfig.from_mapping({**base, "rankings": []})
    with pytest.raises(ParameterError, match="--known-genes: an empty list of paths"):
        EvaluateConfig.from_mapping({**base, "known_genes": []})
    with pytest.raises(ParameterError, match="evaluate_files: unknown keyword 'progres'"):
        evaluate_files(base, progres=None)
    # the largest seed the folds take (seed + repeat): 2**32 - 1 passed, then failed after
    # the matrix was read with "seed must be a whole number in [0, 4293967295]"
    assert EvaluateConfig.from_mapping({**base, "seed": 2**32 - 1 - 10**6}).seed == 4293967295
    with pytest.raises(
        ParameterError, match="--seed: 4294967295 is not in the range \\[0, 4293967295\\]"
    ):
        EvaluateConfig.from_mapping({**base, "seed": 2**32 - 1})


def test_sim_anno_without_go_warns_before_any_reading(tmp_path, caplog):
    import logging

    from kofs.errors import InputError
    from kofs.evaluate.run import evaluate_files

    config = {"rankings": ["r.tsv"], "expression": "e.tsv", "labels": str(tmp_path / "none"),
              "known_genes": ["k=k.txt"], "sim_anno": "k", "output": str(tmp_path / "o")}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="kofs"), pytest.raises(InputError):
        evaluate_files(config)  # the labels file is missing: the first file read
    (line,) = [ln for ln in caplog.text.splitlines() if "no effect" in ln]
    assert "--sim-anno k has no effect: Sim_anno needs GO (--go with --go-annotations)" in line
