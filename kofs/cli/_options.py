"""Parsing helpers shared by subcommands (the library never sees click)."""

from __future__ import annotations

from typing import Any

import click


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
