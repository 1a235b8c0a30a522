"""Split-half known genes: does knowledge recover known genes it was not given? (issue 20)

``HIT_<set>`` counts are circular when lists were built or weights fitted from that set: a list
propagated from the cancer genes puts them first by construction. The split-half protocol takes
the circularity out. Per repeat the known set S (its genes in the matrix) is split at random
into a seed part A and a held-out part H (``fraction`` of S held out); every gene set the
pipeline builds lists from or fits weights on loses H's genes (lists seeded by S are seeded by
A, supervision by a subset of S uses its part in A), and every list and aggregation is scored
by the number of H's genes in its top k. Nothing that is built or fitted sees H.

The random-seed null asks how many held-out genes the same pipeline recovers when its gene sets
carry nothing about S: every gene of those sets (after removing H) is replaced by a gene of the
matrix outside S, drawn at random (one random one-to-one map per draw, so sizes and overlaps
of the sets are kept); null draw j is scored on the held-out part of repeat j mod R.

:func:`split_half` runs the protocol around any ``build(gene_sets) -> {list: ranks}``;
:meth:`kofs.evaluate.KofsRanking.split_half` (``kofs reproduce``) and
:func:`kofs.evaluate.run.evaluate_outputs` (``kofs evaluate --split-known``) supply one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.evaluate.core import order_from_ranks
from kofs.progress import Progress, task

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_SPLIT_TOP",
    "KINDS",
    "SplitHalf",
    "SplitHalfResult",
    "check_split",
    "null_gene_sets",
    "resolve_reference",
    "split_half",
    "split_known",
]

#: Top-k sizes scored by default.
DEFAULT_SPLIT_TOP = (10, 30, 50, 100)
#: What an evaluated list is: built from the matrix (and labels) only, from knowledge, or fused.
KINDS = ("data", "knowledge", "aggregation")

#: ``build(gene_sets, null) -> {list name: ranks over the matrix's genes}`` (1 = best, NaN =
#: unranked); ``null`` is True for a null draw, where a list that cannot be built from random
#: seeds may be missing (GO-CAN-MAH when no GO term is enriched in them)
Build = Callable[[Mapping[str, tuple[str, ...]], bool], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class SplitHalf:
    """Settings of the split-half evaluation (checked when made).

    Attributes
    ----------
    known : str
        Name of the known gene set that is split (a ``known_genes`` set / ``--known-genes``).
    repeats : int, default 5
        Random splits R.
    fraction : float, default 0.5
        Share of the set's genes (in the matrix) held out, strictly between 0 and 1.
    null_repeats : int, default 5
        Random-seed draws R' (0 = no null).
    top : tuple of int, default (10, 30, 50, 100)
        Top-k sizes scored.
    seed : int, default 0
        Seed of the splits and of the null's draws.
    reference : str, optional
        The list every other one is compared with (default: the data-only list of the Fisher
        score, when there is one).
    """

    known: str
    repeats: int = 5
    fraction: float = 0.5
    null_repeats: int = 5
    top: tuple[int, ...] = DEFAULT_SPLIT_TOP
    seed: int = 0
    reference: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.known, str) or not self.known.strip():
            raise ParameterError("split-half: name the known gene set to split")
        if not 1 <= int(self.repeats) <= 1000:
            raise ParameterError(f"split-half repeats must be in [1, 1000], got {self.repeats}")
        if not 0 <= int(self.null_repeats) <= 1000:
            raise ParameterError(
                f"split-half null repeats must be in [0, 1000], got {self.null_repeats}"
            )
        if not 0.0 < float(self.fraction) < 1.0:
            raise ParameterError(
                f"split-half fraction (share held out) must be between 0 and 1, exclusive, "
                f"got {self.fraction}"
            )
        top = tuple(sorted({int(k) for k in self.top}))
        if not top or top[0] < 1:
            raise ParameterError(
                f"split-half top must be positive numbers of genes, got {self.top}"
            )
        object.__setattr__(self, "top", top)


@dataclass(frozen=True)
class SplitHalfResult:
    """What :func:`split_half` measured.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (list, k): ``list, kind, k, held_out`` (mean size of H), ``recovered``
        (mean over repeats of H's genes in the top k) and ``recovered_sd``, ``fraction``
        (recovered / held_out), the paired differences against the reference list
        (``diff_reference``, ``diff_reference_sd``) and against the best data-only list at that
        k (``best_data``, ``diff_best_data``, ``diff_best_data_sd``), the null's mean and SD
        (``null``, ``null_sd``, over the ``null_draws`` draws that built the list),
        ``diff_null`` (recovered - null) and ``p_null``.
    draws : pandas.DataFrame
        One row per (draw, list, k): ``draw`` (split or null), ``index`` (repeat or null draw),
        ``split`` (the repeat whose held-out genes are scored), ``list, k, held_out,
        recovered``.
    settings : dict
    """

    table: Any
    draws: Any
    settings: dict[str, Any] = field(default_factory=dict)

    def at(self, k: int) -> Any:
        """The rows of top ``k`` (one per list)."""
        return self.table[self.table["k"] == k].reset_index(drop=True)


def split_known(
    known: Sequence[str], *, fraction: float, seed: int, repeat: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split ``known`` into (seed part, held-out part) for one repeat.

    The genes are sorted first (the split does not depend on their order), then a random
    ``round(fraction * n)`` of them (at least 1, at most n - 1) is held out, drawn with
    ``numpy.random.default_rng([seed, 0, repeat])``. Both parts are sorted.
    """
    ids = sorted(set(known))
    if len(ids) < 2:
        raise ParameterError(f"split-half needs at least 2 known genes, got {len(ids)}")
    n_out = min(max(int(round(fraction * len(ids))), 1), len(ids) - 1)
    perm = np.random.default_rng([seed, 0, repeat]).permutation(len(ids))
    held = tuple(sorted(ids[i] for i in perm[:n_out]))
    rest = tuple(sorted(ids[i] for i in perm[n_out:]))
    return rest, held


def null_gene_sets(
    gene_sets: Mapping[str, Sequence[str]],
    held_out: Sequence[str],
    *,
    pool: Sequence[str],
    seed: int,
    draw: int,
) -> dict[str, tuple[str, ...]]:
    """The gene sets of one null draw: each set without ``held_out``, every gene of their union
    mapped one-to-one to a random gene of ``pool`` (``numpy.random.default_rng([seed, 1,
    draw])``), so sizes and overlaps are kept and no set holds a gene outside ``pool``."""
    out = set(held_out)
    used = {k: sorted(set(v) - out) for k, v in gene_sets.items()}
    union = sorted(set().union(*used.values())) if used else []
    pool = sorted(set(pool))
    if len(union) > len(pool):
        raise ParameterError(
            f"split-half null: the gene sets hold {len(union)} genes but only {len(pool)} genes "
            "of the matrix are outside the known set to draw them from"
        )
    picks = np.random.default_rng([seed, 1, draw]).choice(len(pool), size=len(union), replace=False)
    psi = {g: pool[i] for g, i in zip(union, picks, strict=True)}
    return {k: tuple(sorted(psi[g] for g in v)) for k, v in used.items()}


def _recovered(
    ranks: np.ndarray, held: np.ndarray, ks: Sequence[int], genes: Sequence[str]
) -> list[int]:
    """Held-out genes in each top k; tied genes enter a top k by gene id (not by position)."""
    hits = np.cumsum(held[order_from_ranks(np.asarray(ranks, dtype=np.float64), genes)])
    return [int(hits[k - 1]) for k in ks]


def _sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")


def fit_split_top(settings: SplitHalf, n_genes: int) -> SplitHalf:
    """``settings`` with the default top sizes larger than the matrix left out (as ``kofs
    evaluate`` does with ``--top``); sizes given are kept, and :func:`check_split` refuses
    them when too large."""
    if settings.top != DEFAULT_SPLIT_TOP or settings.top[-1] <= n_genes:
        return settings
    kept = tuple(k for k in settings.top if k <= n_genes) or (n_genes,)
    log.info("split-half: the matrix has %d genes; top sizes %s", n_genes, kept)
    return replace(settings, top=kept)


def check_split(settings: SplitHalf, known: Sequence[str], n_genes: int) -> None:
    """Fail before any work when the split cannot be made: fewer than 2 known genes in the
    matrix (``known``: the set's matrix ids), a top k larger than the matrix."""
    n = len(set(known))
    if n < 2:
        raise ParameterError(
            f"split-half: the known set {settings.known!r} has {n} genes in the matrix; the "
            "split needs at least 2"
        )
    if settings.top[-1] > n_genes:
        raise ParameterError(
            f"split-half top asks for {settings.top[-1]} genes but the matrix has {n_genes}"
        )


def resolve_reference(
    settings: SplitHalf, lists: Mapping[str, tuple[str, str | None]]
) -> str | None:
    """The reference list: ``settings.reference`` (checked against ``lists``), else the first
    data-only list built by the Fisher score, else None."""
    if settings.reference is not None:
        if settings.reference not in lists:
            raise ParameterError(
                f"split-half reference {settings.reference!r} is not an evaluated list; "
                f"choose from {', '.join(lists)}"
            )
        return settings.reference
    return next(
        (n for n, (kind, ranker) in lists.items() if kind == "data" and ranker == "fisher"), None
    )


def split_half(
    build: Build,
    known: Sequence[str],
    *,
    genes: Sequence[str],
    gene_sets: Mapping[str, Sequence[str]],
    settings: SplitHalf,
    lists: Mapping[str, tuple[str, str | None]],
    progress: Progress | None = None,
) -> SplitHalfResult:
    """Run the split-half protocol (module docstring) around ``build``.

    Parameters
    ----------
    build : callable
        ``build(gene_sets, null) -> {list name: ranks}``: the whole pipeline (lists and
        aggregations) built from the given gene sets (same keys as ``gene_sets``, matrix ids);
        ranks over ``genes`` (1 = best, NaN = unranked). It must use no other gene set. In a
        null draw (``null`` True) a list that cannot be built from the random seeds may be
        left out (the ``null_draws`` column counts the draws that built it).
    known : sequence of str
        The known set S as matrix ids.
    genes : sequence of str
        The matrix's gene ids (the order of the ranks).
    gene_sets : mapping of str to sequence of str
        Every gene set the pipeline builds or fits from (matrix ids), e.g. the seeds of the
        lists and the genes supervising an aggregation.
    settings : SplitHalf
    lists : mapping of str to (kind, ranker)
        Every list ``build`` returns: its kind (:data:`KINDS`) and the ranker that built it
        (None for aggregations and lists of unknown origin).
    progress : kofs.progress.Progress, optional
        Told about every build (task ``"split-half builds"``).

    Returns
    -------
    SplitHalfResult

    Raises
    ------
    ParameterError
        Fewer than 2 known genes in the matrix, a top k larger than the matrix, an unknown
        reference list, a null that cannot be drawn.
    """
    import pandas as pd

    genes = list(genes)
    m = len(genes)
    pos = {g: i for i, g in enumerate(genes)}
    known_ids = sorted({g for g in known if g in pos})
    settings = fit_split_top(settings, m)
    check_split(settings, known_ids, m)
    ks = settings.top
    bad = {n: k for n, (k, _) in lists.items() if k not in KINDS}
    if bad:  # pragma: no cover - a caller's error
        raise ValueError(f"unknown list kinds {bad}")
    reference = resolve_reference(settings, lists)
    sets = {k: tuple(sorted({g for g in v if g in pos})) for k, v in gene_sets.items()}
    pool = [g for g in genes if g not in set(known_ids)]
    R, R0 = int(settings.repeats), int(settings.null_repeats)
    splits = [
        split_known(known_ids, fraction=settings.fraction, seed=settings.seed, repeat=r)
        for r in range(R)
    ]
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    jobs = [("split", r, r) for r in range(R)] + [("null", j, j % R) for j in range(R0)]
    for draw, index, s in task(progress, "split-half builds", total=len(jobs)).each(jobs):
        held = splits[s][1]
        if draw == "split":
            out = set(held)
            used = {k: tuple(g for g in v if g not in out) for k, v in sets.items()}
        else:
            used = null_gene_sets(sets, held, pool=pool, seed=settings.seed, draw=index)
        ranks = build(used, draw == "null")
        missing = [n for n in lists if n not in ranks]
        if missing and draw == "split":  # pragma: no cover - a caller's error
            raise ValueError(f"build returned no list {missing[0]!r}")
        mask = np.zeros(m, dtype=bool)
        mask[[pos[g] for g in held]] = True
        for name in lists:
            if name not in ranks:
                continue
            r = np.asarray(ranks[name], dtype=np.float64)
            if r.shape != (m,):  # pragma: no cover - a caller's error
                raise ValueError(f"list {name!r}: {r.shape} ranks for {m} genes")
            for k, hit in zip(ks, _recovered(r, mask, ks, genes), strict=True):
                rows.append(
                    {"draw": draw, "index": index, "split": s, "list": name, "k": k,
                     "held_out": len(held), "recovered": hit}
                )  # fmt: skip
        log.info("split-half: %s %d of %d built", draw, index + 1, R if draw == "split" else R0)
    draws = pd.DataFrame(rows)
    table = _summary(draws, lists, reference, ks)
    settings_out = {
        "known": settings.known,
        "n_known": len(known_ids),
        "n_seed": len(splits[0][0]),
        "n_held_out": len(splits[0][1]),
        "repeats": R,
        "null_repeats": R0,
        "fraction": float(settings.fraction),
        "top": list(ks),
        "seed": int(settings.seed),
        "reference": reference,
        "gene_sets": {k: len(v) for k, v in sets.items()},
        "null_pool": len(pool),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return SplitHalfResult(table, draws, settings_out)


def _summary(draws, lists: Mapping[str, tuple[str, str | None]], reference: str | None, ks):
    import pandas as pd

    split = draws[draws["draw"] == "split"]
    null = draws[draws["draw"] == "null"]

    def series(frame, name, k):
        sel = frame[(frame["list"] == name) & (frame["k"] == k)].sort_values("index")
        return sel["recovered"].to_numpy(dtype=float), sel["held_out"].to_numpy(dtype=float)

    data_lists = [n for n, (kind, _) in lists.items() if kind == "data"]
    rows = []
    for k in ks:
        rec = {n: series(split, n, k)[0] for n in lists}
        best = max(data_lists, key=lambda n: rec[n].mean(), default=None)
        for name, (kind, _) in lists.items():
            x, held = series(split, name, k)
            nul = series(null, name, k)[0]
            row: dict[str, Any] = {
                "list": name,
                "kind": kind,
                "k": k,
                "held_out": float(held.mean()),
                "recovered": float(x.mean()),
                "recovered_sd": _sd(x),
                "fraction": float(np.mean(x / held)),
            }
            for label, other in (("reference", reference), ("best_data", best)):
                diff = x - rec[other] if other is not None else np.array([np.nan])
                row[label] = other or ""
                row[f"diff_{label}"] = float(diff.mean())
                row[f"diff_{label}_sd"] = _sd(diff) if other is not None else float("nan")
            row["null_draws"] = len(nul)
            if len(nul):
                row["null"] = float(nul.mean())
                row["null_sd"] = _sd(nul)
                row["diff_null"] = float(x.mean() - nul.mean())
                # conservative: the mean of R repeats against single null draws
                row["p_null"] = float((1 + np.sum(nul >= x.mean())) / (1 + len(nul)))
            else:
                row.update(null=np.nan, null_sd=np.nan, diff_null=np.nan, p_null=np.nan)
            rows.append(row)
    return pd.DataFrame(rows)
