"""Run a source spec: cache lookup, downloads, checksum files, expansion, post-processing."""

from __future__ import annotations

import logging
import os
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from kofs.errors import InputError, ParameterError

from ._cache import (
    default_cache_dir,
    ensure_dir,
    file_lock,
    is_cached,
    read_source_json,
    safe_component,
    write_source_json,
)
from ._download import Checksum, NotFoundError, download, fetch_text, parse_checksum
from ._registry import SOURCES, FetchContext, Remote, SourceSpec, get_source, join_url, render

log = logging.getLogger(__name__)

__all__ = ["fetch", "FetchResult", "list_sources", "normalise_url"]

_SCHEMES = ("http", "https", "ftp", "file")
_HEX = {"sha256": re.compile(r"^[0-9a-fA-F]{64}$"), "md5": re.compile(r"^[0-9a-fA-F]{32}$")}


@dataclass(frozen=True)
class FetchResult:
    """Outcome of :func:`fetch`.

    Attributes
    ----------
    paths
        The files (or folders) to use, in the order the source documents; printed by the CLI.
    folder
        The cache folder of this source and release.
    downloaded, cached
        Raw files downloaded in this call / found in the cache.
    """

    paths: list[Path]
    folder: Path
    downloaded: list[Path] = field(default_factory=list)
    cached: list[Path] = field(default_factory=list)


def normalise_url(url: str, *, option: str = "--source-url") -> str:
    """A URL with a supported scheme; a local path becomes a ``file://`` URL."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if "://" not in url:
        p = Path(url).expanduser()
        if not p.exists():
            raise ParameterError(
                f"{option} {url!r} is neither a URL (http://, https://, ftp://, file://) nor an "
                "existing local path"
            )
        uri = p.resolve().as_uri()
        return uri + "/" if p.is_dir() else uri
    if scheme not in _SCHEMES:
        raise ParameterError(
            f"{option} {url!r}: scheme {scheme!r} is not one of {', '.join(_SCHEMES)}"
        )
    return url


def _user_checksums(sha256: str | None, md5: str | None) -> tuple[Checksum, ...]:
    out = []
    for algo, value in (("sha256", sha256), ("md5", md5)):
        if value is None:
            continue
        if not _HEX[algo].match(value):
            raise ParameterError(
                f"--{algo} {value!r} is not a {algo} hex digest "
                f"({64 if algo == 'sha256' else 32} hex digits)"
            )
        out.append(Checksum(algo, value.lower(), f"--{algo}"))
    return tuple(out)


class _Runner:
    """Downloads the remotes of one fetch call into its folder."""

    def __init__(self, spec, folder, base, direct, *, force, offline, timeout, user_sums, polite):
        self.spec, self.folder, self.base, self.direct = spec, folder, base, direct
        self.force, self.offline, self.timeout = force, offline, timeout
        self.user_sums, self.polite = user_sums, polite
        self.downloaded: list[Path] = []
        self.cached: list[Path] = []
        self.missing: list[tuple[Path, str]] = []
        self._last = 0.0
        self._primary_done = False

    def url(self, remote: Remote) -> str:
        return self.direct or join_url(self.base, remote.path)

    def checksum_url(self, remote: Remote, rel: str) -> str:
        if self.direct:
            return urllib.parse.urljoin(self.direct, rel.rsplit("/", 1)[-1])
        return join_url(self.base, rel)

    def _wait(self) -> None:
        if self.polite and self.spec.request_interval:
            pause = self._last + self.spec.request_interval - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            self._last = time.monotonic()

    def _published_checksum(self, remote: Remote) -> tuple[Checksum, ...]:
        if remote.checksum is None:
            return ()
        algo, rel = remote.checksum
        curl = self.checksum_url(remote, rel)
        try:
            self._wait()
            text = fetch_text(curl, timeout=self.timeout)
        except InputError as exc:
            log.warning(
                "no published checksum for %s (%s); the file is not verified",
                remote.name,
                exc.message,
            )
            return ()
        digest = parse_checksum(text, algorithm=algo, filename=remote.path.rsplit("/", 1)[-1])
        if digest is None:
            log.warning("no %s digest found in %s; the file is not verified", algo, curl)
            return ()
        return (Checksum(algo, digest, curl),)

    def _hit(self, dest: Path, remote: Remote, ctx: FetchContext, user) -> Path:
        record = read_source_json(dest) or {}
        for c in user:
            if record.get(c.algorithm) != c.value:
                raise InputError(
                    f"cached file has {c.algorithm} {record.get(c.algorithm)}, not the "
                    f"expected {c.value} ({c.origin}); run with --force to download it again",
                    path=dest,
                )
        log.info("cached: %s", dest)
        self.cached.append(dest)
        ctx.files[remote.name] = dest
        return dest

    def get(self, remote: Remote, ctx: FetchContext, params: dict) -> Path | None:
        parts = [safe_component(c, what="file name") for c in remote.name.split("/")]
        dest = self.folder.joinpath(*parts)
        name = dest.name
        primary = not self._primary_done
        self._primary_done = True
        user = self.user_sums if primary else ()
        if is_cached(dest) and not self.force:
            return self._hit(dest, remote, ctx, user)
        url = self.url(remote)
        if self.offline:
            if remote.optional:  # may have been missing upstream (404) when fetched online
                log.warning("not in the cache (optional, skipped): %s", dest)
            else:
                self.missing.append((dest, url))
            return None
        ensure_dir(dest.parent)
        with file_lock(dest):
            if is_cached(dest) and not self.force:  # a parallel run finished it meanwhile
                return self._hit(dest, remote, ctx, user)
            if self.force:  # restart, never resume
                for suffix in (".part", ".part.json"):
                    dest.with_name(name + suffix).unlink(missing_ok=True)
            sums = user + self._published_checksum(remote)
            self._wait()
            log.info("downloading %s -> %s", url, dest)
            try:
                meta = download(
                    url,
                    dest,
                    checksums=sums,
                    timeout=self.timeout,
                    not_found_hint=self.spec.not_found_hint,
                )
            except NotFoundError as exc:
                if not remote.optional:
                    raise
                log.warning("skipped %s: %s", remote.name, exc.message)
                return None
            write_source_json(dest, {"source": self.spec.name, "params": params, **meta})
        self.downloaded.append(dest)
        ctx.files[remote.name] = dest
        ctx.fresh = True
        return dest


def fetch(
    source: str,
    *,
    params: dict[str, object] | None = None,
    cache: str | os.PathLike | None = None,
    source_url: str | None = None,
    force: bool = False,
    offline: bool = False,
    sha256: str | None = None,
    md5: str | None = None,
    timeout: float = 60.0,
) -> FetchResult:
    """Download (or find in the cache) the files of one public source.

    Parameters
    ----------
    source
        A key of :data:`data_fetchers.SOURCES` (``go-basic``, ``goa``, ``gene2go``,
        ``kegg-pathways``, ``gmt``, ``string``, ``biogrid``, ``geo``, ...).
    params
        The source's parameters by name (``species``, ``taxon``, ``version``, ``release``,
        ``organism``, ``kgml``, ``url``, ``accession``, ``platform``); see ``kofs fetch list``.
    cache
        Cache root; default :func:`data_fetchers.default_cache_dir`. Files go to
        ``<cache>/<source>/<release>/``.
    source_url
        Replaces the upstream base URL (mirror, local copy, tests). For a source made of a
        single file, a URL not ending in ``/`` is that file's URL. A local path is accepted.
    force
        Download again even when cached (``.part`` files are discarded).
    offline
        Use only the cache; missing files raise :class:`InputError` listing each of them.
    sha256, md5
        Expected digest of the source's main (first) file.
    timeout
        Seconds for connecting and for each read.

    Returns
    -------
    FetchResult
    """
    spec: SourceSpec = get_source(source)
    values = spec.resolve(params or {})
    user_sums = _user_checksums(sha256, md5)
    if timeout <= 0:
        raise ParameterError(f"--timeout must be positive seconds, not {timeout}")
    root = Path(cache).expanduser() if cache is not None else default_cache_dir()
    release = safe_component(render(spec.release, values), what="release")
    folder = root / spec.name / release
    if not offline:
        ensure_dir(folder)
    remotes = spec.files(values)
    base = normalise_url(source_url) if source_url else render(spec.base, values)
    direct = None
    if source_url and not base.endswith("/") and len(remotes) == 1 and spec.expand is None:
        direct = base
    run = _Runner(
        spec,
        folder,
        base,
        direct,
        force=force,
        offline=offline,
        timeout=timeout,
        user_sums=user_sums,
        polite=source_url is None,
    )
    ctx = FetchContext(folder=folder, params=values, offline=offline)
    for r in remotes:
        run.get(r, ctx, values)
    if spec.expand is not None and not (offline and run.missing):
        for r in spec.expand(ctx):
            run.get(r, ctx, values)
    if run.missing:
        shown = "; ".join(f"{p} (from {u})" for p, u in run.missing[:5])
        more = f"; and {len(run.missing) - 5} more" if len(run.missing) > 5 else ""
        raise InputError(
            f"--offline: {len(run.missing)} file(s) of {spec.name!r} missing from the cache: "
            f"{shown}{more}; run without --offline to download them (or with --source-url "
            "pointing at a local copy)"
        )
    paths = spec.post(ctx) if spec.post else list(ctx.files.values())
    return FetchResult(paths=paths, folder=folder, downloaded=run.downloaded, cached=run.cached)


def list_sources() -> list[dict[str, object]]:
    """One row per source: name, description, parameters, checksums, default URLs."""
    rows = []
    for name in sorted(SOURCES):
        spec = SOURCES[name]
        rows.append(
            {
                "name": name,
                "description": spec.description,
                "params": [
                    {
                        "name": p.name,
                        "help": p.help,
                        "default": p.default,
                        "required": p.required,
                        "flag": p.flag,
                    }
                    for p in spec.params
                ],
                "checksums": spec.checksums,
                "urls": spec.default_urls(),
            }
        )
    return rows
