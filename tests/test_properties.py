"""Property-based tests (hypothesis): parser round trips and never-crash, aggregator
identities, and permutation equivariance of rankers and of :func:`kofs.pipeline.rank`.

Example counts follow the hypothesis profile (tests/conftest.py: few in the fast tier, many
with ``--full``); the examples are derandomized and the database is off, so the file is
deterministic.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import costly_examples
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kofs.aggregate import aggregate
from kofs.errors import KofsError
from kofs.io.expression import read_expression
from kofs.io.genes import read_gene_list
from kofs.io.interactions import read_interactions
from kofs.io.labels import read_labels
from kofs.io.pathways import read_gmt
from kofs.pipeline.rank import rank
from kofs.pipeline.yaml_files import load_config
from kofs.rankers import run_ranker
from kofs.types import Expression, RankerInputs, Ranking, SampleCategories

FAST = settings(
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: for the aggregations, whose examples cost ~0.1 s each
COSTLY = settings(FAST, max_examples=costly_examples(30))

# ids: letters first (never numeric, never NA-like), then letters/digits/_-.
IDS = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,7}", fullmatch=True).filter(
    lambda s: s.upper() not in {"NA", "NAN", "NULL", "NONE", "INF", "N/A", "INFINITY"}
)
FINITE = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


_TMP: list[Path] = []  # the module's folder under pytest's tmp_path_factory (set below)


@pytest.fixture(scope="module", autouse=True)
def _tmp_root(tmp_path_factory):
    """One folder under pytest's temp root for every file the hypothesis examples write
    (function-scoped ``tmp_path`` would be shared by all examples of one test)."""
    _TMP.append(tmp_path_factory.mktemp("prop"))
    yield
    _TMP.clear()


def _tmpfile(text: str | bytes, suffix: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix="case-", dir=_TMP[-1]))
    p = d / f"f{suffix}"
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


# --- parser round trips ----------------------------------------------------------------------


@st.composite
def matrices(draw):
    m = draw(st.integers(2, 8))
    n = draw(st.integers(2, 6))
    genes = draw(st.lists(IDS, min_size=m, max_size=m, unique_by=str.lower))
    samples = draw(st.lists(IDS, min_size=n, max_size=n, unique_by=str.lower))
    values = np.array(draw(st.lists(FINITE, min_size=m * n, max_size=m * n))).reshape(m, n)
    return genes, samples, values


@FAST
@given(matrices(), st.sampled_from(["\t", ","]))
def test_expression_round_trip(data, sep):
    genes, samples, values = data
    text = (
        sep.join(["gene", *samples])
        + "\n"
        + "".join(
            sep.join([g, *map(repr, row.tolist())]) + "\n"
            for g, row in zip(genes, values, strict=True)
        )
    )
    expr = read_expression(_tmpfile(text, ".csv" if sep == "," else ".tsv"), genes_in="rows")
    assert expr.genes == tuple(genes) and expr.samples == tuple(samples)
    np.testing.assert_array_equal(expr.values, values.T)  # repr() round-trips exactly


@FAST
@given(st.lists(st.tuples(IDS, IDS), min_size=2, max_size=10, unique_by=lambda t: t[0].lower()))
@example([("A", "j"), ("B", "J")])
def test_labels_round_trip(pairs):
    text = "sample\tgroup\n" + "".join(f"{s}\t{c}\n" for s, c in pairs)
    spellings: dict[str, set[str]] = {}
    for _, c in pairs:
        spellings.setdefault(c.lower(), set()).add(c)
    if any(len(v) > 1 for v in spellings.values()):  # "j" and "J": refused, not two classes
        with pytest.raises(KofsError, match="differ only in case"):
            read_labels(_tmpfile(text, ".tsv"))
        return
    cats = read_labels(_tmpfile(text, ".tsv"))
    assert dict(zip(cats.samples, cats.labels, strict=True)) == dict(pairs)


@FAST
@given(st.lists(IDS, min_size=1, max_size=20))
def test_gene_list_round_trip(ids):
    ids = [
        i
        for i in ids
        if i.lower()
        not in {
            "gene",
            "genes",
            "symbol",
            "id",
            "name",
            "entrez",
            "gene_id",
            "geneid",
            "entrez_id",
            "entrezid",
            "ensembl",
            "ensembl_id",
            "gene_name",
            "gene_symbol",
            "genesymbol",
            "hugo_symbol",
            "ensembl_gene_id",
        }
    ]
    if not ids:
        return
    got = read_gene_list(_tmpfile("\n".join(ids) + "\n", ".txt"))
    assert list(got) == list(dict.fromkeys(ids))


@FAST
@given(
    st.dictionaries(IDS, st.lists(IDS, min_size=1, max_size=6, unique=True), min_size=1, max_size=6)
)
def test_gmt_round_trip(sets):
    text = "".join(f"{k}\tdescription\t" + "\t".join(v) + "\n" for k, v in sets.items())
    gs = read_gmt(_tmpfile(text, ".gmt"))
    assert dict(zip(gs.ids, (tuple(m) for m in gs.members), strict=True)) == {
        k: tuple(v) for k, v in sets.items()
    }


@FAST
@given(st.lists(st.tuples(IDS, IDS, st.floats(0.001, 1000)), min_size=1, max_size=12))
def test_edge_list_round_trip(edges):
    text = "source\ttarget\tweight\n" + "".join(f"{a}\t{b}\t{w!r}\n" for a, b, w in edges)
    expected: dict[frozenset, float] = {}
    for a, b, w in edges:
        if a != b:  # self loops are dropped; repeated pairs keep the largest weight
            key = frozenset((a, b))
            expected[key] = max(w, expected.get(key, 0.0))
    path = _tmpfile(text, ".tsv")
    if not expected:
        with pytest.raises(KofsError, match="no interactions left"):
            read_interactions(path, "edgelist")
        return
    net = read_interactions(path, "edgelist")
    got = {frozenset((a, b)): w for a, b, w in zip(net.source, net.target, net.weight, strict=True)}
    assert got == expected


@FAST
@given(st.dictionaries(IDS, st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=10))
def test_term_relevance_round_trip(values):
    from kofs.sources.term_relevance import read_term_relevance

    text = "term\trelevance\n" + "".join(f"{k}\t{v!r}\n" for k, v in values.items())
    assert read_term_relevance(_tmpfile(text, ".tsv")) == values


def test_a_term_with_two_relevance_values_is_refused():
    from kofs.sources.term_relevance import read_term_relevance

    same = _tmpfile("GO:1\t0.5\nGO:2\t1\nGO:1\t0.50\n", ".tsv")  # one value, twice: kept
    assert read_term_relevance(same) == {"GO:1": 0.5, "GO:2": 1.0}
    two = _tmpfile("term\trelevance\nGO:1\t0.5\nGO:2\t1\nGO:1\t0.7\n", ".tsv")
    with pytest.raises(KofsError) as err:
        read_term_relevance(two)
    assert str(err.value) == (
        f"{two}:4: term 'GO:1' has two relevance values: 0.5 (line 2) and 0.7; keep one"
    )


@FAST
@given(st.dictionaries(IDS, IDS, min_size=1, max_size=10))
def test_id_map_round_trip(mapping):
    from kofs.io.id_map import read_id_map

    text = "source\ttarget\n" + "".join(f"{k}\t{v}\n" for k, v in mapping.items())
    got = read_id_map(_tmpfile(text, ".tsv"))
    assert {k: got[k] for k in mapping} == mapping


SCALARS = st.one_of(st.integers(-(10**6), 10**6), FINITE, IDS, st.booleans())


NEVER_CRASH = [
    "expression",
    "labels",
    "genes",
    "gmt",
    "edges",
    "config",
    "obo",
    "annotations",
    "id_map",
    "term_relevance",
    "pathways",
    "interactions",
]


@settings(derandomize=True)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.text(alphabet="GO:0123456789\t,\n !#[]=-abcTerm", max_size=300).map(str.encode),
    ),
    st.sampled_from(NEVER_CRASH),
)
def test_parsers_never_crash(data, reader):
    from kofs.io.annotations import read_go_annotations
    from kofs.io.id_map import read_id_map
    from kofs.io.ontology import read_obo
    from kofs.io.pathways import read_pathways
    from kofs.sources.term_relevance import read_term_relevance

    fn = {
        "expression": read_expression,
        "labels": read_labels,
        "genes": read_gene_list,
        "gmt": read_gmt,
        "edges": lambda p: read_interactions(p, "edgelist"),
        "config": load_config,
        "obo": read_obo,
        "annotations": read_go_annotations,
        "id_map": read_id_map,
        "term_relevance": read_term_relevance,
        "pathways": read_pathways,
        "interactions": read_interactions,
    }[reader]
    try:
        fn(_tmpfile(data, ".txt"))
    except KofsError as exc:
        assert "\n" not in str(exc)


# --- aggregators -------------------------------------------------------------------------------


@st.composite
def score_lists(draw, min_lists=2):
    m = draw(st.integers(3, 25))
    L = draw(st.integers(min_lists, 5))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    base = rng.normal(size=m)
    noise = draw(st.floats(0.1, 3.0))
    S = base[:, None] + noise * rng.normal(size=(m, L))
    return [f"g{i}" for i in range(m)], S


def _rankings(genes, S, order=None):
    order = np.arange(len(genes)) if order is None else order
    return [
        Ranking(f"L{j}", tuple(genes[i] for i in order), S[order, j], True)
        for j in range(S.shape[1])
    ]


def _by_gene(agg):
    return dict(zip(agg.genes, agg.scores.tolist(), strict=True))


@COSTLY
@given(score_lists(), st.integers(0, 2**31))
def test_em_weights_sum_to_one_and_ignore_gene_order(data, seed):
    genes, S = data
    a = aggregate(_rankings(genes, S), "em")
    perm = np.random.default_rng(seed).permutation(len(genes))
    b = aggregate(_rankings(genes, S, perm), "em")
    assert a.weights is not None and abs(a.weights.sum() - 1) < 1e-9
    assert np.all(a.weights >= 0)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-7, atol=1e-9)
    sa, sb = _by_gene(a), _by_gene(b)
    np.testing.assert_allclose([sa[g] for g in genes], [sb[g] for g in genes], rtol=1e-7, atol=1e-9)


@FAST
@given(score_lists(min_lists=1), st.integers(2, 5))
def test_borda_of_identical_lists_is_that_list(data, copies):
    genes, S = data
    one = Ranking("L", tuple(genes), S[:, 0], True)
    lists = [Ranking(f"L{k}", one.genes, one.scores, True) for k in range(copies)]
    agg = aggregate(lists, "borda")
    np.testing.assert_array_equal(agg.ranks, one.ranks)


@COSTLY
@given(
    score_lists(),
    st.sampled_from(
        ["borda", "mean-rank", "median-rank", "geometric-mean", "min-rank", "rra"]
        + ["em", "posterior"]
    ),
    st.integers(0, 2**31),
)
def test_aggregators_are_gene_order_equivariant(data, method, seed):
    genes, S = data
    perm = np.random.default_rng(seed).permutation(len(genes))
    # posterior: tied scores of a few dozen genes make blocks wider than 1 % (lists read as
    # partial), whose simulated null (twenty fits, ~6 s) has its gene-order invariance tested
    # by tests/test_order_invariance.py::test_partial_lists_aggregate_order_invariant
    params = {"top_k_null": "independent"} if method == "posterior" else None
    a = aggregate(_rankings(genes, S), method, params=params)
    b = aggregate(_rankings(genes, S, perm), method, params=params)
    sa, sb = _by_gene(a), _by_gene(b)
    np.testing.assert_allclose(
        [sa[g] for g in genes], [sb[g] for g in genes], rtol=1e-10, atol=1e-12
    )
    if a.weights is not None:  # fitted on the genes sorted by id: equal to rounding
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-10, atol=1e-12)


@COSTLY
@given(score_lists(), st.integers(0, 2**31))
def test_list_order_does_not_change_the_fused_ranking(data, seed):
    genes, S = data
    perm = np.random.default_rng(seed).permutation(S.shape[1])
    lists = _rankings(genes, S)
    a = aggregate(lists, "em")
    b = aggregate([lists[j] for j in perm], "em")
    # the kernels see the lists in canonical (name) order: equal to rounding, even where a flat
    # likelihood leaves the weights loosely fixed
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.weights[perm], b.weights, rtol=1e-10, atol=1e-12)


# --- permutation equivariance of rankers and of the pipeline -------------------------------------


def _data(seed, n=14, m=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    X[: n // 2, :3] += 2.5
    labels = ["a"] * (n // 2) + ["b"] * (n - n // 2)
    return X, labels


def _expr(X, genes, samples):
    return Expression(X, genes=genes, samples=samples)


RANKERS = [
    "variance",
    "fisher",
    "laplacian",
    "spec-phi1",
    "spec-phi2",
    "spec-phi3",
    "relieff",
    "trace-ratio",
    "hsic",
    "mrsf",
    "mcsf",
    "sparsity-score",
    "sps",
]


@pytest.mark.parametrize("name", RANKERS)
@settings(max_examples=costly_examples(8), derandomize=True)
@given(seed=st.integers(0, 10**6))
def test_ranker_permutation_equivariance(name, seed):
    _check_ranker_equivariance(name, seed)


def test_fssi_permutation_equivariance():
    _check_ranker_equivariance("fssi", 12345)  # slow ranker: one fixed example


def _check_ranker_equivariance(name, seed):
    X, labels = _data(seed % 97)
    n, m = X.shape
    rng = np.random.default_rng(seed)
    gp, sp_ = rng.permutation(m), rng.permutation(n)
    genes = [f"g{j}" for j in range(m)]
    samples = [f"s{i}" for i in range(n)]

    def run(Xv, gs, ss, lab):
        cats = SampleCategories(lab, ss)
        r = run_ranker(name, _expr(Xv, gs, ss), RankerInputs(categories=cats), seed=0)
        return dict(zip(r.genes, r.scores.tolist(), strict=True))

    a = run(X, genes, samples, labels)
    b = run(
        X[sp_][:, gp], [genes[j] for j in gp], [samples[i] for i in sp_], [labels[i] for i in sp_]
    )
    np.testing.assert_allclose([a[g] for g in genes], [b[g] for g in genes], rtol=1e-6, atol=1e-9)


@settings(max_examples=costly_examples(5), derandomize=True)
@given(seed=st.integers(0, 10**6))
@pytest.mark.slow
def test_pipeline_rank_permutation_equivariance(seed):
    X, labels = _data(seed % 89, n=16, m=15)
    n, m = X.shape
    rng = np.random.default_rng(seed)
    gp, sp_ = rng.permutation(m), rng.permutation(n)
    genes = [f"g{j}" for j in range(m)]
    samples = [f"s{i}" for i in range(n)]
    rankers = ["variance", "fisher", "laplacian", "spec-phi2"]

    def run(Xv, gs, ss, lab):
        res = rank(_expr(Xv, gs, ss), labels=SampleCategories(lab, ss), rankers=rankers, seed=1)
        f = res.final
        return (
            dict(zip(f.genes, f.scores.tolist(), strict=True)),
            dict(zip(f.list_names, f.weights.tolist(), strict=True)),
        )

    (sa, wa) = run(X, genes, samples, labels)
    (sb, wb) = run(
        X[sp_][:, gp], [genes[j] for j in gp], [samples[i] for i in sp_], [labels[i] for i in sp_]
    )
    assert wa.keys() == wb.keys()
    np.testing.assert_allclose([wa[k] for k in wa], [wb[k] for k in wa], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose([sa[g] for g in genes], [sb[g] for g in genes], rtol=1e-6, atol=1e-9)


@pytest.mark.slow
def test_pipeline_with_knowledge_is_gene_permutation_equivariant(tmp_path):
    """GMT gene sets + edge list + relevant genes: permuting the matrix's genes changes nothing."""
    from kofs.sources import read_sources

    X, labels = _data(5, n=16, m=24)
    genes = [f"g{j}" for j in range(24)]
    samples = [f"s{i}" for i in range(16)]
    (tmp_path / "sets.gmt").write_text(
        "".join(f"P{k}\td\t" + "\t".join(genes[k * 5 : k * 5 + 7]) + "\n" for k in range(3))
    )
    (tmp_path / "edges.tsv").write_text(
        "a\tb\tw\n"
        + "".join(f"{genes[j]}\t{genes[(3 * j + 1) % 24]}\t{0.1 + j / 30:.3f}\n" for j in range(24))
    )
    sources = read_sources(
        pathways=str(tmp_path / "sets.gmt"), interactions=str(tmp_path / "edges.tsv")
    )
    relevant = genes[:4]
    perm = np.random.default_rng(11).permutation(24)

    def run(order):
        expr = _expr(X[:, order], [genes[j] for j in order], samples)
        res = rank(
            expr,
            labels=SampleCategories(labels, samples),
            sources=sources,
            relevant_genes=relevant,
            seed=2,
        )
        f = res.final
        return (
            dict(zip(f.genes, f.scores.tolist(), strict=True)),
            dict(zip(f.list_names, f.weights.tolist(), strict=True)),
        )

    (sa, wa), (sb, wb) = run(np.arange(24)), run(perm)
    assert {"Pathway-FILT", "Pathway-REL-VOTE", "PPI-PROP"} <= set(wa)
    np.testing.assert_allclose([wa[k] for k in wa], [wb[k] for k in wa], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose([sa[g] for g in genes], [sb[g] for g in genes], rtol=1e-6, atol=1e-9)
