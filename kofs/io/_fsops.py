"""Atomic folder renames: Linux ``renameat2`` (``RENAME_EXCHANGE``, ``RENAME_NOREPLACE``) via
ctypes, deferring Ctrl-C/SIGTERM/SIGHUP across the few lines that must not be cut, and the
only ways kofs creates its own files beside or inside an output (:func:`open_lock_file`,
:func:`create_new_file`, :func:`make_private_dir`): none follows a symbolic link, so a link
planted at one of those names (e.g. in a shared temporary folder) can never make kofs write
outside its output (docs/guarantees.md, "Nothing outside OUT").

``renameat2`` exists on Linux >= 3.15 (glibc >= 2.28 has a wrapper; older glibc is reached by
the raw system call on x86-64 and arm64). Filesystems without it (some network and FUSE
filesystems) refuse it with ``EINVAL``; on every other system it is absent. The functions
then return ``False`` and the caller uses plain renames, a weaker guarantee
(docs/guarantees.md).

:func:`file_digest` is the one place a file's size and SHA-256 are computed (the output
folder's marker, the manifests' input records, the cache keys of GO files).
:func:`closed_folder` names the folder that keeps a user from a path (errors' messages).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import platform
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from kofs.errors import ParameterError, whole_number

__all__ = [
    "UnsafePath",
    "absolute_path",
    "check_path_argument",
    "create_new_file",
    "deferred_signals",
    "exchange",
    "file_digest",
    "fsync_dir",
    "make_private_dir",
    "open_lock_file",
    "rename_noreplace",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_AT_FDCWD = -100
# the system call number where glibc has no wrapper (before 2.28)
_SYSCALL = {"x86_64": 316, "aarch64": 276, "arm64": 276}
# "not supported here": no system call, unknown flag, filesystem refuses the operation
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", -1)}

_impl: Callable[[bytes, bytes, int], int] | None = None
_looked_up = False


def _lookup() -> Callable[[bytes, bytes, int], int] | None:
    global _impl, _looked_up
    if _looked_up:
        return _impl
    _looked_up = True
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        _impl = lambda a, b, flags: fn(_AT_FDCWD, a, _AT_FDCWD, b, flags)  # noqa: E731
        return _impl
    number = _SYSCALL.get(platform.machine())
    syscall = getattr(libc, "syscall", None)
    if number is None or syscall is None:
        return None
    syscall.restype = ctypes.c_long
    _impl = lambda a, b, flags: syscall(  # noqa: E731
        ctypes.c_long(number),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(a),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(b),
        ctypes.c_uint(flags),
    )
    return _impl


def _renameat2(src: str | os.PathLike, dst: str | os.PathLike, flags: int) -> bool:
    fn = _lookup()
    if fn is None:
        return False
    if fn(os.fsencode(src), os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), os.fspath(src), None, os.fspath(dst))


def exchange(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Swap two existing paths (folders) in one atomic step.

    Returns
    -------
    bool
        ``True`` when swapped; ``False`` when the system or filesystem cannot do it (nothing
        changed).

    Raises
    ------
    OSError
        Any other failure (a path missing, permissions, different filesystems).
    """
    return _renameat2(a, b, RENAME_EXCHANGE)


def rename_noreplace(src: str | os.PathLike, dst: str | os.PathLike) -> bool:
    """Rename ``src`` to ``dst`` only if ``dst`` does not exist (atomically checked).

    Returns ``False`` when unsupported (nothing changed); raises :class:`FileExistsError` when
    ``dst`` exists.
    """
    return _renameat2(src, dst, RENAME_NOREPLACE)


class UnsafePath(OSError):
    """A path where kofs keeps its own file is a symbolic link, a hard link to another file or
    not a regular file: kofs never writes through it."""


def open_lock_file(path: str | os.PathLike) -> int:
    """Open (creating it if needed) the lock file ``path`` for ``flock``, never through a link.

    Returns a descriptor (close-on-exec) of a regular file with a single name.

    Raises
    ------
    UnsafePath
        ``path`` is a symbolic link (dangling or not), a hard link to another file, or not a
        regular file.
    OSError
        Any other failure (permissions, a missing folder).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafePath(errno.ELOOP, "is a symbolic link", os.fspath(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(errno.EINVAL, "is not a regular file", os.fspath(path))
        if st.st_nlink != 1:
            raise UnsafePath(errno.EMLINK, "is a hard link to another file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_new_file(path: str | os.PathLike, mode: int = 0o666) -> int:
    """Create ``path`` for writing; fails if anything, a link included, is already there.

    Returns a descriptor (close-on-exec). ``O_CREAT | O_EXCL`` never follows a symbolic link,
    dangling or not (POSIX), and ``O_NOFOLLOW`` says so twice.

    Raises
    ------
    FileExistsError
        Something exists at ``path`` (choose another name).
    """
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)


def make_private_dir(path: str | os.PathLike) -> None:
    """Create the folder ``path`` readable and writable by this user only (``0o700``), so that
    nobody else can plant a file or a link in it while kofs writes there; fails with
    :class:`FileExistsError` if anything (a link included) is already at ``path``."""
    os.mkdir(path, 0o700)


def current_umask() -> int:
    """The process's file-creation mask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def file_digest(path: str | os.PathLike, *, fsync: bool = False) -> tuple[int, str]:
    """Size in bytes and hex SHA-256 of a file's bytes as stored (a gzip file is hashed
    compressed), read in 1 MiB blocks; with ``fsync`` the file is also made durable.

    Raises
    ------
    OSError
        The file cannot be opened or read.
    """
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
            size += len(block)
        if fsync:
            os.fsync(fh.fileno())
    return size, h.hexdigest()


def fsync_dir(path: str | os.PathLike) -> None:
    """Make a folder's entries (renames, new files) durable; best effort."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def deferred_signals(signums: tuple[int, ...] | None = None) -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP back for the duration of the block, then deliver them.

    Used around the renames that publish an output folder, so that an interrupt lands either
    before (nothing published) or after (all published), never in between. Only possible in
    the main thread (elsewhere the block runs unprotected, as Python handles signals there).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signums is None:
        signums = tuple(
            getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
        )
    pending: list[int] = []
    saved = {}
    try:
        for s in signums:
            old = signal.getsignal(s)
            if old is signal.SIG_IGN or old is None:
                continue
            saved[s] = old
            signal.signal(s, lambda signum, frame: pending.append(signum))
        yield
    finally:
        for s, old in saved.items():
            signal.signal(s, old)
        for s in dict.fromkeys(pending):
            signal.raise_signal(s)


def closed_folder(path: str | os.PathLike) -> str:
    """The first folder on the way to ``path`` that may not be entered (no search
    permission), or ``path`` itself when every folder above it may -- or when one is missing
    (``os.access`` is False for a folder that does not exist: a mistyped folder is not a
    closed one)."""
    here = os.path.abspath(path)
    above = []
    while os.path.dirname(here) != here:
        here = os.path.dirname(here)
        above.append(here)
    for folder in reversed(above):
        if not os.path.isdir(folder):
            break
        if not os.access(folder, os.X_OK):
            return folder
    return os.fspath(path)


def absolute_path(path: str | os.PathLike, base: str | os.PathLike) -> str:
    """``path`` made absolute relative to ``base``, symbolic links resolved -- except when a
    link on the way leads nowhere: then the path is kept as given (joined to ``base``), so that
    the reader or the output check meets the link and names it (resolved, a dangling link would
    vanish into its target's name, and an output folder would be created at the target)."""
    joined = Path(base) / path
    probe = joined
    while True:
        if probe.is_symlink() and not probe.exists():
            return str(joined)
        if probe.parent == probe:
            break
        probe = probe.parent
    return str(joined.resolve())


def check_path_argument(value: object, who: str) -> None:
    """A reader's path argument is a path (str or ``os.PathLike``): anything else is a
    :class:`~kofs.errors.ParameterError` saying so, not a TypeError from inside ``pathlib``."""
    if isinstance(value, (str, os.PathLike)):
        return
    import reprlib

    raise ParameterError(f"{who}: expected a file's path (str or Path), got {reprlib.repr(value)}")


def check_api_options(
    who: str,
    *,
    cache: object = None,
    progress: object = None,
    threads: object = None,
) -> None:
    """A public function's secondary keywords have the types its documentation gives (each
    may be None): anything else is a :class:`~kofs.errors.ParameterError` naming the keyword,
    not an AttributeError or TypeError from deep inside the function."""
    import reprlib

    def refuse(name: str, expected: str, value: object) -> None:
        raise ParameterError(f"{who}: {name} must be {expected}, got {reprlib.repr(value)}")

    # kofs.cache imports this module: a Cache is known by what the readers call on it
    if cache is not None and not all(
        callable(getattr(cache, m, None)) for m in ("get", "put", "path")
    ):
        refuse("cache", "a kofs.cache.Cache or None", cache)
    if progress is not None and not all(
        callable(getattr(progress, m, None)) for m in ("start", "advance", "finish")
    ):
        refuse("progress", "a kofs.progress.Progress (start, advance, finish) or None", progress)
    if threads is not None and not whole_number(threads):
        refuse("threads", "a whole number or None", threads)


def refuse_special_input(path: str | os.PathLike, *, pipes: bool = True) -> None:
    """An input that is a device (``/dev/zero`` was read without end: a hang), or, with
    ``pipes``, a named pipe or process substitution (``<(zcat x.gz)``) that a reader opens more
    than once (the second open found nothing: "file is empty" or "not found"): an
    :class:`~kofs.errors.InputError` saying so. Missing paths and regular files pass."""
    from kofs.errors import InputError

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreachable: the reader says which
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise InputError("is a device, not a file; give a file's path", path=os.fspath(path))
    if pipes and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        raise InputError(
            "is a pipe (e.g. <(...) process substitution), and this file is read more than "
            "once; save it to a file and give its path",
            path=os.fspath(path),
        )
