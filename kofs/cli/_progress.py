"""Progress bars of the command line: a rich implementation of :class:`kofs.progress.Progress`
on stderr, used only when stderr is a terminal and ``-q`` was not given (never in pipes, logs
or CI)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click


class RichProgress:
    """Transient rich progress bars, one per running task (removed when it finishes)."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bars = Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._ids: dict[str, Any] = {}

    def __enter__(self) -> RichProgress:
        self._bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.stop()

    def start(self, task: str, total: int | None = None) -> None:
        self.finish(task)
        self._ids[task] = self._bars.add_task(task, total=total)

    def advance(self, task: str, amount: int = 1) -> None:
        tid = self._ids.get(task)
        if tid is not None:
            self._bars.advance(tid, amount)

    def finish(self, task: str) -> None:
        tid = self._ids.pop(task, None)
        if tid is not None:
            self._bars.remove_task(tid)


def quiet_requested() -> bool:
    """Whether the running command was given ``-q`` (its root context says so)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and (root.obj or {}).get("quiet"))


@contextlib.contextmanager
def cli_progress(*, quiet: bool | None = None) -> Iterator[RichProgress | None]:
    """A :class:`RichProgress` while the block runs, or None (stderr not a terminal, or
    ``-q``)."""
    if (quiet_requested() if quiet is None else quiet) or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    with RichProgress(Console(stderr=True)) as bars:
        yield bars
