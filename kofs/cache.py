"""An on-disk cache of derived arrays (parsed GO, closure, information content), safe under
concurrent runs.

An entry is one ``.npz`` file (NumPy arrays only, read with ``allow_pickle=False``: nothing is
ever unpickled) plus a JSON document stored inside it. Its name is the SHA-256 of a *key*: a
JSON list of everything the entry depends on (the input files' SHA-256, the settings, the kofs
version and :data:`FORMAT`), so an entry is never reused after an input file, a setting or kofs
changes. The full key is stored in the entry and compared on reading.

Verified on load: every entry records the SHA-256 of its content (the key, the JSON document
and every array's name, dtype, shape and bytes); on reading it is recomputed, and the reader's
*invariants* (:class:`Check`: shapes, dtypes, index ranges of sparse structures, finiteness,
the JSON fields' types) are checked before any array reaches compiled code. An entry that
fails -- truncated, bit-flipped, edited, of another key, or written by a buggy version -- is
reported in one warning line, deleted and recomputed; it can never crash a run or change its
result.

Concurrency: a writer writes a uniquely named temporary file in the cache folder (created with
``O_EXCL``, never through a link) and renames it over the entry (atomic on POSIX); readers
therefore see either no entry or a complete one. Two runs computing the same entry at once both
write it; the last rename wins, with identical content. The cache takes no lock, so nothing
stale can block a later run. A cache folder that cannot be written costs one warning line; the
run goes on without the cache.

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kofs.io._fsops import create_new_file

log = logging.getLogger(__name__)

__all__ = [
    "FORMAT",
    "Cache",
    "Check",
    "EntryError",
    "check_cache_dir",
    "default_cache_dir",
    "open_cache",
]

#: Version of the entry layout; part of every key (2: content digest recorded and verified).
FORMAT = 2

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


class EntryError(ValueError):
    """A cache entry that breaks an invariant of its kind (raised by a :class:`Check`)."""


class Check:
    """The invariants of one entry's arrays and JSON document, checked before use.

    A reader builds one and calls its methods; each raises :class:`EntryError` naming what is
    wrong. ``Check(arrays, meta)``; ``strings(name, n)``, ``ints(name, low, high, n)``,
    ``floats(name, n, allow_inf=False)``, ``csr(indptr, indices, n_rows, n_cols)``,
    ``field(name, types)``.
    """

    def __init__(self, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> None:
        self.arrays = arrays
        self.meta = meta

    def array(self, name: str, *, ndim: int = 1, n: int | None = None) -> np.ndarray:
        a = self.arrays.get(name)
        if a is None:
            raise EntryError(f"array {name!r} is missing")
        if a.ndim != ndim:
            raise EntryError(f"array {name!r} has {a.ndim} dimensions, expected {ndim}")
        if n is not None and a.shape[0] != n:
            raise EntryError(f"array {name!r} has {a.shape[0]} rows, expected {n}")
        return a

    def strings(self, name: str, n: int | None = None) -> np.ndarray:
        a = self.array(name, n=n)
        if a.dtype.kind != "U" and a.size:
            raise EntryError(f"array {name!r} holds {a.dtype}, expected text")
        return a

    def ints(
        self, name: str, low: int, high: int, n: int | None = None, *, ndim: int = 1
    ) -> np.ndarray:
        """Integers in ``[low, high)``."""
        a = self.array(name, ndim=ndim, n=n)
        if a.size and a.dtype.kind not in "iu":
            raise EntryError(f"array {name!r} holds {a.dtype}, expected integers")
        if a.size and (int(a.min()) < low or int(a.max()) >= high):
            raise EntryError(f"array {name!r} has values outside [{low}, {high})")
        return a

    def floats(self, name: str, n: int | None = None, *, allow_inf: bool = False) -> np.ndarray:
        a = self.array(name, n=n)
        if a.size and a.dtype.kind != "f":
            raise EntryError(f"array {name!r} holds {a.dtype}, expected numbers")
        bad = np.isnan(a) if allow_inf else ~np.isfinite(a)
        if bad.any():
            raise EntryError(f"array {name!r} has {int(bad.sum())} non-finite values")
        return a

    def csr(self, indptr: str, indices: str, n_rows: int, n_cols: int) -> None:
        """A CSR structure: ``indptr`` of length n_rows + 1 from 0, never decreasing, ending
        at len(indices); every index in [0, n_cols)."""
        ptr = self.ints(indptr, 0, np.iinfo(np.int64).max, n_rows + 1)
        idx = self.array(indices)
        if ptr[0] != 0 or (np.diff(ptr) < 0).any() or int(ptr[-1]) != len(idx):
            raise EntryError(f"array {indptr!r} is not a valid CSR row pointer")
        self.ints(indices, 0, n_cols)

    def field(self, name: str, types: type | tuple[type, ...], *, optional: bool = False) -> Any:
        """A JSON field of the given type(s) (``optional``: may be missing or null)."""
        v = self.meta.get(name)
        if v is None:
            if optional:
                return None
            raise EntryError(f"field {name!r} is missing")
        allowed = types if isinstance(types, tuple) else (types,)
        if not isinstance(v, allowed) or (isinstance(v, bool) and bool not in allowed):
            raise EntryError(f"field {name!r} is a {type(v).__name__}")
        return v


def _content_digest(text: str, doc: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of an entry's key, JSON document and arrays (names, dtypes, shapes, bytes)."""
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(json.dumps(doc, sort_keys=True, default=str).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(memoryview(a).cast("B") if a.size else b"")
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
        self.folder = Path(folder).expanduser()
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
        self,
        kind: str,
        key: Sequence[Any],
        check: Callable[[Check], None] | None = None,
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        """``(arrays, meta)`` of the entry, or None when it is missing or bad.

        A present entry is verified first: its content digest, then ``check`` (the reader's
        invariants, given a :class:`Check`). A bad entry costs one warning line and is
        deleted, so the caller recomputes and rewrites it.
        """
        text, path = self._key(kind, key)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            raw = arrays.pop(_META, None)
            if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
                raise EntryError("its record is missing")
            doc = json.loads(bytes(raw).decode())
            if not isinstance(doc, dict) or doc.get("key") != text:
                raise EntryError("it belongs to another key")
            meta = doc.get("meta")
            if not isinstance(meta, dict):
                raise EntryError("its record has no metadata")
            if doc.get("digest") != _content_digest(text, meta, arrays):
                raise EntryError("its content does not match its digest")
            if check is not None:
                check(Check(arrays, meta))
        except Exception as exc:  # noqa: BLE001 - any entry that cannot be used is a miss
            # (np.load of a damaged file raises OSError, ValueError, EOFError, BadZipFile,
            # UnicodeDecodeError, KeyError, TypeError, MemoryError, ... ; Check raises EntryError)
            why = str(exc) if isinstance(exc, EntryError) else f"unreadable: {type(exc).__name__}"
            log.warning("cache entry %s is damaged (%s); deleted, recomputing it", path, why)
            with contextlib.suppress(OSError):
                os.unlink(path)
            return None
        log.debug("cache hit %s", path)
        return arrays, meta

    def put(
        self, kind: str, key: Sequence[Any], arrays: Mapping[str, np.ndarray], meta: Mapping
    ) -> Path | None:
        """Store an entry atomically; None (and one warning per cache) if the folder is not
        writable."""
        text, path = self._key(kind, key)
        meta = json.loads(json.dumps(dict(meta), default=str))  # as it will be read back
        digest = _content_digest(text, meta, arrays)
        doc = json.dumps({"key": text, "meta": meta, "digest": digest}).encode()
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


def check_cache_dir(
    cache_dir: str | os.PathLike | None, outputs: Sequence[str | os.PathLike | None]
) -> None:
    """Refuse, before any work, a cache folder inside (or equal to) an output folder: a run
    replaces its output folder whole, so the cache would be deleted by the next run and its
    files would make the folder look foreign.

    Raises
    ------
    ParameterError
        ``cache_dir`` (or the default folder, when None) lies in one of ``outputs``.
    """
    from kofs.errors import ParameterError

    chosen = default_cache_dir() if cache_dir is None else Path(cache_dir).expanduser()
    folder = Path(os.path.realpath(chosen))
    for out in outputs:
        if out is None or os.fspath(out) == "-":
            continue
        real = Path(os.path.realpath(out))
        if folder == real or real in folder.parents:
            what = "--cache-dir" if cache_dir is not None else "the cache folder"
            raise ParameterError(
                f"{what} {folder} is inside the output folder {os.fspath(out)}, which each run "
                "replaces whole; choose a cache folder outside it"
            )


def open_cache(
    cache_dir: str | os.PathLike | None = None,
    *,
    enabled: bool = True,
    used: bool = True,
    outputs: Sequence[str | os.PathLike | None] = (),
) -> Cache | None:
    """The cache a command uses: ``None`` when disabled (or unused), else ``cache_dir`` or the
    default folder.

    ``used`` says whether the run reads anything that is cached (GO); an explicit
    ``cache_dir`` that has no effect (``enabled`` false, or nothing cached) costs one warning
    line. ``outputs``: the run's output folders, which the cache may not lie in
    (:func:`check_cache_dir`; call it before any work).
    """
    if cache_dir is not None and not enabled:
        log.warning("--cache-dir %s is ignored: --no-cache turns the cache off", cache_dir)
    elif cache_dir is not None and not used:
        log.warning(
            "--cache-dir %s is ignored: only GO (--go with --go-annotations) is cached", cache_dir
        )
    if not enabled or not used:
        return None
    check_cache_dir(cache_dir, outputs)
    return Cache(default_cache_dir() if cache_dir is None else cache_dir)
