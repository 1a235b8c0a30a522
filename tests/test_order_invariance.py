"""Gene order and sample order change neither ranks nor printed scores (docs/guarantees.md).

Exact equality, not a tolerance: :func:`kofs.pipeline.rank` computes on the matrix sorted by
gene and sample id (:mod:`kofs._compute.canonical`) and ranks scores as printed (``%.10g``), so a
shuffled input must give the very same ``ranking.tsv`` and ``weights.tsv``. Checked for every
registered ranker the matrix and labels allow, every aggregator, and the bundled example with
GO, KEGG, interactions and relevant genes.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import costly_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kofs._compute.ranks import average_ranks
from kofs.io.output import write_ranking, write_weights
from kofs.pipeline.rank import rank
from kofs.registry import AGGREGATORS, RANKERS
from kofs.types import Expression, SampleCategories

SETTINGS = settings(max_examples=costly_examples(4), derandomize=True)

# rankers needing knowledge (functions, a gene relation) run in the example test below
PLAIN = [s.name for s in RANKERS if s.requires <= {"categories"} and not s.slow]


def _data(seed, n=14, m=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)).round(3)
    X[: n // 2, :3] += 2.5
    X[:, 5] = X[:, 4]  # two identical genes: exact ties must survive any order
    labels = ["a"] * (n // 2) + ["b"] * (n - n // 2)
    return X, labels


def _texts(result):
    buf = io.StringIO()
    write_ranking(buf, result.final, result.lists)
    w = io.StringIO()
    if result.final.weights is not None:
        write_weights(w, result.final)
    return buf.getvalue(), w.getvalue()


def _counts_for(names, X):
    """Rankers that model counts get counts: ``round(exp(x))``."""
    return np.round(np.exp(X)) if any(RANKERS.get(n).counts for n in names) else X


def _run_both(seed, **kw):
    X, labels = _data(seed % 89)
    X = _counts_for(kw.get("rankers") or (), X)
    n, m = X.shape
    rng = np.random.default_rng(seed)
    gp, sp_ = rng.permutation(m), rng.permutation(n)
    genes = [f"g{j:02d}" for j in range(m)]
    samples = [f"s{i:02d}" for i in range(n)]

    def run(Xv, gs, ss, lab):
        expr = Expression(Xv, genes=gs, samples=ss)
        return rank(expr, labels=SampleCategories(lab, ss), seed=3, **kw)

    a = run(X, genes, samples, labels)
    b = run(
        X[sp_][:, gp], [genes[j] for j in gp], [samples[i] for i in sp_], [labels[i] for i in sp_]
    )
    return a, b


@pytest.mark.parametrize("name", PLAIN)
@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_every_ranker_is_order_invariant(name, seed):
    a, b = _run_both(seed, rankers=[name], aggregate="borda")
    assert _texts(a) == _texts(b)
    assert b.final.genes == b.expression.genes  # results come back in the caller's order


@pytest.mark.slow
def test_slow_rankers_are_order_invariant():
    for spec in RANKERS:
        if spec.slow and spec.requires <= {"categories"}:
            a, b = _run_both(123, rankers=[spec.name], aggregate="borda")
            assert _texts(a) == _texts(b), spec.name


@pytest.mark.parametrize("method", AGGREGATORS.names())
@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_every_aggregator_is_order_invariant(method, seed):
    a, b = _run_both(seed, rankers=["variance", "fisher", "laplacian"], aggregate=method)
    assert _texts(a) == _texts(b)


def test_equal_printed_scores_share_a_rank():
    s = np.array([0.5, 0.5 + 1e-14, 0.25, np.nan])
    assert average_ranks(s, higher_is_better=True).tolist() == [1.5, 1.5, 3.0, 4.0]


@pytest.fixture(scope="module")
def example_runs(example_data):
    """The bundled example with GO, KEGG, STRING and relevant genes: as is and shuffled."""
    from kofs.io.genes import read_gene_list

    p, expr, cats, sources = example_data
    relevant = read_gene_list(p["relevant_genes"])
    rng = np.random.default_rng(2024)
    gp, sp_ = rng.permutation(expr.n_genes), rng.permutation(expr.n_samples)
    shuffled = Expression(
        expr.values[np.ix_(sp_, gp)],
        [expr.genes[j] for j in gp],
        [expr.samples[i] for i in sp_],
        namespace=expr.namespace,
        annotations={k: [c[j] for j in gp] for k, c in expr.annotations.items()},
        source=expr.source,
    )
    shuffled_cats = SampleCategories([cats.labels[i] for i in sp_], shuffled.samples)
    out = []
    for e, c in ((expr, cats), (shuffled, shuffled_cats)):
        out.append(rank(e, labels=c, sources=sources, relevant_genes=relevant, seed=7))
    return out


@pytest.mark.slow
def test_example_with_knowledge_is_order_invariant(example_runs):
    a, b = example_runs
    names = set(a.final.list_names)
    assert {"GO-MAH", "GO-REL-PROP", "PPI-PROP", "Pathway-FILT", "Fisher"} <= names
    ta, tb = _texts(a), _texts(b)
    assert ta[0] == tb[0]  # ranking.tsv, every list's ranks and scores
    assert ta[1] == tb[1]  # weights.tsv


def _inputs(X, genes, samples, labels, seed=0):
    """Every knowledge kind, aligned to (genes, samples)."""
    import scipy.sparse as sp

    from kofs.types import FeatureFunctions, FeatureRelation, RankerInputs, SampleSimilarity

    m = len(genes)
    # knowledge keyed by gene id, so a permuted matrix gets the same knowledge (and the
    # similarity sums over genes in id order, so it is bit-identical too)
    key = np.array([int(g[1:]) for g in genes])
    Xs = X[:, np.argsort(key)]
    d2 = ((Xs[:, None, :] - Xs[None, :, :]) ** 2).sum(-1)
    sim = SampleSimilarity(np.exp(-d2 / np.median(d2[d2 > 0])), samples)
    rel = np.zeros((m, m))
    for a in range(m):
        for b in range(m):
            if key[a] != key[b] and (key[a] + key[b]) % 3 == 0:
                rel[a, b] = 1.0 + ((key[a] * key[b]) % 5) / 4
    inc = np.array([[1.0 if (k + t) % 4 == 0 else 0.0 for t in range(5)] for k in key])
    fun = FeatureFunctions(
        sp.csr_matrix(inc), genes, [f"T{t}" for t in range(5)], relevance=np.arange(1, 6) / 5
    )
    return RankerInputs(
        categories=SampleCategories(labels, samples),
        similarity=sim,
        relation=FeatureRelation(sp.csr_matrix(rel), genes),
        functions=fun,
    )


@pytest.mark.parametrize("name", [s.name for s in RANKERS if not s.slow])
@settings(max_examples=costly_examples(3), derandomize=True)
@given(seed=st.integers(0, 10**6))
def test_run_ranker_api_is_order_invariant(name, seed):
    """Direct API calls (no pipeline) give the same scores bit for bit, with every input kind."""
    from kofs.rankers import run_ranker

    X, labels = _data(seed % 89)
    X = _counts_for([name], X)
    n, m = X.shape
    rng = np.random.default_rng(seed)
    gp, sp_ = rng.permutation(m), rng.permutation(n)
    genes = [f"g{j:02d}" for j in range(m)]
    samples = [f"s{i:02d}" for i in range(n)]

    def run(Xv, gs, ss, lab):
        r = run_ranker(name, Expression(Xv, gs, ss), _inputs(Xv, gs, ss, lab), seed=1)
        assert r.genes == tuple(gs)
        return dict(zip(r.genes, r.scores.tolist(), strict=True))

    a = run(X, genes, samples, labels)
    b = run(
        X[sp_][:, gp], [genes[j] for j in gp], [samples[i] for i in sp_], [labels[i] for i in sp_]
    )
    assert [a[g] for g in genes] == pytest.approx([b[g] for g in genes], rel=0, abs=0, nan_ok=True)


@settings(derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1.0, 1e-5, 1e8, -3.3, 0.0, float("inf"), float("nan")]),
            st.sampled_from([0.0, 1e-12, 1e-11, 3e-10, 1e-9, 1e-6]),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_fast_ties_equal_ranking_on_printed_values(items):
    """average_ranks (fast path) == ranks of the values formatted with %.10g and parsed back."""
    from scipy.stats import rankdata

    from kofs._compute.ranks import printed

    v = np.array([b * (1 + k * e) for b, e, k in items])
    s = printed(v)
    ok = ~np.isnan(s)
    want = np.empty(v.size)
    want[ok] = rankdata(-s[ok])
    want[~ok] = ok.sum() + ((~ok).sum() + 1) / 2
    assert average_ranks(v, higher_is_better=True).tolist() == want.tolist()


@pytest.mark.parametrize("method", AGGREGATORS.names())
@settings(max_examples=costly_examples(4), derandomize=True)
@given(seed=st.integers(0, 10**6))
@pytest.mark.slow
def test_partial_lists_aggregate_order_invariant(method, seed):
    """Partial lists (each ranks some genes) in shuffled gene order: same scores, statistics."""
    from kofs.aggregate import aggregate
    from kofs.types import Ranking

    rng = np.random.default_rng(seed)
    pool = [f"g{j:02d}" for j in range(25)]
    lists = []
    for k in range(4):
        genes = list(rng.choice(pool, size=int(rng.integers(5, 25)), replace=False))
        lists.append((f"L{k}", genes, rng.normal(size=len(genes)).round(2)))

    def run(shuffle):
        rs = []
        for name, genes, scores in lists:
            p = rng.permutation(len(genes)) if shuffle else np.arange(len(genes))
            rs.append(Ranking(name, [genes[i] for i in p], scores[p], higher_is_better=True))
        a = aggregate(rs, method, universe=30)
        by = {g: i for i, g in enumerate(a.genes)}
        keys = sorted(by)
        return (
            [a.scores[by[g]] for g in keys],
            {k: [v[by[g]] for g in keys] for k, v in a.statistics.items()},
            None if a.weights is None else a.weights.tolist(),
        )

    a, b = run(False), run(True)
    assert np.array_equal(a[0], b[0], equal_nan=True)
    assert a[1].keys() == b[1].keys()
    for k in a[1]:
        assert np.array_equal(a[1][k], b[1][k], equal_nan=True)
    assert a[2] == b[2]


def test_knowledge_file_line_order_changes_nothing(tmp_path):
    """Gene sets and edges listed in another order: same ranking.tsv, evidence included."""
    from kofs.sources import read_sources

    X, labels = _data(7, n=16, m=24)
    genes = [f"g{j:02d}" for j in range(24)]
    samples = [f"s{i:02d}" for i in range(16)]
    sets = [(f"P{k}", genes[k * 4 : k * 4 + 7]) for k in range(5)]
    sets += [(f"Q{k}", genes[:7]) for k in range(5)]  # equal sets: tied relevance in evidence
    edges = [(genes[j], genes[(5 * j + 3) % 24], 0.2 + (j % 4) / 8) for j in range(24)]
    rng = np.random.default_rng(3)

    def files(tag, shuffle):
        ss = [sets[i] for i in (rng.permutation(len(sets)) if shuffle else range(len(sets)))]
        gmt = "".join(
            f"{n}\td\t"
            + "\t".join(g[i] for i in (rng.permutation(len(g)) if shuffle else range(len(g))))
            + "\n"
            for n, g in ss
        )
        es = [edges[i] for i in (rng.permutation(len(edges)) if shuffle else range(len(edges)))]
        (tmp_path / f"{tag}.gmt").write_text(gmt)
        (tmp_path / f"{tag}.tsv").write_text(
            "a\tb\tw\n" + "".join(f"{a}\t{b}\t{w}\n" for a, b, w in es)
        )
        return read_sources(
            pathways=str(tmp_path / f"{tag}.gmt"), interactions=str(tmp_path / f"{tag}.tsv")
        )

    def run(src):
        res = rank(
            Expression(X, genes, samples),
            labels=SampleCategories(labels, samples),
            sources=src,
            relevant_genes=genes[:3],
            seed=2,
        )
        buf = io.StringIO()
        write_ranking(buf, res.final, res.lists, evidence=res.evidence)
        return buf.getvalue()

    assert run(files("a", False)) == run(files("b", True))
