"""The honest protocol on rank outputs: each input's ``kofs rank`` configuration (its
``config.resolved.yaml``) re-run on the training samples of a fold or from other relevant genes,
its files read once and its gene-level knowledge shared by the re-runs."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kofs.errors import InputError, ParameterError
from kofs.evaluate.rankfiles import RankFile
from kofs.types import Expression, SampleCategories

log = logging.getLogger(__name__)


def read_reruns(files: Sequence[RankFile], why: str) -> list[dict[str, Any]]:
    """What re-running every input's `kofs rank` configuration needs, read once: the config,
    its knowledge sources, labels and relevant genes, and a gene-level cache (knowledge that
    depends on gene ids only: GO graph, annotations, interaction graph) shared by the re-runs."""
    from kofs.pipeline.config import RunConfig

    runs = []
    for f in files:
        if f.config is None:
            raise ParameterError(
                f"{why} needs the output folder of `kofs rank` (with config.resolved.yaml), "
                f"not a bare ranking file: {f.path}"
            )
        if f.config.get("command") == "aggregate":  # ranked lists fused, no matrix to re-run
            raise ParameterError(
                f"{why} re-runs `kofs rank` on each training fold, and {f.path} was written "
                "by `kofs aggregate` (lists ranked elsewhere, which kofs cannot re-run); use "
                "--protocol book for it"
            )
        cfg = RunConfig.from_mapping(f.config, where=f.path)
        try:
            runs.append(_read_rerun(cfg, f, why))
        except InputError as exc:
            if exc.path is None or os.path.exists(exc.path):
                raise
            # a path of the run's config.resolved.yaml that is gone (the inputs moved since)
            folder = f.path if os.path.isdir(f.path) else os.path.dirname(f.path)
            raise InputError(
                f"{exc.message} (a path in {os.path.join(folder, 'config.resolved.yaml')}: "
                f"{why} re-reads the run's inputs, which seem to have moved; put them back or "
                "run kofs rank again)",
                path=exc.path,
            ) from exc
    return runs


def _read_rerun(cfg: Any, f: RankFile, why: str) -> dict[str, Any]:
    """One input's re-run needs (:func:`read_reruns`)."""
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import read_labels
    from kofs.pipeline.rank import open_config_cache
    from kofs.sources import read_sources

    run_labels = None
    if cfg.inputs.labels:
        lab = read_labels(
            cfg.inputs.labels,
            sample_column=cfg.inputs.sample_column,
            label_column=cfg.inputs.label_column,
            missing=cfg.inputs.missing_labels,
        )
        if lab.by_position:
            raise ParameterError(
                f"{why} re-runs {f.path}, whose labels {cfg.inputs.labels} are a GSEA .cls "
                "(labels in the matrix's sample order, no sample ids), which cannot be "
                "matched to the samples of each fold; give that run a labels table "
                "(sample id, label)"
            )
        run_labels = dict(zip(lab.samples, lab.labels, strict=True))
    rel = cfg.inputs.relevant_genes
    return dict(
        config=cfg,
        sources=read_sources(cfg, cache=open_config_cache(cfg)),
        labels=run_labels,
        label_name=cfg.inputs.label_column or "label",
        relevant=read_gene_list(rel) if rel else None,
        shared={},
    )


def rerun(
    run: Mapping[str, Any], expression: Expression, relevant: Any, *, drop_unbuildable: bool = False
) -> dict[str, Any]:
    """One input's configuration re-run on ``expression`` (its labels restricted to the
    matrix's samples) from ``relevant`` genes: ``{"final" and every list: Ranking}``.
    ``drop_unbuildable``: a list seeded by the relevant genes that cannot be built from them
    is left out (with a warning) and the run repeated without it."""
    from dataclasses import replace

    from kofs.errors import KofsError
    from kofs.pipeline.run import RunInputs, rank_inputs

    cats = None
    if run["labels"] is not None:
        missing = [s for s in expression.samples if s not in run["labels"]]
        if missing:
            raise ParameterError(f"the run's labels lack sample {missing[0]!r}; cannot re-rank it")
        cats = SampleCategories(
            [run["labels"][s] for s in expression.samples],
            expression.samples,
            name=run["label_name"],
        )
    inputs = RunInputs(expression, cats, relevant, run["sources"])
    cfg = run["config"]
    try:
        res = rank_inputs(inputs, cfg, shared=run["shared"])
    except KofsError:
        if not drop_unbuildable or relevant is None or cfg.ranking.method != "kofs":
            raise
        keep = buildable_lists(run, expression, cats, relevant)
        if keep is None:
            raise
        cfg = replace(cfg, ranking=replace(cfg.ranking, lists=keep))
        res = rank_inputs(inputs, cfg, shared=run["shared"])
    return {"final": res.final, **{r.name: r for r in res.lists}}


def buildable_lists(run, expression, cats, relevant) -> tuple[str, ...] | None:
    """The run's catalogue lists without the seeded ones that cannot be built from
    ``relevant`` (None when every seeded list can: the failure was elsewhere)."""
    from kofs._compute.canonical import canonicalize
    from kofs.context import Context
    from kofs.errors import KofsError
    from kofs.pipeline.build import build_lists
    from kofs.pipeline.plans import SEEDED_LISTS, kofs_plan
    from kofs.pipeline.rank import relevant_gene_ids

    cfg = run["config"]
    canon = canonicalize(expression, cats)  # as the run sees it: its gene-level cache is reused
    ctx = Context(
        expression=canon.expression,
        categories=canon.labels,
        relevant_genes=relevant_gene_ids(canon.expression, relevant),
        sources=run["sources"],
        seed=cfg.resources.seed,
        shared=run["shared"],
    )
    plans = kofs_plan(ctx, cfg.ranking.lists, warn=False)
    bad = []
    for p in plans:
        if p.name not in SEEDED_LISTS:
            continue
        own = {n: v for n, v in (cfg.ranking.param or {}).items() if n in (p.name, p.ranker)}
        try:
            build_lists(ctx, [p], params=own)
        except KofsError as exc:
            log.warning(
                "%s left out: it cannot be built from these relevant genes (%s)", p.name, exc
            )
            bad.append(p.name)
    if not bad:
        return None
    return tuple(p.name for p in plans if p.name not in bad)


def honest_selector(files: Sequence[RankFile], names: dict, expression: Expression):
    """Re-run every input's `kofs rank` configuration on the training samples of a fold.

    Each input's files are read once; knowledge that depends on gene ids only (GO graph,
    annotations, interaction graph) is built once and shared by the folds."""
    runs = read_reruns(files, "--protocol honest")

    def select(train: Expression, _y: np.ndarray) -> dict[str, np.ndarray]:
        per_input = [
            {k: v.order() for k, v in rerun(run, train, run["relevant"]).items()} for run in runs
        ]
        return {
            name: per_input[i][lname]
            for name, (i, lname, _) in names.items()
            if lname in per_input[i]
        }

    return select
