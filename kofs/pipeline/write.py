"""Write the outputs of a run: ``ranking.tsv``, ``weights.tsv``, ``manifest.json`` and
``config.resolved.yaml``.

Everything is written into a temporary folder first, which replaces the output folder whole
only when all files are complete (:mod:`kofs.io.output_folder`), so a failed, interrupted or
killed run leaves nothing half-written and no file of an earlier run survives.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kofs import __version__
from kofs.errors import InputError, ParameterError, checked_keywords
from kofs.io.output import (
    environment_info,
    file_fingerprint,
    write_json,
    write_ranking,
    write_stdout,
    write_text,
    write_weights,
)
from kofs.io.output_folder import atomic_dir
from kofs.pipeline.config import dump_config
from kofs.pipeline.result import RunResult


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


def _folder_fingerprint(path: str) -> dict[str, Any]:
    """A folder input (10x MatrixMarket, KGML): the fingerprints of the files in it."""
    files = sorted(p for p in Path(path).iterdir() if p.is_file())
    return {"path": os.fspath(path), "files": [file_fingerprint(p) for p in files]}


def diagnostics_json(final) -> dict[str, Any]:
    """The weight diagnostics of an aggregation, JSON-friendly: intervals per list, the
    agreement matrix as ``{list: {list: rho}}``, per-gene support summarised by counts."""
    d = dict(getattr(final, "diagnostics", {}) or {})
    names = list(final.list_names)
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k == "support":
            if v is not None:
                out["knowledge_only_genes"] = int((~np.asarray(v)).sum())
        elif k == "agreement":
            if v is None:  # more lists than the pairwise table is computed for
                continue
            out[k] = {
                a: {b: round(float(v[i][j]), 4) for j, b in enumerate(names)}
                for i, a in enumerate(names)
            }
        elif k == "weight_ci":
            out[k] = {n: [float(v[i][0]), float(v[i][1])] for i, n in enumerate(names)}
        elif k == "weight_sd":
            out[k] = {n: float(v[i]) for i, n in enumerate(names)}
        elif isinstance(v, np.ndarray):
            out[k] = v.tolist()
        elif isinstance(v, np.generic):
            out[k] = v.item()
        else:
            out[k] = v
    return out


def _provenance(
    result: Any,
    *,
    command: str,
    inputs: Mapping[str, str | Sequence[str] | None],
    body: Mapping[str, Any],
    aggregation: Mapping[str, Any],
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The record both manifests share (version, command, settings, input checksums, the
    fusion, coverage, timings, environment) around each one's own ``body`` and ``aggregation``
    entries; ``extra`` is added last."""
    final = result.final
    out = {
        "kofs_version": __version__,
        "command": command,
        "settings": dict(result.settings),
        "inputs": _fingerprints(inputs),
        **body,
        "aggregation": {
            "method": final.method,
            "weights": None
            if final.weights is None
            else dict(zip(final.list_names, map(float, final.weights), strict=True)),
            "info": dict(final.info),
            "diagnostics": diagnostics_json(final),
            **aggregation,
        },
        "coverage": [c.as_dict() for c in result.coverage],
        "timings_seconds": dict(result.timings),
        "environment": environment_info(),
    }
    if extra:
        out.update(extra)
    return out


def manifest(
    result: RunResult,
    *,
    command: str,
    inputs: Mapping[str, str | Sequence[str] | None],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance record of a run (DESIGN.md, "Provenance")."""
    body = {
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
    }
    out = _provenance(result, command=command, inputs=inputs, body=body, aggregation={}, extra=None)
    if getattr(result, "markers", None) is not None:
        out["markers"] = {"file": "markers.tsv", **result.markers.summary()}
    if extra:
        out.update(extra)
    return out


def _fingerprints(inputs: Mapping[str, str | Sequence[str] | None]) -> dict[str, Any]:
    files = {}
    for role, paths in inputs.items():
        if paths is None:
            continue
        many = [paths] if isinstance(paths, str) else list(paths)
        prints = [
            {"path": "-", "bytes": None, "sha256": None}
            if p == "-"
            else _folder_fingerprint(p)
            if os.path.isdir(p)
            else file_fingerprint(p)
            for p in many
        ]
        files[role] = prints[0] if isinstance(paths, str) else prints
    return files


def aggregate_manifest(
    result: Any,
    *,
    inputs: Mapping[str, str | Sequence[str] | None],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance record of ``kofs aggregate`` (a :class:`kofs.pipeline.user_lists.
    ListAggregation`): inputs, how every list was read and ranked, coverage, universe,
    method and weights."""
    body = {
        "universe": int(result.universe),
        "lists": [
            {
                "name": s.name,
                "path": s.path,
                "kind": s.kind,
                "ranked_by": s.ranked_by,
                "higher_is_better": s.higher_is_better,
                "gene_column": s.gene_column,
                "rows": s.n_rows,
                "genes": len(s.genes),
                "repeated_ids_merged": s.n_repeated,
            }
            for s in result.sources
        ],
    }
    return _provenance(
        result,
        command="aggregate",
        inputs=inputs,
        body=body,
        aggregation={"statistics": list(result.final.statistics)},
        extra=extra,
    )


def write_run(
    result: RunResult,
    outdir: str,
    *,
    manifest_data: Mapping[str, Any],
    extra_files: Mapping[str, str] | None = None,
) -> list[str]:
    """Write a run's files into ``outdir`` (``"-"``: ranking.tsv to stdout only).

    ``result`` is a :class:`~kofs.pipeline.result.RunResult` or any result with ``final``, ``lists``
    and ``evidence`` (e.g. :class:`kofs.pipeline.user_lists.ListAggregation`). ``extra_files``
    maps file names to text (e.g. ``config.resolved.yaml``). The folder's previous content is
    replaced whole. Returns the written paths.
    """
    if outdir == "-":
        buf = io.StringIO()
        write_ranking(
            buf,
            result.final,
            result.lists,
            evidence=result.evidence,
            symbols=getattr(result, "symbols", None),
        )
        write_stdout(buf.getvalue())
        return ["-"]
    with atomic_dir(outdir) as tmp:
        tmp = Path(tmp)
        write_ranking(
            tmp / "ranking.tsv",
            result.final,
            result.lists,
            evidence=result.evidence,
            symbols=getattr(result, "symbols", None),
        )
        names = ["ranking.tsv"]
        if result.final.weights is not None:
            write_weights(tmp / "weights.tsv", result.final)
            names.append("weights.tsv")
        tables = getattr(result, "markers", None)
        if tables is not None:
            frame = tables.to_frame(symbols=getattr(result, "symbols", None))
            frame.to_csv(tmp / "markers.tsv", sep="\t", index=False, float_format="%.10g")
            names.append("markers.tsv")
        for name, text in (extra_files or {}).items():
            write_text(tmp / name, text)
            names.append(name)
        write_json(tmp / "manifest.json", dict(manifest_data))
        names.append("manifest.json")
    return [str(Path(outdir) / n) for n in names]


def claim_result_output(config: Any, *, named: bool = True) -> contextlib.AbstractContextManager:
    """Check and claim the config's output folder before any work (a file in the way, a
    symbolic link leading nowhere, an unwritable parent, files kofs did not write, an input
    that would be overwritten, another run writing it); hold it until the block ends.

    Use as ``with claim_result_output(config): write_result(run(config))``; ``-o -`` claims
    nothing. ``named=False`` (the output is the default folder, not one the user named):
    refused if that folder already exists (:func:`~kofs.io.output_folder.claim_output`).
    """
    from kofs.cache import check_cache_dir
    from kofs.io.output_folder import claim_output

    out = config.output.output
    res = config.resources
    if not res.no_cache and config.knowledge["go"].go is not None:
        check_cache_dir(res.cache_dir, [out])  # the cache must survive the next run
    paths = check_input_files(config)
    if out == "-":
        return contextlib.nullcontext()
    return claim_output(out, inputs=paths, named=named)


def check_input_files(config: Any) -> list[str]:
    """The input files a run config names (stdin aside), each refused if missing, naming its
    option: every input is checksummed into manifest.json, also one an option that has no
    effect names (--string-aliases beside an edge list); missing, it failed after all the
    work. Called before any work by ``kofs rank``/``kofs run`` and :func:`kofs.run`."""
    named_inputs = [
        (name, p)
        for name, v in config.input_paths().items()
        if v
        for p in ([v] if isinstance(v, str) else v)
        if p != "-"
    ]
    for name, p in named_inputs:
        if not os.path.exists(p):
            option = "" if name == "expression" else f" (--{name.replace('_', '-')})"
            what = (
                "a link to nothing (or a loop of links)" if os.path.islink(p) else "file not found"
            )
            raise InputError(f"{what}; check the path{option}", path=p)
    return [p for _, p in named_inputs]


def _warn_report_options(config: Any) -> None:
    """The options of report.html (and of markers.tsv) given when none is written changed
    nothing: one warning."""
    from kofs.options import changed, warn_no_effect

    output = config.output
    if output.output == "-":
        tables = changed(config.ranking, ["markers"]) if config.ranking.markers != "none" else []
        warn_no_effect(
            [*changed(output, ["no_report", "title"]), *tables], "-o - writes ranking.tsv only"
        )
    elif output.no_report:
        warn_no_effect(changed(output, ["title"]), "--no-report writes no report.html")


@checked_keywords
def write_result(result: RunResult, *, command: str = "rank") -> list[str]:
    """Write a run started from a config (``result.config``) into its output folder: the
    ranking, weights, the manifest (with the config and the sources' releases),
    ``config.resolved.yaml`` and, unless ``no_report``, ``report.html``
    (:func:`kofs.report.run.run_report_html`).

    Parameters
    ----------
    result : RunResult
        What :func:`kofs.pipeline.run.run` returns (a result of :func:`kofs.rank` has no
        config, hence no output folder: write its tables with ``to_frame``).
    command : str, default "rank"
        The command recorded in ``manifest.json``.

    Returns
    -------
    list of str
        The written paths.
    """
    from kofs.sources import source_releases

    if not isinstance(result, RunResult):
        raise ParameterError(
            f"write_result writes the result of kofs.run(config), not a {type(result).__name__}"
        )
    config = result.config
    if config is None:
        raise ParameterError(
            "write_result writes the result of kofs.run(config) (it knows the output folder); "
            "this result of kofs.rank has no config: give kofs.run a RunConfig with 'output'"
        )
    inputs = {k: (v or None) for k, v in config.input_paths().items()}
    inputs = {"expression": inputs.pop("expression"), **inputs}
    resolved = config.to_mapping()
    extra = {
        "config": resolved,
        "defaults_version": config.defaults,
        "releases": source_releases(result.sources) if result.sources is not None else {},
    }
    manifest_data = manifest(result, command=command, inputs=inputs, extra=extra)
    extra_files = {"config.resolved.yaml": dump_config(config)}
    _warn_report_options(config)
    if config.output.output != "-" and not config.output.no_report:
        from kofs.report.run import run_report_html

        # the aggregation's own warning is worded by the report (kofs.report.fusion)
        own = (result.final.diagnostics or {}).get("warning")
        extra_files["report.html"] = run_report_html(
            result,
            manifest=manifest_data,
            labels=result.labels,
            title=config.output.title,
            notices=[w for w in result.warnings if w != own],
        )
    return write_run(
        result,
        config.output.output,
        manifest_data=manifest_data,
        extra_files=extra_files,
    )
