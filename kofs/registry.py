"""Registries of rankers and aggregators: one entry per method, read by the CLI, the config
validation, ``kofs methods``, docs/methods.md and the contract tests.

A ranker entry wraps an *adapter* ``func(X, inputs, *, seed, **params)`` where ``X`` is the
(n_samples x n_genes) float64 matrix (a scipy.sparse CSR matrix only for entries declared
``sparse=True``, dense otherwise) and ``inputs`` a :class:`~kofs.types.RankerInputs` whose
knowledge is aligned to ``X``. It returns the native scores (ndarray of shape (m,)), or a pair
``(scores, info)`` with a dict of extras. NaN marks a degenerate gene.

An aggregator entry wraps ``func(ranks, *, relevant, **params)`` where ``ranks`` is the
(genes x L lists) matrix of ranks (1 = best, ties averaged) and ``relevant`` a boolean mask of
known-relevant genes or None; it returns ``(scores, weights_or_None, info)`` with higher scores
better. By default ``ranks`` is complete (partial lists completed by
:func:`kofs.aggregate.partial.complete_ranks`); an aggregator registered with
``partial_lists=True`` receives NaN where a list does not contain a gene and the keyword
``universe`` (N). ``info["statistics"]``, if present, maps names to per-gene arrays (e.g.
``p_value``, ``q_value``) that are written beside the score. Keys of ``info`` starting with
``_`` are private to the aggregator's ``diagnose`` hook and are removed by the runner.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kofs.errors import ParameterError

KNOWLEDGE_KINDS = ("categories", "similarity", "relation", "functions")


CLOSED = ("both", "left", "right", "neither")


@dataclass(frozen=True)
class Param:
    """One tunable parameter of a method, with the values it accepts.

    The declaration is the only place a parameter's range is checked: :func:`resolve_params`
    coerces and validates every given value against it (in the spirit of scikit-learn's
    ``Interval`` / ``StrOptions`` constraints), so adapters receive valid values only.

    Attributes
    ----------
    default : the default value (None allowed: "derived from the data", explained in ``help``)
    type : callable used to coerce strings from the CLI/config (int, float, str, bool)
    help : one line
    choices : allowed values (e.g. string options), or None
    low, high : numeric bounds of the allowed interval, or None (unbounded on that side)
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval: ``"both"`` is ``[low, high]``, ``"left"``
        ``[low, high)``, ``"right"`` ``(low, high]``, ``"neither"`` ``(low, high)``. An
        infinite side is always open.
    none_ok : bool, optional
        Whether None is accepted ("or None"); by default exactly when ``default`` is None.

    Examples
    --------
    >>> Param(None, float, "weight in (0, 1]", low=0, high=1, closed="right").allowed()
    'a float in (0, 1] or None'
    """

    default: Any
    type: Callable[[Any], Any]
    help: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    none_ok: bool | None = None

    def __post_init__(self) -> None:
        if self.closed not in CLOSED:
            raise RuntimeError(f"Param closed={self.closed!r}: must be one of {CLOSED}")
        if self.none_ok is None:
            object.__setattr__(self, "none_ok", self.default is None)
        if self.default is not None and not self.accepts(self.default):
            raise RuntimeError(f"Param default {self.default!r} is not {self.allowed()}")

    def interval(self) -> str:
        """The allowed interval in the usual notation, e.g. ``"[1, inf)"``, or ``""``."""
        if self.low is None and self.high is None:
            return ""
        left = "[" if self.low is not None and self.closed in ("both", "left") else "("
        right = "]" if self.high is not None and self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"{left}{low}, {high}{right}"

    def allowed(self) -> str:
        """What the parameter accepts, in words: ``"an int in [1, inf)"``, ``"one of 'a',
        'b'"``, ``"a float in (0, 1] or None"``."""
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            name = {int: "an int", float: "a float", str: "a string", bool: "a boolean"}.get(
                self.type,  # type: ignore[call-overload]
                f"a {getattr(self.type, '__name__', self.type)}",
            )
            interval = self.interval()
            text = f"{name} in {interval}" if interval else name
        return text + (" or None" if self.none_ok else "")

    def accepts(self, value: Any) -> bool:
        """True when the (already coerced) ``value`` is allowed; NaN never is."""
        if value is None:
            return bool(self.none_ok)
        if self.choices is not None and value not in self.choices:
            return False
        if self.low is not None:
            if not (value >= self.low if self.closed in ("both", "left") else value > self.low):
                return False
        if self.high is not None:
            if not (value <= self.high if self.closed in ("both", "right") else value < self.high):
                return False
        # NaN never; infinity passes the bounds above only at an unbounded end, which is open
        # ("(0, inf)")
        return not (isinstance(value, float) and not math.isfinite(value))


#: ``memory(n_samples, n_genes, params, given_similarity) -> bytes``: a ranker's working set on
#: an n x m matrix, ``params`` with defaults resolved, ``given_similarity`` the storage
#: (``"dense"``/``"sparse"``) of the sample similarity handed to it, or None.
MemoryEstimate = Callable[[int, int, Mapping[str, Any], "str | None"], float]


@dataclass(frozen=True)
class RankerSpec:
    """Registry entry of a ranker.

    ``memory`` estimates the ranker's peak working set (:data:`MemoryEstimate`); None means
    about two float64 copies of the matrix (:meth:`estimate_memory`). ``expression``: the
    adapter also receives the :class:`~kofs.types.Expression` it ranks (gene ids, symbols, the
    file's path) as the keyword ``expression``. ``counts``: the ranker takes raw counts (or
    log-normalised counts, turned back into counts) for what they are -- it models them or
    normalises them itself -- and is not warned about (some refuse values that are not counts).
    """

    name: str
    func: Callable[..., Any]
    higher_is_better: bool
    summary: str
    reference: str
    family: str
    requires: frozenset[str] = frozenset()
    requires_one_of: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()
    params: Mapping[str, Param] = field(default_factory=dict)
    multivariate: bool = False
    in_default_plan: bool = True
    slow: bool = False
    sparse: bool = False
    memory: MemoryEstimate | None = None
    expression: bool = False
    counts: bool = False

    @property
    def supervised(self) -> bool:
        return "categories" in self.requires

    def estimate_memory(
        self,
        n_samples: int,
        n_genes: int,
        params: Mapping[str, Any] | None = None,
        given_similarity: str | None = None,
    ) -> int:
        """Bytes the ranker needs on an ``n_samples`` x ``n_genes`` matrix.

        ``params`` are resolved over the declared defaults first. Without a ``memory``
        estimate: two float64 copies of the matrix (the input and one working copy).
        """
        n, m = int(n_samples), int(n_genes)
        if self.memory is None:
            return 2 * 8 * n * m
        full = {k: p.default for k, p in self.params.items()}
        full.update(params or {})
        return int(self.memory(n, m, full, given_similarity))


@dataclass(frozen=True)
class AggregatorSpec:
    """Registry entry of a rank aggregator."""

    name: str
    func: Callable[..., Any]
    summary: str
    reference: str
    params: Mapping[str, Param] = field(default_factory=dict)
    learns_weights: bool = False
    supports_relevant: bool = False
    partial_lists: bool = False
    context: bool = False
    diagnose: Callable[..., dict] | None = None
    book: bool = False


S = TypeVar("S", RankerSpec, AggregatorSpec)


class Registry(Generic[S]):
    """Name -> spec, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._specs: dict[str, S] = {}

    def add(self, spec: S) -> S:
        if spec.name in self._specs:
            raise RuntimeError(f"{self.kind} {spec.name!r} registered twice")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> S:
        try:
            return self._specs[name]
        except KeyError:
            raise ParameterError(unknown_message(self.kind, name, self._specs)) from None

    def names(self) -> list[str]:
        return list(self._specs)

    def __iter__(self) -> Iterator[S]:
        return iter(self._specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)


def unknown_message(kind: str, name: str, known: Mapping[str, Any] | list[str]) -> str:
    """``unknown ranker 'fishr' (did you mean 'fisher'?); known: ...``"""
    names = list(known)
    if not names:
        return f"unknown {kind} {name!r}: there is none to set"
    close = difflib.get_close_matches(str(name), names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; known: {', '.join(names)}"


def _coerce_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{value!r} is not a boolean")


def resolve_params(
    owner: str, params: Mapping[str, Param], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Defaults overlaid with ``given``, coerced and checked.

    Raises
    ------
    ParameterError
        For an unknown name (with a did-you-mean hint), or a value of the wrong type, outside
        the interval, not among the choices or None where None is not accepted; the message
        names the owner, the parameter, the value and what is allowed
        (``ranker 'laplacian': parameter 'k' must be an int in [1, inf), got 0``).
    """
    out = {k: p.default for k, p in params.items()}
    if not isinstance(given, Mapping):
        raise ParameterError(
            f"{owner}: give its parameters as a mapping of name to value, not a "
            f"{type(given).__name__}"
        )
    for key, value in given.items():
        if key not in params:
            raise ParameterError(f"{owner}: " + unknown_message("parameter", key, params))
        p = params[key]
        v = value
        if value is not None:
            try:
                coerce: Callable[[Any], Any] = (
                    _coerce_bool if p.type is bool else _coerce_int if p.type is int else p.type
                )
                v = coerce(value)
            except (TypeError, ValueError, OverflowError):  # int(inf)
                v = _INVALID
        if v is _INVALID or not p.accepts(v):
            raise ParameterError(f"{owner}: parameter {key!r} must be {p.allowed()}, got {value!r}")
        out[key] = v
    return out


_INVALID = object()


def typed_params(params: Mapping[str, Param], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` with each value coerced as :func:`resolve_params` coerces it (``"7"`` -> 7 for
    an int parameter), for the record of a run (``config.resolved.yaml``, the manifest) to
    hold what ran in its own type. A key the declaration does not have, or a value that does
    not coerce, is kept as given: the run itself refuses it, with its message."""
    out = dict(given)
    for key, value in given.items():
        if key in params and value is not None:
            try:
                out[key] = resolve_params("", {key: params[key]}, {key: value})[key]
            except ParameterError:
                pass
    return out


def _coerce_int(value: Any) -> int:
    """An integer parameter's value: an int, an integer-valued float (``2.0``, ``1e3``) or its
    text; not a fraction (``int(0.5)`` was 0) and not a boolean (``True`` was 1)."""
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):  # NumPy's too
        raise TypeError("a boolean is not an integer")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            value = float(text)  # "1e3"
    if isinstance(value, numbers.Real):
        number = float(value)
        if not number.is_integer():
            raise ValueError("not a whole number")
        return int(number)
    return int(value)


RANKERS: Registry[RankerSpec] = Registry("ranker")
#: The default fusion of every entry point (``kofs rank``, ``kofs aggregate``,
#: :func:`kofs.aggregate.aggregate`, the aggregations of ``kofs reproduce`` without a method):
#: docs/aggregation.md, "Defaults".
DEFAULT_AGGREGATOR = "posterior"
AGGREGATORS: Registry[AggregatorSpec] = Registry("aggregator")


def ranker(
    name: str,
    *,
    higher_is_better: bool,
    summary: str,
    reference: str,
    family: str,
    requires: tuple[str, ...] = (),
    requires_one_of: tuple[str, ...] = (),
    uses: tuple[str, ...] = (),
    params: Mapping[str, Param] | None = None,
    multivariate: bool = False,
    in_default_plan: bool = True,
    slow: bool = False,
    sparse: bool = False,
    memory: MemoryEstimate | None = None,
    expression: bool = False,
    counts: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a ranker adapter in :data:`RANKERS` (returns it unchanged).

    ``sparse=True`` declares that the adapter accepts a scipy.sparse CSR ``X`` and never
    densifies it, and a dask array reduced chunk by chunk; the others get a dense in-memory
    ``X`` (the memory check counts the dense copy).
    """
    for kind in (*requires, *requires_one_of, *uses):
        if kind not in KNOWLEDGE_KINDS:
            raise RuntimeError(f"ranker {name}: unknown knowledge kind {kind!r}")

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        RANKERS.add(
            RankerSpec(
                name=name,
                func=func,
                higher_is_better=higher_is_better,
                summary=summary,
                reference=reference,
                family=family,
                requires=frozenset(requires),
                requires_one_of=frozenset(requires_one_of),
                uses=frozenset(uses),
                params=dict(params or {}),
                multivariate=multivariate,
                in_default_plan=in_default_plan,
                slow=slow,
                sparse=sparse,
                memory=memory,
                expression=expression,
                counts=counts,
            )
        )
        return func

    return deco


def aggregator(
    name: str,
    *,
    summary: str,
    reference: str,
    params: Mapping[str, Param] | None = None,
    learns_weights: bool = False,
    supports_relevant: bool = False,
    partial_lists: bool = False,
    context: bool = False,
    diagnose: Callable[..., dict] | None = None,
    book: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering an aggregator in :data:`AGGREGATORS` (returns it unchanged).

    ``partial_lists``: receives NaN ranks (a gene absent from a list) and ``universe``.
    ``context``: accepts the
    keyword arguments ``built_from``, ``data_lists`` and ``list_weights`` (see
    :func:`kofs.aggregate.aggregate`). ``diagnose(R, *, relevant, weights, info, n_boot, seed,
    params)`` returns the weight diagnostics (intervals, likelihood gain, identification).
    ``book``: the method of the KOFS book chapter.
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        AGGREGATORS.add(
            AggregatorSpec(
                name=name,
                func=func,
                summary=summary,
                reference=reference,
                params=dict(params or {}),
                learns_weights=learns_weights,
                supports_relevant=supports_relevant,
                partial_lists=partial_lists,
                context=context,
                diagnose=diagnose,
                book=book,
            )
        )
        return func

    return deco
