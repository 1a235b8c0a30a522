"""Converters: gene sets -> FeatureFunctions / filtered genes, interactions -> FeatureRelation."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import CoverageError, ParameterError
from kofs.io.gene_sets import GeneSets
from kofs.io.interaction_table import Interactions
from kofs.io.interactions import read_interactions
from kofs.io.pathways import read_pathways
from kofs.knowledge.genesets import filter_genes, genesets_to_functions, incidence_matrix
from kofs.knowledge.network import interactions_to_relation, max_merge_edges
from kofs.types import Expression

SYMBOLS = [
    "TP53",
    "MDM2",
    "BRCA1",
    "CHEK2",
    "MAPK1",
    "MAPK3",
    "ELK1",
    "BCL2",
    "PIK3CA",
    "AKT1",
    "GAPDH",
    "ACTB",
]
ENTREZ = [
    "7157",
    "4193",
    "672",
    "11200",
    "5594",
    "5595",
    "2002",
    "596",
    "5290",
    "207",
    "2597",
    "60",
]


def toy(order=None) -> Expression:
    order = list(range(len(SYMBOLS))) if order is None else list(order)
    values = np.random.default_rng(0).normal(size=(5, len(SYMBOLS)))[:, order]
    return Expression(
        values,
        [SYMBOLS[i] for i in order],
        [f"s{i}" for i in range(5)],
        namespace="symbol",
        annotations={"entrez": [ENTREZ[i] for i in order]},
    )


def col(e: Expression, symbol: str) -> int:
    return e.genes.index(symbol)


# ---------------------------------------------------------------- gene sets


def test_functions_incidence_aligned_to_matrix(testdata):
    e = toy()
    g = read_pathways(testdata / "pathways" / "small.gmt")
    f, rep = genesets_to_functions(g, e, min_size=2)
    assert f.incidence.shape == (12, 3) and f.genes == e.genes
    assert f.terms == ("SET_A", "SET_B", "SET_C") and f.relevance is None
    dense = f.incidence.toarray()
    assert set(np.flatnonzero(dense[:, 0])) == {col(e, "TP53"), col(e, "MDM2"), col(e, "BRCA1")}
    assert set(np.flatnonzero(dense[:, 1])) == {col(e, "CHEK2"), col(e, "BRCA1")}
    assert dense[:, 2].sum() == 6  # lower-case symbols match
    assert set(np.unique(dense)) == {0.0, 1.0}
    assert (rep.input_genes, rep.matched, rep.dropped) == (11, 10, 1)
    small, _ = genesets_to_functions(g, e, min_size=3, max_size=5)
    assert small.terms == ("SET_A",) and small.provenance["sets_too_small"] == 1
    assert small.provenance["sets_too_large"] == 1


def test_functions_follow_gene_order(testdata):
    g = read_pathways(testdata / "pathways" / "kegg_link.tsv")  # entrez ids
    perm = np.random.default_rng(1).permutation(12)
    f0, rep = genesets_to_functions(g, toy(), min_size=1)
    f1, _ = genesets_to_functions(g, toy(perm), min_size=1)
    assert rep.id_column == "entrez"
    np.testing.assert_array_equal(f1.incidence.toarray(), f0.incidence.toarray()[perm])


def test_functions_pick_best_member_kind():
    g = GeneSets(
        ("P1", "P2"),
        ("one", "two"),
        (),
        (("1", "2"), ("3",)),
        alt_members={"symbol": (("TP53", "MDM2"), ("AKT1", "BCL2"))},
    )
    f, rep = genesets_to_functions(g, toy(), min_size=1)
    assert rep.source_namespace == "symbol" and f.term_names == ("one", "two")
    assert f.incidence[:, 1].toarray().ravel()[[col(toy(), "AKT1"), col(toy(), "BCL2")]].all()
    assert f.provenance["member_ids"] == "symbol"


def test_functions_errors(testdata):
    g = read_pathways(testdata / "pathways" / "small.gmt")
    with pytest.raises(ParameterError, match="no gene set has between 50 and 500"):
        genesets_to_functions(g, toy(), min_size=50)
    with pytest.raises(ParameterError, match="min_size"):
        genesets_to_functions(g, toy(), min_size=0)
    with pytest.raises(ParameterError, match="max_size"):
        genesets_to_functions(g, toy(), min_size=5, max_size=2)
    alien = GeneSets(("X",), (), (), (("FOO", "BAR"),), path="alien.gmt")
    with pytest.raises(CoverageError) as err:
        genesets_to_functions(alien, toy(), min_size=1)
    assert str(err.value).startswith("alien.gmt: pathways alien.gmt: none of its 2 gene ids")


def test_low_overlap_warns(caplog):
    members = (tuple(["TP53"] + [f"NOPE{i}" for i in range(30)]),)
    g = GeneSets(("X",), (), (), members)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        f, rep = genesets_to_functions(g, toy(), min_size=1)
    assert rep.matched == 1 and any("low gene overlap" in r.message for r in caplog.records)


def test_filter_genes(testdata):
    e = toy()
    g = read_pathways(testdata / "pathways" / "small.gmt")
    idx, rep = filter_genes(g, e, set_ids=["set_a", "SET_B"])
    assert idx.tolist() == sorted({col(e, s) for s in ("TP53", "MDM2", "BRCA1", "CHEK2")})
    assert rep.input_genes == 5 and rep.matched == 4
    all_idx, _ = filter_genes(g, e)
    assert len(all_idx) == 10 and np.all(np.diff(all_idx) > 0)
    with pytest.raises(ParameterError, match="did you mean SET_A") as info:
        filter_genes(g, e, set_ids=["SET_AA"])
    assert str(info.value).count("SET_A,") + str(info.value).count("SET_A?") == 1  # once
    with pytest.raises(ParameterError, match="empty"):
        filter_genes(g, e, set_ids=[])


def test_filter_genes_of_chosen_sets_without_matrix_genes_say_so():
    """Chosen sets holding none of the matrix's genes, the file's other sets holding some: the
    message said "use the same identifier type in both" of ids of the same type."""
    g = GeneSets(("A", "B"), (), (), (("NOPE1", "NOPE2"), ("TP53", "MDM2")), path="s.gmt")
    with pytest.raises(CoverageError) as err:
        filter_genes(g, toy(), set_ids=["A"])
    assert str(err.value) == (
        "s.gmt: pathways s.gmt: the chosen gene set(s) A hold none of the matrix's genes, "
        "though the file's other sets hold 2 of them: choose sets with genes of the matrix"
    )
    alien = GeneSets(("A", "B"), (), (), (("NOPE1",), ("NOPE2",)), path="s.gmt")
    with pytest.raises(CoverageError, match="use the same identifier type in both"):
        filter_genes(alien, toy(), set_ids=["A"])  # no set matches: the id types differ


def test_filter_genes_by_name_on_real_kegg(shared_data):
    from kofs.io.pathways import read_pathways as rp

    g = rp(shared_data / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv")
    e = toy()
    idx, _ = filter_genes(g, e, set_ids=["KEGG_P53_SIGNALING_PATHWAY"])  # = hsa04115
    same, _ = filter_genes(g, e, set_ids="hsa04115")
    assert idx.tolist() == same.tolist()
    assert {e.genes[i] for i in idx} >= {"TP53", "MDM2", "CHEK2"}


def test_real_kegg_incidence_matches_set_oracle(shared_data):
    df = pd.read_csv(
        shared_data / "ALL" / "ALL_gene_expr.tsv.gz",
        sep="\t",
        usecols=["entrez_id", "symbol"],
        dtype=str,
    )
    e = Expression(
        np.zeros((1, len(df))),
        df["symbol"],
        ["s"],
        namespace="symbol",
        annotations={"entrez": df["entrez_id"]},
    )
    g = read_pathways(shared_data / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv")
    f, rep = genesets_to_functions(g, e, min_size=1, max_size=None)
    entrez = set(df["entrez_id"])
    assert rep.id_column == "entrez"
    assert rep.matched == len(entrez & set(g.genes()))
    assert f.incidence.shape == (8562, sum(1 for m in g.members if set(m) & entrez))
    assert f.incidence.nnz == sum(len(set(m) & entrez) for m in g.members)


# ---------------------------------------------------------------- interactions


def test_relation_symmetric_max_no_loops(testdata):
    e = toy()
    x = read_interactions(testdata / "interactions" / "edges_header.tsv")
    rel, rep = interactions_to_relation(x, e)
    a = rel.matrix
    assert sp.isspmatrix_csr(a) and a.shape == (12, 12) and rel.genes == e.genes
    assert (abs(a - a.T)).nnz == 0 and a.diagonal().sum() == 0 and not rel.directed
    assert a[col(e, "TP53"), col(e, "MDM2")] == 0.9  # listed twice, max kept
    assert a.nnz == 6 and rep.dropped == 1  # NOT_A_GENE
    rel2, _ = interactions_to_relation(x, e, min_weight=0.5)
    assert rel2.matrix.nnz == 4 and rel2.provenance["edges_below_min_weight"] == 1
    once, _ = interactions_to_relation(x, e, symmetrize=False)
    assert once.matrix.nnz == 3


def test_relation_directed_kgml(testdata):
    e = toy()
    x = read_pathways(testdata / "pathways" / "kgml").interactions
    rel, rep = interactions_to_relation(x, e)
    a = rel.matrix.toarray()
    assert rel.directed and rep.id_column == "entrez"
    assert a[col(e, "MAPK1"), col(e, "ELK1")] == 1 and a[col(e, "ELK1"), col(e, "MAPK1")] == 0
    assert a.sum() == 7
    und, _ = interactions_to_relation(x, e, ignore_direction=True)
    assert not und.directed and (abs(und.matrix - und.matrix.T)).nnz == 0
    assert und.matrix.nnz == 14


def test_relation_string_via_aliases_and_merged_proteins(testdata, tmp_path):
    ia = testdata / "interactions"
    x = read_interactions(ia / "string_links.txt", string_aliases=ia / "string_aliases.txt")
    e = toy()
    rel, rep = interactions_to_relation(x, e)
    # STRING's proteins reach the matrix's gene ids through the aliases' HGNC symbols
    assert (rep.source_namespace, rep.id_column) == ("Ensembl_HGNC_symbol", "gene")
    assert rep.matched == 4 and rep.dropped == 1  # ENSP00000999999 unknown
    a = rel.matrix
    assert a[col(e, "TP53"), col(e, "MDM2")] == pytest.approx(0.999)
    assert a[col(e, "CHEK2"), col(e, "BRCA1")] == pytest.approx(0.4)
    # two proteins of one gene: their edge becomes a self-loop and is dropped
    p = tmp_path / "iso.tsv"
    p.write_text("P04637\tP04637-2\t0.5\nP04637-2\tQ00987\t0.8\n")
    y = Interactions(
        ["P04637", "P04637-2"],
        ["P04637-2", "Q00987"],
        [0.5, 0.8],
        False,
        "",
        path=str(p),
        aliases={},
    )
    uni = Expression(np.zeros((1, 2)), ["P04637", "Q00987"], ["s"])
    rel2, _ = interactions_to_relation(y, uni)
    assert rel2.matrix.toarray().tolist() == [[0, 0.8], [0.8, 0]]
    assert rel2.provenance["self_loops_after_mapping"] == 1


def test_relation_follows_gene_order(testdata):
    x = read_interactions(testdata / "interactions" / "edges_header.tsv")
    perm = np.random.default_rng(3).permutation(12)
    r0, _ = interactions_to_relation(x, toy())
    r1, _ = interactions_to_relation(x, toy(perm))
    np.testing.assert_array_equal(r1.matrix.toarray(), r0.matrix.toarray()[np.ix_(perm, perm)])


def test_relation_errors(testdata):
    x = read_interactions(testdata / "interactions" / "edges_header.tsv")
    with pytest.raises(ParameterError, match="min_weight"):
        interactions_to_relation(x, toy(), min_weight=-1)
    with pytest.raises(CoverageError, match="no interaction with weight >= 5"):
        interactions_to_relation(x, toy(), min_weight=5)
    alien = Interactions(["FOO"], ["BAR"], [1.0], False, "", path="x.tsv")
    with pytest.raises(CoverageError) as err:
        interactions_to_relation(alien, toy())
    assert str(err.value).startswith("x.tsv: interactions x.tsv: none of its 2 gene ids")


def test_real_string_relation_matches_oracle(shared_data):
    df = pd.read_csv(
        shared_data / "ALL" / "ALL_gene_expr.tsv.gz",
        sep="\t",
        usecols=["entrez_id", "symbol"],
        dtype=str,
    )
    e = Expression(
        np.zeros((1, len(df))),
        df["symbol"],
        ["s"],
        namespace="symbol",
        annotations={"entrez": df["entrez_id"]},
    )
    path = shared_data / "PPI" / "string_example_gene_edges.tsv.gz"
    rel, rep = interactions_to_relation(read_interactions(path), e)
    raw = pd.read_csv(path, sep="\t", dtype=str)
    pos = {g: i for i, g in enumerate(df["entrez_id"])}
    both = raw[raw["entrez_a"].isin(pos) & raw["entrez_b"].isin(pos)]
    nodes = set(raw["entrez_a"]) | set(raw["entrez_b"])
    assert rep.matched == len(nodes & set(pos))
    assert rel.matrix.nnz == 2 * len(both)
    r = both.iloc[0]
    assert rel.matrix[pos[r["entrez_a"]], pos[r["entrez_b"]]] == pytest.approx(float(r["score"]))


# ---------------------------------------------------------------- kernels


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.floats(0.01, 10)),
        min_size=1,
        max_size=40,
    )
)
def test_max_merge_edges_equals_naive(rows):
    r, c, w = (np.array(x) for x in zip(*rows, strict=True))
    got = max_merge_edges(r, c, w, 5).toarray()
    want = np.zeros((5, 5))
    for i, j, x in rows:
        want[i, j] = max(want[i, j], x)
    np.testing.assert_array_equal(got, want)


def test_incidence_matrix_counts_repeats_once():
    a = incidence_matrix([np.array([0, 2, 2]), np.array([], dtype=int), np.array([1])], 3)
    assert a.toarray().tolist() == [[1, 0, 0], [0, 0, 1], [1, 0, 0]]
