"""The download cache: ``<cache>/<source>/<release>/<file>`` plus ``<file>.source.json``.

A file counts as cached only when both it and its ``.source.json`` exist (the JSON is written
last, so an interrupted run never leaves a file that looks complete).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kofs.errors import OutputError, ParameterError

__all__ = [
    "default_cache_dir",
    "safe_component",
    "source_json_path",
    "read_source_json",
    "write_source_json",
    "is_cached",
    "ensure_dir",
    "file_lock",
]

log = logging.getLogger(__name__)

_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def default_cache_dir() -> Path:
    """``$KOFS_CACHE``, else the platform's user cache folder + ``kofs``.

    Linux: ``$XDG_CACHE_HOME/kofs`` or ``~/.cache/kofs``; macOS: ``~/Library/Caches/kofs``;
    Windows: ``%LOCALAPPDATA%\\kofs\\Cache``.
    """
    env = os.environ.get("KOFS_CACHE")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "kofs" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "kofs"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kofs"


def safe_component(value: str, *, what: str) -> str:
    """``value`` if it can be one path component (no ``/``, ``..``, leading dot), else error."""
    if not _COMPONENT.match(value) or ".." in value:
        raise ParameterError(
            f"{what} {value!r} cannot name a cache folder or file; use letters, digits, "
            "'.', '_', '+' or '-' (not starting with '.')"
        )
    return value


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents); an unusable location is an :class:`OutputError`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the cache folder ({exc.strerror or exc}); choose another with --cache",
            path=path,
        ) from None
    if not os.access(path, os.W_OK):
        raise OutputError("cache folder is not writable; choose another with --cache", path=path)
    return path


def source_json_path(path: Path) -> Path:
    """``<file>.source.json`` beside ``path``."""
    return path.with_name(path.name + ".source.json")


def kept_if_valid(path: Path, check: Callable[[Path], None]) -> list[Path]:
    """``[path]`` when ``check(path)`` passes; else the download and its provenance record are
    deleted (nothing invalid stays in the cache) and the check's error is raised."""
    from kofs.errors import InputError

    try:
        check(path)
    except InputError:
        path.unlink(missing_ok=True)
        source_json_path(path).unlink(missing_ok=True)
        raise
    return [path]


def read_source_json(path: Path) -> dict | None:
    """The provenance record of a cached file, or None when absent or unreadable."""
    try:
        return json.loads(source_json_path(path).read_text())
    except (OSError, ValueError):
        return None


def write_source_json(path: Path, record: dict) -> Path:
    """Write the provenance record of ``path`` atomically (temp file + rename)."""
    target = source_json_path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; cached files are plain readable files
        with os.fdopen(fd, "w") as fh:
            json.dump(record, fh, indent=2, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def is_cached(path: Path) -> bool:
    """True when ``path`` and its ``.source.json`` both exist."""
    return path.exists() and source_json_path(path).is_file()


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``.<name>.lock`` beside ``path`` while downloading it.

    Two ``kofs fetch`` runs of the same file (parallel pipeline jobs) then take turns instead
    of writing one ``.part`` together; the second finds the file cached. POSIX ``flock``,
    released by the OS when the process ends; a no-op where ``fcntl`` is missing (Windows).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    from kofs.io._fsops import UnsafePath, open_lock_file

    lock = path.with_name(f".{path.name}.lock")
    try:
        fd = open_lock_file(lock)  # never through a link planted at the lock's name
    except UnsafePath as exc:
        raise OutputError(
            f"{exc.strerror} (kofs never writes through a link it did not make); remove it",
            path=lock,
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("waiting for another kofs fetch to finish %s", path.name)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
