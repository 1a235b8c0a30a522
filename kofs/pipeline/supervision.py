"""Fusion at a supervision level: none, known relevant genes, or list weights from the sample
labels (cross-validated predictive value of each data list), with the study-bias covariate of
the prior."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from kofs.aggregate import aggregate as aggregate_lists
from kofs.aggregate.partial import partial_rank_matrix
from kofs.context import Context
from kofs.errors import ParameterError
from kofs.rankers import run_ranker
from kofs.registry import AGGREGATORS, RANKERS
from kofs.types import AggregateRanking, RankerInputs, Ranking, SampleCategories

log = logging.getLogger(__name__)

#: Supervision levels of the list weights.
SUPERVISION = ("none", "genes", "labels")


#: Paired bootstrap replicates of the label reliabilities behind the soft label weights (cheap:
#: the per-sample 1-NN outcomes are resampled, nothing is re-fitted).
RULE_REPLICATES = 200


def default_supervision(relevant_genes, labels) -> str:
    """``"genes"`` with known relevant genes, else ``"labels"`` with sample labels, else
    ``"none"`` (chosen by measurement on ALL: docs/aggregation.md, "Defaults")."""
    if relevant_genes:
        return "genes"
    return "labels" if labels is not None else "none"


def aggregate_supervised(
    context: Context,
    lists: Sequence[Ranking],
    method: str,
    *,
    params: Mapping[str, Any] | None = None,
    supervision: str | None = None,
    built_from: Mapping[str, Sequence[str]] | None = None,
    held_out: Mapping[str, Sequence[tuple[Sequence[str], Ranking]]] | None = None,
    bootstrap: int = 200,
) -> AggregateRanking:
    """Aggregate ``lists`` at the requested supervision level (see :func:`run_plan`);
    ``held_out``: the cross-fit of the seeded lists (:func:`kofs.pipeline.reseeding.reseeded_lists`),
    used by aggregators with list context (``posterior``)."""
    from kofs.aggregate.supervision import label_reliabilities, soft_label_weights

    level = supervision or default_supervision(context.relevant_genes, context.categories)
    if level not in SUPERVISION:
        raise ParameterError(
            f"supervision must be one of {', '.join(SUPERVISION)}, got {supervision!r}"
        )
    if level == "labels" and not AGGREGATORS.get(method).context:
        if supervision is not None:
            raise ParameterError(
                f"supervision 'labels' needs an aggregator that takes list weights "
                f"(posterior), not {method!r}"
            )
        level = "none"  # the default only: the book's EM and the rank statistics ignore labels
    if level == "labels" and supervision is None and len(lists) < 2:
        level = "none"  # one list: nothing to weigh
    if level == "labels" and supervision is None:
        assert context.categories is not None
        _, counts = np.unique(np.asarray(context.categories.labels), return_counts=True)
        if len(counts) < 2 or counts.min() < 2:
            level = "none"  # the default only: no cross-validation with a one-sample class
    relevant = None
    list_weights = None
    replicates = None
    label_rule = None
    if level == "genes":
        if not context.relevant_genes:
            raise ParameterError(
                "supervision 'genes' needs known relevant genes (--relevant-genes)"
            )
        relevant = context.relevant_genes
    elif level == "labels":
        if context.categories is None:
            raise ParameterError("supervision 'labels' needs sample labels (--labels)")
        # only the data lists' predictive value is asked: knowledge lists enter the prior
        data = [r for r in lists if not _knowledge_list(r)]
        genes, R = partial_rank_matrix(data)
        index = context.expression.gene_index()
        cols = np.fromiter((index[g] for g in genes), dtype=np.int64, count=len(genes))
        raw, reps = label_reliabilities(
            context.expression.values[:, cols],
            context.categories.labels,
            R,
            seed=context.seed,
            genes=genes,
            samples=context.expression.samples,
            n_boot=max(bootstrap, RULE_REPLICATES),
            refit=_supervised_refit(context, data, genes),
        )
        v, p_best = soft_label_weights(raw, reps)
        names = [r.name for r in data]
        list_weights = dict(zip(names, map(float, v), strict=True))
        label_rule = {
            "rule": "soft: chance of being the most predictive list, over the likeliest's",
            "reliability": dict(zip(names, map(float, raw), strict=True)),
            "p_best": dict(zip(names, map(float, p_best), strict=True)),
        }
        if bootstrap > 0 and reps is not None:
            replicates = {n: reps[:bootstrap, j] for j, n in enumerate(names)}
        for r in lists:
            if _knowledge_list(r):  # not used by the fusion (prior lists), present for the runner
                list_weights[r.name] = 1.0
                if replicates is not None:
                    replicates[r.name] = np.ones(len(next(iter(replicates.values()))))
    fused = aggregate_lists(
        lists,
        method,
        relevant_genes=relevant,
        params=params,
        built_from=built_from or None,
        held_out=(held_out or None) if AGGREGATORS.get(method).context else None,
        list_weights=list_weights,
        list_weight_replicates=replicates,
        covariates=_study_bias(context) if AGGREGATORS.get(method).context else None,
        signal_test=_signal_test(context, lists, method),
        bootstrap=bootstrap,
        seed=context.seed,
    )
    if label_rule is not None:
        fused = replace(fused, diagnostics={**fused.diagnostics, "label_reliability": label_rule})
    if context.categories is not None:
        fused = _labelled_advice(fused)
    return fused


def _labelled_advice(fused: AggregateRanking) -> AggregateRanking:
    """The one-list notice of a run with labels (the fusion cannot know them): it asked for
    the labels already given; it asks for a list computed from them with a known null."""
    from kofs.aggregate.relevance import one_list_notice

    notices = list((fused.diagnostics or {}).get("notices") or ())
    swap = {one_list_notice(n, from_one_matrix=True): n for n in fused.list_names}
    if not any(s in swap for s in notices):
        return fused
    notices = [
        one_list_notice(swap[s], from_one_matrix=True, labelled=True) if s in swap else s
        for s in notices
    ]
    return replace(fused, diagnostics={**fused.diagnostics, "notices": notices})


def _signal_test(context: Context, lists: Sequence[Ranking], method: str) -> dict | None:
    """Whether the matrix has anything for the data lists to find (:mod:`kofs.pipeline.structure`):
    sample structure without labels, an association with the labels with them. Only when every
    data list (every list not a knowledge list) comes from a ranker -- a function of the matrix
    and the labels --, there are two, or one with a known null, and the aggregator takes the
    test; else None. One is enough: the calibrated Fisher list alone (the default labelled plan) is read through its
    F test's theoretical null, which correlated genes widen or narrow from one labelling to the
    next (real ALL with permuted labels: calls in 18 of 120 runs without this test, 1 with it;
    bench/bench_null_calibration.py), and the label test keeps the genes' correlation."""
    from kofs.pipeline.structure import label_association_test, sample_structure_test

    if not AGGREGATORS.get(method).context:
        return None
    data = [r for r in lists if not _knowledge_list(r)]
    if not data or any(r.params.get("ranker") not in RANKERS for r in data):
        return None
    if len(data) == 1 and not isinstance(data[0].info.get("null"), Mapping):
        return None  # one ranking alone gives no probabilities for the test to guard
    if context.categories is None:
        test = sample_structure_test(context.expression, seed=context.seed)
        name = "sample structure (parallel analysis)"
        found = (
            "The samples show no structure beyond noise: the largest eigenvalue of their "
            "correlation over {genes} genes, {statistic:.3g}, is what matrices with each gene's "
            "values permuted across the samples give ({null_mean:.3g} +- {null_sd:.2g}); every "
            "data list is computed from the matrix alone"
        )
    else:
        test = label_association_test(context.expression, context.categories, seed=context.seed)
        name = "label association (permutation global test)"
        found = (
            "The labels explain no more of the genes' variance than permuted labels do (mean "
            "R^2 over {genes} genes {statistic:.3g}, permuted {null_mean:.3g} +- {null_sd:.2g}); "
            "every data list is computed from the matrix and the labels"
        )
    if test is not None:
        test["name"] = name
        test["labels"] = context.categories is not None
        if len(data) == 1:
            # one list: no agreement to speak of
            test["summary"] = found.split("); every data list")[0].format(**test) + ")"
        else:
            test["summary"] = found.format(**test) + ", so their agreement is the noise they share"
    return test


def _knowledge_list(r: Ranking) -> bool:
    name = str(r.params.get("ranker"))
    return name in RANKERS and RANKERS.get(name).family == "knowledge"


def _study_bias(context: Context) -> dict[str, dict[str, float]] | None:
    """The prior's study-bias covariate: ``log(1 + number of annotations and interactions)``
    of every gene, over the knowledge sources of the run (GO terms with the true-path rule,
    gene sets, interaction partners: what their evidence hooks provide). None without
    knowledge sources. Well-studied genes head every knowledge list; with this covariate the
    prior learns what being studied predicts by itself, and a knowledge list earns only what
    it adds to that."""
    from kofs.sources import SOURCES
    from kofs.types import FeatureFunctions

    sources = context.sources
    if sources is None or not getattr(sources, "data", None):
        return None
    genes = context.expression.genes
    count = np.zeros(len(genes))
    used = False
    for spec in SOURCES:
        if spec.evidence is None or spec.name not in sources:
            continue
        for part in spec.evidence(context):
            k = part.knowledge
            index = {g: i for i, g in enumerate(genes)}
            rows = np.fromiter((index.get(g, -1) for g in k.genes), np.int64, len(k.genes))
            if isinstance(k, FeatureFunctions):
                per_gene = np.asarray((k.incidence != 0).sum(axis=1)).ravel()
            else:
                W = k.matrix
                per_gene = (
                    np.asarray((W != 0).sum(axis=1)).ravel()
                    + np.asarray((W != 0).sum(axis=0)).ravel()
                )
            ok = rows >= 0
            np.add.at(count, rows[ok], per_gene[ok])
            used = True
    if not used:
        return None
    return {"study bias": dict(zip(genes, np.log1p(count).tolist(), strict=True))}


def _supervised_refit(context: Context, lists: Sequence[Ranking], genes: Sequence[str]):
    """The ``refit`` of :func:`~kofs.aggregate.supervision.label_reliabilities`: the lists of a
    ranker that needs the labels (Fisher score, ReliefF, ...) re-built on a subset of the
    samples, with the same parameters; None when no list needs them. A list its ranker cannot
    re-build on a fold's training samples (classes of 2 samples: one per class in a training
    fold) is left out of that fold's answer (the list is then judged as built on all samples)."""
    supervised = {
        j: r
        for j, r in enumerate(lists)
        if r.params.get("ranker") in RANKERS and RANKERS.get(r.params["ranker"]).supervised
    }
    if not supervised:
        return None
    assert context.categories is not None
    labels = np.asarray(context.categories.labels, dtype=object)
    name = context.categories.name
    samples = context.expression.samples

    unbuilt: set[int] = set()

    def refit(rows: np.ndarray) -> dict[int, np.ndarray]:
        sub = context.expression.subset_samples(rows)
        inputs = RankerInputs(
            categories=SampleCategories(
                tuple(labels[rows]), tuple(samples[i] for i in rows), name=name
            )
        )
        out = {}
        for j, r in supervised.items():
            params = {k: v for k, v in r.params.items() if k != "ranker"}
            try:
                again = run_ranker(
                    r.params["ranker"], sub, inputs, seed=context.seed, params=params
                )
            except ParameterError as exc:
                if j not in unbuilt:
                    unbuilt.add(j)
                    log.warning(
                        "label supervision: list %r cannot be re-built on the training samples "
                        "of a fold (%s); its predictive value is measured with the list built "
                        "on all samples (optimistic)", r.name, exc.message,
                    )  # fmt: skip
                continue
            index = {gene: i for i, gene in enumerate(again.genes)}
            ranks = np.asarray(again.ranks, dtype=np.float64)
            out[j] = np.array([ranks[index[gene]] if gene in index else np.nan for gene in genes])
        return out

    return refit
