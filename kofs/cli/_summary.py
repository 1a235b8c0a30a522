"""A short human summary of a run on stderr: only on a terminal, never in pipelines."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kofs.pipeline import RunResult


def summary_title(result: RunResult) -> str:
    """What ran: ``msfs``, the one list's name, or the aggregation method of several lists."""
    if (result.settings or {}).get("method") == "msfs":
        return "msfs"
    if len(result.lists) == 1:
        return result.lists[0].name
    return f"{result.final.method} of {len(result.lists)} lists"


def print_summary(
    result: RunResult, *, top: int = 10, outputs: list[str] | None = None, force: bool = False
) -> None:
    """Top genes and list weights as rich tables on stderr (if stderr is a terminal)."""
    if top <= 0 or not (force or sys.stderr.isatty()):
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True)
    final = result.final
    t = Table(title=f"top {top} genes ({summary_title(result)})", show_lines=False)
    t.add_column("rank", justify="right")
    t.add_column("gene")
    t.add_column("score", justify="right")
    for i in final.order()[:top]:
        t.add_row(f"{final.ranks[i]:g}", final.genes[i], f"{final.scores[i]:.4g}")
    console.print(t)
    if final.weights is not None and len(final.list_names) > 1:
        w = Table(title="list weights (EM)")
        w.add_column("list")
        w.add_column("weight", justify="right")
        for name, weight in sorted(
            zip(final.list_names, final.weights, strict=True), key=lambda x: -x[1]
        ):
            w.add_row(name, f"{weight:.3f}")
        console.print(w)
    for report in result.coverage:
        console.print(f"coverage: {report.line()}")
    if outputs:
        console.print("wrote " + ", ".join(outputs))
