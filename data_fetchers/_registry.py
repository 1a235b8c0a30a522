"""The source registry: one :class:`SourceSpec` per name in :data:`SOURCES`.

A spec says which parameters a source takes (species, version, ...), where its files live
(a base URL plus relative paths, both rendered from the parameters), how its cache folder
(release) is named, and optionally how to discover more files after the first ones
(``expand``, e.g. one KGML per KEGG pathway) and how to post-process them (``post``, e.g. GEO
series matrix -> expression TSV + samples TSV). :func:`data_fetchers.fetch` runs any spec.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kofs.errors import ParameterError

from ._cache import is_cached, write_source_json
from ._download import _now, file_digests

__all__ = [
    "SourceParam",
    "Remote",
    "FetchContext",
    "SourceSpec",
    "SOURCES",
    "register",
    "get_source",
    "derive",
]

#: Default pattern of a parameter value: safe as a path component and in a URL.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._+-]*"

Template = str | Callable[[Mapping[str, str]], str]


def render(template: Template, values: Mapping[str, str]) -> str:
    """A template string formatted with the parameter values, or the callable's result."""
    return template(values) if callable(template) else template.format(**values)


@dataclass(frozen=True)
class SourceParam:
    """One parameter of a source (a CLI option ``--<name>``).

    ``default=None`` and ``required=False`` mean optional without value; ``flag`` parameters
    are switches whose value is ``"1"`` or ``""``; ``pattern`` must match the whole value.
    """

    name: str
    help: str
    default: str | None = None
    required: bool = False
    pattern: str = NAME_PATTERN
    flag: bool = False
    example: str = ""


@dataclass(frozen=True)
class Remote:
    """One file to download: URL ``path`` relative to the base, cached ``name`` (relative to
    the release folder), optional ``checksum = (algorithm, relative path of the checksum
    file)``; an ``optional`` file missing upstream (404) is skipped with a warning."""

    path: str
    name: str
    checksum: tuple[str, str] | None = None
    optional: bool = False


@dataclass
class FetchContext:
    """What ``expand`` and ``post`` hooks see: the cache folder, parameters, the files
    available so far (cached name -> path) and whether any was (re)downloaded in this call."""

    folder: Path
    params: Mapping[str, str]
    files: dict[str, Path] = field(default_factory=dict)
    fresh: bool = False
    offline: bool = False


@dataclass(frozen=True)
class SourceSpec:
    """How to fetch one source; see the module docstring."""

    name: str
    description: str
    base: Template
    files: Callable[[Mapping[str, str]], list[Remote]]
    release: Template
    params: tuple[SourceParam, ...] = ()
    positional: str | None = None
    expand: Callable[[FetchContext], list[Remote]] | None = None
    post: Callable[[FetchContext], list[Path]] | None = None
    not_found_hint: str | None = None
    request_interval: float = 0.0
    checksums: str = "none published"

    def resolve(self, given: Mapping[str, object]) -> dict[str, str]:
        """Validated parameter values (defaults filled); unknown/missing/bad -> ParameterError."""
        known = {p.name: p for p in self.params}
        unknown = [k for k, v in given.items() if k not in known and v not in (None, False, "")]
        if unknown:
            takes = ", ".join(_option(p) for p in self.params) or "no options"
            raise ParameterError(
                f"source {self.name!r} does not take {_option_name(unknown[0])}; it takes {takes}"
            )
        values: dict[str, str] = {}
        for p in self.params:
            raw = given.get(p.name)
            if p.flag:
                values[p.name] = "1" if raw else ""
                continue
            value = p.default if raw in (None, "") else str(raw)
            if value is None:
                if p.required:
                    raise ParameterError(
                        f"source {self.name!r} needs {_option(p)} ({p.help}), e.g. "
                        f"kofs fetch {self.name} {_option(p, p.example)}"
                    )
                values[p.name] = ""
                continue
            if not re.fullmatch(p.pattern, value) or (p.pattern == NAME_PATTERN and ".." in value):
                eg = p.example or p.default
                raise ParameterError(
                    f"{_option(p)} {value!r} is not valid for source {self.name!r}: {p.help}"
                    + (f" (e.g. {_option(p, eg)})" if eg else "")
                )
            values[p.name] = value
        return values

    def default_urls(self) -> list[str]:
        """The upstream URLs with example parameter values (for ``kofs fetch list``)."""
        values = {p.name: p.default or (p.example if p.required else "") for p in self.params}
        for p in self.params:
            if p.flag:
                values[p.name] = ""
        base = render(self.base, values)
        return [join_url(base, r.path) for r in self.files(values)]


def join_url(base: str, path: str) -> str:
    """``base`` + ``/`` + ``path`` (``base`` alone when ``path`` is empty)."""
    return base if not path else base.rstrip("/") + "/" + path


def _option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def _option(p: SourceParam, value: str | None = None) -> str:
    name = _option_name(p.name) if p.name != "accession" else "ACCESSION"
    if value:
        return f"{name} {value}" if p.name != "accession" else value
    return name


SOURCES: dict[str, SourceSpec] = {}


def register(spec: SourceSpec) -> SourceSpec:
    """Add ``spec`` to :data:`SOURCES` (names are unique)."""
    if spec.name in SOURCES:
        raise RuntimeError(f"source {spec.name!r} registered twice")
    SOURCES[spec.name] = spec
    return spec


def get_source(name: str) -> SourceSpec:
    """The spec named ``name``; an unknown name is a ParameterError with the closest names."""
    try:
        return SOURCES[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(SOURCES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ParameterError(
            f"unknown source {name!r}; {hint}sources are {', '.join(sorted(SOURCES))} "
            "(see `kofs fetch list`)"
        ) from None


def derive(
    ctx: FetchContext,
    out: Path,
    inputs: list[Path],
    write: Callable[[Path], None],
    *,
    how: str,
) -> Path:
    """Make the derived file ``out`` from ``inputs`` with ``write(tmp_path)``, atomically.

    Skipped when ``out`` is cached and no input was downloaded in this call. The
    ``.source.json`` of ``out`` names its inputs with their sha256 and ``how`` it was made.
    """
    if is_cached(out) and not ctx.fresh:
        return out
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        write(Path(tmp))
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    record = {
        "derived_from": [
            {"file": p.name, "sha256": file_digests(p)["sha256"]} for p in inputs if p.is_file()
        ],
        "how": how,
        "date": _now(),
        **file_digests(out),
    }
    write_source_json(out, record)
    return out
