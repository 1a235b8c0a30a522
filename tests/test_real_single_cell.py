"""Real single-cell data (tests/data/single_cell/README.md: 700 PBMCs x 765 genes from the
scanpy wheel): the h5ad path end to end, and that the default plans find the genes that tell
the FACS-sorted cell types apart.

Reference markers: per cell type, the 10 genes with the highest one-vs-rest AUROC (75 genes in
all); a random 50 genes hold ~5 of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import kofs
from kofs.cli import main

ad = pytest.importorskip("anndata")
PBMC = Path(__file__).parent / "data" / "single_cell" / "pbmc68k_reduced_raw.h5ad"


@pytest.fixture(scope="module")
def pbmc():
    return ad.read_h5ad(PBMC)


def one_vs_rest_auroc(X: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """AUROC of every column for ``positive`` against the rest: the Mann-Whitney U statistic
    from the column ranks (ties averaged), as sklearn's roc_auc_score, for all genes at once."""
    from scipy.stats import rankdata

    n_pos = int(positive.sum())
    u = rankdata(X, axis=0)[positive].sum(axis=0) - n_pos * (n_pos + 1) / 2
    return u / (n_pos * (len(positive) - n_pos))


@pytest.fixture(scope="module")
def reference(pbmc) -> set[str]:
    X = pbmc.X.toarray()
    y = pbmc.obs["bulk_labels"].astype(str).to_numpy()
    genes = np.asarray(pbmc.var_names)
    ref: set[str] = set()
    for t in np.unique(y):
        auc = one_vs_rest_auroc(X, y == t)
        ref |= set(genes[np.argsort(-auc, kind="stable")[:10]])
    return ref


def test_one_vs_rest_auroc_is_sklearns(pbmc):
    from sklearn.metrics import roc_auc_score

    X = pbmc.X[:, :40].toarray()
    y = pbmc.obs["bulk_labels"].astype(str).to_numpy() == "CD14+ Monocyte"
    want = [roc_auc_score(y, X[:, j]) for j in range(X.shape[1])]
    np.testing.assert_allclose(one_vs_rest_auroc(X, y), want, rtol=1e-12)


def test_reference_is_far_from_random(pbmc, reference):
    rng = np.random.default_rng(0)
    draws = [len(set(rng.choice(pbmc.var_names, 50, replace=False)) & reference) for _ in range(50)]
    assert len(reference) >= 60 and np.mean(draws) < 8


def test_unsupervised_default_plan_finds_cell_type_markers(pbmc, reference):
    """Defaults version 5 on sparse data: hotspot alone (counts recovered from the
    log-normalised X); 42 of the 75 reference markers in its top 50 when measured (random:
    ~5; defaults 4's fused list: 32)."""
    res = kofs.rank(pbmc.copy(), bootstrap=0, threads=2)
    assert [r.name for r in res.lists] == ["hotspot"]
    assert res.lists[0].info["counts"] == "log1p"
    assert len(set(res.final.top(50)) & reference) >= 35


@pytest.mark.slow
def test_the_book_graph_rankers_fused(pbmc, reference):
    """The graph rankers of the earlier single-cell plan (Laplacian, SPEC phi2, phi3) by name,
    fused by the default aggregator: each finds markers, and so does their fusion."""
    res = kofs.rank(
        pbmc.copy(), rankers=["laplacian", "spec-phi2", "spec-phi3"], bootstrap=0, threads=2
    )
    assert len(set(res.final.top(50)) & reference) >= 25
    for r in res.lists:
        assert len(set(r.top(50)) & reference) >= 20, r.name


@pytest.mark.slow
def test_labels_give_the_fisher_list_and_marker_tables(pbmc, reference):
    """With the cell types (defaults 5): the Fisher score alone (39 reference markers in its
    top 50 when measured) and the per-group marker tables; with unsupervised lists added by
    name, the lists are weighted by their cross-validated predictive value and the fusion
    keeps the markers."""
    res = kofs.rank(pbmc.copy(), labels="obs:bulk_labels", bootstrap=0, threads=2)
    assert [r.name for r in res.lists] == ["fisher"]
    assert len(set(res.final.top(50)) & reference) >= 35
    assert res.markers is not None and len(res.markers.groups) == 10
    both = kofs.rank(
        pbmc.copy(),
        labels="obs:bulk_labels",
        rankers=["fisher", "laplacian", "spec-phi2", "spec-phi3"],
        bootstrap=0,
        threads=2,
    )
    assert both.final.diagnostics["supervision"] == "labels"
    assert len(set(both.final.top(50)) & reference) >= 30


def test_cli_ranks_the_h5ad_with_its_graph(tmp_path, reference):
    """`kofs rank file.h5ad --use-graph connectivities --labels obs:...` writes the outputs;
    the graph rankers use the stored kNN graph."""
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main,
        [
            "rank", str(PBMC), "--use-graph", "connectivities", "--rankers", "laplacian,fisher",
            "--labels", "obs:bulk_labels", "--bootstrap", "0", "--no-report", "-o", str(out),
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert len(ranking) == 765 and len(set(ranking["gene"][:50]) & reference) >= 25
    manifest = json.loads((out / "manifest.json").read_text())
    lap = next(x for x in manifest["lists"] if x["name"] == "laplacian")
    assert lap["info"]["graph"] == "obsp:connectivities"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--use-graph", "distances"], "obsp has no 'distances'"),
        (["--labels", "obs:cell_type"], "obs column 'cell_type' not found"),
        (["--layer", "counts"], "layer 'counts' not found"),
        (["--use-raw"], "has no raw data"),
    ],
)
def test_cli_names_the_file_on_a_bad_h5ad_option(tmp_path, args, message):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["rank", str(PBMC), *args, "-o", str(out)])
    assert r.exit_code == 2
    line = r.output.strip().splitlines()[-1]
    assert str(PBMC) in line and message in line and "Traceback" not in r.output
    assert not out.exists()


@pytest.mark.slow
def test_chunked_read_equals_in_memory(tmp_path):
    """`--chunk-size` reads the real file lazily (Dask, 4 chunks of cells): the per-list
    scores equal the in-memory run's to 1e-10."""
    pytest.importorskip("dask")
    cmd = ["rank", str(PBMC), "--rankers", "variance,fisher,laplacian"]
    cmd += ["--labels", "obs:bulk_labels", "--bootstrap", "0", "--no-report"]
    tables = []
    for extra, name in (([], "mem"), (["--chunk-size", "200"], "dask")):
        r = CliRunner().invoke(main, [*cmd, *extra, "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        tables.append(pd.read_csv(tmp_path / name / "ranking.tsv", sep="\t", index_col="gene"))
    mem, dask = tables[0], tables[1].loc[tables[0].index]
    cols = [c for c in mem.columns if c.startswith("score")]
    assert len(cols) >= 4
    np.testing.assert_allclose(dask[cols].to_numpy(), mem[cols].to_numpy(), rtol=1e-10, atol=1e-12)


def test_raw_counts_get_one_warning_line(pbmc, caplog):
    """Integer counts given to a ranker that ranks values as given get one warning line
    advising normalisation; the log-normalised file gets none, nor do counts given to the
    rankers that model them (the single-cell default plan)."""
    import logging

    import scipy.sparse as sp

    counts = pbmc.copy()
    counts.X = sp.csr_matrix(np.round(np.expm1(pbmc.X.toarray())))
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(counts, rankers=["variance"], bootstrap=0)
    assert sum("raw counts?" in r.getMessage() for r in caplog.records) == 1
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(pbmc.copy(), rankers=["variance"], bootstrap=0)
    assert not any("raw counts?" in r.getMessage() for r in caplog.records)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.rank(counts, bootstrap=0)
    assert not any("raw counts?" in r.getMessage() for r in caplog.records)


def test_a_given_graph_no_ranker_uses_is_said(pbmc, caplog):
    """The single-cell default (hotspot) builds its own graphs: a graph given with use_graph is
    then unused, and the run says so; a ranker that takes it (morans-i) uses it silently."""
    with caplog.at_level("WARNING", logger="kofs"):
        kofs.rank(pbmc.copy(), use_graph="connectivities", bootstrap=0, threads=2)
    assert any("cell graph (use_graph) is not used" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING", logger="kofs"):
        res = kofs.rank(pbmc.copy(), use_graph="connectivities", rankers=["morans-i"], bootstrap=0)
    assert not any("use_graph" in r.getMessage() for r in caplog.records)
    assert res.lists[0].info["graph"] == "obsp:connectivities"
