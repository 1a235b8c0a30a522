"""Auxiliary data on the same samples (e.g. a miRNA matrix): one AUX-SPEC list per matrix
(SPEC on its sample similarity); each enters MSFS."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kofs.context import Context, ListTemplate
from kofs.errors import ParameterError
from kofs.options import opt
from kofs.sources._common import check_similarity_memory
from kofs.sources._spec import SourceSpec
from kofs.types import Expression, RankerInputs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuxOptions:
    aux: tuple[str, ...] | None = opt(
        "aux",
        "paths",
        stdin=True,
        help="Auxiliary data on the same samples (e.g. miRNA matrix); repeatable.",
    )


class _NoOrientationGuess(logging.Filter):
    """Drops read_expression's "guessed that genes are the ..." warning: auxiliary data are
    oriented by the matrix's sample ids (:func:`_same_orientation`), and the warning's advice,
    --genes-in, applies to EXPRESSION only."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("%s: guessed that genes are the")


def _read(o: AuxOptions) -> tuple[Any, ...] | None:
    if not o.aux:
        return None
    from kofs.io import expression

    quiet = _NoOrientationGuess()
    expression.log.addFilter(quiet)
    try:
        return tuple(expression.read_expression(p) for p in o.aux)
    finally:
        expression.log.removeFilter(quiet)


def _same_orientation(aux: Any, samples: Sequence[str]) -> Any:
    """``aux`` with the matrix's samples as its samples: transposed when they are its genes
    (read without knowing the samples, a file of fewer features than samples was taken for
    samples x features by its longer axis)."""
    wanted = set(samples)
    if wanted <= set(aux.samples) or not wanted <= set(aux.genes) or aux.is_chunked:
        return aux
    log.info("auxiliary data %s: its columns are the features (read transposed)", aux.source)
    values = aux.values.T if aux.is_sparse else np.ascontiguousarray(aux.values.T)
    return Expression(values, aux.samples, aux.genes, source=aux.source)


def aux_similarity(ctx: Context, i: int) -> Any:
    from kofs.knowledge.similarity import sample_similarity

    def build():
        aux = _same_orientation(ctx.source("aux")[i], ctx.expression.samples)
        pos = {s: j for j, s in enumerate(aux.samples)}
        missing = [s for s in ctx.expression.samples if s not in pos]
        if missing:
            raise ParameterError(
                f"auxiliary data {aux.source}: {len(missing)} samples of the expression matrix "
                f"are missing (e.g. {', '.join(missing[:3])}); it must measure the same samples"
            )
        aligned = aux.subset_samples([pos[s] for s in ctx.expression.samples])
        check_similarity_memory(ctx, f"auxiliary data {aux.source}")
        return sample_similarity(aligned, "auto")

    return ctx.cached(f"aux{i}", build)


def _lists(data: tuple[Any, ...] | None) -> list[ListTemplate]:
    n = len(data) if data else 1
    return [
        ListTemplate(
            f"AUX{i + 1}-SPEC" if n > 1 else "AUX-SPEC",
            "spec-phi2",
            ("aux",),
            lambda ctx, i=i: RankerInputs(similarity=aux_similarity(ctx, i)),  # type: ignore[misc]
            "SPEC on the auxiliary data's sample similarity",
            order=110 + i,
        )
        for i in range(n)
    ]


SOURCE = SourceSpec(
    name="aux",
    summary="auxiliary data on the same samples: AUX-SPEC",
    options=AuxOptions,
    read=_read,
    lists=_lists,
    provides=lambda data: ("aux",),
    msfs=lambda ctx: [aux_similarity(ctx, i) for i in range(len(ctx.source("aux")))],
    msfs_order=30,
)
