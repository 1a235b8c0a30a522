"""Which lists a run builds.

- :func:`kofs_plan`: the KOFS list catalogue (book Tables 6.3/6.4): SPEC and Fisher on the
  expression data plus every list the knowledge sources contribute (:mod:`kofs.sources`),
  in the book's table order; ``lists`` chooses a subset.
- :func:`msfs_plan`: MSFS (book Alg. 9): one list, SPEC on the weighted sum of every sample
  similarity the inputs give.
- :func:`expression_plan`: single-source rankers by name, or the default plan.

Internal knowledge is built lazily, once per run, through :meth:`Context.cached`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from kofs.context import Context, ListPlan, ListTemplate
from kofs.errors import ParameterError
from kofs.knowledge.msfs import combine_similarities
from kofs.knowledge.similarity import sample_similarity
from kofs.rankers import RANKERS, applicable
from kofs.registry import unknown_message
from kofs.sources import SOURCES, KnowledgeSources
from kofs.sources._common import NO_START, START, data_similarity, has_start
from kofs.types import RankerInputs

log = logging.getLogger(__name__)

#: Lists built from the expression data (and labels) alone.
EXPRESSION_LISTS = (
    ListTemplate(
        "SPEC",
        "spec-phi2",
        ("expression",),
        lambda ctx: RankerInputs(similarity=data_similarity(ctx)),
        "SPEC phi2 on the expression's sample similarity",
        order=10,
    ),
    ListTemplate(
        "Fisher",
        "fisher",
        ("labels",),
        lambda ctx: RankerInputs(categories=ctx.categories),
        "Fisher score on the sample labels",
        order=20,
    ),
)


def catalogue(sources: KnowledgeSources) -> dict[str, ListTemplate]:
    """Name -> template of every list the catalogue has for these sources, in table order."""
    templates = sorted([*EXPRESSION_LISTS, *sources.templates()], key=lambda t: t.order)
    return {t.name: t for t in templates}


#: What a list may be built from and still be a data-only list: the matrix and its labels.
DATA_INPUTS = frozenset({"expression", "labels"})


def list_origin(name: str, sources: KnowledgeSources | None) -> tuple[str, bool] | None:
    """``(ranker, data_only)`` of a list a run builds under this name: a catalogue list
    (data-only when it needs nothing beyond :data:`DATA_INPUTS`) or a ranker of the expression
    plan (always data-only: it gets the matrix and the labels only); None for other names (an
    aggregation, a user's list)."""
    table = catalogue(sources or KnowledgeSources())
    if name in table:
        return table[name].ranker, set(table[name].needs) <= DATA_INPUTS
    if name in RANKERS:
        return name, True
    return None


#: The one list of ``--method msfs`` and its ranker.
MSFS_LIST = ("MSFS", "spec-phi2")


def param_ranker(name: str) -> str | None:
    """The ranker whose parameters ``--param NAME.KEY=VALUE`` sets: NAME itself when it is a
    ranker, else the ranker of the list of that name (a catalogue list, MSFS); None for a
    name no run builds."""
    if name == MSFS_LIST[0]:
        return MSFS_LIST[1]
    origin = list_origin(name, None)
    return None if origin is None else origin[0]


def _available(ctx: Context, sources: KnowledgeSources) -> set[str]:
    """What the lists' ``needs`` may name that this run has."""
    have = {"expression", *sources.provided()}
    if ctx.categories is not None:
        have.add("labels")
    if ctx.relevant_genes:
        have.add("relevant_genes")
    if has_start(bool(ctx.relevant_genes), set(sources.data)):
        have.add(START)
    return have


def kofs_plan(
    ctx: Context, lists: Sequence[str] | None = None, *, warn: bool = True
) -> list[ListPlan]:
    """Plans of every catalogue list the inputs allow (or the chosen ``lists``); ``warn``: say
    which given options narrow a list the plan does not build (:func:`warn_unbuilt_narrowing`;
    a rerun of a plan already warned leaves it out)."""
    sources = ctx.sources or KnowledgeSources()
    table = catalogue(sources)
    have = _available(ctx, sources)
    if lists is None:
        chosen = [t for t in table.values() if set(t.needs) <= have]
        unstarted = [t.name for t in table.values() if set(t.needs) - have == {START}]
        if unstarted and warn:
            # the network was given for them: said, not silent (it still explains genes in the
            # evidence column and counts in the prior's study-bias covariate)
            log.warning(
                "%s not built: %s; the network still explains genes (evidence) and counts in "
                "the study-bias covariate",
                " and ".join(unstarted),
                NO_START,
            )
    else:
        chosen = []
        for name in lists:
            if name not in table:
                raise ParameterError("--lists: " + unknown_message("list", name, table))
            t = table[name]
            missing = sorted(set(t.needs) - have)
            if missing == [START]:
                raise ParameterError(f"--lists {name}: {NO_START}")
            missing = [m for m in missing if m != START]  # the source first
            if missing:
                raise ParameterError(
                    f"list {name!r} needs {', '.join(m.replace('_', '-') for m in missing)} "
                    f"(give --{missing[0].replace('_', '-')})"
                )
            chosen.append(t)
    if warn:
        warn_unbuilt_narrowing(sources, {t.name for t in chosen})
    return [
        ListPlan(name=t.name, ranker=t.ranker, build_inputs=t.build, sources=t.needs)
        for t in chosen
    ]


def warn_unbuilt_narrowing(
    sources: KnowledgeSources, built: set[str], *, config: bool = False
) -> None:
    """An option that chooses the genes of one list (``--go-term-ids`` for GO-FILT), given
    while that list is not built: one warning saying so (``config``: named as the config keys
    of ``kofs reproduce``, ``go_term_ids`` and ``lists``)."""
    from kofs.options import warn_no_effect

    for spec in SOURCES:
        if spec.narrows is None or spec.name not in sources:
            continue
        for name, (flag, value) in spec.narrows(sources.data[spec.name]).items():
            if value and name not in built:
                key = flag.lstrip("-").replace("-", "_") + ":" if config else flag
                warn_no_effect(
                    [f"{key} {','.join(value)}"],
                    f"it chooses the genes of {name}, which this run does not build "
                    f"(add {name} to {'lists' if config else '--lists'})",
                )


def msfs_plan(ctx: Context, *, weights: Sequence[float] | None = None) -> list[ListPlan]:
    """MSFS (book Alg. 9): SPEC on the weighted sum of every sample similarity the inputs give
    (expression, labels S^FIS, then each source's in ``msfs_order``: auxiliary data, GO-MAH,
    Pathway-FILT)."""
    from kofs.options import options_of

    sources = ctx.sources or KnowledgeSources()
    for spec in SOURCES:
        if spec.name in sources and spec.msfs is None:
            flag = options_of(spec.options)[0].flag
            log.warning(
                "%s is not used by --method msfs (MSFS combines sample similarities; the %s "
                "source gives none): leave it out, or use --method kofs", flag, spec.name,
            )  # fmt: skip

    def build(ctx: Context) -> RankerInputs:
        parts = [data_similarity(ctx)]
        if ctx.categories is not None:
            parts.append(sample_similarity(ctx.expression, "label", categories=ctx.categories))
        for spec in sorted(SOURCES, key=lambda s: s.msfs_order):
            if spec.msfs is not None and spec.name in sources:
                parts.extend(spec.msfs(ctx))
        if weights is not None and len(weights) != len(parts):
            raise ParameterError(
                f"--msfs-weights: {len(weights)} weights for {len(parts)} similarities "
                f"({', '.join(p.name for p in parts)})"
            )
        return RankerInputs(similarity=combine_similarities(parts, weights))

    return [
        ListPlan(
            name=MSFS_LIST[0],
            ranker=MSFS_LIST[1],
            build_inputs=build,
            sources=("expression", "knowledge"),
        )
    ]


#: Rankers of a default plan that cannot rank fewer samples (their eigenvectors need them): left
#: out of the default with a warning; named by the user, they say so (an error).
DEFAULT_PLAN_MIN_SAMPLES = {"spec-phi3": 3}


def expression_plan(
    ctx: Context, rankers: Sequence[str] | None = None, *, default_plan: Sequence[str] = ()
) -> list[ListPlan]:
    """Lists from single-source rankers on the expression data (and labels if given).

    With ``rankers=None`` the rankers of ``default_plan`` whose required knowledge is
    available run (supervised ones only with labels; those that need more samples than the
    matrix has, :data:`DEFAULT_PLAN_MIN_SAMPLES`, are left out with a warning); a ranker asked
    for by name always runs (the runner explains what it lacks).
    """
    base = RankerInputs(categories=ctx.categories, similarity=ctx.similarity)
    names = list(default_plan) if rankers is None else list(rankers)
    plans = []
    n = ctx.expression.n_samples
    for name in names:
        spec = RANKERS.get(name)
        if rankers is None and not applicable(spec, base):
            continue
        if rankers is None and n < DEFAULT_PLAN_MIN_SAMPLES.get(name, 0):
            log.warning(
                "%s left out of the default rankers: it needs at least %d samples, the matrix "
                "has %d",
                name, DEFAULT_PLAN_MIN_SAMPLES[name], n,
            )  # fmt: skip
            continue
        plans.append(
            ListPlan(
                name=name,
                ranker=name,
                build_inputs=lambda ctx, b=base: b,  # type: ignore[misc]
                sources=("expression", *(("labels",) if spec.supervised else ())),
            )
        )
    return plans


#: Catalogue lists built from the known relevant genes: "always" (their definition needs them),
#: "start" (propagation starts from them) or "unless_table" (term relevance M_rel/M_all learned
#: from them unless a --term-relevance table is given).
SEEDED_LISTS = {
    "GO-CAN-MAH": "always",
    "GO-REL-PROP": "start",
    "PPI-PROP": "start",
    "GRAPH-PROP": "start",
    "GO-REL-VOTE": "unless_table",
    "Pathway-REL-VOTE": "unless_table",
}


def built_from(ctx: Context, list_names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The genes each catalogue list was built from (lists built from none left out): the known
    relevant genes of a seeded list, the gene set a FILT list's similarity is built on
    (:attr:`ListTemplate.built_on`).

    A list seeded by the relevant genes (GO-CAN-MAH terms, the start of propagation, term
    relevance M_rel/M_all) must never be scored on them when its reliability is learned; nor a
    FILT list on the genes of its similarity, which align with its leading directions even on
    noise (a matrix of i.i.d. values with GO, KEGG and STRING: Pathway-FILT ranked the KEGG
    genes first, AUC 0.83-0.85, and the prior's KEGG membership agreed, so thousands of genes
    were called in 3 of 60 such runs; docs/benchmarks.md, "Null calibration on real data").
    """
    table = ctx.source("term_relevance") is not None
    templates = catalogue(ctx.sources or KnowledgeSources())
    out = {}
    for name in list_names:
        template = templates.get(name)
        if template is not None and template.built_on is not None:
            mask = template.built_on(ctx)
            out[name] = tuple(ctx.expression.genes[i] for i in np.flatnonzero(mask))
            continue
        how = SEEDED_LISTS.get(name)
        if not ctx.relevant_genes or how is None or (how == "unless_table" and table):
            continue
        out[name] = tuple(ctx.relevant_genes)
    return out


def filter_built(name: str, sources: KnowledgeSources | None) -> bool:
    """Whether the catalogue list ``name`` is built on a gene set (a FILT list: its folds
    leave genes out of the similarity, :meth:`Context.without_filter_genes`, instead of out
    of the known genes)."""
    template = catalogue(sources or KnowledgeSources()).get(name)
    return template is not None and template.built_on is not None
