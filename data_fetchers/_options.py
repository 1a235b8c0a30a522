"""The options of ``kofs fetch``, declared once (:func:`kofs.options.opt`): the command's options
are generated from :class:`FetchOptions`, and :func:`fetch_source` runs them (the command's one
library call, reachable from Python)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kofs.errors import ParameterError
from kofs.options import build, opt

from ._fetch import FetchResult, fetch
from ._registry import SOURCES

__all__ = ["FetchOptions", "SOURCE_OPTIONS", "fetch_source"]

#: the options that are parameters of a source (:class:`SourceParam`; ``kofs fetch list``)
SOURCE_OPTIONS = ("species", "taxon", "organism", "version", "release", "url", "platform", "kgml")


@dataclass(frozen=True)
class FetchOptions:
    """How to fetch a source: its parameters (each source takes some, see ``kofs fetch
    list``), the cache, the mirror, checksums and the network timeout."""

    species: str | None = opt(
        "species", help="goa: EBI species name (human); string: NCBI taxon (9606)."
    )
    taxon: str | None = opt("taxon", help="gene2go: keep the rows of this NCBI taxon (9606).")
    organism: str | None = opt("organism", help="kegg-pathways: KEGG organism code (hsa).")
    version: str | None = opt("version", help="string: STRING version (default 12.0).")
    release: str | None = opt(
        "release", help="go/go-basic: YYYY-MM-DD; goa: number; biogrid: 4.4.230."
    )
    url: str | None = opt("url", help="gmt: URL (or local path) of the GMT file.")
    platform: str | None = opt("platform", help="geo: platform of a multi-platform series (GPL96).")
    kgml: bool = opt(
        "kgml", "bool", False, help="kegg-pathways: also fetch the KGML of every pathway."
    )
    cache: str | None = opt(
        "cache",
        "path",
        folder=True,
        help="Cache root (default: $KOFS_CACHE, else the user cache folder/kofs).",
    )
    source_url: str | None = opt(
        "source_url",
        help="Replace the upstream base URL (mirror, local copy); a single-file source takes "
        "the file's own URL.",
    )
    offline: bool = opt("offline", "bool", False, help="Use only the cache; list what is missing.")
    force: bool = opt("force", "bool", False, help="Download again even when cached.")
    sha256: str | None = opt("sha256", help="Expected sha256 of the main file.")
    md5: str | None = opt("md5", help="Expected md5 of the main file.")
    timeout: float = opt("timeout", "float", 60.0, help="Seconds for connecting and for each read.")
    json: bool = opt("json", "bool", False, help="`list`: print the sources as JSON.")


def fetch_source(
    source: str,
    accession: str | None = None,
    options: FetchOptions | Mapping[str, Any] | None = None,
) -> FetchResult:
    """Download (or find in the cache) ``source`` with ``options`` (a :class:`FetchOptions`
    or a mapping of its options by name, checked by their declarations); ``accession`` is the
    value of the source's positional parameter (``geo``'s series, e.g. ``GSE2604``).

    Raises
    ------
    ParameterError
        An unknown source or option, a source that takes no ``accession``, a bad value.
    InputError
        A download or checksum failure, or (``offline``) files missing from the cache.
    """
    if isinstance(options, FetchOptions):
        o = options
    else:
        given = {str(k).replace("-", "_"): v for k, v in (options or {}).items()}
        known = {f for f in FetchOptions.__dataclass_fields__}
        unknown = sorted(set(given) - known)
        if unknown:
            from kofs.registry import unknown_message

            raise ParameterError(unknown_message("fetch option", unknown[0], sorted(known)))
        o = build(FetchOptions, given)
    params: dict[str, object] = {
        k: getattr(o, k) for k in SOURCE_OPTIONS if k != "kgml" and getattr(o, k) is not None
    }
    if o.kgml:
        params["kgml"] = True
    spec = SOURCES.get(source)
    if accession is not None:
        if spec is not None and spec.positional is None:
            raise ParameterError(
                f"source {source!r} takes no argument (got {accession!r}); see `kofs fetch list`"
            )
        params[spec.positional if spec is not None and spec.positional else "accession"] = accession
    return fetch(
        source,
        params=params,
        cache=o.cache,
        source_url=o.source_url,
        force=o.force,
        offline=o.offline,
        sha256=o.sha256,
        md5=o.md5,
        timeout=o.timeout,
    )
