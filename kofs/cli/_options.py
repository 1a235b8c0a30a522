"""Parsing helpers shared by subcommands (the library never sees click)."""

from __future__ import annotations

import importlib
from typing import Any

import click

from kofs.errors import ParameterError


class LazyChoice(click.Choice):
    """A :class:`click.Choice` whose values are read from ``module.attribute`` on first use,
    so that defining a command does not import the library (``kofs --version`` stays fast)."""

    def __init__(self, module: str, attribute: str, case_sensitive: bool = True) -> None:
        self._where = (module, attribute)
        self._choices: tuple[str, ...] | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        if self._choices is None:
            module, attribute = self._where
            value: Any = importlib.import_module(module)
            for part in attribute.split("."):
                value = getattr(value, part)
            self._choices = tuple(value() if callable(value) else value)
        return self._choices

    @choices.setter
    def choices(self, value) -> None:
        self._choices = tuple(value)


def split_names(value: str | None) -> list[str] | None:
    """``"a,b, c"`` -> ``["a", "b", "c"]``; None stays None."""
    if value is None:
        return None
    names = [v.strip() for v in str(value).split(",") if v.strip()]
    if not names:
        raise ParameterError("an empty list of names was given")
    return names
