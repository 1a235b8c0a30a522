"""Registries of rankers and aggregators: one entry per method, read by the CLI, the config
validation, ``kofs methods``, the README table and the contract tests.

A ranker entry wraps an *adapter* ``func(X, inputs, *, seed, **params)`` where ``X`` is the
(n_samples x n_genes) float64 matrix (a scipy.sparse CSR matrix only for entries declared
``sparse=True``, dense otherwise) and ``inputs`` a :class:`~kofs.types.RankerInputs` whose
knowledge is aligned to ``X``. It returns the native scores (ndarray of shape (m,)), or a pair
``(scores, info)`` with a dict of extras. NaN marks a degenerate gene.

An aggregator entry wraps ``func(ranks, *, relevant, **params)`` where ``ranks`` is the
(m genes x L lists) matrix of ranks (1 = best, ties averaged) and ``relevant`` a boolean mask of
known-relevant genes or None; it returns ``(scores, weights_or_None, info)`` with higher scores
better.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kofs.errors import ParameterError

KNOWLEDGE_KINDS = ("categories", "similarity", "relation", "functions")


@dataclass(frozen=True)
class Param:
    """One tunable parameter of a method.

    Attributes
    ----------
    default : the default value (None allowed: "derived from the data", explained in ``help``)
    type : callable used to coerce strings from the CLI/config (int, float, str, bool)
    help : one line
    choices : allowed values, or None
    low, high : inclusive numeric bounds, or None
    """

    default: Any
    type: Callable[[Any], Any]
    help: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class RankerSpec:
    """Registry entry of a ranker."""

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

    @property
    def supervised(self) -> bool:
        return "categories" in self.requires


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
        For an unknown name (with a did-you-mean hint), a value of the wrong type, outside
        the bounds or not among the choices.
    """
    out = {k: p.default for k, p in params.items()}
    for key, value in given.items():
        if key not in params:
            raise ParameterError(f"{owner}: " + unknown_message("parameter", key, params))
        p = params[key]
        if value is None:
            out[key] = None
            continue
        try:
            conv = _coerce_bool if p.type is bool else p.type
            v = conv(value)
        except (TypeError, ValueError):
            raise ParameterError(
                f"{owner}: parameter {key!r} must be {getattr(p.type, '__name__', p.type)}, got {value!r}"
            ) from None
        if p.choices is not None and v not in p.choices:
            raise ParameterError(
                f"{owner}: parameter {key!r} must be one of {', '.join(map(str, p.choices))}, got {v!r}"
            )
        if p.low is not None and v < p.low or p.high is not None and v > p.high:
            raise ParameterError(
                f"{owner}: parameter {key!r} must lie in [{p.low}, {p.high}], got {v!r}"
            )
        out[key] = v
    return out


RANKERS: Registry[RankerSpec] = Registry("ranker")
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
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering an aggregator in :data:`AGGREGATORS` (returns it unchanged)."""

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
            )
        )
        return func

    return deco
