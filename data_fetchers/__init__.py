"""Download, cache and verify the public knowledge sources kofs reads (also ``kofs fetch``).

>>> from data_fetchers import fetch
>>> fetch("go-basic").paths                                   # doctest: +SKIP
[PosixPath('/home/me/.cache/kofs/go-basic/current/go-basic.obo')]
>>> fetch("geo", params={"accession": "GSE2604"}).paths        # doctest: +SKIP

Sources (:data:`SOURCES`, one :class:`SourceSpec` each): ``go-basic``, ``go``, ``goa``,
``gene2go``, ``kegg-pathways``, ``gmt``, ``string``, ``biogrid``, ``geo``. Files are cached
under ``<cache>/<source>/<release>/`` with a ``<file>.source.json`` (URL, date, size, sha256,
md5, checksum verified) beside each; see ``docs/fetch.md``.
"""

from data_fetchers._archive import safe_extract
from data_fetchers._cache import default_cache_dir, read_source_json
from data_fetchers._fetch import FetchResult, fetch, list_sources
from data_fetchers._options import FetchOptions, fetch_source
from data_fetchers._registry import SOURCES, Remote, SourceParam, SourceSpec

# each import registers its sources
from data_fetchers import go, kegg, gmt, interactions, geo  # noqa: E402,F401  isort: skip
from data_fetchers.geo import parse_series_matrix  # noqa: E402

__all__ = [
    "SOURCES",
    "FetchOptions",
    "FetchResult",
    "Remote",
    "SourceParam",
    "SourceSpec",
    "default_cache_dir",
    "fetch",
    "fetch_source",
    "list_sources",
    "parse_series_matrix",
    "read_source_json",
    "safe_extract",
]
