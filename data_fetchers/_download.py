"""One file from a URL into place: ``<file>.part`` + resume with ``Range`` + fsync + rename.

Standard library only (:mod:`urllib.request`). A download is written to ``<dest>.part``; a
``<dest>.part.json`` beside it remembers the URL and the server's validators (ETag,
Last-Modified) so that a later call resumes with ``Range: bytes=N-`` and ``If-Range``. A 206
answer whose ``Content-Range`` starts at ``N`` is appended; a 200 answer (server ignores ranges or
the file changed) restarts from byte 0; a 416 answer restarts once without a range. Only a
complete body that passes every check (length, gzip/zip integrity, checksums) is renamed to
``dest``; a truncated body keeps the ``.part`` for the next call, a corrupt one is deleted.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import json
import logging
import os
import re
import socket
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kofs import __version__
from kofs.errors import InputError
from kofs.io._fsops import create_new_file

log = logging.getLogger(__name__)

__all__ = ["Checksum", "NotFoundError", "download", "fetch_text", "file_digests", "parse_checksum"]

CHUNK = 1 << 16
USER_AGENT = f"kofs-fetch/{__version__} (Python urllib)"
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$")
_NETWORK_HINT = (
    "check the network connection (or proxy settings), use --source-url for a mirror, or "
    "--offline to use only the cache"
)


class NotFoundError(InputError):
    """The server answered 404 / 410: the resource does not exist there."""


@dataclass(frozen=True)
class Checksum:
    """An expected digest of a download.

    Parameters
    ----------
    algorithm
        ``"sha256"`` or ``"md5"``.
    value
        Lower-case hex digest.
    origin
        Where the value came from (``"--sha256"``, a checksum URL), quoted in error messages.
    """

    algorithm: str
    value: str
    origin: str


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _open(url: str, headers: dict[str, str], timeout: float):
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
    return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - user-chosen URL


def _network_error(url: str, exc: BaseException) -> InputError:
    reason = getattr(exc, "reason", None) or exc
    if url.lower().startswith("file:"):
        if isinstance(reason, FileNotFoundError):
            return NotFoundError(f"{url} does not exist; check --source-url")
        return InputError(f"cannot read {url}: {reason}; check --source-url")
    if isinstance(reason, (socket.timeout, TimeoutError)):
        reason = "timed out (raise --timeout if the server is slow)"
    return InputError(f"cannot download {url}: {reason}; {_NETWORK_HINT}")


def _http_error(url: str, exc: urllib.error.HTTPError, hint: str | None) -> InputError:
    what = f"HTTP {exc.code} {exc.reason}".rstrip()
    if exc.code == 404:
        todo = hint or "check the source parameters (species, version, accession) or --source-url"
    elif exc.code in (401, 403):
        todo = (
            "the server refuses access; download the file by hand and use --source-url file://..."
        )
    elif exc.code == 429 or exc.code >= 500:
        todo = "the server is busy or failing; try again later or use a mirror with --source-url"
    else:
        todo = "check the URL (--source-url) and try again"
    cls = NotFoundError if exc.code in (404, 410) else InputError
    return cls(f"download of {url} failed: {what}; {todo}")


def fetch_text(url: str, *, timeout: float = 60.0, max_bytes: int = 1 << 20) -> str:
    """Small text resource (a checksum file) into memory; errors as :class:`InputError`."""
    try:
        with _open(url, {}, timeout) as resp:
            data = resp.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise _http_error(url, exc, None) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _network_error(url, exc) from None
    if len(data) > max_bytes:
        raise InputError(f"{url} is larger than {max_bytes} bytes; it is not a checksum file")
    return data.decode("utf-8", errors="replace")


def parse_checksum(text: str, *, algorithm: str, filename: str | None = None) -> str | None:
    """The hex digest in a checksum file (``md5sum`` output, ``MD5(f)= h`` or a bare digest).

    With several digests, the one on the line naming ``filename`` wins.
    """
    width = {"md5": 32, "sha256": 64}[algorithm]
    pattern = re.compile(rf"(?<![0-9a-fA-F])[0-9a-fA-F]{{{width}}}(?![0-9a-fA-F])")
    found = []
    for line in text.splitlines():
        m = pattern.search(line)
        if m:
            found.append((line, m.group(0).lower()))
    if filename is not None:
        for line, digest in found:
            if filename in line:
                return digest
    return found[0][1] if found else None


def file_digests(path: Path) -> dict[str, str | int]:
    """``{"size", "sha256", "md5"}`` of a file, read once in chunks."""
    sha, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            sha.update(chunk)
            md5.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": sha.hexdigest(), "md5": md5.hexdigest()}


def _check_integrity(part: Path, name: str) -> str | None:
    """Why the downloaded file is corrupt (gzip CRC/length, zip CRC), or None."""
    try:
        if name.endswith(".gz"):
            with gzip.open(part, "rb") as gz:
                while gz.read(1 << 20):
                    pass
        elif name.endswith(".zip"):
            with zipfile.ZipFile(part) as zf:
                bad = zf.testzip()
            if bad is not None:
                return f"zip member {bad!r} fails its CRC check"
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
        kind = "gzip" if name.endswith(".gz") else "zip"
        return f"not a complete {kind} file ({exc})"
    return None


def _remove(*paths: Path) -> None:
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _read_part_meta(meta: Path) -> dict:
    try:
        return json.loads(meta.read_text())
    except (OSError, ValueError):
        return {}


def download(
    url: str,
    dest: Path,
    *,
    checksums: tuple[Checksum, ...] = (),
    timeout: float = 60.0,
    not_found_hint: str | None = None,
) -> dict:
    """Download ``url`` to ``dest`` (atomically), resuming a previous ``dest.part``.

    Parameters
    ----------
    url
        ``http(s)://`` or ``file://`` URL.
    dest
        Final path; its folder must exist.
    checksums
        Expected digests; a mismatch deletes the download and raises :class:`InputError`.
    timeout
        Seconds allowed for connecting and for each read.
    not_found_hint
        What to tell the user on HTTP 404 (e.g. "give --platform").

    Returns
    -------
    dict
        ``url, final_url`` (after redirects, None if the same), ``date, size, sha256, md5,
        etag, last_modified, resumed_from, verified`` -- the content of the ``.source.json``
        written by the caller.
    """
    part = dest.with_name(dest.name + ".part")
    meta_path = dest.with_name(dest.name + ".part.json")
    for p in (part, meta_path):  # a link at our own names is never followed: it goes
        if p.is_symlink():
            log.warning("removing %s: a symbolic link where kofs keeps a partial download", p)
            _remove(p)
    offset = part.lstat().st_size if part.is_file() else 0
    old = _read_part_meta(meta_path) if offset else {}
    if offset and old.get("url") != url:
        log.info("discarding %s: it came from another URL", part)
        _remove(part, meta_path)
        offset, old = 0, {}
    for attempt in range(2):
        headers = {}
        if offset:
            headers["Range"] = f"bytes={offset}-"
            validator = old.get("etag") or old.get("last_modified")
            if validator:
                headers["If-Range"] = validator
        try:
            resp = _open(url, headers, timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 416 and offset and attempt == 0:
                log.info("server refused to resume %s (HTTP 416); restarting", url)
                _remove(part, meta_path)
                offset, old = 0, {}
                continue
            if exc.code < 500:
                _remove(part, meta_path)
            raise _http_error(url, exc, not_found_hint) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            raise _network_error(url, exc) from None
        break
    with resp:
        status = getattr(resp, "status", None) or 200
        length = resp.headers.get("Content-Length")
        length = int(length) if length and length.isdigit() else None
        if offset and status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != offset:
                raise InputError(
                    f"resuming {url} failed: the server answered with range "
                    f"{resp.headers.get('Content-Range')!r} instead of bytes {offset}-; "
                    "run again with --force to restart the download"
                )
            log.info("resuming %s at byte %d", url, offset)
        elif status == 206:
            raise InputError(
                f"download of {url} failed: partial content (HTTP 206) to a request "
                "for the whole file; check the URL or mirror (--source-url)"
            )
        elif offset:
            log.info("server sent the whole of %s again; restarting", url)
            offset = 0
        expected = None if length is None else offset + length
        etag, modified = resp.headers.get("ETag"), resp.headers.get("Last-Modified")
        final_url = resp.geturl()
        _remove(meta_path)
        with os.fdopen(create_new_file(meta_path), "w") as fh:
            fh.write(json.dumps({"url": url, "etag": etag, "last_modified": modified}))
        got = offset
        try:
            if not offset:
                _remove(part)
            flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(part, flags) if offset else create_new_file(part)
            with os.fdopen(fd, "ab") as fh:
                while chunk := resp.read(CHUNK):
                    fh.write(chunk)
                    got += len(chunk)
                fh.flush()
                os.fsync(fh.fileno())
        except (OSError, http.client.HTTPException) as exc:
            raise InputError(
                f"download of {url} interrupted after {got} bytes ({exc}); run the same command "
                f"again to resume from {part.name}, or add --force to restart"
            ) from None
    if expected is not None and got != expected:
        raise InputError(
            f"download of {url} truncated: received {got} of {expected} bytes; run the same "
            f"command again to resume from {part.name}, or add --force to restart"
        )
    problem = _check_integrity(part, dest.name)
    if problem:
        _remove(part, meta_path)
        raise InputError(
            f"download of {url} is corrupt: {problem}; the file was deleted, run again "
            "(or check the mirror given with --source-url)"
        )
    digests = file_digests(part)
    verified = []
    for c in checksums:
        if digests[c.algorithm] != c.value.lower():
            _remove(part, meta_path)
            raise InputError(
                f"checksum mismatch for {url}: {c.algorithm} is {digests[c.algorithm]}, expected "
                f"{c.value} ({c.origin}); the download was deleted; check the URL/mirror or the "
                "expected value"
            )
        verified.append(f"{c.algorithm} ({c.origin})")
    os.replace(part, dest)
    _fsync_dir(dest.parent)
    _remove(meta_path)
    return {
        "url": url,
        "final_url": final_url if final_url != url else None,
        "date": _now(),
        **digests,
        "etag": etag,
        "last_modified": modified,
        "resumed_from": offset or None,
        "verified": verified,
    }
