"""Sample labels: read a CSV/TSV of (sample id, label), or a GSEA categorical ``.cls`` (labels
in the matrix's sample order), and align them to an expression matrix."""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from kofs.errors import InputError, ParameterError, checked_keywords, require_instance
from kofs.io._table import MISSING_TOKENS, check_column_names, read_table
from kofs.io.sniff import name_suffix
from kofs.types import Expression, SampleCategories

log = logging.getLogger(__name__)

__all__ = [
    "read_labels",
    "read_cls",
    "align_labels",
    "check_label_spelling",
    "check_label_text",
    "label_columns",
]

_SAMPLE_NAMES = ("sample", "sample_id", "sampleid", "sample id", "samples", "id")


def _lines(lines, idx) -> str:
    shown = ", ".join(str(int(lines[i])) for i in idx[:5])
    return shown + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")


def _column(header: list[str], wanted: str | None, *, path: str | None, option: str) -> int | None:
    if wanted is None:
        return None
    if wanted in header:
        return header.index(wanted)
    lower = [h.lower() for h in header]
    if lower.count(wanted.lower()) == 1:
        return lower.index(wanted.lower())
    close = difflib.get_close_matches(wanted, header, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    shown = ", ".join(repr(h) for h in header[:10]) + (", ..." if len(header) > 10 else "")
    raise ParameterError(
        f"{option} {wanted!r} is not a column; {hint}columns are {shown}", path=path
    )


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _fold(label: str) -> str:
    """What makes two labels one class: their letters without case or white space, or their
    value when they are numbers ('1', '1.0' and '01' are class 1)."""
    folded = re.sub(r"\s+", "", label).casefold()
    if _NUMBER.fullmatch(folded):
        return f"number {float(folded)!r}"
    return folded


def check_label_spelling(
    labels: Sequence[str], place: Callable[[int], str], path: str | None, *, of: str = ""
) -> None:
    """Refuse two labels that differ only in case or whitespace ("Tumor" / "tumor") or are
    the same number ("1" / "1.0", a column of numbers written by two programs): an
    InputError naming both with their places (``place(i)`` of the i-th label: ``"line 3"``,
    ``"cell AAAC-1"``) and what they are labels ``of`` (``" of obs column 'cell_type'"``).
    A label holding a tab or a line break is refused too (:func:`check_label_text`). Empty
    labels (unlabelled) are skipped."""
    first: dict[str, tuple[str, int]] = {}
    seen: set[str] = set()
    for i, v in enumerate(labels):
        if v in seen or not v:
            continue
        seen.add(v)
        check_label_text(v, place(i), path, of=of)
        key = _fold(v)
        if key in first:
            a, j = first[key]
            how = (
                "are the same number"
                if key.startswith("number ")
                else "differ only in case or spaces"
            )
            raise InputError(
                f"labels {a!r} ({place(j)}) and {v!r} ({place(i)}){of} {how} and would be two "
                "classes; spell them identically (or rename one to a clearly different class)",
                path=path,
            )
        first[key] = (v, i)


def check_label_text(label: str, place: str, path: str | None, *, of: str = "") -> None:
    """A label is written to tab-separated tables (``markers.tsv``'s ``group``): one holding a
    tab or a line break would split its row, and is refused naming its ``place``."""
    if "\t" in label or "\n" in label or "\r" in label:
        raise InputError(
            f"label {label!r} ({place}){of} holds a tab or a line break; labels are written "
            "to tab-separated tables (markers.tsv): rename it",
            path=path,
        )


def label_columns(
    header: Sequence[str],
    *,
    sample_column: str | None = None,
    label_column: str | None = None,
    path: str | None = None,
    label_option: str = "label column",
) -> tuple[int, int]:
    """The positions of the sample-id and label columns of a labels table's ``header``, as
    :func:`read_labels` chooses them (other readers of the same table use this, so that they
    read the same samples).

    Raises
    ------
    InputError
        Fewer than two columns.
    ParameterError
        Unknown column name (with a did-you-mean hint), or the same column for both.
    """
    header = list(header)
    if len(header) < 2:
        raise InputError(
            "needs at least two columns (sample id, label) with a header line; found one column "
            "(is the delimiter a tab or a comma?)",
            path=path,
        )
    s_idx = _column(header, sample_column, path=path, option="sample column")
    l_idx = _column(header, label_column, path=path, option=label_option)
    if s_idx is None:
        named = [i for i, h in enumerate(header) if h.lower() in _SAMPLE_NAMES and i != l_idx]
        s_idx = named[0] if named else (0 if l_idx != 0 else 1)
    if l_idx is None:
        l_idx = next(i for i in range(len(header)) if i != s_idx)
    if s_idx == l_idx:
        raise ParameterError(
            f"sample and label column are both {header[s_idx]!r}; choose two different columns",
            path=path,
        )
    return s_idx, l_idx


def read_cls(path: str | os.PathLike) -> SampleCategories:
    """Read a GSEA categorical ``.cls``: line 1 ``<samples> <classes> 1``, line 2 ``# <class
    name> ...``, line 3 one label per sample, in the expression matrix's sample order (tabs or
    spaces).

    Labels that are class names are kept; others (``0 0 1``) are named, by order of first
    appearance, after the classes of line 2 (GSEA's rule).

    Returns
    -------
    SampleCategories
        ``by_position=True``: the samples are placeholders ``#1 ... #n``, paired with the
        matrix's samples by :func:`align_labels`; ``name`` is ``"class"``.

    Raises
    ------
    InputError
        A continuous (``#numeric``) ``.cls``, a header that is not three whole numbers, counts
        of samples or classes that differ from line 3's, or a line 2 not starting with ``#``.
    """
    from kofs.io._open import open_text

    name = os.fspath(path)
    with open_text(name, what="labels file") as fh:
        rows = [(k, ln.strip()) for k, ln in enumerate(fh, start=1) if ln.strip()]
    if rows and rows[0][1].lower().startswith("#numeric"):
        raise InputError(
            "is a continuous (#numeric) GSEA .cls, phenotype values rather than classes; give "
            "categorical labels (a categorical .cls, or a table of sample id and label)",
            path=name,
        )
    form = "a GSEA .cls is '<samples> <classes> 1', '# <class names>', then a label per sample"
    if len(rows) < 3:
        raise InputError(f"has {len(rows)} non-blank lines; {form}", path=name)
    (l1, head), (l2, names_line), (l3, labels_line) = rows[:3]
    if len(rows) > 3:
        raise InputError(f"has more than three lines; {form}", path=name, line=rows[3][0])
    counts = head.split()
    if len(counts) != 3 or not all(c.isdigit() for c in counts):
        raise InputError(f"line 1 is {head[:40]!r}; {form}", path=name, line=l1)
    n_samples, n_classes = int(counts[0]), int(counts[1])
    if not names_line.startswith("#"):
        raise InputError(f"line 2 does not start with '#'; {form}", path=name, line=l2)
    names = names_line[1:].split()
    labels = labels_line.split()
    if len(labels) != n_samples:
        raise InputError(
            f"line 3 has {len(labels)} labels, line 1 says {n_samples} samples", path=name, line=l3
        )
    first = list(dict.fromkeys(labels))
    if len(first) != n_classes or (names and len(names) != n_classes):
        raise InputError(
            f"line 1 says {n_classes} classes, line 2 names {len(names)} and line 3 uses "
            f"{len(first)}",
            path=name,
            line=l1,
        )
    if names and not set(first) <= set(names):
        rename = dict(zip(first, names, strict=True))
        labels = [rename[v] for v in labels]
    check_label_spelling(labels, lambda i: f"sample {i + 1}", name)
    log.info("%s: %d labels by sample position, classes %s", name, len(labels), ", ".join(names))
    samples = [f"#{i + 1}" for i in range(len(labels))]
    return SampleCategories(labels, samples, name="class", by_position=True)


def _check_missing(missing: str) -> None:
    if missing not in ("error", "drop"):
        raise ParameterError(f"missing={missing!r} is not one of 'error', 'drop'")


@checked_keywords
def read_labels(
    path: str | os.PathLike,
    *,
    sample_column: str | None = None,
    label_column: str | None = None,
    label_option: str = "label column",
    missing: str = "error",
) -> SampleCategories:
    """Read sample labels from a CSV/TSV with a header (gzip ok, ``"-"`` for stdin), or from a
    GSEA categorical ``.cls`` (recognised by its extension; :func:`read_cls`).

    Parameters
    ----------
    path : str or path-like
    sample_column : str, optional
        Column of sample ids. Default: a column named ``sample``, ``sample_id`` or ``id``
        (case-insensitive), else the first column.
    label_column : str, optional
        Column of labels. Default: the first column after the sample column (the second
        column when the sample ids come first).
    label_option : str, default "label column"
        How messages name ``label_column`` (``"--groups"`` when the labels are sample groups).
    missing : {"error", "drop"}, default "error"
        Rows whose label is empty or ``NA`` (a sample sheet's column that some samples lack):
        an error naming their lines, or left out (their samples are then unlabelled, which
        :func:`align_labels` handles by its own ``missing``).

    Returns
    -------
    SampleCategories
        In file order, ``name`` = the label column's name. Repeated rows with the same label
        are merged.

    Raises
    ------
    InputError
        Unreadable file, fewer than two columns, empty sample ids or labels (naming the lines),
        a sample with two different labels.
    ParameterError
        Unknown column name (with a did-you-mean hint), or the same column for both.
    """
    check_column_names(sample_column=sample_column, label_column=label_column)
    _check_missing(missing)
    if isinstance(path, str) and path.startswith("obs:") and not os.path.exists(path):
        raise ParameterError(
            f"{path}: obs:COLUMN names a column of an AnnData .h5ad's obs, which kofs rank and "
            "kofs run read with their matrix; here give a labels file (sample id, label)"
        )
    if isinstance(path, (str, os.PathLike)) and name_suffix(path) == ".cls":
        for option, value in (("sample column", sample_column), (label_option, label_column)):
            if value is not None:
                raise ParameterError(
                    f"{option} {value!r} given for a GSEA .cls, which has no columns (one "
                    "label per sample, in the matrix's order); leave it out",
                    path=os.fspath(path),
                )
        return read_cls(path)
    df = read_table(path)
    name, lines = df.attrs["path"], df.attrs["lines"]
    header = list(df.columns)
    s_idx, l_idx = label_columns(
        header,
        sample_column=sample_column,
        label_column=label_column,
        path=name,
        label_option=label_option,
    )
    samples = df.iloc[:, s_idx].tolist()
    labels = df.iloc[:, l_idx].tolist()
    no_id = [i for i, s in enumerate(samples) if s == ""]
    if no_id:
        raise InputError(f"empty sample id on line(s) {_lines(lines, no_id)}", path=name)
    empty = [i for i, v in enumerate(labels) if v in MISSING_TOKENS]
    if empty and label_option == "--groups":
        # --missing-labels drops samples without a class, never without a group: the advice
        # below was given with --missing-labels drop already on the command line
        raise InputError(
            f"empty/NA group in column {header[l_idx]!r} (--groups) on line(s) "
            f"{_lines(lines, empty)}; every sample needs a group (a sample measured once: a "
            "group of its own, e.g. its id): fill them in, or remove the rows",
            path=name,
        )
    if empty and missing == "error":
        raise InputError(
            f"empty/NA label in column {header[l_idx]!r} on line(s) {_lines(lines, empty)}; "
            "leave those samples out with --missing-labels drop, or remove the rows",
            path=name,
        )
    if empty:
        log.info(
            "%s: %d samples without a label in column %r (line(s) %s) left unlabelled",
            name, len(empty), header[l_idx], _lines(lines, empty),
        )  # fmt: skip
        gone = set(empty)
        samples = [x for i, x in enumerate(samples) if i not in gone]
        labels = [x for i, x in enumerate(labels) if i not in gone]
        lines = [x for i, x in enumerate(lines) if i not in gone]
        if not labels:
            raise InputError(
                f"every label in column {header[l_idx]!r} is empty or NA; choose another column",
                path=name,
            )
    first: dict[str, int] = {}
    keep = []
    for i, (s, v) in enumerate(zip(samples, labels, strict=True)):
        if s in first:
            j = first[s]
            if labels[j] != v:
                swapped = len(set(labels)) == len(labels)  # a label per row: the sample ids?
                raise InputError(
                    f"sample {s!r} has two labels: {labels[j]!r} (line {lines[j]}) and {v!r} "
                    f"(line {lines[i]}); "
                    + (
                        f"column {header[l_idx]!r}, read as the labels, holds a different "
                        f"value on every row and {header[s_idx]!r}, read as the sample ids, "
                        "repeats: are they swapped? (the label column option names the column "
                        "of the classes)"
                        if swapped
                        else "keep one"
                    ),
                    path=name,
                )
            continue
        first[s] = i
        keep.append(i)
    if len(keep) < len(samples):
        log.info("%s: %d repeated rows merged", name, len(samples) - len(keep))
    check_label_spelling([labels[i] for i in keep], lambda i: f"line {lines[keep[i]]}", name)
    counts = Counter(labels[i] for i in keep)
    log.info(
        "%s: %d samples, classes %s",
        name,
        len(keep),
        ", ".join(f"{c} ({n})" for c, n in sorted(counts.items())),
    )
    return SampleCategories(
        [labels[i] for i in keep], [samples[i] for i in keep], name=header[l_idx] or "label"
    )


_R_INVALID = re.compile(r"[^A-Za-z0-9._]")


def r_make_names(name: str) -> str:
    """``name`` as R's ``make.names`` writes it (``read.table``/``data.frame`` column names with
    ``check.names=TRUE``): every character other than a letter, digit, ``.`` or ``_`` becomes
    ``.``, and an ``X`` is put before a name that does not start with a letter or with a ``.``
    not followed by a digit (``1005-01`` -> ``X1005.01``)."""
    out = _R_INVALID.sub(".", name)
    if not re.match(r"[A-Za-z]|\.(?!\d)", out):
        out = "X" + out
    return out


# file extensions of per-sample files whose names become sample ids (featureCounts' columns
# are the BAM paths, an Affymetrix matrix's the CEL file names)
_SAMPLE_FILE = re.compile(
    r"\.(?:bam|sam|cram|cel|txt|tsv|csv|counts?|fastq|fq|sf|tab)(?:\.gz)?$", re.IGNORECASE
)


def _fold_sample(s: str) -> str:
    """A sample id without case, folders, a per-sample file's extension and leading zeros."""
    return _SAMPLE_FILE.sub("", s.strip().rsplit("/", 1)[-1]).lower().lstrip("0")


def _near_hint(matrix_samples: Iterable[str], label_samples: Iterable[str]) -> str:
    """A hint when matrix samples would match labelled ones ignoring case and leading zeros (a
    spreadsheet turned ``01005`` into ``1005``), or a file's folder and extension
    (featureCounts' ``/data/01005.bam``), else ``""``."""
    label_samples = list(label_samples)
    folded = {_fold_sample(s) for s in label_samples}
    near = [s for s in matrix_samples if _fold_sample(s) in folded]
    if not near:
        return ""
    files = [s for s in [*near, *label_samples] if _SAMPLE_FILE.search(s) or "/" in s]
    if files:
        return (
            f" ({len(near)} would match without folders and file extensions, such as those "
            f"of {files[0]!r})"
        )
    return f" ({len(near)} would match ignoring case/leading zeros: check how the files were saved)"


def _r_mangling_hint(matrix_samples: Sequence[str], label_samples: Sequence[str]) -> str:
    """A hint when sample ids of one file match the other's only after R's ``make.names``
    (one file went through R with ``check.names=TRUE``), else ``""``."""
    matrix_set, label_set = set(matrix_samples), set(label_samples)
    pairs = [(s, r_make_names(s)) for s in label_samples if s not in matrix_set]
    hits = [(s, m) for s, m in pairs if m != s and m in matrix_set]
    if not hits:  # the other way: the labels file was written by R
        pairs = [(r_make_names(s), s) for s in matrix_samples if s not in label_set]
        hits = [(m, s) for m, s in pairs if m != s and m in label_set]
        if not hits:
            return ""
        (mangled, orig), n = hits[0], len(hits)
        return (
            f"; {n} would match after R's make.names, which wrote matrix sample {orig!r} as "
            f"{mangled!r} in the labels (write the file from R with check.names=FALSE, or "
            "rename the ids)"
        )
    (orig, mangled), n = hits[0], len(hits)
    return (
        f"; {n} would match after R's make.names, which wrote labelled sample {orig!r} as "
        f"{mangled!r} in the matrix (read the matrix in R with check.names=FALSE, or rename "
        "the ids)"
    )


def _check_align_arguments(expression: object, categories: object) -> None:
    """:func:`align_labels`' two arguments are a matrix and labels, in that order (a
    ParameterError saying so, not an AttributeError from inside)."""
    if isinstance(expression, Expression) and isinstance(categories, SampleCategories):
        return
    if isinstance(expression, SampleCategories) and isinstance(categories, Expression):
        raise ParameterError(
            "align_labels takes the matrix first and the labels second: "
            "align_labels(expression, labels), not (labels, expression)"
        )
    require_instance("align_labels", "expression", expression, Expression, "kofs.read_expression")
    require_instance("align_labels", "categories", categories, SampleCategories, "kofs.read_labels")


@checked_keywords
def align_labels(
    expression: Expression,
    categories: SampleCategories,
    *,
    missing: str = "error",
    labels_path: str | os.PathLike | None = None,
) -> tuple[Expression, SampleCategories]:
    """Put labels in the order of the matrix's samples.

    Parameters
    ----------
    expression : Expression
    categories : SampleCategories
        As read by :func:`read_labels` (any order; may hold extra samples, which are ignored
        with an info log). Labels ``by_position`` (a GSEA ``.cls``) are paired with the
        matrix's samples in order, and must be as many.
    missing : {"error", "drop"}, default "error"
        Matrix samples without a label: fail listing a few, or drop them from the matrix with a
        warning.
    labels_path : str or path-like, optional
        The labels file; errors about the labels then name it (else the matrix's file).

    Returns
    -------
    (Expression, SampleCategories)
        The matrix (fewer samples only under ``missing="drop"``) and labels aligned to its
        samples.

    Raises
    ------
    InputError
        No sample matches; unlabelled samples under ``"error"``; fewer than two samples or a
        single class after alignment; a sample given two different labels.
    ParameterError
        Unknown ``missing`` policy; arguments that are not a matrix and labels (or swapped).
    """
    _check_align_arguments(expression, categories)
    _check_missing(missing)
    src = expression.source or "expression matrix"
    lab = src if labels_path is None else os.fspath(labels_path)
    against = "" if labels_path is None else f" {src}"
    if categories.by_position:  # a GSEA .cls: the i-th label is the i-th sample's
        if len(categories.labels) != expression.n_samples:
            raise InputError(
                f"has {len(categories.labels)} labels, one per sample in the matrix's order (a "
                f"GSEA .cls has no sample ids), but the expression matrix{against} has "
                f"{expression.n_samples} samples; give one label per sample of the matrix",
                path=lab,
            )
        categories = SampleCategories(
            categories.labels, expression.samples, name=categories.name,
            parents=categories.parents,
        )  # fmt: skip
    lookup: dict[str, str] = {}
    for s, v in zip(categories.samples, categories.labels, strict=True):
        if lookup.setdefault(s, v) != v:  # the same label twice is one label, as in a file
            raise InputError(
                f"sample {s!r} has two labels, {lookup[s]!r} and {v!r}; give one label per sample",
                path=None if labels_path is None else lab,
            )
    have = [i for i, s in enumerate(expression.samples) if s in lookup]
    if not have:
        hint = _near_hint(expression.samples, categories.samples)
        mangled = _r_mangling_hint(expression.samples, categories.samples)
        raise InputError(
            f"no sample of the expression matrix{against} ({', '.join(expression.samples[:3])}, "
            f"...) has a label (labels name {', '.join(categories.samples[:3])}, ...){hint}"
            f"{mangled}; use the same sample ids in both files",
            path=lab,
        )
    lacking = [s for s in expression.samples if s not in lookup]
    if lacking:
        shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
        # a file without a header line: its first row became the header, so its first sample
        # lacks a label and the label column is named after one of the classes
        headerless = (
            f" (the labels file may have no header line: its label column is named "
            f"{categories.name!r}, which is also one of its labels)"
            if categories.name in set(categories.labels)
            else ""
        )
        unused = set(categories.samples) - set(expression.samples)
        mangled = _near_hint(lacking, unused) + _r_mangling_hint(lacking, categories.samples)
        if missing == "error":
            raise InputError(
                f"{len(lacking)} of {expression.n_samples} samples have no label ({shown})"
                f"{headerless}{mangled}; add them to the labels file or drop them with "
                "--missing-labels drop",
                path=lab,
            )
        log.warning(
            "dropping %d samples without a label: %s%s%s", len(lacking), shown, headerless, mangled
        )
        expression = expression.subset_samples(have)
    extra = len(set(categories.samples) - set(expression.samples))
    if extra:
        log.info("%d labelled samples are not in the expression matrix (ignored)", extra)
    labels = [lookup[s] for s in expression.samples]
    aligned = SampleCategories(
        labels, expression.samples, name=categories.name, parents=categories.parents
    )
    if expression.n_samples < 2:
        raise InputError(
            f"only {expression.n_samples} labelled sample left; at least 2 are needed", path=lab
        )
    counts = Counter(labels)
    if len(counts) < 2:
        raise InputError(
            f"all {len(labels)} labelled samples are in one class ({labels[0]!r}); supervised "
            "methods need at least two classes: choose another label column",
            path=lab,
        )
    if len(counts) == len(labels) and len(labels) > 2:
        column = f" {categories.name!r}" if categories.name else ""
        raise InputError(
            f"every one of the {len(labels)} labelled samples has its own class (label "
            f"column{column}): these look like sample ids, not classes; choose the class "
            "column (--label-column)",
            path=lab,
        )
    single = sorted(c for c, n in counts.items() if n == 1)
    if single:
        log.warning(
            "class(es) with a single sample: %s; per-class statistics are unreliable%s",
            ", ".join(single[:10]) + (f", ... ({len(single)} classes)" if len(single) > 10 else ""),
            _measurement_hint(counts, single, categories.name),
        )
    return expression, aligned


def _measurement_hint(counts: Counter, single: list[str], column: str | None) -> str:
    """A hint when the labels are numbers most of whose classes hold one sample: a measurement
    column (age, dose) taken for the classes, e.g. the first column after the sample ids."""
    if len(counts) <= 2 or 2 * len(single) <= len(counts):
        return ""
    try:
        [float(c) for c in counts]
    except ValueError:
        return ""
    name = f" {column!r}" if column else ""
    return (
        f"; label column{name} holds numbers and {len(single)} of its {len(counts)} classes "
        "have one sample: a measurement (age, dose?) rather than classes? choose the class "
        "column (--label-column)"
    )
