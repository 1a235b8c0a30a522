"""Declared options: the name, kind, default and help of every setting of a run.

An :class:`Option` is attached to a field of a frozen dataclass with :func:`opt`; the run
specification (:mod:`kofs.pipeline.config`) and every knowledge-source plug-in (:mod:`kofs.sources`)
declare their settings this way. The command line (``kofs rank`` options), the YAML keys of
``kofs run``, ``config.resolved.yaml`` and the manifest are all generated from these
declarations, so a setting is written down once.

Values arrive as text (command line), as YAML values (numbers, lists, mappings) or as Python
objects; :meth:`Option.parse` turns each into the one normalised form the library uses.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kofs.errors import ParameterError, short_repr

log = logging.getLogger(__name__)

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
    "ints",  # whole numbers, comma-separated or a YAML list (bounds apply to each)
    "mapping",  # a YAML mapping (its own reader checks the inside)
    "records",  # a YAML list of mappings
    "ref",  # a name, or a mapping describing the thing inline
)

#: bounds of every ``int`` option that declares none (a C ``int64``: what NumPy and the
#: compiled kernels take), so an integer never overflows inside the library
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: largest seed: scikit-learn's and NumPy's legacy generators take seeds in [0, 2**32 - 1]
SEED_MAX = 2**32 - 1
#: largest seed of ``kofs evaluate``: repeat r's folds are split with seed + r
FOLD_SEED_MAX = SEED_MAX - 10**6
#: Most bootstrap replicates of a fusion's weight intervals (``--bootstrap``, ``bootstrap=``).
BOOTSTRAP_MAX = 100_000
#: largest thread cap (a cap above the machine's cores changes nothing; above a C int it
#: overflows the thread-pool libraries)
THREADS_MAX = 1024
#: most genes a terminal summary shows
TOP_MAX = 1_000_000
#: longest path kofs accepts (Linux ``PATH_MAX`` - 1) and longest name in it (``NAME_MAX``), in
#: bytes of the file-system encoding: a longer one is refused when parsed, before any work
PATH_MAX, NAME_MAX = 4095, 255


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
        Inclusive numeric bounds (``int`` options without them are bounded by
        :data:`INT_MIN`, :data:`INT_MAX`).
    short : str, optional
        A short flag (``-o``).
    metavar : str, optional
    folder : bool
        A ``path`` that may name a folder (KGML folders).
    stdin : bool
        A ``path`` that may be ``-`` (standard input, or standard output for an output); any
        other ``path`` refuses ``-``, saying so.
    required : bool
        The setting has no default: :func:`build` refuses a value set without it (the command
        line marks the option required).
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
    required: bool = False

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

    def shown(self, value: Any) -> str:
        """The option as a user types it in a shell, for messages: ``--go-evidence EXP,IDA``,
        ``--title 'My run'``, or ``--no-report`` for a flag."""
        if self.kind == "bool":
            return self.flag
        if isinstance(value, (tuple, list)):
            value = ",".join(map(str, value))
        return f"{self.flag} {shlex.quote(str(value))}"

    def dump(self, value: Any) -> Any:
        """The plain YAML form of a normalised value."""
        if value is None:
            return None
        if self.kind in ("paths", "names", "floats", "ints"):
            return list(value)
        if self.kind == "records":
            return [dict(v) for v in value]
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
    if not str(value).strip():  # (a column, a taxon, a name: never empty)
        raise _Bad("an empty value was given")
    return str(value)


def _choice(opt: Option, value: Any) -> str:
    text = _str(opt, value)
    if opt.choices is None:  # pragma: no cover - a declaration error
        raise RuntimeError(f"option {opt.name}: kind 'choice' without choices")
    if text not in opt.choices:
        raise _Bad(f"{_short(text)} is not one of {', '.join(opt.choices)}")
    return text


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


def _bounds(opt: Option, v: float) -> None:
    if opt.low is not None and v < opt.low or opt.high is not None and v > opt.high:
        if opt.kind in ("int", "ints"):
            raise _Bad(f"{v!r} is not in the range {_range(opt)}")
        lo = "" if opt.low is None else _num(opt.low)
        hi = "" if opt.high is None else _num(opt.high)
        raise _Bad(f"{v!r} is not in the range [{lo}, {hi}]")


def _int(opt: Option, value: Any) -> int:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        raise _Bad(f"expected a number (an integer), got {str(value).lower()}")
    if isinstance(value, float):
        if not value.is_integer():
            raise _Bad(f"expected an integer, got {value!r}")
        value = int(value)
    text = str(value).strip()
    if len(text) > 40:  # int() of a 10,000-digit text is slow, and no bound is that wide
        raise _Bad(f"{_short(text)} is not in the range {_range(opt)}")
    try:
        v = int(text)
    except ValueError:
        raise _Bad(f"expected an integer, got {_short(value)}") from None
    _bounds(opt, v)
    if v < INT_MIN or v > INT_MAX:
        raise _Bad(f"{v} is not in the range {_range(opt)}")
    return v


def _range(opt: Option) -> str:
    lo = _num(opt.low) if opt.low is not None else str(INT_MIN)
    hi = _num(opt.high) if opt.high is not None else str(INT_MAX)
    return f"[{lo}, {hi}]"


def _ints(opt: Option, value: Any) -> tuple[int, ...]:
    items = _items(value)
    if not items:
        raise _Bad("an empty list of whole numbers was given")
    if any(isinstance(v, str) and not v.strip().lstrip("+-").isdigit() for v in items):
        raise _Bad(f"expected comma-separated whole numbers, e.g. 10,30,50, got {_short(value)}")
    return tuple(_int(opt, v) for v in items)


def _float(opt: Option, value: Any) -> float:
    value = _scalar(opt, value)
    if isinstance(value, bool):
        raise _Bad(f"expected a number, got {str(value).lower()}")
    try:
        v = float(str(value).strip())
    except ValueError:
        raise _Bad(f"expected a number, got {_short(value)}") from None
    if v != v:
        raise _Bad("expected a number, got nan")
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
    if text == "-":
        if opt.stdin:
            return text
        # was "-: file not found" (or another error about a file named -) once work had begun
        if opt.name.endswith("_dir"):
            raise _Bad("- is no folder here (it means standard input or output); give a folder")
        raise _Bad("cannot read standard input (-); give a file path")
    try:
        return user_path(text)
    except ValueError as exc:
        raise _Bad(str(exc)) from None


def user_path(text: str) -> str:
    """A path as the user wrote it, made usable: ``~`` and ``~user`` expanded as a shell
    would (so a config's ``output: ~/runs/x`` never makes a folder named ``~``), and its
    length checked (:data:`PATH_MAX`, :data:`NAME_MAX`) before any work.

    Raises
    ------
    ValueError
        An unknown ``~user``, a NUL character, a path or one of its names too long.
    """
    import os

    if "\x00" in text:
        raise ValueError("the path holds a NUL character")
    if text.startswith("~"):
        expanded = os.path.expanduser(text)
        if expanded.startswith("~"):
            user = text[1:].split("/", 1)[0]
            raise ValueError(f"{_short(text)}: ~{user} is not a known user's home folder")
        text = expanded
    raw = os.fsencode(text)
    if len(raw) > PATH_MAX:
        raise ValueError(f"the path is {len(raw)} bytes long; at most {PATH_MAX} are possible")
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        raise ValueError(
            f"a name in the path is {len(longest)} bytes long ({_short(os.fsdecode(longest))}); "
            f"file names have at most {NAME_MAX}"
        )
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
    if not items:  # as the other lists: rankings=[] was read as given, then found empty
        raise _Bad("an empty list of paths was given")
    return tuple(_path(opt, v) for v in items)


def _mapping(opt: Option, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _Bad(f"expected a mapping (KEY: VALUE lines), got {_short(value)}")
    return {str(k): v for k, v in value.items()}


def _records(opt: Option, value: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, Mapping) for v in value):
        raise _Bad(f"expected a list of mappings (- KEY: VALUE entries), got {_short(value)}")
    return tuple(dict(v) for v in value)


def _ref(opt: Option, value: Any) -> str | dict[str, Any]:
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return _str(opt, value)


def _names(opt: Option, value: Any) -> tuple[str, ...]:
    names = tuple(str(v) for v in _items(value))
    if not names:
        raise _Bad("an empty list of names was given")
    if opt.choices is not None:  # names of a fixed set: refused before any input is read
        unknown = [n for n in names if n not in opt.choices]
        if unknown:
            raise _Bad(f"{_short(unknown[0])} is not one of {', '.join(opt.choices)}")
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
    "ints": _ints,
    "mapping": _mapping,
    "records": _records,
    "ref": _ref,
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


def changed(settings: Any, names: Iterable[str] | None = None) -> list[str]:
    """The declared options of the dataclass instance ``settings`` (those of ``names``, in
    that order; default: all) set to other than their default, as typed
    (:meth:`Option.shown`)."""
    declared = {o.name: o for o in options_of(type(settings))}
    out = []
    for name in declared if names is None else names:
        o, value = declared[name], getattr(settings, name)
        if value is not None and value != o.default:
            out.append(o.shown(value))
    return out


def warn_no_effect(settings: Sequence[str], why: str) -> None:
    """One warning line saying that ``settings`` (options as typed, :func:`changed`) changed
    nothing, and ``why`` (``--label-column lineage has no effect: no --labels file is
    given``); nothing when ``settings`` is empty."""
    if settings:
        verb = "has" if len(settings) == 1 else "have"
        log.warning("%s %s no effect: %s", ", ".join(settings), verb, why)


def build(cls: Any, values: Mapping[str, Any], *, where: str | None = None) -> Any:
    """An instance of ``cls`` from normalised-or-raw ``values`` (missing keys take defaults;
    a key whose value is None, YAML's ``key:`` or ``key: null``, is missing)."""
    kwargs = {}
    for o in options_of(cls):
        if values.get(o.name) is not None:
            kwargs[o.name] = o.parse(values[o.name], where=where)
        if o.required and kwargs.get(o.name) is None:
            what = f"config key {o.key!r}" if where else o.flag
            raise ParameterError(f"{what} is required: {o.help}", path=where)
    return cls(**kwargs)


def build_known(cls: Any, values: Mapping[str, Any], what: str) -> Any:
    """:func:`build` from ``{name: value}`` (dashes or underscores) after checking every name
    is an option of ``cls``: an unknown one fails with a did-you-mean hint naming ``what``
    (e.g. ``"evaluate option"``)."""
    from kofs.registry import unknown_message

    if not isinstance(values, Mapping):  # a list of paths, a file name: not {name: value}
        raise ParameterError(
            f"give the {what}s as a mapping of name to value, not a {type(values).__name__}"
        )
    given = {str(k).replace("-", "_"): v for k, v in values.items()}
    known = [o.name for o in options_of(cls)]
    for name in given:
        if name not in known:
            raise ParameterError(unknown_message(what, name, known))
    return build(cls, given)


def parse_declared(
    values: Mapping[str, Any],
    options: Iterable[Option],
    *,
    where: str | None = None,
    section: str = "",
) -> dict[str, Any]:
    """Check a config mapping against declared options (for configs that are not a dataclass:
    ``kofs reproduce``): unknown keys fail with a did-you-mean hint, every given value is
    parsed by its option; keys not given are absent from the result (dash or underscore
    spellings are one key; a None value, YAML's ``key:`` or ``key: null``, is a key not given).

    Raises
    ------
    ParameterError
        An unknown key, a key given twice, or a value its declaration refuses (one line).
    """
    import difflib

    declared = {o.name: o for o in options}
    prefix = f"{section}." if section else ""
    out: dict[str, Any] = {}
    nulls: set[str] = set()
    for key, value in values.items():
        name = str(key).strip().replace("-", "_")
        o = declared.get(name)
        if o is None:
            keys = [k.replace("_", "-") for k in declared]
            close = difflib.get_close_matches(name.replace("_", "-"), keys, n=1)
            hint = f"did you mean {prefix}{close[0]!r}?" if close else f"keys: {', '.join(keys)}"
            raise ParameterError(
                f"unknown config key {prefix}{name.replace('_', '-')!r} ({hint})", path=where
            )
        if name in out or name in nulls:
            raise ParameterError(f"config key {prefix}{o.key!r} given twice", path=where)
        if value is None:
            nulls.add(name)
            continue
        try:
            out[name] = o.parse(value, where=where)
        except ParameterError as exc:
            if not section:
                raise
            raise ParameterError(exc.message.replace("config key '", f"config key '{prefix}", 1),
                                 path=where) from None  # fmt: skip
    return out


def as_mapping(obj: Any, *, names: Iterable[str] | None = None) -> dict[str, Any]:
    """``{name: plain value}`` of a dataclass instance declared with :func:`opt`."""
    keep = None if names is None else set(names)
    return {
        o.name: o.dump(getattr(obj, o.name))
        for o in options_of(type(obj))
        if keep is None or o.name in keep
    }
