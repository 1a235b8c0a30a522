"""numba for kofs's compiled kernels, with their machine code cached on disk.

Every kernel is compiled with ``cache=True``: the first process that calls it compiles it and
writes the machine code to disk, every later process loads it (a fraction of a second instead
of seconds of compilation). numba looks for a cache folder next to the module
(``__pycache__``), which an installation into a read-only ``site-packages`` does not allow.
:func:`configure_cache` chooses the folder before numba is imported:

1. ``$NUMBA_CACHE_DIR`` when set (the user's choice; numba reads it itself);
2. the package's own ``__pycache__`` folders when kofs's folder is writable (numba's default);
3. ``$KOFS_CACHE_DIR/numba`` when ``KOFS_CACHE_DIR`` is set (kofs's cache folder, see
   :mod:`kofs.cache`);
4. numba's per-user folder (``~/.cache/numba`` on Linux) when it is writable;
5. ``<temporary folder>/kofs-numba-<user id>`` otherwise.

Cases 3 to 5 set ``NUMBA_CACHE_DIR`` for this process (and numba's ``config.CACHE_DIR`` if numba
was imported already): other numba users in the process cache there too, which is harmless
(numba keys every entry by its source file's path and content). numba is optional (the ``[sc]``
extra): without it :data:`AVAILABLE` is False and the callers use their NumPy formulation.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["AVAILABLE", "configure_cache", "numba"]

_HERE = Path(__file__).resolve().parent


def _writable(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (created if missing); tested by creating
    one, since permission bits do not tell (read-only mounts, root)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".kofs-write-test-"):
            pass
    except OSError:
        return False
    return True


def _user_wide() -> Path:
    """numba's per-user cache folder (its ``UserWideCacheLocator``; appdirs conventions)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "numba"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "numba" / "numba" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "numba"


def cache_folder(package: Path = _HERE) -> Path | None:
    """The folder compiled kernels are cached in, or None for numba's in-tree ``__pycache__``
    (see the module docstring for the order)."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given).expanduser()
    if _writable(package / "__pycache__"):
        return None
    kofs_cache = os.environ.get("KOFS_CACHE_DIR")
    candidates = [Path(kofs_cache).expanduser() / "numba"] if kofs_cache else []
    candidates.append(_user_wide())
    for folder in candidates:
        if _writable(folder):
            return folder
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"kofs-numba-{uid}"


def configure_cache(package: Path = _HERE) -> Path | None:
    """Point numba's cache at :func:`cache_folder` (before any kofs kernel is compiled)."""
    folder = cache_folder(package)
    if folder is None or os.environ.get("NUMBA_CACHE_DIR"):
        return folder
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    loaded = sys.modules.get("numba.core.config")
    if loaded is not None:  # numba imported before kofs: it read the environment already
        loaded.CACHE_DIR = str(folder)
    return folder


configure_cache()

try:
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only without the [sc] extra
    numba = None
    AVAILABLE = False
