"""Write the outputs of a run: ``ranking.tsv``, ``weights.tsv``, ``manifest.json``.

Everything is written into a temporary folder first, which replaces the output folder whole
only when all files are complete (:mod:`kofs.io.output_folder`), so a failed, interrupted or
killed run leaves nothing half-written and no file of an earlier run survives.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kofs import __version__
from kofs.io.output import (
    environment_info,
    file_fingerprint,
    write_json,
    write_ranking,
    write_stdout,
    write_weights,
)
from kofs.io.output_folder import atomic_dir
from kofs.pipeline import RunResult


def _json_info(
    info: Mapping[str, Any], *, genes: Sequence[str], max_items: int = 1000
) -> dict[str, Any]:
    """A ranker's extras made JSON-friendly; the entry ``order`` of a multivariate selector
    (gene positions) is written as gene ids; arrays longer than ``max_items`` are summarised by
    their shape."""
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k == "order":
            out[k] = [genes[int(i)] for i in v]
            continue
        if isinstance(v, np.ndarray):
            out[k] = v.tolist() if v.size <= max_items else {"shape": list(v.shape)}
        elif isinstance(v, np.generic):
            out[k] = v.item()
        elif isinstance(v, (list, tuple)) and len(v) > max_items:
            out[k] = {"length": len(v)}
        else:
            out[k] = v
    return out


def manifest(
    result: RunResult,
    *,
    command: str,
    inputs: Mapping[str, str | Sequence[str] | None],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance record of a run (DESIGN.md, "Provenance")."""
    files = {}
    for role, paths in inputs.items():
        if paths is None:
            continue
        many = [paths] if isinstance(paths, str) else list(paths)
        prints = [
            file_fingerprint(p) if p != "-" else {"path": "-", "bytes": None, "sha256": None}
            for p in many
        ]
        files[role] = prints[0] if isinstance(paths, str) else prints
    final = result.final
    out = {
        "kofs_version": __version__,
        "command": command,
        "settings": dict(result.settings),
        "inputs": files,
        "matrix": {"samples": result.expression.n_samples, "genes": result.expression.n_genes},
        "lists": [
            {
                "name": r.name,
                "ranker": r.params.get("ranker"),
                "higher_is_better": r.higher_is_better,
                "params": {k: v for k, v in r.params.items() if k != "ranker"},
                "info": _json_info(r.info, genes=r.genes),
            }
            for r in result.lists
        ],
        "aggregation": {
            "method": final.method,
            "weights": None
            if final.weights is None
            else dict(zip(final.list_names, map(float, final.weights), strict=True)),
            "info": dict(final.info),
        },
        "coverage": [c.as_dict() for c in result.coverage],
        "timings_seconds": dict(result.timings),
        "environment": environment_info(),
    }
    if extra:
        out.update(extra)
    return out


def write_run(
    result: RunResult,
    outdir: str,
    *,
    manifest_data: Mapping[str, Any],
    extra_files: Mapping[str, str] | None = None,
) -> list[str]:
    """Write a run's files into ``outdir`` (``"-"``: ranking.tsv to stdout only).

    ``extra_files`` maps file names to text (e.g. ``config.resolved.yaml``). The folder's
    previous content is replaced whole. Returns the written paths.
    """
    if outdir == "-":
        buf = io.StringIO()
        write_ranking(buf, result.final, result.lists, evidence=result.evidence)
        write_stdout(buf.getvalue())
        return ["-"]
    with atomic_dir(outdir) as tmp:
        tmp = Path(tmp)
        write_ranking(tmp / "ranking.tsv", result.final, result.lists, evidence=result.evidence)
        names = ["ranking.tsv"]
        if result.final.weights is not None:
            write_weights(tmp / "weights.tsv", result.final)
            names.append("weights.tsv")
        for name, text in (extra_files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
            names.append(name)
        write_json(tmp / "manifest.json", dict(manifest_data))
        names.append("manifest.json")
    return [str(Path(outdir) / n) for n in names]
