"""Output folders published whole: at every instant ``OUT`` holds the complete previous run or
the complete new run, never a mix, whatever stops the process.

How (docs/guarantees.md, "Nothing half-written"):

1. :func:`claim_output` checks ``OUT`` before any work (a file, a symbolic link leading
   nowhere, an unwritable parent, files that kofs did not write), takes a lock beside it
   (``.OUT.lock``; a second run into the same ``OUT`` fails at once) and deletes what a killed
   run left (``.OUT.tmp-*``, ``.OUT.old-*``).
2. :meth:`OutputFolder.stage` yields a fresh hidden folder ``.OUT.tmp-<random suffix>`` beside
   ``OUT``; the run writes its files there.
3. Publishing writes the completion marker :data:`MARKER` last (names, sizes and SHA-256 of
   every file), fsyncs, and swaps the new folder with ``OUT`` in one atomic step (Linux
   ``renameat2(RENAME_EXCHANGE)``); the old run, now under the temporary name, is deleted.
   No file of the old run survives. Ctrl-C and SIGTERM are held back during the swap.

Where the atomic swap is unavailable (not Linux, or a filesystem that refuses it, e.g. NFS),
``OUT`` is renamed aside and the new folder renamed in: ``OUT`` is briefly absent, never mixed.
Where ``OUT`` cannot be renamed at all (a mount point, or its parent is not writable), files
are replaced inside it with the marker removed first and written last, so a reader can tell
an incomplete folder (:func:`check_complete`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import secrets
import shutil
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kofs.errors import InputError, OutputError
from kofs.io._fsops import (
    UnsafePath,
    current_umask,
    deferred_signals,
    exchange,
    file_digest,
    fsync_dir,
    make_private_dir,
    open_lock_file,
    rename_noreplace,
)
from kofs.io.output import atomic_file, check_output_dir, is_write_failure, write_error

try:  # advisory locks: POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

__all__ = [
    "MARKER",
    "OutputFolder",
    "atomic_dir",
    "check_complete",
    "claim_output",
    "read_marker",
    "verify_output_file",
]

#: Completion marker, written last into every output folder.
MARKER = ".kofs-complete"
_FORMAT = "kofs-output-folder/1"
# the names kofs commands write into OUT, replaceable without a marker: a replacement in place
# (OUT is a mount point) killed after it removed the marker leaves some of them behind
_OWN_NAMES = frozenset(
    {
        "ranking.tsv",
        "weights.tsv",
        "manifest.json",
        "config.resolved.yaml",
        "evaluation.tsv",
        "evaluation.json",
        "accuracy.tsv",
        "report.html",
        "figures",
        "table65.tsv",
        "table65.md",
    }
)
_INNER_TMP = re.compile(r"\.kofs-tmp-[0-9a-f]{8}")
_INNER_LOCK = ".kofs.lock"

# claims held by this process (real path -> claim): nested atomic_dir() calls of one run reuse
# the claim instead of failing on their own lock
_CLAIMS: dict[str, OutputFolder] = {}
_CLAIMS_LOCK = threading.Lock()


def _token() -> str:
    return secrets.token_hex(4)


def _stale(name: str) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(name)}\.(?:tmp|old)-[0-9a-f]{{8}}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


class OutputFolder:
    """An output folder claimed by this process for one run (made by :func:`claim_output`).

    Attributes
    ----------
    path : Path
        The folder as the user gave it (used in every message).
    real : Path
        Where it really is (symbolic links resolved); the swap happens here.
    in_place : bool
        ``True`` when ``real`` cannot be renamed (a mount point or an unwritable parent): files
        are replaced inside it, guarded by the marker only.
    committed : bool
        The new run has been published.
    """

    def __init__(self, path: Path, real: Path, in_place: bool) -> None:
        self.path = path
        self.real = real
        self.in_place = in_place
        self.committed = False
        self._lock_path = real / _INNER_LOCK if in_place else real.parent / f".{real.name}.lock"
        self._fd: int | None = None
        self._created: list[Path] = []
        self._depth = 1
        self._thread = threading.get_ident()

    # ------------------------------------------------------------------ claim and release
    def _lock(self) -> None:
        for _ in range(20):
            try:
                fd = open_lock_file(self._lock_path)
            except UnsafePath as exc:
                raise OutputError(
                    f"the lock file {self._lock_path} {exc.strerror} (kofs never writes through "
                    "a link it did not make); remove it, or choose another output folder",
                    path=self.path,
                ) from None
            except OSError as exc:
                raise OutputError(
                    f"cannot create the lock file {self._lock_path} ({exc.strerror}); "
                    "choose another output folder",
                    path=self.path,
                ) from None
            if fcntl is None:
                self._fd = fd
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                except OSError:
                    pid = ""
                os.close(fd)
                who = f" (process {pid})" if pid.isdigit() else ""
                raise OutputError(
                    f"another kofs run{who} is writing this output folder; wait for it to "
                    "finish or choose another output folder",
                    path=self.path,
                ) from None
            except OSError:  # a filesystem without locks (some NFS): go on unlocked
                log.debug("no file locks on %s; concurrent runs are not detected", self.real)
                self._fd = fd
                return
            try:  # a run that just finished may have unlinked the file we opened
                same = os.lstat(self._lock_path).st_ino == os.fstat(fd).st_ino
            except OSError:
                same = False
            if same:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                self._fd = fd
                return
            os.close(fd)
        raise OutputError("cannot lock the output folder; try again", path=self.path)

    def _release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._lock_path)  # while still holding the lock (see _lock)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if not self.committed:
            for d in self._created:  # parents made for this run, if still empty
                with contextlib.suppress(OSError):
                    os.rmdir(d)

    def _clean_stale(self) -> None:
        """Delete what killed runs into this folder left (we hold the lock: none is alive)."""
        if self.in_place:
            where, pattern = self.real, _INNER_TMP
        else:
            where, pattern = self.real.parent, _stale(self.real.name)
        try:
            names = os.listdir(where)
        except OSError:
            return
        for name in names:
            if pattern.fullmatch(name):
                log.info("removing %s, left by an interrupted run", where / name)
                _remove(where / name)

    def _check_replaceable(self) -> None:
        """Refuse to replace a folder holding files that kofs did not write."""
        if not self.real.is_dir():
            return
        marker = read_marker(self.real)
        allowed = set(_OWN_NAMES) | {MARKER, _INNER_LOCK}
        if marker is not None:
            allowed |= {name.split("/")[0] for name in marker.get("files", {})}
        foreign = sorted(
            n for n in os.listdir(self.real) if n not in allowed and not _INNER_TMP.fullmatch(n)
        )
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise OutputError(
                f"holds files that kofs did not write ({shown}); a run replaces the whole "
                "output folder, so choose a new or empty folder, or remove them",
                path=self.path,
            )

    # ------------------------------------------------------------------ staging and publishing
    def _new_tmp(self) -> Path:
        where = self.real if self.in_place else self.real.parent
        stem = ".kofs-tmp-" if self.in_place else f".{self.real.name}.tmp-"
        for _ in range(100):
            tmp = where / f"{stem}{_token()}"
            try:
                make_private_dir(tmp)  # 0o700 until published: nobody can plant files in it
                return tmp
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(
                    f"cannot create the output folder ({exc.strerror})", path=self.path
                ) from None
        raise OutputError("cannot create a temporary folder", path=self.path)

    @contextlib.contextmanager
    def stage(self) -> Iterator[Path]:
        """Yield an empty temporary folder; when the block succeeds its files replace the
        output folder's whole content in one step, otherwise it is deleted and the output
        folder stays as it was.

        Raises
        ------
        OutputError
            A file cannot be written (full disk, ...); the message names the output path,
            never the temporary one.
        """
        tmp = self._new_tmp()
        try:
            yield tmp
            self._publish(tmp)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, OutputError) and exc.path and exc.path.startswith(str(tmp)):
                final = self.path / Path(exc.path).relative_to(tmp)
                raise OutputError(exc.message, path=final) from None
            if is_write_failure(exc, tmp):
                name = exc.filename  # type: ignore[attr-defined]
                inside = name and str(name).startswith(str(tmp) + os.sep)
                where = self.path / Path(name).relative_to(tmp) if inside else self.path
                raise write_error(exc, where) from None  # type: ignore[arg-type]
            raise

    def _publish(self, tmp: Path) -> None:
        self._check_replaceable()  # again: files someone put into OUT during the run survive
        _write_marker(tmp)
        if self.in_place:
            with deferred_signals():
                self._replace_in_place(tmp)
            return
        with contextlib.suppress(OSError):
            if self.real.is_dir():  # keep the permissions the user gave the folder
                os.chmod(tmp, stat.S_IMODE(self.real.stat().st_mode))
            else:  # a new folder: what mkdir would have made
                os.chmod(tmp, 0o777 & ~current_umask())
        with deferred_signals():
            old = self._swap(tmp)
            fsync_dir(self.real.parent)
            self.committed = True
            if old is not None:
                _remove(old)

    def _swap(self, tmp: Path) -> Path | None:
        """Put ``tmp`` at ``real``; returns where the previous folder went (or None)."""
        real = self.real
        if not os.path.lexists(real):
            try:
                if rename_noreplace(tmp, real):
                    return None
            except FileExistsError:
                pass
            else:
                os.rename(tmp, real)  # no renameat2: replaces at most an empty folder
                return None
        try:
            if exchange(tmp, real):
                return tmp
            old = real.parent / f".{real.name}.old-{_token()}"
            os.rename(real, old)  # weaker: OUT is absent until the next line
        except OSError as exc:
            if exc.errno not in (errno.EBUSY, errno.EXDEV):
                raise
            # a mount point os.path.ismount did not see (a bind mount): replace the content
            self._replace_in_place(tmp)
            return None
        try:
            os.rename(tmp, real)
        except BaseException:
            os.rename(old, real)
            raise
        return old

    def _replace_in_place(self, tmp: Path) -> None:
        real = self.real
        with contextlib.suppress(FileNotFoundError):
            os.unlink(real / MARKER)  # from here on readers see an incomplete folder
        fsync_dir(real)
        for name in os.listdir(real):
            if (real / name) == tmp or name == _INNER_LOCK or _INNER_TMP.fullmatch(name):
                continue
            _remove(real / name)
        for name in sorted(os.listdir(tmp)):
            if name != MARKER:
                shutil.move(tmp / name, real / name)  # a rename, or a copy across devices
        fsync_dir(real)
        shutil.move(tmp / MARKER, real / MARKER)
        shutil.rmtree(tmp, ignore_errors=True)
        fsync_dir(real)
        self.committed = True


def _write_marker(folder: Path) -> None:
    """Fsync every file of ``folder`` and write :data:`MARKER` (their sizes and checksums)."""
    from kofs import __version__

    files: dict[str, Any] = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            p = Path(root) / name
            size, sha = file_digest(p, fsync=True)
            files[p.relative_to(folder).as_posix()] = {"bytes": size, "sha256": sha}
        fsync_dir(root)
    text = json.dumps(
        {"format": _FORMAT, "kofs_version": __version__, "files": files}, indent=1, sort_keys=True
    )
    with atomic_file(folder / MARKER) as fh:
        fh.write(text + "\n")
    fsync_dir(folder)


def _held(real: Path) -> OutputFolder | None:
    with _CLAIMS_LOCK:
        claim = _CLAIMS.get(str(real))
        if claim is not None and claim._thread == threading.get_ident():
            claim._depth += 1
            return claim
    return None


@contextlib.contextmanager
def claim_output(
    outdir: str | os.PathLike,
    *,
    inputs: Iterable[str | os.PathLike] = (),
    named: bool = True,
) -> Iterator[OutputFolder]:
    """Claim ``outdir`` for one run: check it, lock it, clean what killed runs left.

    Take the claim before the run's work, so that every problem with the output location
    is reported before any computing; :func:`atomic_dir` inside the block reuses it.

    Parameters
    ----------
    outdir : str or path-like
        The output folder (created with its parents when the run publishes).
    inputs : iterable of path
        The run's input files (none may be overwritten; see
        :func:`~kofs.io.output.check_output_dir`).
    named : bool, default True
        The user named ``outdir`` (``-o``, a config's ``output``). A default folder the user
        did not name is never replaced: if it already holds something, the run is refused.

    Raises
    ------
    OutputError
        ``outdir`` is a file, lies under a file or a symbolic link leading nowhere, is not
        writable, is the current folder, holds files that kofs did not write, lies inside
        another kofs output folder, is a default folder that already holds a run, or another
        run is writing it.
    """
    out = Path(outdir)
    real = Path(os.path.realpath(out))
    held = _held(real)
    if held is not None:
        try:
            yield held
        finally:
            held._depth -= 1
        return
    # first the most specific reason: inside another run's folder (which may also be an
    # input, e.g. `kofs evaluate RUN ... -o RUN/eval`)
    _check_not_nested(out, real)
    check_output_dir(out, inputs=inputs)
    if not named and os.path.lexists(out):
        raise OutputError(
            "already exists and no output folder was named, so kofs does not replace it; "
            f"give -o {os.fspath(out)} to replace it, or -o NEW_FOLDER to keep it",
            path=out,
        )
    try:
        cwd = Path(os.path.realpath(os.getcwd()))
    except OSError:
        cwd = None
    if cwd is not None and (real == cwd or real in cwd.parents):
        raise OutputError(
            "is the current folder (or contains it); a run replaces the whole output folder, "
            "so give a new folder such as kofs-out",
            path=out,
        )
    in_place = real.is_dir() and (
        os.path.ismount(real) or not os.access(real.parent, os.W_OK | os.X_OK)
    )
    claim = OutputFolder(out, real, in_place)
    parent = real.parent
    while not parent.exists():
        claim._created.append(parent)
        parent = parent.parent
    try:
        for d in reversed(claim._created):
            os.mkdir(d)
        with deferred_signals():  # a lock file made is a lock file held (released below)
            claim._lock()
        claim._clean_stale()
        claim._check_replaceable()
    except OSError as exc:
        claim._release()
        raise OutputError(f"cannot create the output folder ({exc.strerror})", path=out) from None
    except BaseException:
        claim._release()
        raise
    with _CLAIMS_LOCK:
        _CLAIMS[str(real)] = claim
    try:
        yield claim
    except KeyboardInterrupt as exc:
        if claim.committed:  # the CLI must not say "nothing was written"
            exc.kofs_written = [os.fspath(out)]  # type: ignore[attr-defined]
        raise
    finally:
        with _CLAIMS_LOCK:
            _CLAIMS.pop(str(real), None)
        claim._release()


def _check_not_nested(out: Path, real: Path) -> None:
    """Refuse an output folder inside another kofs output folder: publishing the outer one
    (a later run into it) would delete the inner one, and the outer one's marker would no
    longer match its folder. The inner folder may be the outer one's own (a run replacing
    itself) -- only a strict ancestor with a marker counts."""
    for parent in real.parents:
        if os.path.isfile(parent / MARKER):
            raise OutputError(
                f"is inside the kofs output folder {parent}, which a later run into it replaces "
                "whole; choose an output folder outside it (e.g. beside it)",
                path=out,
            )
        if parent == parent.parent:
            break


@contextlib.contextmanager
def atomic_dir(outdir: str | os.PathLike) -> Iterator[Path]:
    """Write a folder's files all-or-nothing, replacing the folder's whole previous content.

    Yields an empty temporary folder beside ``outdir``; when the block succeeds it becomes
    ``outdir`` in one atomic step (created with its parents if needed; the previous content is
    deleted, no file of it survives). On any exception -- Ctrl-C and SIGTERM included -- the
    temporary folder is removed, ``outdir`` is left as it was and the exception propagates
    (``ENOSPC`` and other write failures as :class:`~kofs.errors.OutputError` naming the
    output path). Claims ``outdir`` (:func:`claim_output`) unless this run already did.
    """
    with claim_output(outdir) as claim, claim.stage() as tmp:
        yield tmp


# ---------------------------------------------------------------------- readers
def read_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The completion record of an output folder, or ``None`` if it has none (or a damaged
    one)."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None
    return data


def check_complete(folder: str | os.PathLike) -> None:
    """Check that ``folder`` is a complete kofs output folder (its marker is there and every
    file it lists has the recorded size).

    Raises
    ------
    InputError
        No marker (the run writing it was stopped, or the folder was copied without its
        hidden files), or a listed file is missing or of another size.
    """
    p = Path(folder)
    marker = read_marker(p)
    if marker is None and (p / MARKER).is_file():
        raise InputError(
            f"its {MARKER} is damaged (not the record kofs writes); run kofs again, or give a "
            "file inside it (e.g. ranking.tsv) to read that file anyway",
            path=p,
        )
    if marker is None:
        raise InputError(
            f"has no {MARKER}: the kofs run writing it did not finish (was it stopped?), or "
            "the folder was copied without its hidden files; run kofs again, or give a file "
            "inside it (e.g. ranking.tsv) to read that file anyway",
            path=p,
        )
    for name, rec in sorted(marker["files"].items()):
        f = p / name
        try:
            size = f.stat().st_size
        except OSError:
            size = None
        if size != rec.get("bytes"):
            # (it said "delete .kofs-complete to use the folder as it is", and a folder without
            # its marker is refused above; a file's reader checks the marker's files beside it)
            raise InputError(
                f"{name} is missing or was changed after kofs wrote it ({MARKER} records "
                f"{rec.get('bytes')} bytes); run kofs again, or delete {MARKER} and give the "
                "file inside it (e.g. ranking.tsv, not the folder) to read the files as they are",
                path=p,
            )


def verify_output_file(path: str | os.PathLike) -> None:
    """If ``path`` lies in a kofs output folder and is one of its files, check it is complete
    and unchanged (size and SHA-256 recorded in the folder's marker). Files elsewhere, and
    files the marker does not list, pass.

    Raises
    ------
    InputError
        The file differs from what kofs wrote (cut, truncated or edited).
    """
    p = Path(path)
    marker = read_marker(p.parent)
    rec = None if marker is None else marker["files"].get(p.name)
    if not isinstance(rec, dict):
        return
    try:
        now = file_digest(p)
    except OSError:
        return  # a missing/unreadable file is reported by its reader
    if now != (rec.get("bytes"), rec.get("sha256")):
        raise InputError(
            f"differs from what kofs wrote ({now[0]} bytes, {MARKER} records {rec.get('bytes')}"
            "): it was cut or changed after the run; run kofs again, or delete "
            f"{p.parent / MARKER} to use the file as it is",
            path=p,
        )
