"""Parsing helpers shared by subcommands (the library never sees click)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kofs.errors import ParameterError, short_repr


def split_names(value: str | None) -> list[str] | None:
    """``"a,b, c"`` -> ``["a", "b", "c"]``; None stays None."""
    if value is None:
        return None
    names = [v.strip() for v in str(value).split(",") if v.strip()]
    if not names:
        raise ParameterError("an empty list of names was given")
    return names


def parse_params(items: Iterable[str], *, option: str = "--param") -> dict[str, dict[str, Any]]:
    """``["laplacian.k=10", "spec-phi3.k=4"]`` -> ``{"laplacian": {"k": "10"}, ...}``.

    Values stay strings; the registry coerces them to each parameter's type.
    """
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        target, sep, value = str(item).partition("=")
        owner, dot, key = target.rpartition(".")
        if not sep or not dot or not owner or not key:
            raise ParameterError(
                f"{option} {short_repr(item)}: expected NAME.KEY=VALUE, e.g. laplacian.k=10"
            )
        out.setdefault(owner.strip(), {})[key.strip()] = value.strip()
    return out


def parse_flat_params(items: Iterable[str], *, option: str) -> dict[str, Any]:
    """``["tol=1e-8"]`` -> ``{"tol": "1e-8"}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"{option} {short_repr(item)}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out
