"""Safe extraction of zip and tar archives, only ever inside the cache.

Every member is checked before anything is written: absolute names, ``..`` components, drive
letters, symbolic or hard links pointing outside the destination and device/FIFO members are
refused with an :class:`InputError` naming the member. Extraction goes to a temporary sibling
folder that is renamed into place, so a failure leaves nothing half-extracted.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from kofs.errors import InputError

__all__ = ["safe_extract", "check_member_name"]


def _refuse(archive: Path, member: str, why: str) -> InputError:
    return InputError(
        f"archive member {member!r} {why}; refusing to extract (the archive may be malicious or "
        "damaged; delete it and download again from a trusted source)",
        path=archive,
    )


def check_member_name(name: str, archive: Path) -> str:
    """Normalised relative POSIX name of a member; absolute or escaping names are refused."""
    raw = name.replace("\\", "/")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise _refuse(archive, name, "has an absolute path")
    parts = [p for p in PurePosixPath(raw).parts if p not in ("", ".")]
    if ".." in parts:
        raise _refuse(archive, name, "contains '..'")
    if not parts:
        raise _refuse(archive, name, "has an empty name")
    return "/".join(parts)


def _inside(rel: str) -> bool:
    """True when a normalised relative path stays inside the root."""
    norm = posixpath.normpath(rel)
    return not (norm == ".." or norm.startswith("../") or norm.startswith("/"))


def _check_tar(tf: tarfile.TarFile, archive: Path) -> None:
    for m in tf.getmembers():
        name = check_member_name(m.name, archive)
        if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
            raise _refuse(archive, m.name, "is a device or FIFO")
        if m.issym():
            if m.linkname.startswith("/") or not _inside(
                posixpath.join(posixpath.dirname(name), m.linkname)
            ):
                raise _refuse(archive, m.name, f"is a link pointing outside ({m.linkname!r})")
        elif m.islnk():
            if m.linkname.startswith("/") or not _inside(m.linkname):
                raise _refuse(archive, m.name, f"is a hard link pointing outside ({m.linkname!r})")
        elif not (m.isfile() or m.isdir()):
            raise _refuse(archive, m.name, "is not a regular file or folder")


def _check_zip(zf: zipfile.ZipFile, archive: Path) -> None:
    for info in zf.infolist():
        check_member_name(info.filename, archive)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise _refuse(archive, info.filename, "is a symbolic link")
        if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise _refuse(archive, info.filename, "is not a regular file or folder")


def _extract_zip(zf: zipfile.ZipFile, archive: Path, tmp: Path) -> None:
    for info in zf.infolist():
        target = tmp / check_member_name(info.filename, archive)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)


def safe_extract(archive: Path, dest: Path) -> list[Path]:
    """Extract a zip or tar(.gz/.bz2/.xz) ``archive`` into the new folder ``dest``.

    Parameters
    ----------
    archive
        The archive file.
    dest
        Destination folder; replaced if it exists. Its parent must exist.

    Returns
    -------
    list of Path
        The regular files extracted, sorted.

    Raises
    ------
    InputError
        Unsafe member (nothing is extracted) or unreadable archive.
    """
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.extract-"))
    try:
        try:
            if zipfile.is_zipfile(archive):
                with zipfile.ZipFile(archive) as zf:
                    _check_zip(zf, archive)
                    _extract_zip(zf, archive, tmp)
            elif tarfile.is_tarfile(archive):
                with tarfile.open(archive) as tf:
                    _check_tar(tf, archive)
                    # the "data" filter re-checks the same rules at extraction time
                    tf.extractall(tmp, filter="data")
            else:
                raise InputError("is neither a zip nor a tar archive", path=archive)
        except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
            raise InputError(
                f"cannot read the archive ({exc}); delete it and download again (--force)",
                path=archive,
            ) from None
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(p for p in dest.rglob("*") if p.is_file() and not p.is_symlink())
