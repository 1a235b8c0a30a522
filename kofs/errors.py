"""Exception hierarchy of kofs.

Every error a *user* can cause (a bad file, a bad parameter, an impossible request) is a
:class:`KofsError`. The CLI turns it into one line on stderr and exit status 2. Anything else
that escapes is an internal error (exit status 1).
"""

from __future__ import annotations

import functools
import numbers
import os
import re
import reprlib
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

#: Longest echo of a user's value in a message (longer values keep head and tail around "...").
VALUE_LIMIT = 80
#: Longest quoted value any message keeps (a safety net above :data:`VALUE_LIMIT`, so that
#: the quoted file paths of ordinary messages stay whole); unbroken runs may be twice as long.
QUOTED_LIMIT = 200
#: Longest error message (after the file name); a guard against values no caller shortened.
MESSAGE_LIMIT = 1000

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = VALUE_LIMIT
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3
# a quote opens after a non-word character and closes before one (so not "matrix's")
_QUOTED = re.compile(
    "|".join(rf"(?<!\w){q}(?:[^{q}\\\n]|\\.){{{QUOTED_LIMIT - 1},}}{q}(?!\w)" for q in ("'", '"'))
)
_TOKEN = re.compile(rf"\S{{{2 * QUOTED_LIMIT + 1},}}")
_BREAKS = re.compile(r"[\r\n]+")
# characters a terminal may act on: C0 controls but tab, DEL, C1 controls (ESC starts colour,
# cursor and title sequences; 0x9b is a one-byte CSI), and the bidirectional overrides that
# reorder what a reader sees
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _cut(text: str, limit: int) -> str:
    """``text`` if short enough, else its head and tail around an ellipsis (``limit`` chars)."""
    if len(text) <= limit:
        return text
    head = (limit - 3) * 2 // 3
    return text[:head] + "..." + text[len(text) - (limit - 3 - head) :]


def short_repr(value: object, limit: int = VALUE_LIMIT) -> str:
    """A user's value as shown in a message: its ``repr``, at most ``limit`` characters.

    Long strings and containers are shortened without building their full ``repr`` first
    (an alias-expanded YAML value can be hundreds of megabytes).
    """
    text = repr(value) if isinstance(value, (int, float, bool, type(None))) else _REPR.repr(value)
    return _cut(text, limit)


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: every control character (escape sequences, bells,
    backspaces, C1 controls, bidirectional overrides) written as a visible escape such as
    ``\\x1b``; tabs and line breaks are kept (:func:`one_line` folds the breaks)."""
    s = str(text)
    if not _CONTROLS.search(s):
        return s
    return _CONTROLS.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", s
    )


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """Any message made fit for one stderr line: no line breaks, quoted values longer than
    :data:`QUOTED_LIMIT` and unbroken runs longer than twice that shortened (head and tail
    kept), at most ``limit`` characters. Every :class:`KofsError` and every CLI error line goes
    through it; values a caller echoes should be shown with :func:`short_repr` (80)."""
    text = printable(_BREAKS.sub(" ", str(text)))
    if len(text) <= QUOTED_LIMIT:
        return text
    text = _QUOTED.sub(lambda m: m[0][0] + _cut(m[0][1:-1], QUOTED_LIMIT - 2) + m[0][0], text)
    text = _TOKEN.sub(lambda m: _cut(m[0], 2 * QUOTED_LIMIT), text)
    return _cut(text, limit)


class KofsError(Exception):
    """Base class of every user-facing kofs error.

    Parameters
    ----------
    message
        What is wrong and, where possible, what to do about it.
    path
        The file concerned, if any; it is prefixed to the message.
    line, column
        1-based position in the file, when known.
    """

    exit_code = 2
    #: How the path ``-`` is named in the message (an input's ``<stdin>``, as the readers name
    #: it; None: as given)
    _stdin: str | None = None

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike | None = None,
        line: int | None = None,
        column: str | int | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.column = column
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.path != "-" or self._stdin is None else self._stdin
            if self.line is not None:
                where += f":{self.line}"
            if self.column is not None:
                where += f" (column {self.column})"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        # one line, always, and never a megabyte of echoed value
        return one_line(where) + one_line(self.message)


class InputError(KofsError, ValueError):
    """A file cannot be read or its content cannot be used.

    Also a :class:`ValueError`, so that code written against the Python conventions (and
    scikit-learn's) can catch it as one.
    """

    _stdin = "<stdin>"


class ParameterError(KofsError, ValueError):
    """A parameter value is invalid or inputs are inconsistent with the request.

    Also a :class:`ValueError` (as :class:`InputError`).
    """


def whole_number(value: object) -> bool:
    """Whether ``value`` is a whole number (a Python or NumPy integer), not a bool (which
    Python counts as one), a float such as 2.5 (which int() would cut) or a text."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def require_instance(where: str, name: str, given: object, cls: type, made_by: str) -> None:
    """A ParameterError unless ``given`` is a ``cls``: ``where``'s argument ``name`` must be
    what ``made_by`` returns (not an AttributeError from deep inside the call)."""
    if not isinstance(given, cls):
        got = "None" if given is None else f"a {type(given).__name__}"
        raise ParameterError(
            f"{where}: {name} must be what {made_by}(...) returns (a {cls.__name__}), got {got}"
        )


def did_you_mean(name: str, known: Sequence[str], otherwise: str) -> str:
    """``did you mean 'x'?`` for the closest of ``known`` to ``name``, else ``otherwise`` (what
    to look at instead): the hint of an unknown keyword, option or setting."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean {close[0]!r}?" if close else otherwise


_P = ParamSpec("_P")
_R = TypeVar("_R")


def checked_keywords(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` whose arguments are checked before it runs: an unknown keyword (a misspelling
    such as ``aggregat="rra"``) or an option given by position is a :class:`ParameterError`
    with a did-you-mean hint, as :func:`kofs.rank`'s, not Python's TypeError."""
    import inspect

    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD or p.kind is p.VAR_POSITIONAL for p in params):
        raise RuntimeError(f"{fn.__name__}: checked_keywords needs named parameters only")
    keywords = [p.name for p in params if p.kind is not p.POSITIONAL_ONLY]
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    by_name = [f"{p.name}=" for p in params if p.kind is p.KEYWORD_ONLY]
    others = "; give the others by name (" + ", ".join(by_name[:3]) if by_name else ""
    others += (", ...)" if len(by_name) > 3 else ")") if by_name else ""

    @functools.wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if len(args) > len(positional):
            raise ParameterError(
                f"{fn.__name__}: takes {len(positional)} argument(s) by position "
                f"({', '.join(positional) or 'none'}), got {len(args)}{others}"
            )
        for name in kwargs:
            if name not in keywords:
                hint = did_you_mean(name, keywords, "keywords: " + ", ".join(keywords))
                raise ParameterError(f"{fn.__name__}: unknown keyword {name!r} ({hint})")
        return fn(*args, **kwargs)

    return call


class CoverageError(InputError):
    """A knowledge source shares no (or too few) genes with the expression matrix."""


class ResourceError(KofsError):
    """A step would exceed the allowed memory or another resource limit."""


class OutputError(KofsError):
    """An output location cannot be used (not writable, is a file, ...)."""


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM (a job scheduler's stop) or SIGHUP (its terminal or
    session went away); the CLI raises it in the main thread like Ctrl-C raises
    :class:`KeyboardInterrupt`, so the same clean-up runs.

    Attributes
    ----------
    signum : int
        The signal (the exit status is 128 + ``signum``: 143 for SIGTERM, 129 for SIGHUP).
    """

    def __init__(self, signum: int = 15) -> None:
        super().__init__()
        self.signum = signum

    @property
    def word(self) -> str:
        """How the stop is named on the one stderr line."""
        return "hung up" if self.signum == 1 else "terminated"


def stop_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or stop signal) an error was raised from, if any: a signal that lands while
    a compiled extension initialises surfaces as its ``ImportError("initialization failed")``
    raised from the KeyboardInterrupt (pybind11 modules of scipy), not as the interrupt."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
