"""``kofs evaluate RANKING... EXPRESSION``: accuracy, knowledge support and redundancy of ranked
gene lists, with figures and an offline HTML report."""

from __future__ import annotations

import os

import click

from kofs.cli._group import main
from kofs.cli._options import UserPath, seed_option, split_names
from kofs.errors import ParameterError

FILE = UserPath(dir_okay=False)


def _ints(value: str, option: str) -> list[int]:
    try:
        return [int(v) for v in split_names(value) or []]
    except ValueError:
        raise ParameterError(
            f"{option} {value!r}: expected comma-separated whole numbers, e.g. 10,30,50"
        ) from None


_SPLIT_OPTIONS = ("split_repeats", "split_fraction", "split_null", "split_top", "split_reference")


def _split_settings(name, repeats, fraction, null, top, reference, seed, known):
    """The split-half settings (checked before any work), or None without --split-known."""
    from kofs.cli._group import option_given
    from kofs.evaluate.split import SplitHalf

    if name is None:
        given = [o for o in _SPLIT_OPTIONS if option_given(o)]
        if given:
            raise ParameterError(
                f"--{given[0].replace('_', '-')} needs --split-known NAME (a --known-genes set)"
            )
        return None
    names = [spec.split("=", 1)[0].strip() for spec in known]
    if name not in names:
        raise ParameterError(
            f"--split-known {name!r} is not a --known-genes set"
            + (f"; sets: {', '.join(names)}" if names else "; add --known-genes NAME=FILE")
        )
    return SplitHalf(
        name,
        repeats=repeats,
        fraction=fraction,
        null_repeats=null,
        top=tuple(_ints(top, "--split-top")),
        seed=seed,
        reference=reference,
    )


@main.command("evaluate")
@click.argument("rankings", nargs=-1, required=True, type=UserPath(exists=False))
@click.argument("expression", type=FILE)
@click.option(
    "--labels", type=FILE, required=True, help="Sample classes (CSV/TSV: sample id, label)."
)
@click.option(
    "--label-column", default=None, help="Class column of --labels (default: second column)."
)
@click.option("--sample-column", default=None, help="Sample-id column of --labels.")
@click.option(
    "--missing-labels",
    type=click.Choice(["error", "drop"]),
    default="error",
    show_default=True,
    help="Samples of EXPRESSION without a label: fail, or drop them.",
)
@click.option(
    "--genes-in",
    type=click.Choice(["rows", "columns"]),
    default=None,
    help="Genes are the rows or the columns of EXPRESSION (default: guessed).",
)
@click.option("--gene-column", default=None, help="Column of EXPRESSION holding the gene ids.")
@click.option(
    "--decimal",
    type=click.Choice([".", ","]),
    default=".",
    show_default=True,
    help="Decimal mark of EXPRESSION's numbers (',' for 1,23).",
)
@click.option(
    "--known-genes",
    "known",
    multiple=True,
    metavar="NAME=FILE[:COLUMN]",
    help="Known gene set (list file, or table rows where COLUMN is true); repeatable.",
)
@click.option(
    "--top", default="10,30,50", show_default=True, help="Top-k sizes of ACC-k (1-NN) and HIT."
)
@click.option(
    "--classifiers",
    default="1nn,svm-rbf,svm-linear",
    show_default=True,
    help="Classifiers of the accuracy curves, comma-separated (1nn, svm-rbf, svm-linear).",
)
@click.option(
    "--folds",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Folds of the stratified CV; 0 = leave-one-out (leave-one-group-out with --groups).",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Repeats of the cross-validation, each with a new split (from --seed).",
)
@click.option(
    "--groups",
    default=None,
    metavar="COLUMN",
    help="Column of --labels grouping samples (e.g. patient of replicate arrays); groups never straddle folds.",
)
@click.option(
    "--protocol",
    type=click.Choice(["book", "honest", "both"]),
    default="book",
    show_default=True,
    help="book: rank on all samples; honest: re-run each input's ranking inside every training fold.",
)
@click.option(
    "--split-known",
    default=None,
    metavar="NAME",
    help="Split-half evaluation of the --known-genes set NAME: re-run each input from its "
    "relevant genes without a held-out part, count the held-out genes in every top k.",
)
@click.option(
    "--split-repeats",
    type=click.IntRange(1, 1000),
    default=5,
    show_default=True,
    help="Random splits of --split-known.",
)
@click.option(
    "--split-fraction",
    type=float,
    default=0.5,
    show_default=True,
    help="Share of the --split-known genes held out (strictly between 0 and 1).",
)
@click.option(
    "--split-null",
    type=click.IntRange(0, 1000),
    default=5,
    show_default=True,
    help="Random-seed null draws: relevant genes replaced by random genes outside the set.",
)
@click.option(
    "--split-top",
    default="10,30,50,100",
    show_default=True,
    help="Top-k sizes of the split-half counts.",
)
@click.option(
    "--split-reference",
    default=None,
    metavar="LIST",
    help="List the others are compared with (default: the Fisher score list, if any).",
)
@click.option(
    "--go", type=FILE, default=None, help="GO OBO file: enables Sim_anno (with --go-annotations)."
)
@click.option(
    "--go-annotations",
    type=FILE,
    default=None,
    help="GO annotations (GAF, gene2go or TSV) for Sim_anno (with --go).",
)
@click.option(
    "--sim-anno", default=None, help="Known sets Sim_anno is computed for (default: all)."
)
@click.option(
    "--cache-dir",
    type=UserPath(file_okay=False),
    default=None,
    help="Cache of parsed GO (default: $KOFS_CACHE_DIR, else $XDG_CACHE_HOME/kofs or ~/.cache/kofs).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the GO cache.")
@click.option(
    "-o",
    "--output",
    type=UserPath(file_okay=False),
    default="kofs-eval",
    show_default=True,
    help="Output folder (an existing kofs-eval is replaced only when named).",
)
@seed_option("Seed of the fold splits and of every other random choice.")
def evaluate_cmd(
    rankings,
    expression,
    labels,
    label_column,
    sample_column,
    missing_labels,
    genes_in,
    gene_column,
    decimal,
    known,
    top,
    classifiers,
    folds,
    repeats,
    groups,
    protocol,
    split_known,
    split_repeats,
    split_fraction,
    split_null,
    split_top,
    split_reference,
    go,
    go_annotations,
    sim_anno,
    cache_dir,
    no_cache,
    output,
    seed,
) -> None:
    """Evaluate RANKING (ranking.tsv files or `kofs rank` output folders) on EXPRESSION.

    Writes OUTDIR/evaluation.tsv (one row per list), accuracy.tsv (curves), figures/ (PNG, SVG)
    and report.html (readable offline).
    """
    from kofs.cache import open_cache
    from kofs.cli._group import hold_output, option_given, report_written
    from kofs.cli._progress import cli_progress

    top_ks, classifier_names = _ints(top, "--top"), split_names(classifiers)  # before any work
    split = _split_settings(
        split_known, split_repeats, split_fraction, split_null, split_top, split_reference, seed,
        known,
    )  # fmt: skip
    inputs = [*rankings, expression, labels, go, go_annotations]
    # checked before any work: an ignored --cache-dir warns, a cache inside -o is refused
    cache = open_cache(
        cache_dir, enabled=not no_cache, used=bool(go or go_annotations), outputs=[output]
    )
    hold_output(  # checked and taken before any work
        output,
        inputs=[p for p in inputs if p and os.path.isfile(p)],
        named=option_given("output"),
    )
    from kofs.evaluate.known import parse_known_spec
    from kofs.evaluate.run import evaluate_outputs
    from kofs.io.expression import read_expression
    from kofs.io.labels import align_labels, read_labels

    cats = read_labels(labels, sample_column=sample_column, label_column=label_column)
    expr = read_expression(
        expression,
        genes_in=genes_in,
        gene_column=gene_column,
        sample_ids=cats.samples,
        decimal=decimal,
    )
    expr, cats = align_labels(expr, cats, missing=missing_labels, labels_path=labels)
    group_ids = None
    if groups:
        g = read_labels(labels, sample_column=sample_column, label_column=groups)
        gmap = dict(zip(g.samples, g.labels, strict=True))
        group_ids = [gmap[s] for s in expr.samples]
    go_data = None
    if go or go_annotations:
        from kofs.sources import read_sources

        go_data = read_sources(go=go, go_annotations=go_annotations, cache=cache).get("go")
    known_sets = [parse_known_spec(s) for s in known]
    with cli_progress() as progress:
        written = evaluate_outputs(
            list(rankings),
            expr,
            labels=cats,
            output=output,
            known=known_sets,
            protocol=protocol,
            groups=group_ids,
            go=go_data,
            sim_sets=split_names(sim_anno),
            top=top_ks,
            classifiers=classifier_names,
            n_splits=folds,
            n_repeats=repeats,
            seed=seed,
            progress=progress,
            split=split,
            inputs={
                "expression": expression,
                "labels": labels,
                "known_genes": [k.source for k in known_sets],
                "go": go,
                "go_annotations": go_annotations,
            },
        )
    report_written(output, written)
