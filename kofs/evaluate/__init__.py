"""Evaluation of ranked gene lists (issue 4; ALGORITHMS.md §8).

* :func:`evaluate` — accuracy of the top genes (1-NN, SVMs; book and honest protocols),
  knowledge support (HIT, Sim_anno), redundancy, residue scale and Jaccard scores.
* :func:`write_evaluation` — ``evaluation.tsv``, ``accuracy.tsv``, figures, ``report.html``.
* :class:`KofsRanking` — the KOFS lists and aggregations re-runnable on training folds.
* :func:`split_half` / :class:`SplitHalf` — known genes split into seeds and held-out genes:
  how many held-out genes each list recovers, against the reference and a random-seed null.
* :func:`read_rank_output` / :func:`read_known_genes` — inputs.
"""

from importlib import import_module
from typing import Any

#: Where each public name lives: imported on first use (PEP 562), so that the light modules of
#: the package (``kofs.evaluate.config``: the options ``kofs evaluate --help`` shows) do not load
#: the evaluation's libraries (scikit-learn, pandas).
_HOME = {
    "EvaluationResult": "core",
    "evaluate": "core",
    "order_from_ranks": "core",
    "KnownGenes": "known",
    "parse_known_spec": "known",
    "read_known_genes": "known",
    "CLASSIFIERS": "protocols",
    "Fold": "protocols",
    "accuracy_curves": "protocols",
    "make_folds": "protocols",
    "RankFile": "rankfiles",
    "ranks_on_matrix": "rankfiles",
    "read_rank_output": "rankfiles",
    "write_evaluation": "report",
    "Aggregation": "rerank",
    "KofsRanking": "rerank",
    "SplitHalf": "split",
    "SplitHalfResult": "split",
    "split_half": "split",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'kofs.evaluate' has no attribute {name!r}")
    value = getattr(import_module(f"kofs.evaluate.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CLASSIFIERS",
    "Aggregation",
    "EvaluationResult",
    "Fold",
    "KnownGenes",
    "KofsRanking",
    "RankFile",
    "SplitHalf",
    "SplitHalfResult",
    "accuracy_curves",
    "evaluate",
    "make_folds",
    "order_from_ranks",
    "parse_known_spec",
    "ranks_on_matrix",
    "read_known_genes",
    "read_rank_output",
    "split_half",
    "write_evaluation",
]
