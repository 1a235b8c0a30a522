"""The Python API feels like pandas and scanpy: labelled DataFrames, short reprs, a DataFrame in
either orientation, integer ranks in AnnData."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kofs
from kofs.errors import KofsError
from kofs.types import AggregateRanking, Expression, Ranking, SampleCategories

N, M = 24, 60


def _frame():
    rng = np.random.default_rng(0)
    y = np.array(["B", "T"] * (N // 2))
    X = rng.normal(size=(N, M)) + 5
    X[:, :5] += np.where(y == "B", 2.0, -2.0)[:, None]
    samples = [f"s{i:02d}" for i in range(N)]
    genes = [f"G{j:02d}" for j in range(M)]
    df = pd.DataFrame(X, index=samples, columns=genes)
    return df, pd.Series(y, index=samples, name="lineage")


def test_a_genes_by_samples_frame_is_recognised_by_the_labels():
    df, y = _frame()
    a = kofs.rank(df, labels=y, rankers=["fisher", "variance"])
    b = kofs.rank(df.T, labels=y, rankers=["fisher", "variance"])  # genes x samples
    assert a.final.top(10) == b.final.top(10)
    assert b.expression.samples == tuple(df.index) and b.expression.n_genes == M
    # an index named like a gene column: genes as rows, without labels
    t = df.T.rename_axis("symbol")
    c = kofs.rank(t, rankers=["variance"])
    assert c.expression.n_genes == M
    assert kofs.rank(df, rankers=["variance"], genes_in="columns").expression.n_genes == M
    with pytest.raises(KofsError, match="genes-in: 'genes' is not one of rows, columns"):
        kofs.rank(df, rankers=["variance"], genes_in="genes")
    with pytest.raises(KofsError, match=r"set_index\('gene'\)"):
        kofs.rank(df.T.reset_index(), labels=y, rankers=["variance"])


def test_results_as_labelled_frames():
    df, y = _frame()
    res = kofs.rank(df, labels=y, rankers=["fisher", "variance"])
    top = res.top(5)
    assert list(top.index) == res.final.top(5) and top.index.name == "gene"
    assert {"rank", "score", "higher_in", "versus", "effect"} <= set(top.columns)
    assert set(top["higher_in"]) <= {"B", "T"} and (top["effect"].abs() > 0).all()
    # top(0) lacked the effect columns
    assert list(res.top(0).columns) == list(top.columns) and len(res.top(0)) == 0
    assert (res.top(0).dtypes == top.dtypes).all()
    full = res.to_frame()
    assert len(full) == M and "rank:fisher" in full.columns and full["rank"].is_monotonic_increasing
    w = res.weights_frame()
    assert list(w.columns)[:1] == ["weight"] and w.index.name == "list"
    assert abs(w["weight"].sum() - 1) < 1e-9 and w["weight"].is_monotonic_decreasing
    if res.final.diagnostics.get("weight_ci") is not None:
        assert {"ci_low", "ci_high"} <= set(w.columns)
        assert (w["ci_low"] <= w["weight"] + 1e-12).all()


def test_statistics_of_the_fusion_are_columns():
    genes = tuple(f"g{j}" for j in range(4))
    R = np.column_stack([np.arange(1.0, 5), np.arange(1.0, 5)])
    final = AggregateRanking(
        "x",
        genes,
        -np.arange(4.0),
        ("a", "b"),
        R,
        np.array([0.5, 0.5]),
        diagnostics={"weight_ci": [[0.4, 0.6], [0.4, 0.6]]},
        statistics={"q_value": np.array([0.01, 0.02, 0.5, 1.0]), "lfdr": np.zeros(4)},
    )
    f = final.to_frame({"g0": "ZERO"})
    assert list(f.columns) == ["symbol", "rank", "score", "q_value", "lfdr", "rank:a", "rank:b"]
    assert f.loc["g0", "symbol"] == "ZERO" and f.loc["g1", "q_value"] == 0.02
    w = final.weights_frame()
    assert w.loc["a", "ci_high"] == 0.6
    empty = AggregateRanking("borda", genes, -np.arange(4.0), ("a", "b"), R).weights_frame()
    assert empty.empty and list(empty.columns) == ["weight"]


def test_reprs_are_short_at_any_size():
    m, n = 50_000, 40
    genes = [f"G{j}" for j in range(m)]
    samples = [f"s{i}" for i in range(n)]
    expr = Expression(np.zeros((n, m), dtype=np.float32), genes, samples)
    r = Ranking("fisher", genes, np.arange(m, dtype=float), True)
    cats = SampleCategories(["a"] * n, samples)
    final = AggregateRanking(
        "borda", genes, np.arange(m, dtype=float), ("fisher",), r.ranks[:, None]
    )
    for obj in (expr, r, cats, final):
        text = repr(obj)
        assert len(text) < 250, text
    assert "50,000 genes" in repr(expr) and "G49999" in repr(r)


def test_reprs_of_what_the_readers_return_are_short():
    """The dataclass reprs printed every term (2 MB for the example's GO, more for a release)
    and every member of every gene set."""
    ex = kofs.example_paths()
    onto, sets = kofs.read_obo(ex["go"]), kofs.read_pathways(ex["pathways"])
    assert len(repr(onto)) < 250 and f"{len(onto.terms):,} terms" in repr(onto)
    assert len(repr(sets)) < 250 and f"{len(sets.ids):,} sets" in repr(sets)


def test_reprs_of_a_ranking_file_and_a_similarity_table_are_short(tmp_path):
    """Both printed every gene id (and a ranking file every rank and config value)."""
    from kofs.evaluate import read_rank_output
    from kofs.knowledge.gosim import GeneSimilarityTable

    genes = [f"G{j}" for j in range(20_000)]
    (tmp_path / "ranking.tsv").write_text(
        "gene\trank\n" + "".join(f"{g}\t{j + 1}\n" for j, g in enumerate(genes))
    )
    rf = read_rank_output(tmp_path / "ranking.tsv")
    table = GeneSimilarityTable(genes, np.zeros((2, 2), dtype=np.float32), {})
    assert len(repr(rf)) < 250 and "20,000 genes, lists: final" in repr(rf)
    assert repr(table) == "<GeneSimilarityTable: 20,000 x 20,000 genes, float32>"


def test_run_result_repr_and_notebook_view():
    df, y = _frame()
    res = kofs.rank(df, labels=y, rankers=["fisher", "variance"])
    assert len(repr(res)) < 300 and "fused by" in repr(res)
    assert "<table" in res._repr_html_()
    # one list (the Fisher list alone, the labelled default plan): "1 list", not "1 lists"
    one = kofs.rank(df, labels=y)
    assert len(one.lists) == 1 and "1 list fused by" in repr(one)


def test_list_aggregation_repr_is_short_and_top_is_its_table():
    """The dataclass repr printed every list's genes (90,000 characters for two lists of
    5,000 genes)."""
    genes = [f"g{i}" for i in range(5000)]
    res = kofs.aggregate_lists({"a": genes, "b": genes[::-1]}, aggregate="rra", universe=5000)
    assert len(repr(res)) < 200 and "2 lists fused by rra over 5,000 genes" in repr(res)
    assert "<table" in res._repr_html_()
    top = res.top(3)
    assert list(top.columns) == ["rank", "score", "p_value", "q_value"] and len(top) == 3
    assert top.equals(res.to_frame(lists=False).iloc[:3])
    with pytest.raises(kofs.KofsError, match="top\\(n\\): n must be a whole number"):
        res.top(-1)


def test_anndata_ranks_are_integers():
    ad = pytest.importorskip("anndata")
    df, y = _frame()
    a = ad.AnnData(df)
    a.obs["lineage"] = y.values
    kofs.rank(a, labels="lineage", rankers=["fisher", "variance"])
    rank = a.var["kofs_rank"]
    assert pd.api.types.is_integer_dtype(rank) and sorted(rank) == list(range(1, M + 1))
    assert pd.api.types.is_integer_dtype(a.var["kofs_rank_fisher"])


def test_weights_frame_holds_the_columns_of_weights_tsv(tmp_path):
    """``result.weights_frame()`` is the table of ``weights.tsv`` (heaviest first): the
    interval, ``sd``, and for lists seeded by the known genes ``built_from`` and
    ``seed_scoring``."""
    from kofs.io.output import write_weights

    p = kofs.example_paths()
    labels = kofs.read_labels(p["labels"], label_column="lineage")
    expr = kofs.read_expression(p["expression"], sample_ids=labels.samples)
    expr, labels = kofs.align_labels(expr, labels)
    res = kofs.rank(
        expr,
        labels=labels,
        relevant_genes=p["relevant_genes"],
        pathways=p["pathways"],
        rankers=["fisher"],
        aggregate_param={"resamples": 20},
    )
    write_weights(tmp_path / "weights.tsv", res.final)
    tsv = pd.read_csv(tmp_path / "weights.tsv", sep="\t", index_col="list")
    frame = res.weights_frame()
    assert list(frame.columns) == list(tsv.columns)
    assert {"sd", "built_from", "seed_scoring"} <= set(frame.columns)
    tsv = tsv.loc[frame.index]
    num = ["weight", "ci_low", "ci_high", "sd"]
    np.testing.assert_allclose(frame[num].to_numpy(), tsv[num].to_numpy(), rtol=1e-8, atol=1e-12)
    assert list(frame["built_from"]) == list(tsv["built_from"])
    assert list(frame["seed_scoring"]) == list(tsv["seed_scoring"])
    assert (frame["built_from"] > 0).any()
