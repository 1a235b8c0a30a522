"""Per-group marker tables (kofs/rankers/markers.py): scanpy's rank_genes_groups numbers
(golden values of scanpy 1.11.5, tests/data/single_cell/README.md), files, AnnData, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import kofs
from kofs.cli import main
from kofs.errors import ParameterError
from kofs.rankers.markers import marker_tables
from kofs.types import Expression, SampleCategories

ad = pytest.importorskip("anndata")
DATA = Path(__file__).parent / "data" / "single_cell"
PBMC = DATA / "pbmc68k_reduced_raw.h5ad"


@pytest.fixture(scope="module")
def pbmc():
    return ad.read_h5ad(PBMC)


@pytest.fixture(scope="module")
def golden():
    return pd.read_csv(DATA / "pbmc68k_reduced_scanpy_markers.tsv.gz", sep="\t")


def _expression(a):
    X = sp.csr_matrix(a.X, dtype=np.float64)
    return Expression(X, list(a.var_names), list(a.obs_names))


@pytest.mark.parametrize("method", ["t-test", "wilcoxon"])
def test_tables_equal_scanpys_rank_genes_groups(pbmc, golden, method):
    e = _expression(pbmc)
    labels = SampleCategories(pbmc.obs["bulk_labels"].astype(str), e.samples, name="bulk_labels")
    tables = marker_tables(e, labels, method=method)
    ours = tables.to_frame()
    ref = golden[golden["method"] == method]
    for group, want in ref.groupby("group"):
        got = ours[ours["group"] == group].head(len(want))
        assert list(got["gene"]) == list(want["names"]), group
        # scanpy stores scores and fold changes as float32
        np.testing.assert_allclose(got["score"], want["scores"], rtol=1e-5)
        np.testing.assert_allclose(got["logfoldchange"], want["logfoldchanges"], rtol=1e-4,
                                   atol=1e-5)  # fmt: skip
        np.testing.assert_allclose(got["pval"], want["pvals"], rtol=1e-4)
        np.testing.assert_allclose(got["pval_adj"], want["pvals_adj"], rtol=1e-4)
    assert tables.values == "log1p values as given"


def test_raw_counts_are_normalised_first(pbmc):
    """The same tables from the counts (normalize_total to the median + log1p) as from the
    log-normalised file, up to the normalisation target."""
    from kofs._compute.counts import counts_view

    e = _expression(pbmc)
    counts = Expression(counts_view(e.values).X, e.genes, e.samples)
    labels = SampleCategories(pbmc.obs["bulk_labels"].astype(str), e.samples)
    a = marker_tables(counts, labels)
    b = marker_tables(e, labels)
    assert a.values.startswith("log-normalised counts")
    for g in range(len(a.groups)):
        top_a = set(a.order(g)[:20])
        assert len(top_a & set(b.order(g)[:20])) >= 15


def test_errors_name_the_problem():
    e = Expression(np.abs(np.random.default_rng(0).normal(size=(5, 4))), list("abcd"),
                   [f"c{i}" for i in range(5)])  # fmt: skip
    with pytest.raises(ParameterError, match="at least 2 groups of 2 cells or more .* got 1"):
        marker_tables(e, SampleCategories(["x", "x", "x", "x", "y"], e.samples))
    with pytest.raises(ParameterError, match="at least 2 groups"):
        marker_tables(e, SampleCategories(["x"] * 5, e.samples))
    with pytest.raises(ParameterError, match="unknown test"):
        marker_tables(e, SampleCategories(["x", "x", "y", "y", "y"], e.samples), method="z")
    with pytest.raises(ParameterError, match="markers need sample labels"):
        kofs.rank(sp.csr_matrix(e.values), markers="t-test")


def test_a_group_of_one_cell_gets_no_table_and_the_run_goes_on(caplog):
    """A class of one sample is accepted with a warning (docs/guarantees.md); a single-cell
    run with one stopped at the marker tables."""
    import logging

    rng = np.random.default_rng(1)
    e = Expression(np.abs(rng.normal(size=(9, 4))), list("abcd"), [f"c{i}" for i in range(9)])
    labels = SampleCategories(["x"] * 4 + ["y"] * 4 + ["z"], e.samples)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        t = marker_tables(e, labels)
    assert t.groups == ("x", "y") and t.scores.shape == (2, 4)
    assert "1 group(s) of labels" in caplog.text and "(z)" in caplog.text
    full = marker_tables(e, SampleCategories(["x"] * 4 + ["y"] * 5, e.samples))
    np.testing.assert_allclose(full.scores[0], t.scores[0], rtol=1e-12)  # z in x's rest


def test_rank_with_labels_gives_tables_and_scanpy_layout(pbmc):
    a = pbmc.copy()
    res = kofs.rank(a, labels="bulk_labels", bootstrap=0)
    assert [r.name for r in res.lists] == ["fisher"]  # defaults 5: one list with labels
    assert res.markers is not None and res.markers.method == "t-test"
    uns = a.uns["kofs_markers"]
    assert uns["params"]["groupby"] == "bulk_labels" and uns["params"]["reference"] == "rest"
    group = res.markers.groups[0]
    assert list(uns["names"][group][:5]) == list(res.markers.to_frame(group)["gene"][:5])
    # top(): markers.tsv's log2 fold change of each gene in its higher_in group, beside
    # the difference of mean log values (the report showed the former, top() only the latter)
    top = res.top(10)
    for gene, row in top.iterrows():
        table = res.markers.to_frame(row["higher_in"]).set_index("gene")
        assert np.isclose(row["log2fc"], table.loc[gene, "logfoldchange"])
    # no tables on request
    none = kofs.rank(pbmc.copy(), labels="bulk_labels", markers="none", bootstrap=0)
    assert none.markers is None
    assert "log2fc" not in none.top(5).columns
    # report.html names the file of the tables beside it (it listed every file but this one)
    from kofs.report.run import run_report_html

    files = run_report_html(res).split("Files beside this page:")[1]
    assert "markers.tsv (marker tables, t-test: each of the 10 groups of bulk_labels" in files
    assert "markers.tsv" not in run_report_html(none).split("Files beside this page:")[1]


def test_cli_writes_the_tables(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main, ["rank", str(PBMC), "--labels", "obs:bulk_labels", "--markers", "wilcoxon", "-o",
               str(out), "--no-report"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    table = pd.read_csv(out / "markers.tsv", sep="\t")
    assert list(table.columns) == [
        "group", "rank", "gene", "score", "logfoldchange", "pval", "pval_adj",
    ]  # fmt: skip
    assert table.groupby("group").size().eq(765).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["markers"]["method"] == "wilcoxon"
    assert manifest["markers"]["file"] == "markers.tsv"
    assert manifest["settings"]["markers"] == "wilcoxon"


def test_markers_asked_for_with_output_to_stdout_warn_once(tmp_path):
    """--markers wilcoxon with -o - (ranking.tsv only): the tables were computed and dropped
    without a word; one warning says so, as for --title."""
    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, (8, 6)).astype(float))
    obs = pd.DataFrame({"g": ["a"] * 4 + ["b"] * 4}, index=[f"c{i}" for i in range(8)])
    path = tmp_path / "a.h5ad"
    ad.AnnData(X, obs=obs, var=pd.DataFrame(index=[f"G{j}" for j in range(6)])).write_h5ad(path)
    args = ["rank", str(path), "--labels", "obs:g", "--rankers", "fisher", "-o", "-"]
    r = CliRunner().invoke(main, [*args, "--markers", "wilcoxon"])
    assert r.exit_code == 0, r.stderr
    says = "--markers wilcoxon has no effect: -o - writes ranking.tsv only"
    assert r.stderr.count(says) == 1, r.stderr
    for quiet in ([], ["--markers", "none"]):
        r = CliRunner().invoke(main, [*args, *quiet])
        assert r.exit_code == 0 and "no effect" not in r.stderr, r.stderr


def test_labels_too_few_for_marker_tables(tmp_path):
    """Labels of 2 + 1 cells: the single-cell default marker tables (not asked for) failed the
    run after every list was built, in a line naming no file; now they are left out with one
    warning, and asked for (--markers t-test) they fail before any list, naming the file."""
    X = sp.csr_matrix(np.random.default_rng(1).poisson(2.0, (6, 5)).astype(float))
    obs = pd.DataFrame({"g": ["a", "a", "b", None, None, None]}, index=[f"c{i}" for i in range(6)])
    path = tmp_path / "a.h5ad"
    ad.AnnData(X, obs=obs, var=pd.DataFrame(index=[f"G{j}" for j in range(5)])).write_h5ad(path)
    args = ["rank", str(path), "--labels", "obs:g", "--rankers", "variance", "--no-report"]
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.stderr
    says = "marker tables need at least 2 groups of 2 cells or more in labels 'g', got 1"
    assert f"WARNING: {says}: no marker tables are made" in r.stderr
    assert not (tmp_path / "o" / "markers.tsv").exists()
    r = CliRunner().invoke(main, [*args, "--markers", "t-test", "-o", str(tmp_path / "p")])
    assert r.exit_code == 2 and f"kofs: error: {path}: {says} (use --markers none" in r.stderr
    assert not (tmp_path / "p").exists()


def test_the_report_shows_markers_tsv_fold_change_for_a_gene_and_group(tmp_path):
    """The report's effect (+2.65 log: a difference of mean log1p values) and markers.tsv's
    logfoldchange (scanpy's, 4.28) were two 'log fold changes' of AIF1 in CD14+ Monocyte: where
    markers.tsv has the gene and group, the report shows its number, named log2FC."""
    import re

    out = tmp_path / "run"
    args = ["rank", str(PBMC), "--labels", "obs:bulk_labels", "--bootstrap", "0"]
    r = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    markers = pd.read_csv(out / "markers.tsv", sep="\t").set_index(["group", "gene"])
    page = (out / "report.html").read_text()
    start = page.index("id='answer'")
    answer = re.sub("<[^>]+>", "", page[start : page.index("</p>", start)])
    shown = re.findall(r"(\w[\w-]*) \(([^,]+), log2FC ([+-][\d.]+)\)", answer)
    assert len(shown) == 5
    for gene, group, lfc in shown:
        assert float(lfc) == pytest.approx(markers.loc[(group, gene), "logfoldchange"], abs=0.006)
    assert " log)" not in answer  # no difference of mean log values beside them unnamed
    assert "logfoldchange for that gene and group (scanpy" in page  # the caption says which
