"""The settings of ``kofs evaluate``, declared once (:func:`kofs.options.opt`): the command's
options are generated from :class:`EvaluateConfig`, and
:func:`kofs.evaluate.run.evaluate_files` runs one (the command's one library call)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kofs.errors import ParameterError
from kofs.options import FOLD_SEED_MAX, TOP_MAX, build_known, opt

__all__ = ["EvaluateConfig", "SPLIT_OPTIONS", "STDIN_RANKING"]

#: why a ranking is not read from standard input (``-``)
STDIN_RANKING = (
    "a ranking cannot be read from standard input (-): kofs evaluate reads ranking.tsv files "
    "or output folders of `kofs rank`, whose names label the lists; save it to a file and give "
    "its path"
)
#: the options of the split-half evaluation besides ``split_known`` (they need it)
SPLIT_OPTIONS = ("split_repeats", "split_fraction", "split_null", "split_top", "split_reference")


@dataclass(frozen=True)
class EvaluateConfig:
    """What ``kofs evaluate`` evaluates (ranked lists on a labelled matrix) and how."""

    rankings: tuple[str, ...] = opt(
        "rankings",
        "paths",
        required=True,
        stdin=True,  # refused in __post_init__, which says why (STDIN_RANKING)
        help="ranking.tsv files or `kofs rank` output folders.",
    )
    expression: str = opt(
        "expression",
        "path",
        required=True,
        stdin=True,
        help="The labelled expression matrix (CSV/TSV).",
    )
    labels: str = opt(
        "labels",
        "path",
        required=True,
        stdin=True,
        help="Sample classes (CSV/TSV: sample id, label; or a GSEA .cls).",
    )
    label_column: str | None = opt(
        "label_column", help="Class column of --labels (default: second column)."
    )
    sample_column: str | None = opt("sample_column", help="Sample-id column of --labels.")
    missing_labels: str = opt(
        "missing_labels",
        "choice",
        "error",
        choices=("error", "drop"),
        help="Samples of EXPRESSION without a label (or with an empty or NA one): fail, or drop them.",
    )
    genes_in: str | None = opt(
        "genes_in",
        "choice",
        choices=("rows", "columns"),
        help="Genes are the rows or the columns of EXPRESSION (default: guessed).",
    )
    gene_column: str | None = opt("gene_column", help="Column of EXPRESSION holding the gene ids.")
    duplicate_genes: str = opt(  # as kofs rank's (kofs.pipeline.config)
        "duplicate_genes",
        "choice",
        "error",
        choices=("error", "first", "mean", "max-variance"),
        help="What to do with repeated gene ids of EXPRESSION.",
    )
    decimal: str = opt(
        "decimal",
        "choice",
        ".",
        choices=(".", ","),
        help="Decimal mark of EXPRESSION's numbers (',' for 1,23).",
    )
    known_genes: tuple[str, ...] | None = opt(
        "known_genes",
        "paths",
        metavar="NAME=FILE[:COLUMN]",
        help="Known gene set (list file, or table rows where COLUMN is true); repeatable.",
    )
    top: tuple[int, ...] = opt(
        "top",
        "ints",
        (10, 30, 50),
        low=1,
        high=TOP_MAX,
        help="Top-k sizes of ACC-k (1-NN) and HIT.",
    )
    classifiers: tuple[str, ...] = opt(
        "classifiers",
        "names",
        ("1nn", "svm-rbf", "svm-linear"),
        choices=("1nn", "svm-rbf", "svm-linear"),
        help="Classifiers of the accuracy curves, comma-separated (1nn, svm-rbf, svm-linear).",
    )
    folds: int = opt(
        "folds",
        "int",
        5,
        low=0,
        help="Folds of the stratified CV; 0 = leave-one-out (leave-one-group-out with --groups).",
    )
    repeats: int = opt(
        "repeats",
        "int",
        2,
        low=1,
        help="Repeats of the cross-validation, each with a new split (from --seed).",
    )
    groups: str | None = opt(
        "groups",
        metavar="COLUMN",
        help="Column of --labels grouping samples (e.g. patient of replicate arrays); groups "
        "never straddle folds.",
    )
    protocol: str = opt(
        "protocol",
        "choice",
        "book",
        choices=("book", "honest", "both"),
        help="book: rank on all samples; honest: re-run each input's ranking inside every "
        "training fold.",
    )
    split_known: str | None = opt(
        "split_known",
        metavar="NAME",
        help="Split-half evaluation of the --known-genes set NAME: re-run each input from its "
        "relevant genes without a held-out part, count the held-out genes in every top k.",
    )
    split_repeats: int = opt(
        "split_repeats", "int", 5, low=1, high=1000, help="Random splits of --split-known."
    )
    split_fraction: float = opt(
        "split_fraction",
        "float",
        0.5,
        help="Share of the --split-known genes held out (strictly between 0 and 1).",
    )
    split_null: int = opt(
        "split_null",
        "int",
        5,
        low=0,
        high=1000,
        help="Random-seed null draws: relevant genes replaced by random genes outside the set.",
    )
    split_top: tuple[int, ...] = opt(
        "split_top",
        "ints",
        (10, 30, 50, 100),
        low=1,
        high=TOP_MAX,
        help="Top-k sizes of the split-half counts.",
    )
    split_reference: str | None = opt(
        "split_reference",
        metavar="LIST",
        help="List the others are compared with (default: the Fisher score list, if any).",
    )
    go: str | None = opt(
        "go", "path", help="GO OBO file: enables Sim_anno (with --go-annotations)."
    )
    go_annotations: str | None = opt(
        "go_annotations",
        "path",
        help="GO annotations (GAF, gene2go or TSV) for Sim_anno (with --go).",
    )
    sim_anno: tuple[str, ...] | None = opt(
        "sim_anno", "names", help="Known sets Sim_anno is computed for (default: all)."
    )
    cache_dir: str | None = opt(
        "cache_dir",
        "path",
        folder=True,
        help="Cache of parsed GO (default: $KOFS_CACHE_DIR, else $XDG_CACHE_HOME/kofs or "
        "~/.cache/kofs).",
    )
    no_cache: bool = opt("no_cache", "bool", False, help="Neither read nor write the GO cache.")
    output: str = opt(
        "output",
        "path",
        "kofs-eval",
        short="-o",
        folder=True,
        stdin=True,  # refused by the command, which says why (several files, not one stream)
        help="Output folder (an existing kofs-eval is replaced only when named).",
    )
    seed: int = opt(
        "seed",
        "int",
        0,
        low=0,
        high=FOLD_SEED_MAX,  # was SEED_MAX, refused by the evaluation once the data were read
        help="Seed of the fold splits and of every other random choice.",
    )

    def __post_init__(self) -> None:
        if "-" in self.rankings:  # was "-: file not found" once the matrix was read
            raise ParameterError(STDIN_RANKING)
        self.split()  # the split-half settings are checked when the config is made
        names = self.known_names()
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # one HIT_<name> column each: the last set would silently win
            raise ParameterError(
                f"--known-genes: the set name {twice[0]!r} is given twice; give each set its "
                "own NAME"
            )
        for name in self.sim_anno or ():
            if name not in names:
                raise ParameterError(
                    f"--sim-anno {name!r} is not a --known-genes set"
                    + (f"; sets: {', '.join(names)}" if names else "; add --known-genes NAME=FILE")
                )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> EvaluateConfig:
        """Parse and check ``{name: value}`` (dashes or underscores); unknown names fail with a
        did-you-mean hint."""
        return build_known(cls, values, "evaluate option")

    def known_names(self) -> list[str]:
        """The names of the ``known_genes`` sets."""
        return [spec.split("=", 1)[0].strip() for spec in self.known_genes or ()]

    def split(self) -> Any:
        """The split-half settings (:class:`kofs.evaluate.split.SplitHalf`), or None without
        ``split_known``.

        Raises
        ------
        ParameterError
            A split-half option set without ``split_known``, a ``split_known`` that names no
            ``known_genes`` set, or settings SplitHalf refuses.
        """
        if self.split_known is None:
            defaults = {f.name: f.default for f in fields(self)}
            given = [o for o in SPLIT_OPTIONS if getattr(self, o) != defaults[o]]
            if given:
                raise ParameterError(
                    f"--{given[0].replace('_', '-')} needs --split-known NAME (a --known-genes set)"
                )
            return None
        names = self.known_names()
        if self.split_known not in names:
            raise ParameterError(
                f"--split-known {self.split_known!r} is not a --known-genes set"
                + (f"; sets: {', '.join(names)}" if names else "; add --known-genes NAME=FILE")
            )
        from kofs.evaluate.split import SplitHalf

        return SplitHalf(
            self.split_known,
            repeats=self.split_repeats,
            fraction=self.split_fraction,
            null_repeats=self.split_null,
            top=tuple(self.split_top),
            seed=self.seed,
            reference=self.split_reference,
        )
