"""The command line and the Python API are one: ``kofs rank`` and ``kofs.rank``, ``kofs aggregate``
and ``kofs.aggregate_lists``, ``kofs evaluate`` and ``evaluate_files`` given the same options
write the same tables (ranking.tsv against ``to_frame()``, weights.tsv against
``weights_frame()``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from click.testing import CliRunner

import kofs
from kofs.cli import main


def _same_table(cli: pd.DataFrame, py: pd.DataFrame) -> None:
    """Every column of the Python table equals the written one (numbers to their 10 digits)."""
    assert list(cli.index) == list(py.index)
    assert [c for c in py.columns if c not in cli.columns] == []
    for c in py.columns:
        if py[c].dtype == object:
            assert list(cli[c].fillna("")) == list(py[c].fillna("")), c
        else:
            np.testing.assert_allclose(
                cli[c].to_numpy(float), py[c].to_numpy(float), rtol=1e-8, atol=1e-12, err_msg=c
            )


def test_rank_on_the_command_line_equals_kofs_rank(tmp_path):
    p = kofs.example_paths()
    out = tmp_path / "out"
    args = ["rank", p["expression"], "--labels", p["labels"], "--label-column", "lineage",
            "--pathways", p["pathways"], "--rankers", "fisher,laplacian",
            "--param", "laplacian.k=7", "--aggregate-param", "resamples=20", "--seed", "3",
            "--threads", "1", "--markers", "t-test", "--no-report", "-o", str(out)]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    labels = kofs.read_labels(p["labels"], label_column="lineage")
    expr = kofs.read_expression(p["expression"], sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    res = kofs.rank(expr, labels=labels, pathways=p["pathways"], rankers=["fisher", "laplacian"],
                    param={"laplacian": {"k": 7}}, aggregate_param={"resamples": 20}, seed=3,
                    threads=1, markers="t-test")  # fmt: skip
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t", index_col="gene")
    assert list(res.to_frame().columns) == list(ranking.columns)  # score:<list> too
    _same_table(ranking, res.to_frame())
    weights = pd.read_csv(out / "weights.tsv", sep="\t", index_col="list")
    frame = res.weights_frame()
    _same_table(weights.loc[frame.index], frame)
    markers = pd.read_csv(out / "markers.tsv", sep="\t")
    table = res.markers.to_frame()
    assert len(markers) == len(table) and list(markers["gene"]) == list(table["gene"])


def test_aggregate_on_the_command_line_equals_aggregate_lists(tmp_path):
    rng = np.random.default_rng(0)
    genes = [f"G{j}" for j in range(150)]
    z = rng.normal(size=150)
    z[:20] += 4
    p = 2 * np.minimum(1 - pd.Series(z).rank(pct=True) + 1e-6, 1)
    pd.DataFrame({"gene": genes, "P.Value": np.clip(p, 1e-12, 1), "logFC": z}).to_csv(
        tmp_path / "a.tsv", sep="\t", index=False
    )
    w = z + rng.normal(size=150)
    pd.DataFrame({"symbol": genes, "stat": w}).to_csv(tmp_path / "b.csv", index=False)
    (tmp_path / "top.txt").write_text("\n".join(np.array(genes)[np.argsort(-w)][:25]) + "\n")
    (tmp_path / "go.txt").write_text("\n".join(genes[:30:2]) + "\n")
    a, b, top, go = (str(tmp_path / f) for f in ("a.tsv", "b.csv", "top.txt", "go.txt"))
    cases = [
        (["--signal-p", "0.01"], {"signal_p": 0.01}),
        (["--knowledge", "go", "--top-k", "top", "--universe", "200", "--ranks-only"],
         {"knowledge": ["go"], "top_k": ["top"], "universe": 200, "ranks_only": True}),
        (["--score-column", "stat", "--direction", "desc", "--aggregate", "rra"],
         {"score_column": "stat", "direction": "desc", "aggregate": "rra"}),
    ]  # fmt: skip
    for i, (opts, kw) in enumerate(cases):
        named = "score_column" not in kw  # else --score-column names b's column, a names its own
        lists = {"a": a if named else f"{a}:logFC:desc", "b": f"{b}:stat:desc" if named else b,
                 "top": top, "go": go}  # fmt: skip
        out = tmp_path / f"o{i}"
        specs = [f"{n}={f}" for n, f in lists.items()]
        r = CliRunner().invoke(main, ["aggregate", *specs, *opts, "-o", str(out)])
        assert r.exit_code == 0, (opts, r.output)
        res = kofs.aggregate_lists(lists, **kw)
        cli = pd.read_csv(out / "ranking.tsv", sep="\t", index_col="gene")
        assert list(res.to_frame().columns) == list(cli.columns)  # score:<list> too
        _same_table(cli, res.to_frame())
        if res.final.weights is not None:
            weights = pd.read_csv(out / "weights.tsv", sep="\t", index_col="list")
            frame = res.weights_frame()
            _same_table(weights.loc[frame.index], frame)


def test_aggregate_lists_takes_every_option_of_kofs_aggregate_by_its_name():
    """``--score-column`` was ``column=`` in Python, and ``score_column=`` was answered with
    "did you mean 'gene_column'?"."""
    import inspect

    from kofs.options import options_of
    from kofs.pipeline.user_lists_config import AggregateListsConfig

    keywords = inspect.signature(kofs.aggregate_lists).parameters
    for o in options_of(AggregateListsConfig):
        if o.name in ("output", "top", "no_report"):  # what the command writes and prints
            continue
        assert o.name in keywords, o.name
        assert keywords[o.name].default == (None if o.default == {} else o.default), o.name


def test_evaluate_on_the_command_line_equals_evaluate_files(tmp_path):
    from kofs.evaluate.run import evaluate_files

    p = kofs.example_paths()
    run = tmp_path / "run"
    kofs.write_result(
        kofs.run({"expression": p["expression"], "rankers": ["variance"], "output": str(run)})
    )
    common = {"--labels": p["labels"], "--known-genes": f"rel={p['relevant_genes']}",
              "--seed": "2", "--folds": "3", "--repeats": "1", "--classifiers": "1nn",
              "--top": "10,20"}  # fmt: skip
    args = [x for kv in common.items() for x in kv]
    r = CliRunner().invoke(
        main, ["evaluate", str(run), p["expression"], *args, "-o", str(tmp_path / "cli")]
    )
    assert r.exit_code == 0, r.output
    evaluate_files({"rankings": [str(run)], "expression": p["expression"],
                    "labels": p["labels"], "known_genes": [f"rel={p['relevant_genes']}"],
                    "seed": 2, "folds": 3, "repeats": 1, "classifiers": ["1nn"], "top": [10, 20],
                    "output": str(tmp_path / "py")})  # fmt: skip
    for name in ("evaluation.tsv", "accuracy.tsv"):
        cli = (tmp_path / "cli" / name).read_text()
        assert cli == (tmp_path / "py" / name).read_text(), name
        assert len(cli.splitlines()) > 1


def test_sources_json_is_describe_and_methods_are_the_registries():
    import json

    from kofs.pipeline.run import describe

    p = kofs.example_paths()
    opts = {"labels": p["labels"], "label_column": "lineage", "pathways": p["pathways"]}
    args = [x for k, v in opts.items() for x in (f"--{k.replace('_', '-')}", v)]
    r = CliRunner().invoke(main, ["sources", p["expression"], *args, "--json"])
    assert r.exit_code == 0, r.output
    report = describe({"expression": p["expression"], **opts})
    assert json.loads(r.output) == json.loads(json.dumps(report, sort_keys=True, default=str))
    assert report["lists"]
    r = CliRunner().invoke(main, ["methods", "--format", "tsv"])
    assert r.exit_code == 0, r.output
    rows = [line.split("\t")[0] for line in r.output.splitlines()[1:] if line]
    assert set(rows) == set(kofs.RANKERS.names()) | set(kofs.AGGREGATORS.names())


def test_configs_kofs_run_repeats_are_read_by_python(tmp_path):
    """``kofs run`` takes a config with ``command: rank`` or ``command: aggregate``; so do
    ``kofs.run`` / ``kofs.read_run_config`` (rank) and ``read_aggregate_config`` (aggregate)."""
    import pytest

    from kofs.errors import ParameterError
    from kofs.pipeline.user_lists_config import read_aggregate_config, run_aggregate_config

    p = kofs.example_paths()
    cfg = tmp_path / "rank.yaml"
    cfg.write_text(f"command: rank\nexpression: {p['expression']}\nrankers: variance\n")
    assert kofs.read_run_config(cfg).ranking.rankers == ("variance",)
    assert [r.name for r in kofs.run(cfg).lists] == ["variance"]
    cfg.write_text(f"command: evaluate\nexpression: {p['expression']}\n")
    with pytest.raises(ParameterError, match="command"):
        kofs.read_run_config(cfg)
    (tmp_path / "top.txt").write_text("A\nB\nC\n")
    (tmp_path / "other.txt").write_text("B\nA\nD\n")
    out = tmp_path / "fused"
    r = CliRunner().invoke(
        main, ["aggregate", str(tmp_path / "top.txt"), str(tmp_path / "other.txt"),
               "--aggregate", "borda", "-o", str(out)]
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    resolved = out / "config.resolved.yaml"
    with pytest.raises(ParameterError, match="read_aggregate_config"):
        kofs.run(resolved)
    specs, settings = read_aggregate_config(resolved)
    again = run_aggregate_config(specs, settings)
    written = pd.read_csv(out / "ranking.tsv", sep="\t", index_col="gene")
    assert list(again.final.to_frame().index) == list(written.index)
