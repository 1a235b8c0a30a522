"""Term relevance from a user table (``--term-relevance``): the relevance of each GO term or
pathway used by the voting lists and the start of propagation, instead of learning it."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from kofs.errors import InputError
from kofs.options import opt
from kofs.sources._spec import SourceSpec


@dataclass(frozen=True)
class TermRelevanceOptions:
    term_relevance: str | None = opt(
        "term_relevance",
        "path",
        stdin=True,
        help="Term relevance table (term, value) for the voting lists.",
    )


def read_term_relevance(path: str | os.PathLike) -> dict[str, float]:
    """A two-column table ``term``, ``relevance`` (header optional; GO ids or pathway ids). A
    term listed twice must have one value (InputError naming both lines otherwise)."""
    from kofs.io._table import read_table

    df = read_table(path, comment="#", header=False)
    if df.shape[1] < 2:
        raise InputError("term relevance needs two columns: term id and relevance", path=path)
    lines = df.attrs["lines"]
    out: dict[str, float] = {}
    first: dict[str, int] = {}
    for k, (term, value) in enumerate(zip(df.iloc[:, 0], df.iloc[:, 1], strict=True)):
        try:
            v = float(value)
        except ValueError:
            if k == 0:  # a header line
                continue
            raise InputError(
                f"relevance {value!r} is not a number", path=path, line=int(lines[k]), column=2
            ) from None
        if not np.isfinite(v):
            raise InputError(
                f"relevance {value!r} is not finite", path=path, line=int(lines[k]), column=2
            )
        if term in out and out[term] != v:
            raise InputError(
                f"term {term!r} has two relevance values: {df.iloc[first[term], 1]} (line "
                f"{int(lines[first[term]])}) and {value}; keep one",
                path=path,
                line=int(lines[k]),
            )
        first.setdefault(term, k)
        out[term] = v
    if not out:
        raise InputError("no term relevance values found", path=path)
    return out


def _read(o: TermRelevanceOptions) -> dict[str, float] | None:
    return None if o.term_relevance is None else read_term_relevance(o.term_relevance)


SOURCE = SourceSpec(
    name="term_relevance",
    summary="relevance of GO terms / pathways from a table (instead of learning it)",
    options=TermRelevanceOptions,
    read=_read,
)
