"""Evaluation of ranked gene lists (issue 4; ALGORITHMS.md §8).

* :func:`evaluate` — accuracy of the top genes (1-NN, SVMs; book and honest protocols),
  knowledge support (HIT, Sim_anno), redundancy, residue scale and Jaccard scores.
* :func:`write_evaluation` — ``evaluation.tsv``, ``accuracy.tsv``, figures, ``report.html``.
* :class:`KofsRanking` — the KOFS lists and aggregations re-runnable on training folds.
* :func:`split_half` / :class:`SplitHalf` — known genes split into seeds and held-out genes:
  how many held-out genes each list recovers, against the reference and a random-seed null.
* :func:`read_rank_output` / :func:`read_known_genes` — inputs.
"""

from kofs.evaluate.core import EvaluationResult, evaluate, order_from_ranks
from kofs.evaluate.known import KnownGenes, parse_known_spec, read_known_genes
from kofs.evaluate.protocols import CLASSIFIERS, Fold, accuracy_curves, make_folds
from kofs.evaluate.rankfiles import RankFile, ranks_on_matrix, read_rank_output
from kofs.evaluate.report import write_evaluation
from kofs.evaluate.rerank import Aggregation, KofsRanking
from kofs.evaluate.split import SplitHalf, SplitHalfResult, split_half

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
