"""Gene interactions: an edge list, a Cytoscape SIF, STRING links (with aliases) or BioGRID
TAB2/TAB3.

List: PPI-PROP (relevance propagation over the interaction network, eq. 6.14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kofs.context import Context, ListTemplate
from kofs.options import opt
from kofs.sources._common import START, NetworkData, initial_relevance, network_relation
from kofs.sources._spec import SourceSpec
from kofs.types import FeatureRelation, RankerInputs


@dataclass(frozen=True)
class InteractionOptions:
    interactions: str | None = opt(
        "interactions",
        "path",
        help="Gene interactions: edge list, Cytoscape SIF, STRING links, BioGRID TAB2/TAB3, or "
        "KEGG KGML relations (.xml).",
    )
    interactions_format: str = opt(
        "interactions_format",
        "choice",
        "auto",
        choices=("auto", "edgelist", "paired", "string", "biogrid", "sif", "kgml"),
        help="Format of --interactions (default: .sif by extension, others from the content).",
    )
    string_min_score: float | None = opt(
        "string_min_score",
        "float",
        None,
        low=0,
        high=1000,
        help="STRING protein.links only: keep combined_score >= this (0-1000; default 400); "
        "for other formats use --interaction-min-weight.",
    )
    string_aliases: str | None = opt(
        "string_aliases", "path", help="STRING protein.aliases/info file (ENSP -> gene)."
    )
    biogrid_taxon: str | None = opt("biogrid_taxon", help="BioGRID organism (NCBI taxon id).")
    biogrid_system_type: str = opt(
        "biogrid_system_type",
        "choice",
        "physical",
        choices=("physical", "genetic", "all"),
        help="BioGRID experimental system type kept.",
    )
    interaction_min_weight: float = opt(
        "interaction_min_weight", "float", 0.0, low=0, help="Drop interactions lighter than this."
    )
    undirected: bool = opt(
        "undirected",
        "bool",
        False,
        help="Treat directed interactions (KGML, OmniPath) as undirected.",
    )


def _read(o: InteractionOptions) -> NetworkData | None:
    import math

    from kofs.errors import InputError, ParameterError

    if not math.isfinite(o.interaction_min_weight):
        raise ParameterError(
            f"--interaction-min-weight {o.interaction_min_weight}: expected a finite number >= 0"
        )
    if o.interactions is None:
        return None
    from kofs.io.interactions import read_interactions
    from kofs.io.sniff import wrong_option

    try:
        inter = read_interactions(
            o.interactions,
            o.interactions_format,
            string_min_score=o.string_min_score,
            string_aliases=o.string_aliases,
            biogrid_taxon=o.biogrid_taxon,
            biogrid_system_type=None if o.biogrid_system_type == "all" else o.biogrid_system_type,
        )
    except InputError as exc:  # a table given to the wrong option says which one it needs
        raise wrong_option(o.interactions, "interactions", exc) from None
    return NetworkData(
        inter, {"min_weight": o.interaction_min_weight, "ignore_direction": o.undirected}
    )


def interaction_relation(ctx: Context) -> FeatureRelation:
    """The gene graph of the interactions (matched to the matrix, with coverage)."""
    return network_relation(ctx, "interactions", "ppi_relation")


def _lists(data: NetworkData) -> list[ListTemplate]:
    return [
        ListTemplate(
            "PPI-PROP",
            "relevance-propagation",
            ("interactions", START),
            lambda ctx: RankerInputs(
                relation=interaction_relation(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the interaction network (eq. 6.14)",
            order=100,
        )
    ]


def _evidence(ctx: Context):
    from kofs.knowledge.evidence import EvidenceSource

    return [EvidenceSource(40.0, "interactors", interaction_relation(ctx))]


def _releases(data: NetworkData) -> dict[str, Any]:
    import numpy as np

    i = data.interactions
    return {
        "interactions": {
            "edges": len(i.source),
            "directed": int(np.sum(i.directed)),
            "namespace": i.namespace,
        }
    }


SOURCE = SourceSpec(
    name="interactions",
    summary="gene interactions (edge list, STRING, BioGRID): PPI-PROP",
    options=InteractionOptions,
    read=_read,
    lists=_lists,
    provides=lambda data: ("interactions",),
    evidence=_evidence,
    releases=_releases,
    id_file="interactions",
)
