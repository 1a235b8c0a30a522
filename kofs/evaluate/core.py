"""The evaluation of ranked gene lists: accuracy, knowledge support, redundancy (ALGORITHMS.md §8).

:func:`evaluate` takes every list as ranks over the matrix's genes and returns an
:class:`EvaluationResult` (a table with one row per list, the accuracy curves, the gene orders);
:func:`kofs.evaluate.report.write_evaluation` writes it with figures and ``report.html``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kofs._compute.canonical import canonical_rows
from kofs._compute.ranks import rank_correlation
from kofs.errors import ParameterError, checked_keywords, require_instance, short_repr, whole_number
from kofs.evaluate.known import KnownGenes
from kofs.evaluate.metrics import (
    hit_count,
    jaccard_score,
    redundancy_rate,
    residue_scale,
    sim_anno,
)
from kofs.evaluate.protocols import Fold, Selector, accuracy_curves, classifier, make_folds
from kofs.progress import Progress
from kofs.types import Expression, SampleCategories

log = logging.getLogger(__name__)

__all__ = ["EvaluationResult", "evaluate", "order_from_ranks", "CLASSIFIER_LABELS"]

CLASSIFIER_LABELS = {"1nn": "ACC", "svm-rbf": "SVM-RBF", "svm-linear": "SVM-linear"}
DEFAULT_CURVE_KS = (5, 10, 20, 30, 40, 50, 75, 100)


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` measured.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per list (columns described in docs/evaluation.md).
    accuracy : list of dict
        Accuracy curves (:func:`kofs.evaluate.protocols.accuracy_curves` rows).
    orders : dict of str to ndarray
        Gene order (column indices, best first) of every list.
    ranks : dict of str to ndarray
    weights : dict of str to dict
        EM source weights per aggregation, when known.
    notes : dict of str to list of str
    settings : dict
    """

    table: Any
    accuracy: list[dict]
    orders: dict[str, np.ndarray]
    ranks: dict[str, np.ndarray]
    weights: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)


def order_from_ranks(ranks: np.ndarray, genes: Sequence[str] | None = None) -> np.ndarray:
    """Column indices best first (unranked genes last; ties by gene id when ``genes`` is
    given, so that the top k of a list with ties does not depend on the file's gene order,
    else by position)."""
    r = np.where(np.isnan(ranks), np.inf, ranks)
    if genes is None:
        return np.lexsort((np.arange(len(r)), r))
    by_id = np.empty(len(r), dtype=np.int64)
    by_id[canonical_rows(tuple(genes))] = np.arange(len(r))
    return np.lexsort((by_id, r))


def _ranks_of(name: str, ranks: Any, m: int) -> np.ndarray:
    """One list's ranks as floats, checked: numbers, one per gene, some not NaN, none below 1
    (a list of gene ids, scores given as ranks or a list of no rank were evaluated silently or
    failed in NumPy)."""
    try:
        r = np.asarray(ranks, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(
            f"evaluate: list {name!r} must hold the ranks of the matrix's genes (numbers, 1 = "
            f"best, NaN = not ranked), got {short_repr(ranks, 40)}"
        ) from None
    if r.ndim != 1:
        raise ParameterError(
            f"evaluate: list {name!r} holds ranks of shape {r.shape}, not one rank per gene"
        )
    if r.shape != (m,):
        raise ParameterError(f"list {name!r}: {r.shape[0]} ranks for {m} genes")
    if np.isnan(r).all():
        raise ParameterError(
            f"evaluate: list {name!r} ranks no gene (all NaN); nothing to evaluate"
        )
    low = np.flatnonzero(r < 1)
    if low.size:  # scores given as ranks would be read upside down
        raise ParameterError(
            f"evaluate: list {name!r} holds the rank {r[low[0]]:g}; ranks start at 1 (1 = best): "
            "give ranks, not scores"
        )
    return r


def _ks(values: Iterable[int], m: int, what: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ParameterError(
            f"{what} must be a sequence of numbers of genes, e.g. ({values!r:.20},), got "
            f"{values!r:.40}"
        )
    values = list(values)
    odd = next((k for k in values if not whole_number(k)), None)
    if odd is not None:
        raise ParameterError(f"{what} must be whole numbers of genes, got {odd!r:.40}")
    ks = tuple(sorted({int(k) for k in values}))
    if not ks or ks[0] < 1:
        raise ParameterError(f"{what} must be positive numbers of genes, got {list(values)}")
    if ks[-1] > m:
        raise ParameterError(f"{what} asks for {ks[-1]} genes but the matrix has {m}")
    return ks


def _one_id_per_gene(genes: Iterable[str]) -> list[str]:
    """The first of matrix ids that GO matching reads as one gene (ids that differ in case or
    an Ensembl version only): the others would have no similarity, as genes without terms
    (which Sim_anno leaves out), and gene_similarity refuses them."""
    from kofs.io.ids import normalise_id

    seen: set[str] = set()
    out = []
    for g in genes:
        key = normalise_id(g)
        if key not in seen:
            seen.add(key)
            out.append(g)
    return out


def _check_evaluate_arguments(
    lists: Any, expression: Any, classifiers: Any, honest: Any, go: Any = None, labels: Any = ()
) -> None:
    """:func:`evaluate`'s arguments have the documented types (a ParameterError naming the
    argument, not an AttributeError or a NumPy error from a fold)."""
    import scipy.sparse as sp

    from kofs.sources.go import GoData

    if not isinstance(lists, Mapping):
        raise ParameterError(
            "evaluate: lists must be a mapping of list name to the ranks of the matrix's genes "
            f"({{'fisher': ranks, ...}}), got a {type(lists).__name__}"
        )
    require_instance("evaluate", "expression", expression, Expression, "kofs.read_expression")
    if isinstance(labels, (str, bytes, SampleCategories)) or not isinstance(labels, Iterable):
        hint = " (its .labels, aligned by kofs.align_labels)" * isinstance(labels, SampleCategories)
        raise ParameterError(  # was a TypeError, or one class per letter of a text
            "evaluate: labels must be a sequence of one class per sample of the matrix, got "
            f"{short_repr(labels, 40) if isinstance(labels, str) else type(labels).__name__}{hint}"
        )
    if isinstance(classifiers, (str, bytes)) or not isinstance(classifiers, Iterable):
        raise ParameterError(
            f"evaluate: classifiers must be a sequence of names, e.g. ('1nn',), got "
            f"{classifiers!r:.40}"
        )
    if not tuple(classifiers):
        raise ParameterError(
            "evaluate: classifiers is empty; give at least one (1nn, svm-rbf, svm-linear)"
        )
    if honest is not None and not callable(honest):
        raise ParameterError(
            f"evaluate: honest must be a callable (train expression, train labels) -> "
            f"{{list: gene order}}, got {honest!r:.40}"
        )
    if go is not None:  # (ontology, annotations) was an AttributeError once Sim_anno ran
        require_instance("evaluate", "go", go, GoData, "kofs.sources.go.GoData")
    X = expression.values
    values = X.data if sp.issparse(X) else X if isinstance(X, np.ndarray) else None
    if values is not None and not np.isfinite(values).all():
        raise ParameterError(
            "evaluate: the expression holds NaN or infinite values, which the classifiers "
            "cannot use; impute or drop them first"
        )


def _go_support(
    lists_top: Mapping[str, list[str]], known: Sequence[KnownGenes], expression, go
) -> dict:
    """Sim_anno (sum, mean) of every list against every known set."""
    from kofs.knowledge.go import gene_similarity
    from kofs.knowledge.go_semantics import go_semantics

    sem = go_semantics(go.ontology, go.annotations, aspect=go.aspect, mode=go.mode)
    out = {}
    for kg in known:
        kgenes = _one_id_per_gene(kg.in_matrix(expression))
        for name, top in lists_top.items():
            S, _ = gene_similarity(
                go.ontology,
                go.annotations,
                _one_id_per_gene(top),
                kgenes,
                measure=go.measure,
                combine=go.combine,
                aspect=go.aspect,
                mode=go.mode,
                semantics=sem,
            )
            out[(name, kg.name)] = sim_anno(S)
    return out


@checked_keywords
def evaluate(
    lists: Mapping[str, np.ndarray],
    expression: Expression,
    *,
    labels: Sequence[str],
    known: Sequence[KnownGenes] = (),
    top: Sequence[int] = (10, 30, 50),
    curve_ks: Sequence[int] | None = None,
    classifiers: Sequence[str] = ("1nn", "svm-rbf", "svm-linear"),
    n_splits: int = 5,
    n_repeats: int = 2,
    groups: Sequence[str] | None = None,
    seed: int = 0,
    honest: Selector | None = None,
    go: Any = None,
    circular: Mapping[str, Iterable[str]] | None = None,
    weights: Mapping[str, Mapping[str, float]] | None = None,
    unsupervised: bool = True,
    sim_sets: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Evaluate ranked gene lists on one labelled matrix.

    Parameters
    ----------
    lists : mapping of str to ndarray of shape (m,)
        Ranks (1 = best, NaN = not ranked) of the matrix's genes in every list.
    expression : Expression
    labels : sequence of str, length n_samples
        Sample classes (aligned to ``expression.samples``).
    known : sequence of KnownGenes
        Known gene sets: ``HIT_<name>`` (count in the top ``max(top)``) and, with ``go``,
        ``Sim_anno_<name>``.
    top : sequence of int, default (10, 30, 50)
        The book's ACC-10/30/50 (1-NN); ``ACC Ave`` is their mean.
    curve_ks : sequence of int, optional
        Numbers of genes of the accuracy curves (default ``top`` plus 5, 10, 20, ..., 100).
    classifiers : sequence of str, default ("1nn", "svm-rbf", "svm-linear")
    n_splits, n_repeats : int, default 5, 2
        Repeated stratified k-fold (book's CV scheme is unstated).
    groups : sequence of str, optional
        Samples of one group (e.g. replicate arrays of a patient) never straddle folds.
    seed : int, default 0
    honest : callable, optional
        Selector of the honest protocol: ``honest(train_expression, train_labels)`` ->
        ``{list: gene order}``; re-ranks on the training samples of each fold.
    go : kofs.sources.go.GoData, optional
        Enables Sim_anno (GO gene similarity of :func:`kofs.knowledge.go.gene_similarity`
        with the GO settings of the run: by default Lin + best-match average over BP).
    circular : mapping of str to iterable of str, optional
        ``{list: names of known sets it was built or trained on}``: noted in the table.
    weights : mapping, optional
        ``{aggregation: {list: pi}}`` (for the figures and the report).
    unsupervised : bool, default True
        Compute the residue scale and Jaccard scores (book ch. 4, unsupervised criteria).
    sim_sets : sequence of str, optional
        Known sets Sim_anno is computed for (default all; it costs a GO similarity per list).
    progress : kofs.progress.Progress, optional
        Told about every fold of each protocol.

    Returns
    -------
    EvaluationResult
    """
    import pandas as pd

    from kofs.knowledge.similarity import similarity_from_array

    _check_evaluate_arguments(lists, expression, classifiers, honest, go, labels)
    classifiers = tuple(classifiers)
    missing = next(
        (i for i, v in enumerate(labels) if pd.api.types.is_scalar(v) and pd.isna(v)), None
    )
    if missing is not None:  # it was the class "None" or "nan"
        raise ParameterError(
            f"evaluate: sample {missing + 1} has no label ({labels[missing]!r}); leave the "
            "unlabelled samples out of the expression and the labels"
        )
    y = np.asarray([str(v) for v in labels])
    if len(y) != expression.n_samples:
        raise ParameterError(f"{len(y)} labels for {expression.n_samples} samples")
    if not lists:
        raise ParameterError("no ranked list to evaluate")
    for c in classifiers:
        classifier(c)
    m, n = expression.n_genes, expression.n_samples
    top = _ks(top, m, "--top")
    curve = _ks(
        curve_ks if curve_ks is not None else [k for k in (*DEFAULT_CURVE_KS, *top) if k <= m],
        m,
        "curve sizes",
    )
    curve = tuple(sorted(set(curve) | set(top)))
    K = max(top)
    ranks = {name: _ranks_of(name, r, m) for name, r in lists.items()}
    orders = {name: order_from_ranks(r, expression.genes) for name, r in ranks.items()}
    # folds drawn over the samples in the order of their ids (not the file's column order),
    # as every sample draw of a run is; each fold lists its samples in that order too, so the
    # classifiers see one order whatever the file's
    perm = canonical_rows(tuple(expression.samples))
    folds = [
        Fold(f.repeat, f.index, perm[f.train], perm[f.test])
        for f in make_folds(
            y[perm], n_splits=n_splits, n_repeats=n_repeats, seed=seed,
            groups=None if groups is None else [groups[i] for i in perm],
        )
    ]  # fmt: skip
    acc = accuracy_curves(
        expression, y, folds=folds, ks=curve, classifiers=classifiers, orders=orders,
        progress=progress,
    )  # fmt: skip
    if honest is not None:
        log.info("honest protocol: re-ranking on the training samples of %d folds", len(folds))
        acc += accuracy_curves(
            expression, y, folds=folds, ks=curve, classifiers=classifiers, select=honest,
            progress=progress,
        )  # fmt: skip
    acc_of = {(r["list"], r["protocol"], r["classifier"], r["k"]): r["accuracy"] for r in acc}

    X = expression.values[perm]  # the sample order of the folds: sums in one order
    tops = {name: [expression.genes[i] for i in o[:K]] for name, o in orders.items()}
    sim_known = [kg for kg in known if sim_sets is None or kg.name in sim_sets]
    support = _go_support(tops, sim_known, expression, go) if go is not None and sim_known else {}
    known_in = {kg.name: set(kg.in_matrix(expression)) for kg in known}
    Kref = similarity_from_array(X, "rbf")[0] if unsupervised else None
    feat_counts = [k for k in range(10, min(n, m) + 1, 10)] or [min(n, m)]
    circular = {k: list(v) for k, v in (circular or {}).items()}
    rows, notes = [], {}
    for name, order in orders.items():
        row: dict[str, Any] = {"list": name}
        for protocol in ("book", "honest"):
            prefix = "" if protocol == "book" else "honest "
            for c in classifiers:
                vals = [acc_of.get((name, protocol, c, k)) for k in top]
                if any(v is None for v in vals):
                    continue
                if c == "1nn":
                    for k, v in zip(top, vals, strict=False):
                        row[f"{prefix}ACC-{k}"] = v
                row[f"{prefix}{CLASSIFIER_LABELS[c]} Ave"] = float(np.mean(vals))
        for kg in known:
            row[f"HIT_{kg.name}"] = hit_count(tops[name], known_in[kg.name])
        for kg in known:
            if (name, kg.name) in support:
                row[f"Sim_anno_{kg.name}"], row[f"Sim_anno_mean_{kg.name}"] = support[
                    (name, kg.name)
                ]
        row[f"RED-{K}"] = redundancy_rate(X[:, order[:K]])
        if unsupervised:
            row["Residue"] = float(
                np.mean([residue_scale(X[:, order[:f]], Kref) for f in feat_counts])
            )
            for kn in (1, 5):
                row[f"JAC-{kn}"] = float(
                    np.mean([jaccard_score(X[:, order[:f]], Kref, k=kn) for f in feat_counts])
                )
        note = []
        if circular.get(name):
            hit = [s for s in circular[name] if s in known_in]
            if hit:
                note.append(
                    "circular: built/trained on "
                    + ", ".join(hit)
                    + " (HIT/Sim_anno of that set not independent)"
                )
        if np.isnan(ranks[name]).any():
            note.append(f"{int(np.isnan(ranks[name]).sum())} genes unranked (placed last)")
        notes[name] = note
        row["notes"] = "; ".join(note)
        rows.append(row)
    table = pd.DataFrame(rows)
    settings = {
        "top": list(top),
        "curve_ks": list(curve),
        "classifiers": list(classifiers),
        "n_splits": n_splits,
        "n_repeats": n_repeats,
        "groups": groups is not None,
        "seed": seed,
        "protocols": ["book"] + (["honest"] if honest is not None else []),
        "n_folds": len(folds),
        "hit_top": K,
        "red_top": K,
        "unsupervised_feature_counts": feat_counts if unsupervised else None,
        "n_samples": n,
        "n_genes": m,
        "classes": {c: int((y == c).sum()) for c in np.unique(y)},
    }
    return EvaluationResult(
        table, acc, orders, ranks, {k: dict(v) for k, v in (weights or {}).items()}, notes, settings
    )


def agreement(result: EvaluationResult) -> tuple[list[str], np.ndarray]:
    """Spearman correlation between the evaluated lists (names, L x L matrix)."""
    names = list(result.ranks)
    R = np.column_stack([result.ranks[n] for n in names])
    R = np.where(np.isnan(R), np.nanmax(R, axis=0, initial=0) + 1, R)
    return names, rank_correlation(R)
