"""A short human summary of a run on stderr: only on a terminal, never in pipelines."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kofs.pipeline.result import RunResult


def summary_title(result: RunResult) -> str:
    """What ran: ``msfs``, the one list's name, or the aggregation method of several lists."""
    if (result.settings or {}).get("method") == "msfs":
        return "msfs"
    if len(result.lists) == 1:
        return result.lists[0].name
    return f"{result.final.method} of {len(result.lists)} lists"


def summary_shown(top: int, *, force: bool = False) -> bool:
    """Whether :func:`print_summary` prints (a terminal, not --quiet, ``top`` > 0): a command
    then leaves to it what it says too (the coverage lines), so they are not said twice."""
    from kofs.cli._progress import quiet_requested

    return top > 0 and not quiet_requested() and (force or sys.stderr.isatty())


def print_summary(result: RunResult, *, top: int = 10, force: bool = False) -> None:
    """Top genes (with their symbols when known) and list weights as rich tables on stderr (if
    stderr is a terminal); where the files went is said by the command, terminal or not."""
    if not summary_shown(top, force=force):
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from kofs.errors import printable
    from kofs.io.output import cross_fit_line
    from kofs.report.fusion import describe_fusion
    from kofs.types import seed_scoring

    def txt(value: object) -> Text:
        # names from the user's files: no rich markup, no terminal control characters
        return Text(printable(value))

    console = Console(stderr=True)
    final = result.final
    t = Table(title=txt(f"top {top} genes ({summary_title(result)})"), show_lines=False)
    symbols = getattr(result, "symbols", None)  # user lists (kofs aggregate) have none
    t.add_column("rank", justify="right")
    if symbols is not None:
        t.add_column("symbol")
    t.add_column("gene")
    t.add_column("score", justify="right")
    fusion = describe_fusion(final)
    stats = fusion.statistics[:2]  # the fusion's per-gene statistics, q-value first
    for _, title, _ in stats:
        t.add_column(title, justify="right")
    for i in final.order()[:top]:
        g = final.genes[i]
        cells = [f"{final.ranks[i]:g}", *([txt(symbols.get(g, ""))] if symbols is not None else [])]
        t.add_row(
            *cells,
            txt(g),
            f"{final.scores[i]:.4g}",
            *(f"{final.statistics[k][i]:.2g}" for k, _, _ in stats),
        )
    console.print(t)
    if final.weights is not None and len(final.list_names) > 1:
        diag = final.diagnostics
        ci = diag.get("weight_ci")
        seeded = diag.get("built_from") or {}
        cross = diag.get("cross_fit") or {}
        w = Table(title=f"list weights ({final.method}, supervision: {diag.get('supervision')})")
        w.add_column("list")
        w.add_column("weight", justify="right")
        if ci is not None:
            w.add_column("95% interval", justify="right")
        if seeded:
            w.add_column("built from", justify="right")
        for j in sorted(range(len(final.list_names)), key=lambda j: -final.weights[j]):
            row = [txt(final.list_names[j]), f"{final.weights[j]:.3f}"]
            if ci is not None:
                row.append(f"{ci[j][0]:.3f}-{ci[j][1]:.3f}")
            if seeded:
                name = final.list_names[j]
                how = seed_scoring(cross.get(name))
                row.append(txt(f"{seeded[name]} genes, {how}" if name in seeded else ""))
            w.add_row(*row)
        console.print(w)
        if cross:
            console.print(txt(cross_fit_line(cross)))
    # in plain words, with what to do; also for one list (why it has no q-values)
    for notice in fusion.notices:
        console.print(txt(notice))
    for r in result.lists:
        nuisance = r.info.get("nuisance") or {}
        shares = {k: v for k, v in (nuisance.get("shares") or {}).items() if v > 0}
        if shares:
            # a share below 1 % is not '0%' (one gene of a top 500 is 0.2 %)
            parts = ", ".join(
                f"{k} {100 * v:.0f}%" if v >= 0.01 else f"{k} {100 * v:.1g}%"
                for k, v in shares.items()
            )
            console.print(
                txt(f"nuisance programmes in the top {nuisance['top']} of {r.name}: {parts}")
            )
    markers = getattr(result, "markers", None)
    if markers is not None:
        console.print(
            txt(
                f"marker tables ({markers.method}, {len(markers.groups)} groups of "
                f"{markers.groupby!r} against the rest): markers.tsv"
            )
        )
    for report in result.coverage:
        console.print(txt(f"coverage: {report.line()}"))
