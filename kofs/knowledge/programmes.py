"""Gene programmes that are usually nuisance, not cell identity: named ones and ones found in the
data.

* :func:`named_programmes` -- cell cycle (S, G2/M; Tirosh et al. 2016), dissociation stress,
  mitochondrial and ribosomal genes, matched by symbol (``kofs/data/programmes``, provenance in
  its README).
* :func:`independent_programmes` -- modules of co-varying genes whose activity is not cell
  identity: a programme *crossed* with the cell groups (active in a part of the cells of
  several groups, as the cell cycle, stress or a library-size effect are), found among the
  top genes of a ranking.
* :func:`nuisance_shares`, :func:`list_nuisance` -- how much of a list's top each programme
  takes (every list of a run: ``Ranking.info["nuisance"]``, in the manifest; a measure the
  fusion and the plans can use).

The test of :func:`independent_programmes`, on a seeded subsample of cells and the Pearson
residuals of the candidate genes (Lause et al. 2021):

1. modules: average-linkage clustering of the genes by correlation distance, cut at
   :data:`MODULE_CUT` (mean correlation 0.1), modules of at least ``min_genes`` genes;
2. for each module, on residuals whose cell totals leave the module's genes out (a programme
   that takes a share of its cells' counts lowers every other gene there; on a few thousand
   genes the identity context's components would follow that shift), its score (mean
   standardised residual of its genes) and its *identity context*: the principal components
   of the other candidate genes that do not go up with it (``corr(gene, score) <``
   :data:`LINK_CORRELATION`), clustered into cell groups by k-means;
3. the module's signal variance (its score's variance times the split-half reliability of the
   score) is split into the part between those groups (identity) and within them; the within
   part is spread over groups with an effective number ``(sum_c v_c)^2 / sum_c v_c^2`` of
   groups (``v_c`` the signal variance inside group c);
4. the module is an identity-independent programme when less than
   :data:`IDENTITY_FRACTION` of its signal lies between the groups **and** its within-group
   signal is spread over at least :data:`MIN_SPREAD` groups. A rare subpopulation inside one
   group (its markers vary within that group only) is therefore not a nuisance programme;
5. genes that go *down* with the module (``corr <= -LINK_CORRELATION``) may be its own other
   half (a batch moves genes both ways) or other cell types' genes: when the module is identity
   by step 4 and has such genes, it is tested again on a context where their part predicted
   by its score is left out, and is crossed when that test says so and the context still has
   cell structure (:func:`_has_structure`); crossings found this way stand only when the
   candidate genes outside every crossed programme keep cell structure (:func:`_mutual_crossings`).
   Every programme set aside owns the genes with ``|corr| >=`` :data:`LINK_CORRELATION`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from kofs._compute.chunked import is_dask, take_rows
from kofs.types import Expression

__all__ = [
    "MIN_SPREAD",
    "IDENTITY_FRACTION",
    "NAMED",
    "Programme",
    "independent_programmes",
    "list_nuisance",
    "named_programmes",
    "nuisance_shares",
    "nuisance_top",
]

#: Named programmes, in report order.
NAMED = ("cell_cycle_s", "cell_cycle_g2m", "stress", "mitochondrial", "ribosomal")
_FILES = {"cell_cycle_s": "cell_cycle_s.txt", "cell_cycle_g2m": "cell_cycle_g2m.txt",
          "stress": "stress.txt"}  # fmt: skip
_PATTERNS = {
    "mitochondrial": re.compile(r"^MT-"),
    "ribosomal": re.compile(r"^(RP[LS]\d+[A-Z]?\d*|RPLP[0-2]|RPSA)$"),
}

#: Average-linkage cut (correlation distance) that delimits modules: mean correlation 0.1.
MODULE_CUT = 0.9
#: Genes correlated with a module's score beyond this are its own, not its identity context.
LINK_CORRELATION = 0.15
#: A programme is identity when at least this fraction of its signal lies between cell groups.
IDENTITY_FRACTION = 0.05
#: ... and nuisance only when its within-group signal is spread over this many groups or more.
MIN_SPREAD = 2.5
#: Cells of the subsample the modules are found and tested on.
TEST_CELLS = 3000
#: k-means groups of the identity context.
CONTEXT_GROUPS = 12
#: Principal components of the identity context.
CONTEXT_PCS = 30


@cache
def _gene_list(name: str) -> frozenset[str]:
    text = (resources.files("kofs") / "data" / "programmes" / _FILES[name]).read_text("utf-8")
    genes = {g.strip().upper() for g in text.split() if g.strip()}
    alias_text = (resources.files("kofs") / "data" / "programmes" / "aliases.tsv").read_text(
        "utf-8"
    )
    for line in alias_text.splitlines():
        old, _, new = line.partition("\t")
        if old.strip().upper() in genes:
            genes.add(new.strip().upper())
    return frozenset(genes)


def _symbols(expression: Expression) -> list[str]:
    ann = expression.annotations
    col = ann.get("symbol")
    return [str(s).upper() for s in (col if col is not None else expression.genes)]


def named_programmes(expression: Expression) -> dict[str, np.ndarray]:
    """Boolean masks over ``expression.genes`` of the named programmes (:data:`NAMED`) that hit
    at least one gene, matched by the symbol annotation (else the gene ids), case-insensitively."""
    symbols = _symbols(expression)
    out = {}
    for name in NAMED:
        if name in _FILES:
            members = _gene_list(name)
            mask = np.fromiter((s in members for s in symbols), dtype=bool, count=len(symbols))
        else:
            pattern = _PATTERNS[name]
            mask = np.fromiter(
                (pattern.match(s) is not None for s in symbols), dtype=bool, count=len(symbols)
            )
        if mask.any():
            out[name] = mask
    return out


@dataclass(frozen=True)
class Programme:
    """A module of co-varying genes and its identity test.

    Attributes
    ----------
    genes : ndarray of int
        Column indices of its genes.
    identity_fraction : float
        Fraction of its signal variance between the cell groups of its identity context.
    spread : float
        Effective number of groups its within-group signal is spread over.
    reliability : float
        Split-half (Spearman-Brown) reliability of its score.
    independent : bool
        An identity-independent (nuisance-like) programme.
    associated : ndarray of int
        Columns among the ``extend`` genes of :func:`independent_programmes` whose residuals
        correlate with its score by :data:`LINK_CORRELATION` or more in absolute value (its own
        genes included: a programme moves some genes up and others down).
    """

    genes: np.ndarray
    identity_fraction: float
    spread: float
    reliability: float
    independent: bool = False
    associated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def as_dict(self, names=None) -> dict:
        genes = [int(g) for g in self.genes] if names is None else [names[g] for g in self.genes]
        return {
            "genes": genes,
            "identity_fraction": round(self.identity_fraction, 4),
            "spread": round(self.spread, 3),
            "reliability": round(self.reliability, 4),
            "independent": bool(self.independent),
        }


def _count_block(counts, genes: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The counts of a subsample (cells x genes, dense)."""
    X = counts.X
    sub = take_rows(X, cells) if is_dask(X) else X[cells]
    return sp.csr_matrix(sub)[:, genes].toarray() if sp.issparse(sub) else np.asarray(sub)[:, genes]


def _residuals(
    counts,
    block: np.ndarray,
    genes: np.ndarray,
    cells: np.ndarray,
    theta: float = 100.0,
    *,
    without: np.ndarray | None = None,
) -> np.ndarray:
    """Clipped Pearson residuals of ``block`` (:func:`_count_block` of ``genes``, ``cells``);
    ``without``: boolean mask over ``genes`` of those left out of the cells' totals (and of
    the genes' expected fractions), so that a programme active in some cells does not shift
    every other gene of those cells."""
    totals = counts.cell_totals[cells]
    fractions = counts.gene_fractions[genes]
    if without is not None and without.any():
        totals = totals - block[:, without].sum(axis=1)
        rest = counts.total - float(counts.gene_totals[genes[without]].sum())
        fractions = counts.gene_totals[genes] / max(rest, 1e-300)
    mu = np.maximum(totals, 0.0)[:, None] * fractions[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (block - mu) / np.sqrt(mu + mu * mu / theta)
    r = np.where(mu > 0, r, 0.0)
    clip = np.sqrt(counts.X.shape[0])
    return np.clip(r, -clip, clip)


def _standardised(R: np.ndarray) -> np.ndarray:
    """Columns of ``R`` centred and scaled to unit SD (0 where constant)."""
    sd = R.std(axis=0)
    ok = sd > 0
    return np.where(ok, (R - R.mean(axis=0)) / np.where(ok, sd, 1.0), 0.0)


def _kmeans(P: np.ndarray, k: int, seed: int, iters: int = 25) -> np.ndarray:
    """Lloyd's k-means, k-means++ seeding, deterministic for a seed (labels)."""
    rng = np.random.default_rng(seed)
    n = P.shape[0]
    k = min(k, n)
    centres = [P[rng.integers(n)]]
    d2 = ((P - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = d2.sum()
        pick = rng.integers(n) if total <= 0 else rng.choice(n, p=d2 / total)
        centres.append(P[pick])
        d2 = np.minimum(d2, ((P - P[pick]) ** 2).sum(axis=1))
    C = np.array(centres)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iters):
        dist = (P * P).sum(1)[:, None] - 2 * P @ C.T + (C * C).sum(1)[None, :]
        new = np.argmin(dist, axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        for c in range(k):
            members = labels == c
            if members.any():
                C[c] = P[members].mean(axis=0)
    return labels


def independent_programmes(
    counts,
    candidates: np.ndarray,
    *,
    seed: int = 0,
    min_genes: int = 8,
    n_cells: int = TEST_CELLS,
    extend: np.ndarray | None = None,
) -> list[Programme]:
    """Modules among the ``candidates`` (gene columns, e.g. a ranking's top 500) and whether
    each is an identity-independent programme (the module docstring has the test).

    Parameters
    ----------
    counts : kofs._compute.counts.Counts
    candidates : ndarray of int
    seed : int
    min_genes : int
        Smallest module.
    n_cells : int
        Cells of the seeded subsample.
    extend : ndarray of int, optional
        Further gene columns: part of the identity context of every module and tested for
        association with it (:attr:`Programme.associated`).

    Returns
    -------
    list of Programme
        Every module found, largest first.
    """
    from scipy.cluster.hierarchy import fcluster, linkage

    candidates = np.unique(np.asarray(candidates, dtype=np.int64))
    n = counts.X.shape[0]
    if candidates.size < 2 * min_genes or n < 50:
        return []
    pool = candidates if extend is None else np.union1d(candidates, extend)
    rng = np.random.default_rng(seed)
    cells = np.sort(rng.choice(n, min(n, n_cells), replace=False))
    block = _count_block(counts, pool, cells)
    R = _residuals(counts, block, pool, cells)
    keep = R.std(axis=0) > 0
    Z, pool, block = _standardised(R[:, keep]), pool[keep], block[:, keep]
    is_candidate = np.isin(pool, candidates)
    if is_candidate.sum() < 2 * min_genes:
        return []
    cand_cols = np.flatnonzero(is_candidate)
    tree = linkage(_correlation_distances(Z[:, cand_cols]), method="average")
    labels = fcluster(tree, t=MODULE_CUT, criterion="distance")
    tested = []
    for lab in np.unique(labels):
        members = np.zeros(pool.size, dtype=bool)
        members[cand_cols[labels == lab]] = True
        if members.sum() < min_genes:
            continue
        # the module's test on residuals whose cell totals leave its genes out: a programme
        # that takes a share of its cells' counts lowers every other gene there (composition),
        # and on few genes the identity context's components would follow it
        Zm = _standardised(_residuals(counts, block, pool, cells, without=members))
        tested.append(_test_module(Zm, members, seed))
    found = [
        Programme(
            pool[t.members],
            *(t.crossed or (t.identity, t.spread)),
            t.reliability,
            t.set_aside,
            pool[t.owned] if t.set_aside else pool[t.members],
        )
        for t in _mutual_crossings(tested, Z, is_candidate, seed)
    ]
    found.sort(key=lambda p: -p.genes.size)
    return found


class _ModuleTest(NamedTuple):
    """One module's test (:func:`_test_module`)."""

    members: np.ndarray  # bool over the pool's columns
    identity: float
    spread: float
    reliability: float
    independent: bool  # by the signed context
    link: np.ndarray  # every column's correlation with the module's score
    crossed: tuple[float, float] | None  # (identity, spread) without its mirror genes

    @property
    def set_aside(self) -> bool:
        return self.independent or self.crossed is not None

    @property
    def owned(self) -> np.ndarray:
        """Its genes and those that go up *or* down with it (a batch shifts some each way)."""
        return self.members | (np.abs(self.link) >= LINK_CORRELATION)


def _mutual_crossings(
    tested: list[_ModuleTest], Z: np.ndarray, is_candidate: np.ndarray, seed: int
) -> list[_ModuleTest]:
    """The modules' tests, with the ones crossed only once their mirror genes are left out
    (:func:`_test_module`) kept as crossed only when the candidate genes outside every crossed
    programme still have cell structure. Crossings are mutual -- two cell types in two batches:
    each type's module is crossed with the batch, and the batch with the types -- and with
    both set aside no structure would be left to build a cell graph on; then none of them is
    (the signed tests decide, as when a module has no mirror)."""
    if all(t.crossed is None for t in tested):
        return tested
    owned = np.zeros(Z.shape[1], dtype=bool)
    for t in tested:
        if t.set_aside:
            owned |= t.owned
    if _has_structure(Z[:, is_candidate & ~owned], seed):
        return tested
    return [t._replace(crossed=None) for t in tested]


#: Columns per block of :func:`_correlation_distances` (bounds its temporary).
_DISTANCE_BLOCK = 512


def _correlation_distances(Z: np.ndarray) -> np.ndarray:
    """Condensed correlation distances ``1 - corr`` between the columns of ``Z`` (scipy's
    ``pdist(Z.T, "correlation")`` to rounding), by blocks of matrix products (BLAS) instead of
    scipy's pair-by-pair loop; memory: the condensed vector and one block."""
    C = Z - Z.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", C, C))
    inv = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    m = C.shape[1]
    out = np.empty(m * (m - 1) // 2)
    pos = 0
    for a in range(0, m, _DISTANCE_BLOCK):
        b = min(m, a + _DISTANCE_BLOCK)
        block = (C[:, a:b].T @ C[:, a:]) * inv[a:b, None] * inv[None, a:]
        for r in range(b - a):
            row = block[r, r + 1 :]
            out[pos : pos + row.size] = 1.0 - row
            pos += row.size
    return np.clip(out, 0.0, 2.0)


def _top_components(C: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Scores on the top ``k`` principal components of the centred columns of ``C``
    (randomized range finder with two power iterations; seeded)."""
    k = min(k, C.shape[1], C.shape[0])
    rng = np.random.default_rng(seed)
    Y = C @ rng.standard_normal((C.shape[1], k + 10))
    for _ in range(2):
        Y = C @ (C.T @ np.linalg.qr(Y)[0])
    Q = np.linalg.qr(Y)[0]
    U, S, _ = np.linalg.svd(Q.T @ C, full_matrices=False)
    return (Q @ U[:, :k]) * S[:k]


def _test_module(Z: np.ndarray, members: np.ndarray, seed: int) -> _ModuleTest:
    """One module's test (module docstring); ``crossed``: (identity fraction, spread) of its
    test on the context without its mirror genes when that test finds it independent and the
    signed one does not, else None."""
    score = Z[:, members].mean(axis=1)
    sd = score.std()
    link = np.zeros(Z.shape[1])
    if sd <= 0:
        return _ModuleTest(members, 0.0, 0.0, 0.0, False, link, None)
    zs = (score - score.mean()) / sd
    link = (Z * zs[:, None]).mean(axis=0)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(np.flatnonzero(members))
    half = idx.size // 2
    rho = np.corrcoef(Z[:, idx[:half]].mean(axis=1), Z[:, idx[half:]].mean(axis=1))[0, 1]
    reliability = float(max(0.0, 2 * rho / (1 + rho))) if rho > -1 else 0.0
    context = ~members & (link < LINK_CORRELATION)
    if context.sum() < 2 or reliability <= 0:
        return _ModuleTest(members, 0.0, 0.0, reliability, False, link, None)
    identity, spread = _split_by_context(Z[:, context], zs, reliability, seed)
    independent = identity < IDENTITY_FRACTION and spread >= MIN_SPREAD
    mirror = ~members & (link <= -LINK_CORRELATION)
    if not independent and mirror.any():
        # Genes that go *down* with the module are in its context, and may be its own other
        # half (a batch moves genes both ways: the context's groups then follow the batch and
        # it reads as identity) or other cell types' genes (a group's module is low where
        # they are high). Their part that the module's score predicts is left out: a batch's
        # down genes are then noise, other types' genes still tell the types apart (a group's
        # cells sit apart from every other type's). The module is crossed with the rest only
        # when that context still has cell groups: with no structure left (two cell types,
        # nothing else) there is nothing to be crossed with.
        C = np.hstack([Z[:, ~members & ~mirror & (link < LINK_CORRELATION)],
                       Z[:, mirror] - np.outer(zs, link[mirror])])  # fmt: skip
        alt = _split_by_context(C, zs, reliability, seed)
        if alt[0] < IDENTITY_FRACTION and alt[1] >= MIN_SPREAD and _has_structure(C, seed):
            return _ModuleTest(members, identity, spread, reliability, False, link, alt)
    return _ModuleTest(members, identity, spread, reliability, independent, link, None)


def _split_by_context(C: np.ndarray, zs: np.ndarray, signal: float, seed: int):
    """(identity fraction, spread) of a module's standardised score ``zs`` (signal variance
    ``signal``) over the k-means groups of the identity context ``C`` (cells x genes)."""
    P = _top_components(C - C.mean(axis=0), CONTEXT_PCS, seed)
    groups = _kmeans(P, CONTEXT_GROUPS, seed)
    noise = 1.0 - signal  # zs has variance 1
    between = 0.0
    v = []
    for g in np.unique(groups):
        x = zs[groups == g]
        between += x.size * x.mean() ** 2
        v.append(max(0.0, x.size * (x.var() - noise)))
    between /= zs.size
    within = np.asarray(v)
    identity = float(min(1.0, between / signal))
    spread = float(within.sum() ** 2 / (within * within).sum()) if within.sum() > 0 else 0.0
    return identity, spread


#: Leading components of two random halves of a context's genes compared by
#: :func:`_has_structure`, and the canonical correlation that counts as shared structure
#: (noise gives ~0.1 on a few thousand cells, cell types more than 0.9; one shared axis
#: appears in residuals without any cell type -- 0.84-0.97 in simulated Poisson counts of one
#: type -- so two are needed: cell types, at least three of them).
STRUCTURE_PCS = 5
STRUCTURE_CORRELATION = 0.5


def _has_structure(C: np.ndarray, seed: int) -> bool:
    """Whether the genes of ``C`` share cell structure beyond noise: the second canonical
    correlation between the leading components of two random halves of its genes."""
    rng = np.random.default_rng(seed)
    cols = rng.permutation(C.shape[1])
    a, b = C[:, cols[: cols.size // 2]], C[:, cols[cols.size // 2 :]]
    if min(a.shape[1], b.shape[1]) < 2:
        return False
    Qa = np.linalg.qr(_top_components(a - a.mean(axis=0), STRUCTURE_PCS, seed))[0]
    Qb = np.linalg.qr(_top_components(b - b.mean(axis=0), STRUCTURE_PCS, seed))[0]
    shared = np.linalg.svd(Qa.T @ Qb, compute_uv=False)
    return bool(shared.size > 1 and shared[1] >= STRUCTURE_CORRELATION)


def nuisance_shares(order: np.ndarray, masks: dict[str, np.ndarray], *, top: int) -> dict:
    """Fraction of a list's ``top`` genes (``order``: gene indices best first) in each
    programme, and in any of them (``"any"``)."""
    head = np.asarray(order[:top], dtype=np.int64)
    out = {name: float(mask[head].mean()) for name, mask in masks.items()} if head.size else {}
    if masks and head.size:
        union = np.zeros_like(next(iter(masks.values())))
        for mask in masks.values():
            union |= mask
        out["any"] = float(union[head].mean())
    return out


#: Cells needed before programmes are looked for in the data (fewer: named programmes only).
MIN_CELLS = 500


def nuisance_top(n_genes: int) -> int:
    """The head of a list whose nuisance share is reported: 500 genes, or a tenth of the
    genes when there are fewer than 5,000 (at least 20)."""
    return int(min(500, max(20, n_genes // 10), n_genes))


def list_nuisance(expression: Expression, lists, *, seed: int = 0) -> list[dict]:
    """How much of every list's top falls in nuisance programmes.

    Named programmes (:func:`named_programmes`) always; on single-cell data (counts, or
    log-normalised counts, of at least :data:`MIN_CELLS` cells) also the identity-independent
    programmes found among the union of the lists' tops (:func:`independent_programmes`).

    Parameters
    ----------
    expression : Expression
    lists : sequence of Ranking
        Over ``expression.genes`` (any order).
    seed : int

    Returns
    -------
    list of dict, one per list
        ``top`` (genes looked at), ``shares`` (programme -> fraction of the top), ``share``
        (fraction in any programme), ``head_share`` (the same in the first fifth of the top:
        a list that ranks a programme *first*), ``found`` (genes of each programme found in
        the data, by id: the module and the genes of the tops that co-vary with it).
    """
    from kofs.errors import InputError

    genes = expression.genes
    index = {g: i for i, g in enumerate(genes)}
    top = nuisance_top(len(genes))
    head = max(1, top // 5)
    tops = [np.array([index[g] for g in r.top(top)], dtype=np.int64) for r in lists]
    masks = dict(named_programmes(expression))
    found_ids: dict[str, list[str]] = {}
    if (
        tops
        and expression.n_samples >= MIN_CELLS
        and (expression.is_sparse or expression.is_chunked)
    ):
        from kofs._compute.counts import counts_view  # the count kernels: single-cell data only

        try:
            counts = counts_view(expression.values, where=expression.source)
        except InputError:
            counts = None
        if counts is not None:
            candidates = np.unique(np.concatenate([t[:head] for t in tops]))
            extend = np.unique(np.concatenate(tops))
            found = independent_programmes(counts, candidates, seed=seed, extend=extend)
            for k, prog in enumerate((p for p in found if p.independent), start=1):
                mask = np.zeros(len(genes), dtype=bool)
                mask[prog.associated] = True
                masks[f"independent_{k}"] = mask
                found_ids[f"independent_{k}"] = [genes[g] for g in np.flatnonzero(mask)]
    out = []
    for t in tops:
        shares = nuisance_shares(t, masks, top=top)
        first = nuisance_shares(t, masks, top=head)
        out.append(
            {
                "top": int(t.size),
                "shares": {k: round(v, 4) for k, v in shares.items() if k != "any"},
                "share": round(shares.get("any", 0.0), 4),
                "head_share": round(first.get("any", 0.0), 4),
                "found": found_ids,
            }
        )
    return out
