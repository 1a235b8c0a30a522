"""Parsing helpers shared by subcommands (the library never sees click)."""

from __future__ import annotations

from kofs.errors import ParameterError


def split_names(value: str | None) -> list[str] | None:
    """``"a,b, c"`` -> ``["a", "b", "c"]``; None stays None."""
    if value is None:
        return None
    names = [v.strip() for v in str(value).split(",") if v.strip()]
    if not names:
        raise ParameterError("an empty list of names was given")
    return names
