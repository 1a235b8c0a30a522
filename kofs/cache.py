"""An on-disk cache of derived arrays (parsed GO, closure, information content), safe under
concurrent runs.

An entry is one ``.npz`` file (NumPy arrays only, read with ``allow_pickle=False``: nothing is
ever unpickled) plus a JSON document stored inside it. Its name is the SHA-256 of a *key*: a
JSON list of everything the entry depends on (the input files' SHA-256, the settings, the kofs
version and :data:`FORMAT`), so an entry is never reused after an input file, a setting or kofs
changes. The full key is stored in the entry and compared on reading.

Concurrency: a writer writes a uniquely named temporary file in the cache folder and renames it
over the entry (atomic on POSIX); readers therefore see either no entry or a complete one. Two
runs computing the same entry at once both write it; the last rename wins, with identical
content. A reader that meets a corrupt or foreign entry (truncated file, a disk error, a
different key) treats it as a miss and recomputes. A cache folder that cannot be written costs
one warning line; the run goes on without the cache.

The folder (:func:`default_cache_dir`): ``$KOFS_CACHE_DIR``, else ``$XDG_CACHE_HOME/kofs``,
else ``~/Library/Caches/kofs`` on macOS, ``%LOCALAPPDATA%\\kofs\\Cache`` on Windows and
``~/.cache/kofs`` elsewhere (the platformdirs conventions). Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kofs.io._fsops import create_new_file

log = logging.getLogger(__name__)

__all__ = ["FORMAT", "Cache", "default_cache_dir", "file_sha256", "open_cache"]

#: Version of the entry layout; part of every key.
FORMAT = 1

_META = "__meta__"


def default_cache_dir() -> Path:
    """The user's cache folder for kofs (see the module docstring)."""
    env = os.environ.get("KOFS_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "kofs"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "kofs"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "kofs" / "Cache"
    return Path.home() / ".cache" / "kofs"


def file_sha256(path: str | os.PathLike, *, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes (as stored: a gzip file is hashed compressed)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


class Cache:
    """A cache folder. ``Cache(folder)``; ``get(kind, key)`` / ``put(kind, key, arrays, meta)``.

    Parameters
    ----------
    folder : path-like
        Created on the first write.
    version : str, optional
        Added to every key (default: the installed kofs version).
    """

    def __init__(self, folder: str | os.PathLike, *, version: str | None = None) -> None:
        if version is None:
            from kofs import __version__ as version
        self.folder = Path(folder)
        self.version = str(version)
        self._warned = False

    def __repr__(self) -> str:
        return f"Cache({str(self.folder)!r})"

    def _key(self, kind: str, key: Sequence[Any]) -> tuple[str, Path]:
        text = json.dumps([FORMAT, self.version, kind, *key], sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode()).hexdigest()
        return text, self.folder / kind / f"{digest}.npz"

    def path(self, kind: str, key: Sequence[Any]) -> Path:
        """Where the entry of ``key`` lives (it may not exist)."""
        return self._key(kind, key)[1]

    def get(
        self, kind: str, key: Sequence[Any]
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        """``(arrays, meta)`` of the entry, or None (missing, corrupt, or another key)."""
        text, path = self._key(kind, key)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            doc = json.loads(bytes(arrays.pop(_META)).decode())
            if doc.get("key") != text:
                raise ValueError("entry of another key")
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError):
            log.info("cache entry %s is unreadable; recomputing it", path)
            return None
        log.debug("cache hit %s", path)
        return arrays, doc.get("meta", {})

    def put(
        self, kind: str, key: Sequence[Any], arrays: Mapping[str, np.ndarray], meta: Mapping
    ) -> Path | None:
        """Store an entry atomically; None (and one warning per cache) if the folder is not
        writable."""
        text, path = self._key(kind, key)
        doc = json.dumps({"key": text, "meta": dict(meta)}, default=str).encode()
        tmp = path.parent / f".{path.stem}.{secrets.token_hex(6)}.tmp"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(create_new_file(tmp), "wb") as fh:  # never through a planted link
                np.savez(fh, **{_META: np.frombuffer(doc, dtype=np.uint8)}, **arrays)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            if not self._warned:
                log.warning(
                    "cache folder %s is not usable (%s); continuing without the cache "
                    "(--cache-dir to choose another, --no-cache to silence this)",
                    self.folder, exc.strerror or exc,
                )  # fmt: skip
                self._warned = True
            return None
        log.debug("cache write %s", path)
        return path


def open_cache(cache_dir: str | os.PathLike | None = None, *, enabled: bool = True) -> Cache | None:
    """The cache the CLI uses: ``None`` when disabled, else ``cache_dir`` or the default."""
    if not enabled:
        return None
    return Cache(default_cache_dir() if cache_dir is None else cache_dir)
