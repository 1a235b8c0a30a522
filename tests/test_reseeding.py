"""Cross-fitting of seeded lists by re-seeding (issue 11, "no circularity").

A seeded list is rebuilt from K-1 folds of the known genes and observed on the held-out fold;
it is never scored on a gene it was built from.
"""

from __future__ import annotations

import numpy as np
import pytest

from kofs.aggregate import aggregate
from kofs.context import Context, ListPlan
from kofs.errors import ParameterError
from kofs.pipeline.build import build_lists
from kofs.pipeline.reseeding import check_folds, reseeded_lists, seed_folds
from kofs.types import Expression, RankerInputs, Ranking

M, K_REL = 2000, 80


def _world(seed=0, own=1.5):
    """Three informative data lists and a knowledge list with its own signal ``own`` that puts
    the genes it is seeded with on top (as propagation from them does)."""
    rng = np.random.default_rng(seed)
    genes = [f"g{i:04d}" for i in range(M)]
    rel = np.zeros(M, dtype=bool)
    rel[rng.choice(M, K_REL, replace=False)] = True
    data = [rng.normal(size=M) + s * rel for s in (2.5, 2.0, 1.5)]
    base = rng.normal(size=M) + own * rel  # the knowledge list's own (held-out) signal
    known = [genes[i] for i in np.flatnonzero(rel)[:50]]

    def seeded(seeds):
        col = base.copy()
        idx = [genes.index(g) for g in seeds]
        col[idx] += 100.0  # seed genes first by construction
        return Ranking("SEEDED", genes, col, True)

    lists = [Ranking(n, genes, c, True) for n, c in zip(("A", "B", "C"), data, strict=True)]
    lists.append(Ranking("UNSEEDED", genes, base, True))  # the list had it never seen a seed
    return genes, rel, known, lists, seeded


def _held_out(known, seeded, k=5, seed=0):
    return [
        (fold, seeded([g for g in known if g not in set(fold)]))
        for fold in seed_folds(known, k, seed)
    ]


def test_seed_folds_partition_and_ignore_gene_order():
    genes = [f"x{i}" for i in range(23)]
    folds = seed_folds(genes, 5, 3)
    assert sorted(g for f in folds for g in f) == sorted(genes)
    assert {len(f) for f in folds} == {4, 5}
    assert seed_folds(genes[::-1], 5, 3) == folds
    assert seed_folds(genes, 5, 4) != folds
    assert check_folds(0) == 0 and check_folds(5) == 5
    with pytest.raises(ParameterError, match="at least 2"):
        check_folds(1)


@pytest.mark.parametrize(("seed", "own"), [(0, 0.0), (1, 0.0), (0, 1.0), (3, 1.0)])
@pytest.mark.slow
def test_reseeding_gives_a_seeded_list_its_own_weight(seed, own):
    """Scored on its seeds, a seeded list earns weight from them: the book's EM gives it ~all
    the weight, the posterior fusion a large share whatever its own signal (3.5x what a list of pure noise
    deserves). Re-seeded, it gets the weight the same list has when it never saw a seed
    (within 0.03), and a list whose only signal is its seeds gets <= 0.12."""
    genes, rel, known, lists, seeded = _world(seed, own)
    data, oracle_list = lists[:3], lists[3]
    full = seeded(known)
    em = aggregate([*data, full], "em", relevant_genes=known, bootstrap=0)
    assert em.weights[3] > 0.8
    circular = aggregate([*data, full], "posterior", relevant_genes=known, bootstrap=0)
    oracle = aggregate([*data, oracle_list], "posterior", relevant_genes=known, bootstrap=0)
    cross = aggregate(
        [*data, full],
        "posterior",
        relevant_genes=known,
        built_from={"SEEDED": known},
        held_out={"SEEDED": _held_out(known, seeded)},
        bootstrap=0,
    )
    assert abs(cross.weights[3] - oracle.weights[3]) <= 0.03
    if own == 0.0:
        assert cross.weights[3] <= 0.12
        assert circular.weights[3] >= 0.2 and circular.weights[3] > 2.5 * cross.weights[3]
    record = cross.diagnostics["cross_fit"]["SEEDED"]
    assert record == {"rule": "re-seeded", "folds": 5, "seed_genes": 50, "scored_held_out": 50}


def test_reseeded_path_never_scores_a_list_on_genes_it_was_built_from():
    """Permuting a list's ranks among the genes it was built from changes nothing in the
    weights: the full list among all seeds, each rebuild among the seeds it was rebuilt from.
    Nor in the scores: a seed is observed only at its held-out position."""
    genes, rel, known, lists, seeded = _world(1)
    lists = lists[:3]
    held = _held_out(known, seeded)
    full = seeded(known)

    def run(full_list, held_out):
        out = aggregate(
            [*lists, full_list],
            "posterior",
            relevant_genes=known,
            built_from={"SEEDED": known},
            held_out={"SEEDED": held_out},
            params={"resamples": 0},
        )
        return out.weights, out.scores

    w0, s0 = run(full, held)
    rng = np.random.default_rng(0)

    def permuted(r: Ranking, among):
        idx = np.array([genes.index(g) for g in among])
        scores = np.asarray(r.scores, dtype=float).copy()
        scores[idx] = scores[rng.permutation(idx)]
        return Ranking(r.name, r.genes, scores, True)

    w1, s1 = run(permuted(full, known), held)
    np.testing.assert_array_equal(w1, w0)
    np.testing.assert_array_equal(s1, s0)
    held2 = [(fold, permuted(r, [g for g in known if g not in set(fold)])) for fold, r in held]
    w2, s2 = run(full, held2)
    np.testing.assert_array_equal(w2, w0)
    np.testing.assert_array_equal(s2, s0)
    # ... while the held-out genes' ranks in the rebuilds are what is scored
    fold0, r0 = held[0]
    idx = np.array([genes.index(g) for g in fold0])
    reversed_scores = np.asarray(r0.scores, dtype=float).copy()
    reversed_scores[idx] = -1e3  # the held-out fold at the bottom of its rebuild
    held3 = [(fold0, Ranking("SEEDED", genes, reversed_scores, True)), *held[1:]]
    w3, _ = run(full, held3)
    assert w3[3] < w0[3]


def test_cross_fit_needs_its_seed_genes_and_context():
    genes, rel, known, lists, seeded = _world()
    lists = lists[:3]
    held = {"SEEDED": _held_out(known, seeded)}
    with pytest.raises(ParameterError, match="built_from"):
        aggregate([*lists, seeded(known)], "posterior", held_out=held, bootstrap=0)
    with pytest.raises(ParameterError, match="posterior"):
        aggregate(
            [*lists, seeded(known)],
            "em",
            built_from={"SEEDED": known},
            held_out=held,
            bootstrap=0,
        )


def _context(n_genes=40, seed=0):
    rng = np.random.default_rng(seed)
    genes = [f"g{i:02d}" for i in range(n_genes)]
    expr = Expression(rng.normal(size=(12, n_genes)), genes, [f"s{i}" for i in range(12)])
    return Context(expression=expr, relevant_genes=tuple(genes[:10]), seed=seed)


def test_reseeded_context_rebuilds_only_what_uses_the_known_genes():
    ctx = _context()
    ctx.cached("plain", lambda: "p")
    ctx.cached("outer", lambda: ctx.cached("inner", lambda: "i", uses_relevant=True) + "o")

    def uses_genes():
        ctx.note_relevant_use()
        return len(ctx.relevant_genes)

    ctx.cached("noted", uses_genes)
    assert ctx.seeded_keys == {"inner", "outer", "noted"}
    fold = ctx.reseeded(ctx.relevant_genes[:5])
    assert set(fold.cache) == {"plain"}
    assert fold.relevant_genes == ctx.relevant_genes[:5]


def test_reseeded_lists_build_each_fold_from_the_other_folds():
    ctx = _context()
    seen = []

    def build(c):
        seen.append(c.relevant_genes)
        return RankerInputs()

    plans = [ListPlan(name="SEEDED", ranker="variance", build_inputs=build)]
    seeds = ctx.relevant_genes
    timings = {}
    held, excluded = reseeded_lists(
        ctx, plans, {"SEEDED": seeds}, build=build_lists, folds=3, timings=timings
    )
    assert not excluded and "cross_fit" in timings
    folds = [f for f, _ in held["SEEDED"]]
    assert sorted(g for f in folds for g in f) == sorted(seeds)
    for f, built in zip(folds, seen, strict=True):
        assert set(built) == set(seeds) - set(f)  # rebuilt without its held-out fold
    # fewer seed genes than folds: as many folds as genes; one gene: nothing to hold out
    held, _ = reseeded_lists(ctx, plans, {"SEEDED": seeds[:2]}, build=build_lists, folds=5)
    assert len(held["SEEDED"]) == 2
    held, excluded = reseeded_lists(ctx, plans, {"SEEDED": seeds[:1]}, build=build_lists, folds=5)
    assert not held and "nothing to hold out" in excluded["SEEDED"]
    held, excluded = reseeded_lists(ctx, plans, {"SEEDED": seeds}, build=build_lists, folds=0)
    assert not held and "off" in excluded["SEEDED"]


def test_a_list_that_cannot_be_rebuilt_falls_back_to_exclusion():
    ctx = _context()

    def build(c):
        if len(c.relevant_genes) < 10:
            raise ParameterError("no term is enriched in these genes")
        return RankerInputs()

    plans = [ListPlan(name="SEEDED", ranker="variance", build_inputs=build)]
    held, excluded = reseeded_lists(
        ctx, plans, {"SEEDED": ctx.relevant_genes}, build=build_lists, folds=5
    )
    assert not held
    assert "no term is enriched" in excluded["SEEDED"]


@pytest.mark.slow
def test_rank_records_the_cross_fit(tmp_path, capsys):
    from kofs.datasets.example import example_paths
    from kofs.io.expression import read_expression
    from kofs.io.genes import read_gene_list
    from kofs.io.output import cross_fit_line, write_weights
    from kofs.pipeline.rank import rank
    from kofs.sources import read_sources

    p = example_paths()
    expr = read_expression(p["expression"])
    sources = read_sources(pathways=p["pathways"])
    rel = read_gene_list(p["relevant_genes"])
    res = rank(expr, sources=sources, relevant_genes=rel, cross_fit=3, bootstrap=0)
    assert res.settings["cross_fit"] == 3
    cross = res.final.diagnostics["cross_fit"]
    assert cross["Pathway-REL-VOTE"]["rule"] == "re-seeded"
    assert cross["Pathway-REL-VOTE"]["folds"] == 3
    # the FILT list is cross-fitted over its gene set (the pathways' genes in the matrix)
    assert (
        cross["Pathway-FILT"]["rule"] == "re-seeded" and cross["Pathway-FILT"]["seed_genes"] == 696
    )
    line = cross_fit_line(cross)
    assert "Pathway-REL-VOTE built from" in line and "3-fold re-seeding" in line
    write_weights(tmp_path / "w.tsv", res.final)
    text = (tmp_path / "w.tsv").read_text()
    assert "seed_scoring" in text and "re-seeded 3-fold" in text
    from kofs.cli._summary import print_summary

    print_summary(res, force=True)
    err = capsys.readouterr().err
    flat = " ".join(err.split())  # the terminal wraps the line
    assert "re-seeded 3-fold" in flat and "seeded lists: " in flat
    assert "Pathway-REL-VOTE built from" in flat and "Pathway-FILT built from 696 genes" in flat
    off = rank(expr, sources=sources, relevant_genes=rel, cross_fit=0, bootstrap=0)
    assert off.final.diagnostics["cross_fit"]["Pathway-REL-VOTE"]["rule"] == "excluded"


def test_cli_cross_fit_one_fold_is_a_one_line_error(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main
    from kofs.datasets.example import example_paths

    p = example_paths()
    out = tmp_path / "out"
    args = ["rank", str(p["expression"]), "--pathways", str(p["pathways"])]
    args += ["--relevant-genes", str(p["relevant_genes"]), "--cross-fit", "1", "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cross-fit folds must be 0" in lines[0]
    assert not out.exists()


def _auc(values_first: np.ndarray, values_rest: np.ndarray) -> float:
    """P(a value of the first set is above one of the rest) (ties half)."""
    from scipy.stats import mannwhitneyu

    u = mannwhitneyu(values_first, values_rest).statistic
    return float(u / (values_first.size * values_rest.size))


def test_a_filt_list_is_scored_on_its_gene_set_through_similarities_built_without_it(tmp_path):
    """Pathway-FILT is SPEC on the samples' similarity over a gene set's genes (book eq. 6.10):
    a gene that helps build a similarity aligns with its leading directions even on noise, so
    on a matrix without structure the list ranks the set's genes first. The fusion observes it
    on those genes cross-fitted, each through a similarity built without its fold (i.i.d.
    values, 300 of 600 genes in the sets: the full list's AUC for them ~0.85, the held-out
    positions' ~0.5)."""
    from kofs.aggregate.cross_fit import held_out_intervals
    from kofs.pipeline.plans import built_from, kofs_plan
    from kofs.sources import read_sources

    rng = np.random.default_rng(0)
    n, m = 60, 600
    genes = [f"G{i}" for i in range(m)]
    gmt = tmp_path / "sets.gmt"
    gmt.write_text(
        "".join(f"S{k}\tna\t" + "\t".join(genes[k * 100 : (k + 1) * 100]) + "\n" for k in range(3))
    )
    expr = Expression(
        values=rng.normal(size=(n, m)), genes=tuple(genes), samples=tuple(f"s{j}" for j in range(n))
    )
    ctx = Context(expression=expr, sources=read_sources(pathways=str(gmt)))
    plans = kofs_plan(ctx, ["Pathway-FILT"], warn=False)
    (full,) = build_lists(ctx, plans)
    in_set = np.isin(np.asarray(full.genes), genes[:300])
    score = np.asarray(full.scores) * (1 if full.higher_is_better else -1)
    assert _auc(score[in_set], score[~in_set]) > 0.7  # the bias the cross-fit removes

    seeds = built_from(ctx, ["Pathway-FILT"])
    assert sorted(seeds["Pathway-FILT"]) == sorted(genes[:300])
    held, excluded = reseeded_lists(ctx, plans, seeds, build=build_lists, folds=5)
    assert not excluded and len(held["Pathway-FILT"]) == 5
    B = np.isin(np.asarray(genes), genes[:300])[:, None]
    lo, hi, scored = held_out_intervals(genes, ["Pathway-FILT"], B, held)
    assert scored == {"Pathway-FILT": 300}
    mid = 0.5 * (lo[:300, 0] + hi[:300, 0])  # u of the held-out genes (small = ranked first)
    # each fold's genes ranked among the 300 genes outside the sets: uniform without the bias
    assert abs(float(np.mean(mid)) - 0.5) < 0.06
