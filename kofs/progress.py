"""Progress reports of long steps, as an explicit callback (no global state, no terminal code).

The library tells a :class:`Progress` object about named *tasks*: ``start(task, total)``, then
``advance(task, n)`` as work is done, then ``finish(task)``. Functions that do long work take a
``progress=`` argument (default ``None``: nothing is reported); the command line passes a rich
progress bar on a terminal (``kofs.cli._progress``), and tests pass a recorder.

Tasks reported today:

======================================  =======================================================
task                                    unit of ``total`` / ``advance``
======================================  =======================================================
``GO parsing``                          none (start/finish only)
``GO annotations``                      none
``GO information content``              none
``GO similarity``                       genes (rows of the gene x gene similarity)
``lists``                               ranked lists of the plan
``evaluation folds``                    cross-validation folds (times repeats)
======================================  =======================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

__all__ = ["Progress", "NoProgress", "Recorder", "task"]

T = TypeVar("T")


class Progress(Protocol):
    """What the library calls; every method must be cheap and must not raise."""

    def start(self, task: str, total: int | None = None) -> None: ...

    def advance(self, task: str, amount: int = 1) -> None: ...

    def finish(self, task: str) -> None: ...


class NoProgress:
    """Reports nothing (the default)."""

    def start(self, task: str, total: int | None = None) -> None:
        pass

    def advance(self, task: str, amount: int = 1) -> None:
        pass

    def finish(self, task: str) -> None:
        pass


class Recorder:
    """Keeps every event as a tuple ``(event, task, number)`` in :attr:`events` (for tests and
    for callers that want a log)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    def start(self, task: str, total: int | None = None) -> None:
        self.events.append(("start", task, total))

    def advance(self, task: str, amount: int = 1) -> None:
        self.events.append(("advance", task, amount))

    def finish(self, task: str) -> None:
        self.events.append(("finish", task, None))

    def tasks(self) -> list[str]:
        """Names of the started tasks, in order."""
        return [t for e, t, _ in self.events if e == "start"]


class _Task:
    """One task of a :class:`Progress`: a context manager (start/finish) and a callable
    (advance)."""

    def __init__(self, progress: Progress | None, name: str, total: int | None) -> None:
        self.progress = progress or NoProgress()
        self.name = name
        self.total = total

    def __enter__(self) -> _Task:
        self.progress.start(self.name, self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.finish(self.name)

    def __call__(self, amount: int = 1) -> None:
        self.progress.advance(self.name, int(amount))

    def each(self, items: Iterable[T], size: Callable[[T], int] | None = None) -> Iterator[T]:
        """Yield ``items``, advancing by ``size(item)`` (default 1) after each; start and
        finish around the loop."""
        with self:
            for item in items:
                yield item
                self(1 if size is None else size(item))


def task(progress: Progress | None, name: str, total: int | None = None) -> _Task:
    """A task of ``progress`` (``None``: a task that reports nothing)."""
    return _Task(progress, name, total)
