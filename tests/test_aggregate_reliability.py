"""The reliability aggregator (latent relevant-gene class) and the weight diagnostics.

Planted-signal simulations (issue 11): three informative lists sharing the relevant genes, one
random list, one reversed list and duplicates of an informative list.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from kofs._ranks import average_ranks
from kofs.aggregate import aggregate
from kofs.aggregate.reliability import (
    block_intervals,
    fit_reliability,
    hybrid_weights,
    interval_log_lr,
    reliability_aggregate,
)
from kofs.errors import ParameterError
from kofs.types import Ranking

FAST = settings(derandomize=True)


def planted(M=3000, k=60, seed=0, shifts=(3.0, 2.5, 2.0), duplicates=2):
    """Columns: 3 informative, random, reversed(informative 0), ``duplicates`` copies of 1."""
    rng = np.random.default_rng(seed)
    rel = np.zeros(M, dtype=bool)
    rel[rng.choice(M, k, replace=False)] = True
    cols = [rng.normal(size=M) + s * rel for s in shifts]
    cols.append(rng.normal(size=M))
    cols.append(-cols[0])
    cols += [cols[1].copy() for _ in range(duplicates)]
    R = np.column_stack([average_ranks(c, higher_is_better=True) for c in cols])
    return R, rel


def as_lists(R, names=None):
    genes = [f"g{i}" for i in range(R.shape[0])]
    names = names or [f"L{j}" for j in range(R.shape[1])]
    return [Ranking(n, genes, -R[:, j], True) for j, n in enumerate(names)]


def test_planted_signal_weights_and_recovery():
    R, rel = planted()
    scores, w, info, _ = reliability_aggregate(R)
    assert w[3] <= 0.05 and w[4] <= 0.05  # random, reversed
    assert roc_auc_score(rel, scores) >= 0.95
    # the informative lists carry the weight
    assert w[:3].sum() + w[5:].sum() >= 0.9


def test_duplicates_gain_nothing():
    R, rel = planted(duplicates=2)
    R1, _ = planted(duplicates=0)
    _, w, _, _ = reliability_aggregate(R)
    _, w1, _, _ = reliability_aggregate(R1)
    # list 1 and its two copies together weigh what list 1 weighs alone (within 0.03)
    assert abs((w[1] + w[5] + w[6]) - w1[1]) <= 0.03
    # and the fused top 60 hardly moves
    s, _, _, _ = reliability_aggregate(R)
    s1, _, _, _ = reliability_aggregate(R1)
    top = set(np.argsort(-s)[:60])
    top1 = set(np.argsort(-s1)[:60])
    assert len(top & top1) >= 57


def test_contrarian_list_cannot_put_its_private_genes_on_top():
    R, rel = planted(duplicates=0)
    rng = np.random.default_rng(5)
    private = rng.choice(np.flatnonzero(~rel), 30, replace=False)
    col = rng.normal(size=R.shape[0])
    col[private] += 6.0  # its own top genes, unsupported by any other list
    R = np.column_stack([R, average_ranks(col, higher_is_better=True)])
    scores, w, _, _ = reliability_aggregate(R)
    top50 = set(np.argsort(-scores)[:50])
    assert len(top50 & set(private)) <= 2
    assert w[-1] <= 0.05


def test_reversed_and_random_lists_barely_change_top50():
    R, _ = planted(duplicates=0)
    base = R[:, :3]
    rng = np.random.default_rng(3)
    extra = np.column_stack(
        [base[:, 0][::-1].argsort().argsort() + 1.0, rng.permutation(R.shape[0]) + 1.0]
    )
    extra[:, 0] = R.shape[0] + 1 - base[:, 0]
    s0, _, _, _ = reliability_aggregate(base)
    s1, _, _, _ = reliability_aggregate(np.column_stack([base, extra]))
    assert len(set(np.argsort(-s0)[:50]) & set(np.argsort(-s1)[:50])) >= 45


def test_interval_likelihood_ratio():
    # a point at u has LR ~ a u^(a-1); the whole [0, 1] has LR 1; [0, hi] has hi^(a-1)
    a = 0.4
    assert interval_log_lr(a, np.array([0.0]), np.array([1.0]))[0] == pytest.approx(0.0)
    assert interval_log_lr(a, np.array([0.0]), np.array([0.01]))[0] == pytest.approx(
        (a - 1) * np.log(0.01)
    )
    u = 0.3
    assert interval_log_lr(a, np.array([u]), np.array([u + 1e-7]))[0] == pytest.approx(
        np.log(a) + (a - 1) * np.log(u), rel=1e-5
    )


def test_partial_lists_missing_genes_are_censored():
    R = np.array([[1.0, 1.0], [2.0, np.nan], [3.0, 2.0], [4.0, np.nan]])
    lo, hi = block_intervals(R)
    assert lo[1, 1] == pytest.approx(0.5) and hi[1, 1] == 1.0  # 2 of 4 ranked: below them
    assert (lo[[0, 2], 1] == [0.0, 0.25]).all()
    # aggregate() passes NaN for absent genes to the reliability model
    genes = [f"g{i}" for i in range(200)]
    rng = np.random.default_rng(0)
    full = Ranking("full", genes, rng.normal(size=200), True)
    part = Ranking("part", genes[:50], rng.normal(size=50), True)
    fused = aggregate([full, part], "reliability", bootstrap=0)
    assert len(fused.genes) == 200 and np.isfinite(fused.scores).all()


def test_supervised_never_scores_a_list_on_its_seed_genes():
    """A list seeded by the known genes ranks them first and is random otherwise: supervised by
    those genes, it must not earn weight (they are missing observations for it)."""
    R, rel = planted(duplicates=0)
    M = R.shape[0]
    rng = np.random.default_rng(7)
    known = np.zeros(M, dtype=bool)
    known[rng.choice(np.flatnonzero(rel), 30, replace=False)] = True
    col = rng.normal(size=M)
    col[known] += 100.0  # seed genes on top by construction
    R = np.column_stack([R[:, :3], average_ranks(col, higher_is_better=True)])
    built = np.zeros_like(R, dtype=bool)
    built[:, 3] = known
    _, w, _, _ = reliability_aggregate(R, relevant=known, built_from=built)
    assert w[3] <= 0.05
    # without the rule, the circular list would dominate
    _, w_circ, _, _ = reliability_aggregate(R, relevant=known)
    assert w_circ[3] > 0.2
    # and the fit never looks at the seeded list's ranks of its seed genes: permuting them
    # changes nothing
    R2 = R.copy()
    idx = np.flatnonzero(known)
    R2[idx, 3] = R[rng.permutation(idx), 3]
    f1 = fit_reliability(R, relevant=known, built_from=built)
    f2 = fit_reliability(R2, relevant=known, built_from=built)
    np.testing.assert_allclose(f1.a, f2.a, rtol=0, atol=1e-9)


def test_seed_evidence_enters_the_score_never_the_weight():
    """A seeded list's positions of its seed genes are its knowledge: with ``seed_evidence``
    (default) they raise those genes' fused scores; masked, they do not. The weights are the
    same either way (the fit never sees them)."""
    R, rel = planted(duplicates=0)
    M = R.shape[0]
    rng = np.random.default_rng(3)
    seeds = np.zeros(M, dtype=bool)
    seeds[rng.choice(M, 25, replace=False)] = True
    col = -R[:, 0] + rng.normal(scale=M / 10, size=M)  # informative about the other genes
    col[seeds] += 10.0 * M
    R = np.column_stack([R[:, :3], average_ranks(col, higher_is_better=True)])
    built = np.zeros_like(R, dtype=bool)
    built[:, 3] = seeds
    s_on, w_on, _, _ = reliability_aggregate(R, built_from=built)
    s_off, w_off, _, _ = reliability_aggregate(R, built_from=built, seed_evidence=False)
    np.testing.assert_array_equal(w_on, w_off)
    assert w_on[3] > 0.05  # the seeded list agrees with the others about the other genes
    gain_on, gain_off = s_on - s_off, np.zeros(M)
    # its seed genes (ranked first) gain, the others (pushed down by 25 places) do not
    assert gain_on[seeds].min() > max(gain_on[~seeds].max(), gain_off.max())
    # masked in the score too: permuting the list among its seed genes changes nothing
    R2 = R.copy()
    idx = np.flatnonzero(seeds)
    R2[idx, 3] = R[rng.permutation(idx), 3]
    s2, _, _, _ = reliability_aggregate(R2, built_from=built, seed_evidence=False)
    np.testing.assert_allclose(s2, s_off, rtol=0, atol=1e-12)


def test_hybrid_weights_split_agreement_and_labels():
    data = np.array([True, True, False, False])
    agree = np.array([0.1, 0.3, 0.4, 0.2])
    label = np.array([0.6, 0.2, 0.9, 0.0])  # knowledge lists' label values are ignored
    w = hybrid_weights(agree, label, data)
    np.testing.assert_allclose(w[2:], [0.4, 0.2])
    np.testing.assert_allclose(w[:2], 0.4 * np.array([0.75, 0.25]))
    assert w.sum() == pytest.approx(1.0)
    # no label signal among the data lists: the agreement weights
    np.testing.assert_allclose(hybrid_weights(agree, np.zeros(4), data), agree)
    # every list data-driven: the label weights alone
    np.testing.assert_allclose(hybrid_weights(np.zeros(4), label, np.ones(4, bool)), label / 1.7)
    # nothing at all: uniform; replicates broadcast
    np.testing.assert_allclose(hybrid_weights(np.zeros(4), np.zeros(4), data), 0.25)
    reps = hybrid_weights(np.tile(agree, (3, 1)), np.tile(label, (3, 1)), data)
    np.testing.assert_allclose(reps, np.tile(w, (3, 1)))


def test_label_supervision_keeps_the_knowledge_lists_agreement_weight():
    """Knowledge-only lists do not predict labels by design: under label supervision their
    weight is the unsupervised (agreement) one, and the data lists share the rest."""
    R, _ = planted(duplicates=0)
    data = np.array([True, True, True, False])
    R = R[:, :4]
    v = np.array([0.8, 0.1, 0.0, 0.5])
    _, w, info, extras = reliability_aggregate(R, list_weights=v, data_lists=data)
    agree = np.asarray(info["agreement_weights"])
    np.testing.assert_allclose(w[3], agree[3] / agree.sum())
    c = np.asarray(info["redundancy"])
    np.testing.assert_allclose(w[:3] / w[:3].sum(), (v * c)[:3] / (v * c)[:3].sum())
    assert extras["fit"] is not None and info["knowledge_weights"] == "agreement"
    # all lists data-driven: no fit, label weights only (as before)
    _, w_all, info_all, extras_all = reliability_aggregate(R, list_weights=v)
    assert extras_all["fit"] is None and "agreement_weights" not in info_all
    np.testing.assert_allclose(w_all, v * c / (v * c).sum())


def test_runner_built_from_and_circular_warning_for_em():
    R, rel = planted(duplicates=0)
    lists = as_lists(R[:, :4], ["A", "B", "C", "SEEDED"])
    seeds = [f"g{i}" for i in np.flatnonzero(rel)[:20]]
    fused = aggregate(
        lists, "reliability", relevant_genes=seeds, built_from={"SEEDED": seeds}, bootstrap=0
    )
    assert fused.diagnostics["built_from"] == {"SEEDED": 20}
    assert fused.diagnostics["supervision"] == "genes"
    em = aggregate(lists, "em", relevant_genes=seeds, built_from={"SEEDED": seeds}, bootstrap=0)
    assert "circular" in em.diagnostics and "SEEDED" in em.diagnostics["circular"]
    with pytest.raises(ParameterError):
        aggregate(lists, "reliability", built_from={"nope": seeds})


def test_diagnostics_intervals_gain_and_warning():
    R, _ = planted(duplicates=0)
    lists = as_lists(R)
    fused = aggregate(lists, "reliability", bootstrap=30, seed=1)
    d = fused.diagnostics
    ci = np.asarray(d["weight_ci"])
    assert ci.shape == (R.shape[1], 2) and (ci[:, 0] <= ci[:, 1] + 1e-12).all()
    assert d["identified"] and d["loglik_gain"] > 10 and d["warning"] is None
    assert np.asarray(d["agreement"]).shape == (R.shape[1], R.shape[1])
    assert d["agreement"][0][4] == pytest.approx(-1.0)  # the reversed copy
    again = aggregate(lists, "reliability", bootstrap=30, seed=1)
    np.testing.assert_array_equal(again.diagnostics["weight_ci"], d["weight_ci"])
    # pure noise: weights not identified, one warning line
    rng = np.random.default_rng(2)
    noise = np.column_stack([rng.permutation(500) + 1.0 for _ in range(4)])
    fn = aggregate(as_lists(noise), "reliability", bootstrap=0)
    assert not fn.diagnostics["identified"] and "not identified" in fn.diagnostics["warning"]
    # the book's EM gets intervals from the same bootstrap, its fit untouched
    em = aggregate(lists, "em", bootstrap=20, seed=1)
    em0 = aggregate(lists, "em", bootstrap=0)
    np.testing.assert_array_equal(em.weights, em0.weights)
    assert np.asarray(em.diagnostics["weight_ci"]).shape == (R.shape[1], 2)


def test_label_supervision_weights_predictive_lists():
    from kofs.aggregate.supervision import label_reliabilities

    rng = np.random.default_rng(0)
    n, M = 40, 300
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, M))
    X[y == "b", :20] += 2.0
    good = np.arange(M, dtype=float) + 1.0  # genes 0..19 on top
    bad = good[::-1].copy()
    v = label_reliabilities(X, y, np.column_stack([good, bad]), seed=0)
    assert v[0] > 0.8 and v[1] < 0.3
    lists = as_lists(np.column_stack([good, bad]), ["good", "bad"])
    fused = aggregate(lists, "reliability", list_weights={"good": v[0], "bad": v[1]})
    assert fused.diagnostics["supervision"] == "labels"
    assert set(fused.top(20)) == {f"g{i}" for i in range(20)}
    # intervals: a seeded bootstrap over samples of the cross-validated outcomes
    v2, reps = label_reliabilities(X, y, np.column_stack([good, bad]), seed=0, n_boot=100)
    np.testing.assert_array_equal(v2, v)
    assert reps.shape == (100, 2) and np.all((reps >= 0) & (reps <= 1))
    np.testing.assert_array_equal(
        reps, label_reliabilities(X, y, np.column_stack([good, bad]), seed=0, n_boot=100)[1]
    )
    fused = aggregate(
        lists,
        "reliability",
        list_weights={"good": v[0], "bad": v[1]},
        list_weight_replicates={"good": reps[:, 0], "bad": reps[:, 1]},
    )
    ci = np.asarray(fused.diagnostics["weight_ci"])
    assert ci.shape == (2, 2) and fused.diagnostics["n_boot"] == 100
    assert ci[0, 0] <= fused.weights[0] <= ci[0, 1] and ci[0, 0] > ci[1, 1]


def test_label_supervised_run_reports_weight_intervals(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main
    from kofs.example import example_paths

    p = example_paths()
    out = tmp_path / "o"
    args = ["rank", p["expression"], "--labels", p["labels"], "--label-column", "lineage"]
    args += ["--pathways", p["pathways"], "--lists", "SPEC,Fisher,Pathway-REL-VOTE"]
    r = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    head = (out / "weights.tsv").read_text().splitlines()[0].split("\t")
    assert head[:5] == ["list", "weight", "ci_low", "ci_high", "sd"]
    rows = [line.split("\t") for line in (out / "weights.tsv").read_text().splitlines()[1:]]
    assert all(float(r[2]) <= float(r[1]) <= float(r[3]) for r in rows)
    # the voting list classifies lineage imperfectly: its reliability varies under resampling
    assert any(float(r[3]) > float(r[2]) for r in rows)


@FAST
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000))
def test_invariant_to_gene_and_list_order(seed, perm_seed):
    R, _ = planted(M=400, k=20, seed=seed, duplicates=1)
    rng = np.random.default_rng(perm_seed)
    rows = rng.permutation(R.shape[0])
    cols = rng.permutation(R.shape[1])
    s, w, _, _ = reliability_aggregate(R)
    s2, w2, _, _ = reliability_aggregate(R[np.ix_(rows, cols)])
    # the kernel fits the lists in a content-defined order and the genes sorted by their data:
    # equal to rounding
    np.testing.assert_allclose(w2, w[cols], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2, s[rows], rtol=1e-10, atol=1e-12 * max(1.0, np.abs(s).max()))


def test_universe_genes_absent_from_every_list():
    genes = [f"g{i}" for i in range(60)]
    rng = np.random.default_rng(0)
    lists = [Ranking(f"L{j}", genes[:50], rng.normal(size=50), True) for j in range(3)]
    fused = aggregate(lists, "reliability", universe=genes, bootstrap=0)
    assert len(fused.genes) == 60 and np.isfinite(fused.scores).all()
    # a gene no list contains never outranks one every list ranks first
    lists[0] = Ranking("L0", genes[:50], np.arange(50.0), True)
    fused = aggregate(lists, "reliability", universe=genes, bootstrap=0)
    assert fused.ranks[genes.index("g49")] < fused.ranks[genes.index("g55")]


def test_masked_and_first_block_get_distinct_codes():
    """A masked [0, 1] observation and the list's first (wide) block share a lower end."""
    from kofs.aggregate.reliability import _code

    lo = np.array([[0.0], [0.0], [0.5]])
    hi = np.array([[1.0], [0.4], [0.9]])
    coded = _code(lo, hi, 8)
    c = coded.codes[:, 0]
    assert len(set(c.tolist())) == 3
    assert coded.hi[0][c[0]] == 1.0 and coded.hi[0][c[1]] == 0.4


def test_cli_supervision_errors_are_one_line(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main
    from kofs.example import example_paths

    p = example_paths()
    out = tmp_path / "o"
    r = CliRunner().invoke(
        main,
        ["rank", str(p["expression"]), "--labels", str(p["labels"]), "--aggregate", "em"]
        + ["--supervision", "labels", "--rankers", "variance,fisher", "-o", str(out)],
    )
    assert r.exit_code == 2 and not out.exists()
    lines = [x for x in r.output.strip().splitlines() if x.startswith("kofs: error")]
    assert len(lines) == 1 and "reliability" in lines[0]


def test_label_reliabilities_subsample_many_samples():
    """Above ``max_samples`` the 1-NN accuracies use a seeded stratified subsample: the
    samples x samples distance block stays bounded (12,000 samples would need 1.2 GB per gene
    set), the informative list still wins, and the result does not depend on the row order."""
    from kofs.aggregate.supervision import label_reliabilities, stratified_subsample

    y = np.array(["a"] * 11000 + ["b"] * 990 + ["c"] * 10)
    keep = stratified_subsample(y, 1000, seed=0)
    assert len(np.unique(keep)) == len(keep) and (np.diff(keep) > 0).all()
    kept = y[keep]
    assert (kept == "c").sum() == 2 and abs((kept == "b").sum() - 82) <= 1
    np.testing.assert_array_equal(keep, stratified_subsample(y, 1000, seed=0))
    rng = np.random.default_rng(0)
    n, m = 12000, 60
    labels = rng.integers(0, 3, n).astype(str)
    X = rng.normal(size=(n, m))
    X[:, :10] += labels.astype(int)[:, None] * 2.0  # genes 0-9 carry the classes
    good = np.arange(1, m + 1, dtype=float)  # ranks genes 0.. first
    bad = good[::-1].copy()
    R = np.column_stack([good, bad])
    genes = [f"g{j}" for j in range(m)]
    samples = [f"s{i:05d}" for i in range(n)]
    v = label_reliabilities(X, labels, R, top=(10,), genes=genes, samples=samples, max_samples=800)
    assert v[0] > 0.8 and v[1] < 0.3
    perm = rng.permutation(n)
    v2 = label_reliabilities(
        X[perm], labels[perm], R, top=(10,), genes=genes,
        samples=[samples[i] for i in perm], max_samples=800,
    )  # fmt: skip
    np.testing.assert_allclose(v2, v, rtol=0, atol=1e-12)


def test_one_standard_error_rule():
    from kofs.aggregate.supervision import one_standard_error

    v = np.array([0.2, 0.55, 0.44, 0.58])
    reps = np.random.default_rng(0).normal(v, [0.05, 0.05, 0.05, 0.05], size=(400, 4))
    kept, kept_reps, se = one_standard_error(v, reps)
    assert se == pytest.approx(0.05, rel=0.15)
    np.testing.assert_array_equal(kept, [0.0, 0.55, 0.0, 0.58])  # within one SE of the best
    assert kept_reps.shape == reps.shape
    assert ((kept_reps == 0) | (kept_reps == reps)).all()
    assert (kept_reps.max(axis=1) == reps.max(axis=1)).all()  # each replicate keeps its best
    # no spread: only the best (and exact ties) are kept; nothing predictive: unchanged
    np.testing.assert_array_equal(one_standard_error(v, None)[0], [0, 0, 0, 0.58])
    np.testing.assert_array_equal(one_standard_error(np.array([1.0, 1.0, 0.9]), None)[0], [1, 1, 0])
    np.testing.assert_array_equal(one_standard_error(np.zeros(3), None)[0], np.zeros(3))


@pytest.mark.slow
def test_label_supervision_follows_the_best_lists():
    """With labels, a list measurably less predictive than the best does not dilute the fused
    ranking: on cells of 5 planted clusters the fused list recovers the planted markers as well
    as the best single list (without the rule, the poorer lists' weights cost 4 of the 40
    markers in the fused top 40)."""
    import kofs
    from kofs.datasets import synthetic_counts

    d = synthetic_counts(1200, 600, n_clusters=5, n_markers=8, density=0.08, seed=4)
    markers = {f"gene{j:03d}" for j in np.asarray(d.markers).ravel()}
    res = kofs.rank(d.X, labels=d.labels(), bootstrap=20)
    K = len(markers)

    def found(r):
        return len(markers & set(r.top(K)))

    best = max(found(r) for r in res.lists)
    assert found(res.final) >= best
    diag = res.final.diagnostics["label_reliability"]
    assert diag["rule"] == "one standard error" and diag["se"] >= 0
    assert set(diag["reliability"]) == {r.name for r in res.lists}


def test_label_reliability_refits_supervised_lists_inside_folds():
    """No signal at all (random labels): Fisher's list built on every sample picks genes that
    separate those very labels by chance, so its cross-validated accuracy looks better than
    random genes'; re-built inside each fold on the training samples only, it is at chance."""
    from kofs.aggregate.supervision import label_reliabilities
    from kofs.rankers import run_ranker
    from kofs.types import Expression, RankerInputs, SampleCategories

    rng = np.random.default_rng(1)
    n, m = 60, 2000
    X = rng.normal(size=(n, m))
    y = np.array(["a", "b"] * (n // 2))
    rng.shuffle(y)
    genes = [f"g{j:04d}" for j in range(m)]
    samples = [f"s{i:02d}" for i in range(n)]
    e = Expression(X, genes, samples)

    def fisher_ranks(rows):
        sub = e.subset_samples(rows)
        cats = SampleCategories(tuple(y[rows]), sub.samples)
        return np.asarray(run_ranker("fisher", sub, RankerInputs(categories=cats)).ranks)

    R = fisher_ranks(np.arange(n))[:, None]
    kw = {"top": (10, 30), "genes": genes, "samples": samples, "n_random": 20}
    optimistic = label_reliabilities(X, y, R, **kw)[0]
    honest = label_reliabilities(X, y, R, refit=lambda rows: {0: fisher_ranks(rows)}, **kw)[0]
    assert optimistic > 0.3
    assert honest < 0.1


def shared_bulk(M=4000, k=50, seed=0):
    """Three lists whose bulk follows one gene property (as graph scores follow a gene's mean
    on single-cell counts): lists 0 and 1 are near duplicates that also share decoys at their
    top; list 2 calls the relevant genes alone."""
    rng = np.random.default_rng(seed)
    bulk = rng.normal(size=M) * 4.0
    rel = np.zeros(M, dtype=bool)
    rel[:k] = True
    decoy = np.zeros(M, dtype=bool)
    decoy[k : 2 * k] = True
    shared = rng.normal(size=M)
    c0 = bulk + shared + 0.1 * rng.normal(size=M) + 9.0 * rel + 11.0 * decoy
    c1 = bulk + shared + 0.1 * rng.normal(size=M) + 9.0 * rel + 11.0 * decoy
    c2 = bulk + 1.5 * rng.normal(size=M) + 14.0 * rel
    R = np.column_stack([average_ranks(c, higher_is_better=True) for c in (c0, c1, c2)])
    return R, rel


def test_redundancy_is_measured_where_the_lists_call():
    """Over all genes the three lists look like one (shared bulk): uniform weights. Among the
    genes either list calls, lists 0 and 1 stay duplicates (c ~ 1/2) and list 2 stands apart
    (c ~ 1), and the fused top k holds more relevant genes and fewer shared decoys."""
    from kofs.aggregate.reliability import observation_intervals, redundancy_weights

    R, rel = shared_bulk()
    lo, hi = observation_intervals(R)
    c_all, r_all = redundancy_weights(lo, hi)
    c_top, r_top = redundancy_weights(lo, hi, top=0.05)
    assert r_all[0, 2] > 0.8 and c_all.max() < 0.45
    assert r_top[0, 1] > 0.95 and r_top[0, 2] < 0.3
    assert c_top[0] < 0.55 and c_top[1] < 0.55 and c_top[2] > 0.9
    k = int(rel.sum())
    s_top, w_top, _, _ = reliability_aggregate(R, redundancy_top=0.05)
    s_all, _, _, _ = reliability_aggregate(R, redundancy_top=1.0)
    decoy = np.roll(rel, k)
    hits = lambda s, genes=rel: int(genes[np.argsort(-s)[:k]].sum())  # noqa: E731
    assert hits(s_top) >= hits(s_all) + 3 and hits(s_top, decoy) < hits(s_all, decoy)
    assert w_top[2] > 1.5 * w_top[0]


def test_pairwise_redundancy_ignores_the_other_lists():
    """r_lk is measured among the genes l or k call: adding a reversed and a random list leaves
    it unchanged."""
    from kofs.aggregate.reliability import observation_intervals, redundancy_weights

    R, _ = shared_bulk()
    M = R.shape[0]
    rng = np.random.default_rng(1)
    more = np.column_stack([R, M + 1 - R[:, 0], rng.permutation(M) + 1.0])
    r3 = redundancy_weights(*observation_intervals(R), top=0.05)[1]
    r5 = redundancy_weights(*observation_intervals(more), top=0.05)[1]
    np.testing.assert_allclose(r5[:3, :3], r3, atol=1e-12)


def test_redundancy_region_falls_back_to_all_genes_on_few_calls():
    from kofs.aggregate.reliability import CALLS_MIN, observation_intervals, redundancy_weights

    R, _ = planted(M=CALLS_MIN - 10, k=5)
    lo, hi = observation_intervals(R)
    np.testing.assert_array_equal(
        redundancy_weights(lo, hi, top=0.05)[1], redundancy_weights(lo, hi)[1]
    )


def test_data_support_counts_only_lists_that_earned_weight():
    """A reversed data list (weight 0) supports nothing: knowledge-only genes at its top stay
    knowledge-only; with no weighted data list, every data list counts."""
    from kofs.aggregate.reliability import data_support

    M = 200
    good = np.arange(1, M + 1, dtype=float)
    R = np.column_stack([good, M + 1 - good, good[::-1]])  # data, reversed data, knowledge
    data = np.array([True, True, False])
    plain = data_support(R, data, 0.1)
    gated = data_support(R, data, 0.1, np.array([0.6, 0.0, 0.4]))
    assert plain[-1] and not gated[-1] and gated[0]
    np.testing.assert_array_equal(data_support(R, data, 0.1, np.zeros(3)), plain)


def test_called_region_correlations_equal_the_pair_by_pair_definition():
    """The vectorised union sums equal a direct weighted correlation on each pair's region
    (ties, a partial list and gene weights included)."""
    from scipy.special import ndtri

    from kofs.aggregate.reliability import CALLS_MIN, observation_intervals, redundancy_weights

    rng = np.random.default_rng(3)
    M = 1500
    base = rng.normal(size=M)
    cols = [base * s + rng.normal(size=M) for s in (0.0, 0.5, 2.0, 4.0)]
    R = np.column_stack([average_ranks(np.round(c, 1), higher_is_better=True) for c in cols])
    R[rng.choice(M, 400, replace=False), 1] = np.nan  # partial list
    lo, hi = observation_intervals(R)
    w = rng.uniform(size=M)
    _, r = redundancy_weights(lo, hi, w, top=0.05)
    mid = 0.5 * (lo + hi)
    z = ndtri(np.clip(mid, 1e-12, 1 - 1e-12))
    called = mid <= max(0.05, CALLS_MIN / M)
    for j in range(4):
        for k in range(j + 1, 4):
            pair = called[:, j] | called[:, k]
            assert pair.sum() >= CALLS_MIN
            expect = np.cov(z[pair][:, [j, k]].T, aweights=w[pair])
            expect = expect[0, 1] / np.sqrt(expect[0, 0] * expect[1, 1])
            assert r[j, k] == pytest.approx(expect, abs=1e-10)


def test_fit_never_ends_below_the_null_model(monkeypatch):
    """Whatever the solver returns, a fit below the likelihood of "no list informative"
    (every a = 1) is replaced by that null fit: weights all zero."""
    import kofs.aggregate.reliability as rel

    R, _ = planted()
    good = rel.fit_reliability(R)
    assert good.log_likelihood > 0 and good.weights.any()
    L = R.shape[1]

    def bad(problem, a0, rho0, *args, **kwargs):  # a point far below the null
        a = np.full(L, rel.A_MIN)
        return a, 0.5, 1, True

    monkeypatch.setattr(rel, "_maximise", bad)
    fit = rel.fit_reliability(R)
    np.testing.assert_array_equal(fit.a, np.ones(L))
    assert fit.log_likelihood == pytest.approx(0.0, abs=1e-9) and not fit.weights.any()


def test_set_like_lists_are_redundant_by_their_overlap():
    """Gene sets (one tie block each, e.g. GMT lists) order nothing among their calls: two
    copies count once, and heavily overlapping sets are discounted, as over all genes."""
    from kofs.aggregate.reliability import observation_intervals, redundancy_weights

    M = 2000
    rng = np.random.default_rng(5)
    a = np.zeros(M, dtype=bool)
    a[rng.choice(M, 150, replace=False)] = True
    b = a.copy()
    b[np.flatnonzero(a)[:30]] = False  # 80 % of a
    b[np.flatnonzero(~a)[:30]] = True
    scores = rng.normal(size=M)
    cols = [a, a, b, scores]
    R = np.column_stack(
        [average_ranks(c.astype(float), higher_is_better=True) for c in cols[:3]]
        + [average_ranks(scores, higher_is_better=True)]
    )
    lo, hi = observation_intervals(R)
    c, r = redundancy_weights(lo, hi, top=0.05)
    c_all, r_all = redundancy_weights(lo, hi)
    np.testing.assert_allclose(r[:3, :3], r_all[:3, :3])
    assert r[0, 1] == pytest.approx(1.0) and r[0, 2] > 0.7
    assert c[0] < 0.45 and c[2] < 0.7
