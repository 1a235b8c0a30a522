"""``kofs evaluate`` behind the CLI: read rank outputs, evaluate, write (one library call)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.evaluate.core import evaluate
from kofs.evaluate.known import KnownGenes
from kofs.evaluate.rankfiles import RankFile, ranks_on_matrix, read_rank_output
from kofs.evaluate.report import write_evaluation
from kofs.types import Expression, SampleCategories

log = logging.getLogger(__name__)

__all__ = ["evaluate_outputs"]


def _names(
    files: Sequence[RankFile], expression: Expression
) -> dict[str, tuple[int, str, np.ndarray]]:
    """``{display name: (input index, list name in the file, ranks)}``."""
    out: dict[str, tuple[int, str, np.ndarray]] = {}
    labels = [f.label for f in files]
    for i, f in enumerate(files):
        if labels.count(f.label) > 1:
            labels[i] = f"{f.label}#{i + 1}"
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


def _honest_selector(files: Sequence[RankFile], names: dict, expression: Expression):
    """Re-run every input's `kofs rank` configuration on the training samples of a fold.

    Each input's files are read once; knowledge that depends on gene ids only (GO graph,
    annotations, interaction graph) is built once and shared by the folds."""
    from kofs.config import RunConfig
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import read_labels
    from kofs.sources import read_sources
    from kofs.workflow import RunInputs, open_config_cache, rank_inputs

    runs = []
    for f in files:
        if f.config is None:
            raise ParameterError(
                f"--protocol honest needs the output folder of `kofs rank` (with "
                f"config.resolved.yaml), not a bare ranking file: {f.path}"
            )
        cfg = RunConfig.from_mapping(f.config, where=f.path)
        run_labels = None
        if cfg.inputs.labels:
            lab = read_labels(
                cfg.inputs.labels,
                sample_column=cfg.inputs.sample_column,
                label_column=cfg.inputs.label_column,
            )
            run_labels = dict(zip(lab.samples, lab.labels, strict=True))
        rel = cfg.inputs.relevant_genes
        runs.append(
            dict(
                config=cfg,
                sources=read_sources(cfg, cache=open_config_cache(cfg)),
                labels=run_labels,
                label_name=cfg.inputs.label_column or "label",
                relevant=read_gene_list(rel) if rel else None,
                shared={},
            )
        )

    def select(train: Expression, _y: np.ndarray) -> dict[str, np.ndarray]:
        per_input = []
        for run in runs:
            cats = None
            if run["labels"] is not None:
                missing = [s for s in train.samples if s not in run["labels"]]
                if missing:
                    raise ParameterError(
                        f"the run's labels lack sample {missing[0]!r}; cannot re-rank it"
                    )
                cats = SampleCategories(
                    [run["labels"][s] for s in train.samples], train.samples, name=run["label_name"]
                )
            inputs = RunInputs(train, cats, run["relevant"], run["sources"])
            res = rank_inputs(inputs, run["config"], shared=run["shared"])
            lists = {"final": res.final, **{r.name: r for r in res.lists}}
            per_input.append({k: v.order() for k, v in lists.items()})
        return {
            name: per_input[i][lname]
            for name, (i, lname, _) in names.items()
            if lname in per_input[i]
        }

    return select


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
    files = [read_rank_output(p) for p in rankings]
    names = _names(files, expression)
    honest = _honest_selector(files, names, expression) if protocol != "book" else None
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
    return write_evaluation(
        result,
        output,
        expression=expression,
        labels=labels.labels,
        heatmap_lists=heat,
        title="kofs evaluate: " + ", ".join(f.label for f in files),
    )
