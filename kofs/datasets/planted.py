"""Planted ranked lists with a known truth: the simulator of the fusion benchmark and tests.

Every gene is relevant or background. A *data* list ranks genes by a latent score
``s = mu_l * Z + noise``: ``mu_l > 0`` is an informative list (the larger, the better), 0 a
random list, ``mu_l < 0`` a reversed one. Lists may share part of their noise (correlated
lists that share false positives), have heavy-tailed noise, detect only part of the relevant
genes, or report only their top k genes (partial lists). *Knowledge* lists rank the genes a
source covers (the others get NaN scores: no knowledge) by ``gamma * Z + bias * b + noise``
where ``b`` is the gene's study bias (log number of annotations): ``gamma = 0`` is knowledge
that does not predict relevance, ``bias > 0`` is annotation bias (well-studied genes head the
list). Well-studied genes may also be more often relevant (``bias_relevance``).

Nothing here is fitted or tuned: the generator is independent of the aggregators it tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from kofs.types import Ranking

__all__ = ["DataList", "KnowledgeList", "PlantedLists", "planted_lists"]


@dataclass(frozen=True)
class DataList:
    """One data-driven list of :func:`planted_lists`.

    ``mu``: shift of the relevant genes' latent score (noise SD 1); ``shared``: fraction of
    the noise variance shared with the other lists of the same ``group``; ``noise``:
    ``"normal"`` or ``"t3"`` (Student t with 3 degrees of freedom, scaled to variance 1);
    ``detect``: fraction of the relevant genes the list sees (the others score as background);
    ``top``: report only the top ``top`` genes (a partial list); 0 = all genes.
    """

    name: str
    mu: float
    shared: float = 0.0
    group: str = ""
    noise: str = "normal"
    detect: float = 1.0
    top: int = 0


@dataclass(frozen=True)
class KnowledgeList:
    """One knowledge list of :func:`planted_lists`: covers the genes with at least one
    annotation; score ``gamma * Z + bias * b + N(0, 1)`` on them."""

    name: str
    gamma: float
    bias: float = 1.0


@dataclass(frozen=True)
class PlantedLists:
    """Output of :func:`planted_lists`.

    Attributes
    ----------
    rankings : tuple of Ranking
        The data lists, then the knowledge lists (``params["ranker"]`` is ``"planted-data"``
        or ``"relevance-vote"``, so the runner tells the kinds apart as for real lists).
    relevant : frozenset of str
        The planted relevant genes.
    genes : tuple of str
    study_bias : ndarray (M,)
        ``log(1 + annotations)`` of every gene.
    annotations : ndarray (M,) of int
    data : tuple of DataList
    knowledge : tuple of KnowledgeList
    auc : dict
        Population AUC of every data list: P(a relevant gene outranks a background gene)
        (``Phi(mu / sqrt(2))`` for normal noise seen on every relevant gene).
    """

    rankings: tuple[Ranking, ...]
    relevant: frozenset[str]
    genes: tuple[str, ...]
    study_bias: np.ndarray
    annotations: np.ndarray
    data: tuple[DataList, ...]
    knowledge: tuple[KnowledgeList, ...]
    auc: Mapping[str, float] = field(default_factory=dict)

    @property
    def truth(self) -> np.ndarray:
        """Bool (M,): relevant genes in gene order."""
        return np.fromiter((g in self.relevant for g in self.genes), bool, len(self.genes))


def _noise(rng: np.random.Generator, kind: str, size: int) -> np.ndarray:
    if kind == "normal":
        return rng.standard_normal(size)
    if kind == "t3":
        return rng.standard_t(3, size) / np.sqrt(3.0)
    raise ValueError(f"unknown noise {kind!r}")


def _population_auc(d: DataList, rng: np.random.Generator, n: int = 400_000) -> float:
    if d.noise == "normal":
        return float(d.detect * ndtr(d.mu / np.sqrt(2.0)) + (1 - d.detect) * 0.5)
    a = _noise(rng, d.noise, n) + d.mu * (rng.random(n) < d.detect)
    b = _noise(rng, d.noise, n)
    return float(np.mean(a > b))


def planted_lists(
    n_genes: int = 3000,
    n_relevant: int = 90,
    *,
    data: Sequence[DataList] | None = None,
    knowledge: Sequence[KnowledgeList] = (),
    bias_relevance: float = 0.0,
    mean_annotations: float = 5.0,
    seed: int = 0,
) -> PlantedLists:
    """Simulate ranked lists with a known truth (module docstring).

    Parameters
    ----------
    n_genes, n_relevant : int
    data : sequence of DataList, optional
        Default: three informative lists of graded quality (mu 2.0, 1.4, 0.8), six random
        lists and one reversed list (mu -1.5).
    knowledge : sequence of KnowledgeList
    bias_relevance : float
        Log-odds increase of relevance per unit of study bias (0: relevance is independent of
        how well a gene is studied).
    mean_annotations : float
        Median number of annotations of a gene (log-normal, dispersion 1.2); genes drawing 0
        are covered by no knowledge source.
    seed : int
    """
    rng = np.random.default_rng(seed)
    if data is None:
        data = (
            DataList("good", 2.0),
            DataList("fair", 1.4),
            DataList("weak", 0.8),
            *(DataList(f"random{k + 1}", 0.0) for k in range(6)),
            DataList("reversed", -1.5),
        )
    genes = tuple(f"g{i:05d}" for i in range(n_genes))
    annotations = rng.poisson(np.exp(np.log(mean_annotations) + 1.2 * rng.standard_normal(n_genes)))
    b = np.log1p(annotations)
    # relevance: n_relevant genes drawn with weights exp(bias_relevance * standardised b)
    z = (b - b.mean()) / (b.std() or 1.0)
    w = np.exp(bias_relevance * z)
    chosen = rng.choice(n_genes, size=n_relevant, replace=False, p=w / w.sum())
    Z = np.zeros(n_genes, dtype=bool)
    Z[chosen] = True
    shared: dict[str, np.ndarray] = {}
    rankings: list[Ranking] = []
    auc: dict[str, float] = {}
    for d in data:
        eps = _noise(rng, d.noise, n_genes)
        if d.shared > 0:
            common = shared.setdefault(d.group, _noise(rng, d.noise, n_genes))
            eps = np.sqrt(d.shared) * common + np.sqrt(1 - d.shared) * eps
        seen = Z & (rng.random(n_genes) < d.detect)
        s = d.mu * seen + eps
        if d.top:
            cut = np.sort(s)[::-1][d.top - 1]
            keep = s >= cut
            rankings.append(
                Ranking(
                    d.name,
                    tuple(g for g, k in zip(genes, keep, strict=True) if k),
                    s[keep],
                    True,
                    params={"ranker": "planted-data"},
                )
            )
        else:
            rankings.append(Ranking(d.name, genes, s, True, params={"ranker": "planted-data"}))
        auc[d.name] = _population_auc(d, rng)
    covered = annotations > 0
    for k in knowledge:
        s = k.gamma * Z + k.bias * b + rng.standard_normal(n_genes)
        s = np.where(covered, s, np.nan)
        rankings.append(Ranking(k.name, genes, s, True, params={"ranker": "relevance-vote"}))
    return PlantedLists(
        rankings=tuple(rankings),
        relevant=frozenset(genes[i] for i in chosen),
        genes=genes,
        study_bias=b,
        annotations=annotations,
        data=tuple(data),
        knowledge=tuple(knowledge),
        auc=auc,
    )
