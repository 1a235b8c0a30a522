"""Checks of what the CLI prints on stderr by its meaningful parts, not its exact wording."""

from __future__ import annotations


def one_line(stderr: str, *says: str, start: str = "kofs: ") -> str:
    """The single line of ``stderr``, checked to begin with ``start`` and to contain every
    part of ``says`` (file names, the signal, what happened to the output); returned."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith(start), line
    for part in says:
        assert part in line, (part, line)
    return line
