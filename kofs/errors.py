"""Exception hierarchy of kofs.

Every error a *user* can cause (a bad file, a bad parameter, an impossible request) is a
:class:`KofsError`. The CLI turns it into one line on stderr and exit status 2. Anything else
that escapes is an internal error (exit status 1).
"""

from __future__ import annotations

import os


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
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
            if self.column is not None:
                where += f" (column {self.column})"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        # one line, always
        return (where + self.message).replace("\n", " ")


class InputError(KofsError, ValueError):
    """A file cannot be read or its content cannot be used.

    Also a :class:`ValueError`, so that code written against the Python conventions (and
    scikit-learn's) can catch it as one.
    """


class ParameterError(KofsError, ValueError):
    """A parameter value is invalid or inputs are inconsistent with the request.

    Also a :class:`ValueError` (as :class:`InputError`).
    """


class CoverageError(InputError):
    """A knowledge source shares no (or too few) genes with the expression matrix."""


class ResourceError(KofsError):
    """A step would exceed the allowed memory or another resource limit."""


class OutputError(KofsError):
    """An output location cannot be used (not writable, is a file, ...)."""
