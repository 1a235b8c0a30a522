"""Declared options: the name, kind, default and help of every setting of a run.

An :class:`Option` is attached to a field of a frozen dataclass with :func:`opt`; the run
specification (:mod:`kofs.config`) and every knowledge-source plug-in (:mod:`kofs.sources`)
declare their settings this way. The command line (``kofs rank`` options), the YAML keys of
``kofs run``, ``config.resolved.yaml`` and the manifest are all generated from these
declarations, so a setting is written down once.

Values arrive as text (command line), as YAML values (numbers, lists, mappings) or as Python
objects; :meth:`Option.parse` turns each into the one normalised form the library uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kofs.errors import ParameterError, short_repr

#: kinds of value (how text/YAML is parsed and how the command line shows the option)
KINDS = (
    "str",  # free text
    "choice",  # one of ``choices``
    "int",  # whole number, optional lower bound ``low``
    "float",  # number, optional bounds
    "bool",  # a flag
    "path",  # one file (or folder with ``folder=True``) path, resolved relative to a config
    "paths",  # several file paths (repeatable)
    "names",  # names, comma-separated on the command line or a YAML list
    "floats",  # numbers, comma-separated or a YAML list
    "params",  # NAME.KEY=VALUE items (repeatable) or a mapping {NAME: {KEY: VALUE}}
    "flat_params",  # KEY=VALUE items (repeatable) or a mapping {KEY: VALUE}
)


@dataclass(frozen=True)
class Option:
    """One setting of a run.

    Attributes
    ----------
    name : str
        Key with underscores (``go_aspect``); the command line shows ``--go-aspect`` and YAML
        accepts both spellings.
    kind : str
        One of :data:`KINDS`.
    default : Any
        Default value in normalised form.
    help : str
        One line for ``--help`` and the docs.
    choices : tuple of str, optional
    low, high : float, optional
        Inclusive numeric bounds.
    short : str, optional
        A short flag (``-o``).
    metavar : str, optional
    folder : bool
        A ``path`` that may name a folder (KGML folders).
    stdin : bool
        A ``path`` that may be ``-`` (standard input).
    """

    name: str
    kind: str = "str"
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] | None = None
    low: float | None = None
    high: float | None = None
    short: str | None = None
    metavar: str | None = None
    folder: bool = False
    stdin: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise RuntimeError(f"option {self.name}: unknown kind {self.kind!r}")

    @property
    def flag(self) -> str:
        """The long command-line flag, e.g. ``--go-aspect``."""
        return "--" + self.name.replace("_", "-")

    @property
    def key(self) -> str:
        """The YAML key, e.g. ``go-aspect``."""
        return self.name.replace("_", "-")

    @property
    def is_path(self) -> bool:
        return self.kind in ("path", "paths")

    def parse(self, value: Any, *, where: str | None = None) -> Any:
        """Normalise ``value`` (text, YAML value or Python object) or raise ParameterError."""
        if value is None:
            return None
        try:
            return _PARSERS[self.kind](self, value)
        except _Bad as exc:
            what = f"config key {self.key!r}" if where else self.flag
            raise ParameterError(f"{what}: {exc}", path=where) from None

    def dump(self, value: Any) -> Any:
        """The plain YAML form of a normalised value."""
        if value is None:
            return None
        if self.kind in ("paths", "names", "floats"):
            return list(value)
        if self.kind == "params":
            return {k: dict(v) for k, v in value.items()}
        if self.kind == "flat_params":
            return dict(value)
        return value


class _Bad(Exception):
    """A value that does not fit its option (turned into ParameterError by Option.parse)."""


def _short(value: Any, limit: int = 60) -> str:
    # never the full repr: an alias-expanded YAML value can be hundreds of megabytes
    return short_repr(value, limit)


def _scalar(opt: Option, value: Any) -> Any:
    if isinstance(value, (list, tuple, dict, set)):
        raise _Bad(f"expected a single value, got {_short(value)}")
    return value


def _str(opt: Option, value: Any) -> str:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        raise _Bad(f"expected text, got {str(value).lower()}")
    return str(value)


def _choice(opt: Option, value: Any) -> str:
    text = _str(opt, value)
    assert opt.choices is not None
    if text not in opt.choices:
        raise _Bad(f"{_short(text)} is not one of {', '.join(opt.choices)}")
    return text


def _bounds(opt: Option, v: float) -> None:
    if opt.low is not None and v < opt.low or opt.high is not None and v > opt.high:
        lo = "" if opt.low is None else f"{opt.low:g}"
        hi = "" if opt.high is None else f"{opt.high:g}"
        raise _Bad(f"{v!r} is not in the range [{lo}, {hi}]")


def _int(opt: Option, value: Any) -> int:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        raise _Bad(f"expected a number (an integer), got {str(value).lower()}")
    if isinstance(value, float):
        if not value.is_integer():
            raise _Bad(f"expected an integer, got {value!r}")
        value = int(value)
    try:
        v = int(str(value).strip())
    except ValueError:
        raise _Bad(f"expected an integer, got {_short(value)}") from None
    _bounds(opt, v)
    return v


def _float(opt: Option, value: Any) -> float:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        raise _Bad(f"expected a number, got {str(value).lower()}")
    try:
        v = float(str(value).strip())
    except ValueError:
        raise _Bad(f"expected a number, got {_short(value)}") from None
    _bounds(opt, v)
    return v


def _bool(opt: Option, value: Any) -> bool:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise _Bad(f"expected true or false, got {_short(value)}")


def _path(opt: Option, value: Any) -> str:
    if isinstance(value, (list, tuple, dict, set, bool, int, float)):
        raise _Bad(f"expected a file path, got {_short(value)}")
    text = str(value)
    if not text.strip():
        raise _Bad("an empty path was given")
    return text


def _items(value: Any) -> list[Any]:
    """A YAML list, a tuple, or one comma-separated text."""
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            if isinstance(v, (list, tuple, dict)):
                raise _Bad(f"expected a list of single values, got {_short(value)}")
            out.extend(_split(v) if isinstance(v, str) else [v])
        return out
    if isinstance(value, dict):
        raise _Bad(f"expected a list, got a mapping {_short(value)}")
    return _split(str(value))


def _split(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _paths(opt: Option, value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return tuple(_path(opt, v) for v in items)


def _names(opt: Option, value: Any) -> tuple[str, ...]:
    names = tuple(str(v) for v in _items(value))
    if not names:
        raise _Bad("an empty list of names was given")
    return names


def _floats(opt: Option, value: Any) -> tuple[float, ...]:
    items = _items(value)
    if not items:
        raise _Bad("an empty list of numbers was given")
    try:
        return tuple(float(v) for v in items)
    except (TypeError, ValueError):
        raise _Bad(f"expected comma-separated numbers, got {_short(value)}") from None


def _assignments(value: Any, form: str = "KEY=VALUE") -> list[tuple[str, Any]]:
    """``KEY=VALUE`` texts (one, or a list) or a mapping -> (key, value) pairs."""
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    items = value if isinstance(value, (list, tuple)) else [value]
    out: list[tuple[str, Any]] = []
    for item in items:
        if isinstance(item, Mapping):
            out.extend((str(k), v) for k, v in item.items())
            continue
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip():
            raise _Bad(f"{_short(item)}: expected {form}")
        out.append((key.strip(), val.strip()))
    return out


def _params(opt: Option, value: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for target, val in _assignments(value, "NAME.KEY=VALUE, e.g. laplacian.k=10"):
        if isinstance(val, Mapping):  # {laplacian: {k: 10}}
            for key, v in val.items():
                out.setdefault(target, {})[str(key)] = _plain(v)
            continue
        owner, dot, key = target.rpartition(".")
        if not dot or not owner.strip() or not key.strip():
            raise _Bad(f"{_short(target)}: expected NAME.KEY=VALUE, e.g. laplacian.k=10")
        out.setdefault(owner.strip(), {})[key.strip()] = _plain(val)
    return out


def _flat_params(opt: Option, value: Any) -> dict[str, Any]:
    return {k: _plain(v) for k, v in _assignments(value)}


def _plain(v: Any) -> Any:
    if isinstance(v, (list, tuple, dict)):
        raise _Bad(f"expected a single value, got {_short(v)}")
    return v


_PARSERS = {
    "str": _str,
    "choice": _choice,
    "int": _int,
    "float": _float,
    "bool": _bool,
    "path": _path,
    "paths": _paths,
    "names": _names,
    "floats": _floats,
    "params": _params,
    "flat_params": _flat_params,
}


def opt(name: str, kind: str = "str", default: Any = None, help: str = "", **kw: Any) -> Any:
    """A dataclass field carrying its :class:`Option` (``metadata["option"]``)."""
    option = Option(name, kind, default, help, **kw)
    if isinstance(default, (dict, list)):
        return dataclasses.field(
            default_factory=lambda: type(default)(default), metadata={"option": option}
        )
    return dataclasses.field(default=default, metadata={"option": option})


def options_of(cls: Any) -> list[Option]:
    """The options of a dataclass declared with :func:`opt`, in field order."""
    return [f.metadata["option"] for f in dataclasses.fields(cls) if "option" in f.metadata]


def build(cls: Any, values: Mapping[str, Any], *, where: str | None = None) -> Any:
    """An instance of ``cls`` from normalised-or-raw ``values`` (missing keys take defaults)."""
    kwargs = {}
    for o in options_of(cls):
        if o.name in values:
            kwargs[o.name] = o.parse(values[o.name], where=where)
    return cls(**kwargs)


def as_mapping(obj: Any, *, names: Iterable[str] | None = None) -> dict[str, Any]:
    """``{name: plain value}`` of a dataclass instance declared with :func:`opt`."""
    keep = None if names is None else set(names)
    return {
        o.name: o.dump(getattr(obj, o.name))
        for o in options_of(type(obj))
        if keep is None or o.name in keep
    }
