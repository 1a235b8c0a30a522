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


class UserPath(click.Path):
    """A :class:`click.Path` that also expands ``~`` (when a quoted ``'~/x'`` reached kofs) and
    refuses a path longer than the system allows, before any work
    (:func:`kofs.options.user_path`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        from kofs.options import user_path

        if isinstance(value, str) and value != "-":
            try:
                value = user_path(value)
            except ValueError as exc:
                self.fail(str(exc), param, ctx)
        return super().convert(value, param, ctx)


def seed_option(help: str = "Seed of every random choice."):
    """``--seed`` of the hand-written commands, bounded as the run option is."""
    from kofs.options import SEED_MAX

    return click.option(
        "--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True, help=help
    )


def threads_option(help: str = "Cap on BLAS/worker threads."):
    """``--threads`` of the hand-written commands, bounded as the run option is."""
    from kofs.options import THREADS_MAX

    return click.option("--threads", type=click.IntRange(1, THREADS_MAX), default=None, help=help)


def split_names(value: str | None) -> list[str] | None:
    """``"a,b, c"`` -> ``["a", "b", "c"]``; None stays None."""
    if value is None:
        return None
    names = [v.strip() for v in str(value).split(",") if v.strip()]
    if not names:
        raise ParameterError("an empty list of names was given")
    return names
