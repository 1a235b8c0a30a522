"""Defaults versions (as scanpy's presets): a config names the defaults it was written for
(``defaults: "6"``); :data:`DEFAULTS_VERSION` is the newest, used when the key is absent. A later
release can improve a default by adding a version to :data:`PRESETS` without changing what an
old config means; the manifest records the version used."""

from __future__ import annotations

from typing import Any

from kofs.errors import ParameterError

#: The newest defaults version (used when a config has no ``defaults`` key).
DEFAULTS_VERSION = "6"


#: The default plan of versions 2 to 4 on dense matrices (SPEC phi1 out; see PRESETS).
_PLAN_2 = (
    "variance",
    "fisher",
    "laplacian",
    "spec-phi2",
    "spec-phi3",
    "relevance-vote",
    "relevance-propagation",
)


#: Versions whose default aggregator, ``reliability``, was replaced in version 5 (pre-1.0: no
#: shim): a config naming one of them is refused with this reason.
RETIRED = {
    v: "its default fusion, 'reliability', was replaced by 'posterior' in defaults version 5 "
    '(docs/aggregation.md, \'Defaults\'); use defaults: "6", or "1" for the book\'s EM'
    for v in ("2", "3", "4")
}


#: Per defaults version: option values that differ from the declared defaults, and the rankers
#: of the default plan (``default_plan``: tried in this order, each where its inputs allow;
#: ``default_plan_labels``: the plan of a dense matrix with sample labels, when it differs;
#: ``default_plan_sparse``: the plan of a sparse or chunked matrix, when it differs;
#: ``default_plan_sparse_labels``: the same with sample labels, when it differs;
#: ``aggregate_params``: aggregator parameters by method, under the parameters given).
PRESETS: dict[str, dict[str, Any]] = {
    "1": {
        "aggregate": "em",
        "default_plan": (
            "variance",
            "fisher",
            "laplacian",
            "spec-phi1",
            "spec-phi2",
            "spec-phi3",
            "relevance-vote",
            "relevance-propagation",
        ),
    },
    # Version 5 (issues 20 and 21; evidence in docs/aggregation.md "Defaults",
    # docs/results-all.md and docs/single-cell.md "The single-cell plan"): the posterior
    # aggregator -- data lists are the evidence (a permutation-consistent rank model with
    # learned reliabilities), knowledge lists a prior whose strength is learned, a posterior /
    # local fdr / q-value per gene. Dense (bulk) matrices keep version 4's plan (SPEC phi1 out:
    # it ranks flat housekeeping genes first, RPL41/RPL37A/RPS18 in the EM top 20 on ALL).
    # Single-cell (sparse or chunked) matrices get one list each. Without labels: hotspot, the
    # cross-fitted count-null graph autocorrelation on cell graphs that leave nuisance
    # programmes out -- on Splatter-like simulations it beat every scanpy HVG flavour in
    # precision and Leiden ARI, while the graph lists of version 4 fell below them and their
    # fusion weighted a nuisance-ranking list most. With labels: the Fisher score alone
    # (precision at k at least scanpy's rank_genes_groups t-test's; per-group marker tables are
    # written beside it), so no unsupervised list is computed and then weighted 0.
    "5": {
        "default_plan": _PLAN_2,
        "default_plan_sparse": ("hotspot",),
        "default_plan_sparse_labels": ("fisher",),
    },
    # Version 6 (issue 20; evidence in docs/aggregation.md "Labels: the F test's null"): the
    # Fisher list is calibrated (the fusion reads its F-test p-values, the two-groups model
    # with the theoretical null), and with labels a dense matrix gets Fisher alone among the
    # data lists (knowledge lists as before): on simulated 10 vs 10 designs the other lists
    # (label-association statistics without a known null, sharing Fisher's noise) made a
    # relevant class of their own in the joint fit (sparse design: FDP 0.29 at q <= 0.10; dense:
    # 289 calls in one seed of eight, none in the others), where Fisher alone gives FDP 0.09 and
    # 0.07 as a t-test with Benjamini-Hochberg does; on ALL they added nothing to Fisher
    # (docs/results-all.md).
    "6": {
        "default_plan": _PLAN_2,
        "default_plan_labels": ("fisher", "relevance-vote", "relevance-propagation"),
        "default_plan_sparse": ("hotspot",),
        "default_plan_sparse_labels": ("fisher",),
    },
}


def check_version(version: str, where: str | None = None) -> None:
    """Refuse an unknown or retired defaults version with the reason."""
    if version in RETIRED:
        raise ParameterError(
            f"defaults version {version!r} is retired: {RETIRED[version]}", path=where
        )
    if version not in PRESETS:
        raise ParameterError(
            f"defaults version {version!r} is unknown; known: {', '.join(PRESETS)}", path=where
        )


def aggregate_defaults(version: str, method: str) -> dict[str, Any]:
    """Parameters of aggregator ``method`` that defaults ``version`` sets (given parameters
    override them)."""
    return dict(PRESETS[version].get("aggregate_params", {}).get(method, {}))


def default_plan(version: str, *, sparse: bool = False, labels: bool = False) -> tuple[str, ...]:
    """The rankers of the default plan of defaults ``version`` (``sparse``: the matrix is
    sparse or chunked, as single-cell counts are; ``labels``: sample labels are given).
    A version without a plan for that case uses the next more general one:
    ``default_plan_sparse_labels`` -> ``default_plan_sparse`` -> ``default_plan``, and
    ``default_plan_labels`` -> ``default_plan``."""
    preset = PRESETS[version]
    keys = ["default_plan_labels"] * labels + ["default_plan"]
    if sparse:
        keys = ["default_plan_sparse_labels"] * labels + ["default_plan_sparse", "default_plan"]
    key = next(k for k in keys if k in preset)
    return tuple(preset[key])
