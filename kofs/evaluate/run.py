"""``kofs evaluate`` behind the CLI: read rank outputs, evaluate, write (one library call)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kofs.errors import ParameterError, checked_keywords
from kofs.evaluate.config import EvaluateConfig
from kofs.evaluate.core import evaluate
from kofs.evaluate.known import KnownGenes
from kofs.evaluate.rankfiles import RankFile, ranks_on_matrix, read_rank_output
from kofs.evaluate.report import write_evaluation
from kofs.evaluate.reruns import honest_selector, read_reruns, rerun
from kofs.evaluate.split import SplitHalf, SplitHalfResult, split_half
from kofs.types import Expression, SampleCategories

log = logging.getLogger(__name__)

__all__ = ["evaluate_files", "evaluate_outputs", "evaluation_provenance", "gene_table"]


def _names(
    files: Sequence[RankFile], expression: Expression
) -> dict[str, tuple[int, str, np.ndarray]]:
    """``{display name: (input index, list name in the file, ranks)}``."""
    out: dict[str, tuple[int, str, np.ndarray]] = {}
    given = [f.label for f in files]
    labels = [f"{x}#{i + 1}" if given.count(x) > 1 else x for i, x in enumerate(given)]
    for i, f in enumerate(files):
        ranks = ranks_on_matrix(f, expression)
        for lname, r in ranks.items():
            if len(files) == 1:
                name = lname
            elif lname == "final":
                name = labels[i]
            else:
                name = lname
                if name in out and not np.array_equal(out[name][2], r, equal_nan=True):
                    name = f"{labels[i]}:{lname}"
                elif name in out:
                    continue
            out[name] = (i, lname, r)
    return out


def _split_half(
    files: Sequence[RankFile],
    names: dict,
    expression: Expression,
    known: KnownGenes,
    settings: SplitHalf,
    progress: Any = None,
) -> SplitHalfResult:
    """The split-half evaluation of every input: each `kofs rank` configuration is re-run on
    the whole matrix from its relevant genes without the held-out ones (no relevant genes:
    re-run as it was)."""
    from kofs.pipeline.plans import list_origin
    from kofs.pipeline.rank import relevant_gene_ids

    runs = read_reruns(files, "--split-known")
    key = [f"relevant genes of {f.label}" + (f" (#{i + 1})" if len(files) > 1 else "")
           for i, f in enumerate(files)]  # fmt: skip
    sets = {
        key[i]: relevant_gene_ids(expression, run["relevant"])
        for i, run in enumerate(runs)
        if run["relevant"] is not None
    }
    index = expression.gene_index()

    def build(used: Mapping[str, tuple[str, ...]], null: bool) -> dict[str, np.ndarray]:
        per_input = []
        for i, run in enumerate(runs):
            built = rerun(run, expression, used.get(key[i], run["relevant"]), drop_unbuildable=null)
            per_input.append({k: _ranks_on(v, index, expression.n_genes) for k, v in built.items()})
        return {
            name: per_input[i][lname]
            for name, (i, lname, _) in names.items()
            if lname in per_input[i]
        }

    lists: dict[str, tuple[str, str | None]] = {}
    for name, (i, lname, _) in names.items():
        o = None if lname == "final" else list_origin(lname, runs[i]["sources"])
        kind = (
            "aggregation" if lname == "final" else "knowledge" if o is None or not o[1] else "data"
        )
        lists[name] = (kind, None if o is None else o[0])
    return split_half(
        build,
        known.in_matrix(expression),
        genes=expression.genes,
        gene_sets=sets,
        settings=settings,
        lists=lists,
        progress=progress,
    )


def _ranks_on(ranking: Any, index: Mapping[str, int], m: int) -> np.ndarray:
    """A ranking's ranks over the matrix's genes (genes it lacks: NaN)."""
    out = np.full(m, np.nan)
    cols = np.fromiter((index[g] for g in ranking.genes), dtype=np.int64, count=len(ranking.genes))
    out[cols] = np.asarray(ranking.ranks, dtype=np.float64)
    return out


def _file_symbols(files: Sequence[RankFile], expression: Expression) -> dict[str, str]:
    """Gene id -> symbol from the rankings' symbol columns and the matrix (the matrix wins)."""
    from kofs.io.symbols import gene_symbols

    out: dict[str, str] = {}
    for f in files:
        out.update(f.symbols or {})
    out.update(gene_symbols(expression) or {})
    return out


def gene_table(rank_file: RankFile, top: int, symbols: Mapping[str, str] | None = None):
    """The top genes of a ranking output as a table: rank, symbol, gene, every list's rank,
    evidence (columns present only when known).

    Parameters
    ----------
    rank_file : RankFile
    top : int
    symbols : mapping gene id -> symbol, optional
        Used for genes the ranking's own symbol column lacks.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    final = rank_file.ranks["final"]
    key = np.where(np.isnan(final), np.inf, final)
    order = np.lexsort((np.arange(len(key)), key))[:top]
    order = order[np.isfinite(key[order])]
    genes = [rank_file.genes[i] for i in order]
    table: dict[str, Any] = {"rank": [_rank_text(final[i]) for i in order]}
    sym = {**(symbols or {}), **(rank_file.symbols or {})}
    if any(g in sym for g in genes):
        table["symbol"] = [sym.get(g, "") for g in genes]
    table["gene"] = genes
    for name, r in rank_file.ranks.items():
        if name != "final":
            table[f"rank: {name}"] = [_rank_text(r[i]) for i in order]
    if rank_file.evidence is not None:
        table["evidence"] = [rank_file.evidence.get(g, "") for g in genes]
    return pd.DataFrame(table)


def _rank_text(r: float) -> str:
    if not np.isfinite(r):
        return "NA"
    return str(int(r)) if r == int(r) else f"{r:g}"


def evaluation_provenance(
    files: Sequence[RankFile],
    settings: Mapping[str, Any],
    *,
    inputs: Mapping[str, str | Sequence[str] | None] | None = None,
) -> dict[str, Any]:
    """The provenance of an evaluation (manifest-like, see :func:`kofs.report.html.provenance_html`).

    Inputs: every ranking table, the files in ``inputs`` (role -> path or paths), and the
    inputs of the runs behind the rankings (from their ``manifest.json``, role prefixed with
    the ranking's label); releases likewise from those manifests.
    """
    from kofs import __version__
    from kofs.io.output import environment_info, file_fingerprint

    files_fp: dict[str, Any] = {"ranking": [file_fingerprint(f.path) for f in files]}
    for role, paths in (inputs or {}).items():
        if not paths:
            continue
        many = [paths] if isinstance(paths, str) else list(paths)
        files_fp[role] = [file_fingerprint(p) for p in many if p != "-" and os.path.isfile(p)]
    releases: dict[str, Any] = {}
    for f in files:
        m = f.manifest or {}
        for role, fp in (m.get("inputs") or {}).items():
            files_fp[f"{f.label}: {role}"] = fp
        for source, rel in (m.get("releases") or {}).items():
            releases[f"{f.label}: {source}"] = rel
    keep = ("protocols", "classifiers", "top", "hit_top", "n_splits", "n_repeats", "seed")
    return {
        "kofs_version": __version__,
        "command": "evaluate",
        "settings": {k: settings[k] for k in keep if k in settings},
        "inputs": files_fp,
        "environment": environment_info(),
        "releases": releases,
    }


def _top_sizes(c: EvaluateConfig, n_genes: int) -> list[int]:
    """The top-k sizes: as given, except that the default sizes larger than the matrix are left
    out (a small matrix evaluated with the defaults is not an error of the user's; sizes the
    user chose are checked against the matrix as given)."""
    import dataclasses

    default = next(f.default for f in dataclasses.fields(EvaluateConfig) if f.name == "top")
    top = list(c.top)
    if tuple(top) != tuple(default) or max(top) <= n_genes:
        return top
    kept = [k for k in top if k <= n_genes] or [n_genes]
    log.info("--top: the matrix has %d genes; top sizes %s", n_genes, kept)
    return kept


@checked_keywords
def evaluate_files(
    config: EvaluateConfig | Mapping[str, Any], *, progress: Any = None
) -> list[str]:
    """``kofs evaluate`` from files: read the labels, the matrix (aligned), the sample groups,
    GO (through its cache) and the known gene sets a config names, and evaluate its rankings
    into its output folder (:func:`evaluate_outputs`). Returns the written paths.

    Parameters
    ----------
    config : EvaluateConfig or mapping of its options by name (checked by their declarations)
    progress : kofs.progress.Progress, optional
    """
    from kofs.cache import open_cache
    from kofs.evaluate.known import parse_known_spec
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels

    c = config if isinstance(config, EvaluateConfig) else EvaluateConfig.from_mapping(config)
    split = c.split()
    # an ignored --cache-dir warns, a cache inside the output is refused, before any reading
    cache = open_cache(
        c.cache_dir, enabled=not c.no_cache, used=bool(c.go or c.go_annotations),
        outputs=[c.output],
    )  # fmt: skip
    if not (c.go and c.go_annotations):
        from kofs.options import changed, warn_no_effect

        why = "Sim_anno needs GO (--go with --go-annotations)"
        warn_no_effect(changed(c, ["sim_anno"]), why)
    cats = read_labels(
        c.labels,
        sample_column=c.sample_column,
        label_column=c.label_column,
        missing=c.missing_labels,
    )
    expr = read_expression(
        c.expression,
        genes_in=c.genes_in,
        gene_column=c.gene_column,
        sample_ids=None if cats.by_position else cats.samples,
        duplicates=c.duplicate_genes,
        decimal=c.decimal,
    )
    expr, cats = align_labels(expr, cats, missing=c.missing_labels, labels_path=c.labels)
    group_ids = None
    if c.groups:
        g = read_labels(
            c.labels, sample_column=c.sample_column, label_column=c.groups, label_option="--groups"
        )
        gmap = dict(zip(g.samples, g.labels, strict=True))
        group_ids = [gmap[s] for s in expr.samples]
    go_data = None
    if c.go or c.go_annotations:
        from kofs.sources import read_sources

        go_data = read_sources(go=c.go, go_annotations=c.go_annotations, cache=cache).get("go")
    known_sets = [parse_known_spec(s) for s in c.known_genes or ()]
    return evaluate_outputs(
        list(c.rankings),
        expr,
        labels=cats,
        output=c.output,
        known=known_sets,
        protocol=c.protocol,
        groups=group_ids,
        go=go_data,
        sim_sets=None if c.sim_anno is None else list(c.sim_anno),
        top=_top_sizes(c, expr.n_genes),
        classifiers=list(c.classifiers),
        n_splits=c.folds,
        n_repeats=c.repeats,
        seed=c.seed,
        progress=progress,
        split=split,
        inputs={
            "expression": c.expression,
            "labels": c.labels,
            "known_genes": [k.source for k in known_sets],
            "go": c.go,
            "go_annotations": c.go_annotations,
        },
    )


def evaluate_outputs(
    rankings: Sequence[str],
    expression: Expression,
    *,
    labels: SampleCategories,
    output: str,
    known: Sequence[KnownGenes] = (),
    protocol: str = "book",
    groups: Sequence[str] | None = None,
    go: Any = None,
    sim_sets: Sequence[str] | None = None,
    inputs: Mapping[str, str | Sequence[str] | None] | None = None,
    gene_rows: int = 30,
    split: SplitHalf | None = None,
    **options: Any,
) -> list[str]:
    """Evaluate ``kofs rank`` outputs on a labelled matrix and write the results to ``output``.

    Parameters
    ----------
    rankings : sequence of path
        ``ranking.tsv`` files or output folders of ``kofs rank`` (final list and every
        per-source list are evaluated).
    expression : Expression
    labels : SampleCategories
        Aligned to ``expression.samples``.
    output : str
        Output folder.
    known : sequence of KnownGenes
    protocol : {"book", "honest", "both"}
        ``honest``/``both`` re-run each input's configuration (``config.resolved.yaml``) on
        the training samples of every fold.
    groups : sequence of str, optional
    go : (ontology, annotations, settings), optional
    inputs : mapping of role to path(s), optional
        Input files recorded (with sha256) in the report's provenance, e.g. ``{"expression":
        ..., "labels": ..., "known_genes": [...]}``.
    gene_rows : int
        Genes listed per ranking in the report.
    split : SplitHalf, optional
        Also run the split-half evaluation of the known set ``split.known`` (one of
        ``known``): each input's configuration is re-run on the whole matrix from its relevant
        genes without the held-out ones (:mod:`kofs.evaluate.split`).
    **options
        Passed to :func:`kofs.evaluate.evaluate` (``top``, ``classifiers``, ``n_splits``,
        ``n_repeats``, ``seed``, ``curve_ks``).

    Returns
    -------
    list of str
        Written paths.
    """
    if protocol not in ("book", "honest", "both"):
        raise ParameterError(f"--protocol {protocol!r}: use book, honest or both")
    split_set = None
    if split is not None:
        split_set = next((kg for kg in known if kg.name == split.known), None)
        if split_set is None:
            raise ParameterError(
                f"--split-known {split.known!r} is not a --known-genes set"
                + (f"; sets: {', '.join(kg.name for kg in known)}" if known else "")
            )
    files = [read_rank_output(p) for p in rankings]
    names = _names(files, expression)
    split_result = None
    if split is not None and split_set is not None:  # first: its settings fail before any work
        split_result = _split_half(
            files, names, expression, split_set, split, progress=options.get("progress")
        )
    honest = honest_selector(files, names, expression) if protocol != "book" else None
    weights = {}
    for f in files:
        if f.weights:
            weights[f.label if len(files) > 1 else "final"] = f.weights
    circular = {}
    for name, (i, _lname, _r) in names.items():
        cfg = files[i].config or {}
        if cfg.get("relevant_genes"):
            from kofs.io.genes import read_gene_list

            rel = set(read_gene_list(cfg["relevant_genes"]))
            hit = [kg.name for kg in known if len(rel & set(kg.genes)) >= 0.5 * len(kg.genes)]
            if hit:
                circular[name] = hit
    result = evaluate(
        {n: v[2] for n, v in names.items()},
        expression,
        labels=labels.labels,
        known=known,
        honest=honest,
        groups=groups,
        go=go,
        circular=circular,
        weights=weights,
        sim_sets=sim_sets,
        **options,
    )
    if protocol == "honest":
        keep = [c for c in result.table.columns if not c.startswith(("ACC", "SVM"))]
        result.table.drop(columns=[c for c in result.table.columns if c not in keep], inplace=True)
    heat = [n for n in names if n == "final" or names[n][1] == "final"][:2]
    symbols = _file_symbols(files, expression)
    tables = {
        f"Top {gene_rows} genes of {f.label} (ranks in its ranking.tsv)": gene_table(
            f, gene_rows, symbols
        )
        for f in files
    }
    return write_evaluation(
        result,
        output,
        expression=expression,
        labels=labels.labels,
        heatmap_lists=heat,
        title="kofs evaluate: " + ", ".join(f.label for f in files),
        gene_tables=tables,
        provenance=evaluation_provenance(files, result.settings, inputs=inputs),
        symbols=symbols,
        split_half=split_result,
    )
