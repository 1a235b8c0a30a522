"""The expression reader's parser (kofs.io._numeric_table, pyarrow): the same numbers, bit for
bit, as the nearest-double oracle and as pandas' round_trip parser the reader used before; the
number grammar; one error line naming the first bad cell in file order."""

from __future__ import annotations

import gzip
import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kofs.errors import InputError
from kofs.io._numeric_table import NUMBER, WIDE
from kofs.io._table import MISSING_TOKENS
from kofs.io.expression import read_expression

_GRAMMAR = re.compile(NUMBER, re.IGNORECASE)


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _oracle(cell: str) -> float:
    """The double nearest to the decimal (Python's float is correctly rounded)."""
    t = cell.strip(" \t").strip('"')
    return math.nan if t.strip(" \t") in MISSING_TOKENS else float(t)


def _cell(rng) -> str:
    """A number as tools write them: every precision, exponents, signs, padding, quotes, NA."""
    v = float(rng.normal() * 10.0 ** rng.integers(-30, 30))
    forms = [
        repr(v), f"{v:.17g}", f"{v:.3e}", f"{v:E}", f"{v:.6f}", f"{v:.25g}", f"{v:.4g}",
        ("+" if v >= 0 else "") + f"{v:.10g}", f" {v:.8g}  ", f"{v:.2g}",
        f"{rng.integers(0, 10**6)}", f"{rng.integers(10**17, 10**18)}{rng.integers(10**6, 10**7)}.{rng.integers(10**17, 10**18)}",
        "0", "-0", "0.0", ".5", "5.", "1e-320", "4.9e-324", "2.4703282292062328e-324",
        "1e300", "-9.99999999999999999e299", "0.30000000000000004441", "9007199254740993",
    ]  # fmt: skip
    if rng.random() < 0.03:
        return str(rng.choice(["", "NA", "NaN", "nan", "N/A", "null", "NULL", "None", "#N/A"]))
    return str(forms[rng.integers(len(forms))])


def _file(tmp_path, rng, *, n_rows, n_cols, sep, quote, gz, wide, extra=()):
    cells = [[_cell(rng) for _ in range(n_cols)] for _ in range(n_rows)]
    q = (lambda s: f'"{s}"') if quote else (lambda s: s)
    if wide:  # samples in rows
        lines = [sep.join(["sample", *(f"G{j}" for j in range(n_cols))])]
        lines += [sep.join([f"S{i}", *(q(c) for c in row)]) for i, row in enumerate(cells)]
    else:
        lines = [sep.join(["gene", *extra, *(f"S{j}" for j in range(n_cols))])]
        lines += [
            sep.join([q(f"G{i}"), *(q(f"{e}{i}") for e in extra), *(q(c) for c in row)])
            for i, row in enumerate(cells)
        ]
    text = "\n".join(lines) + "\n"
    name = "m" + (".csv" if sep == "," else ".tsv") + (".gz" if gz else "")
    p = tmp_path / name
    p.write_bytes(gzip.compress(text.encode(), mtime=0) if gz else text.encode())
    return p, text, cells


@pytest.mark.parametrize(
    ("sep", "quote", "gz", "wide", "extra"),
    [
        ("\t", False, False, False, ()),
        ("\t", False, True, False, ("symbol", "entrez_id")),
        (",", False, True, False, ()),
        (",", True, False, False, ("symbol",)),
        ("\t", True, False, False, ()),
        ("\t", False, False, True, ()),
        (",", True, True, True, ()),
    ],
)
def test_values_are_the_nearest_doubles_and_match_pandas_round_trip(
    tmp_path, sep, quote, gz, wide, extra
):
    rng = np.random.default_rng(len(extra) + 10 * gz + 100 * wide + 1000 * quote)
    n_rows, n_cols = (12, 300) if wide else (300, 12)
    p, text, cells = _file(
        tmp_path, rng, n_rows=n_rows, n_cols=n_cols, sep=sep, quote=quote, gz=gz, wide=wide,
        extra=extra,
    )  # fmt: skip
    e = read_expression(p, missing="drop-gene")
    table = np.array([[_oracle(c) for c in row] for row in cells])
    keep = ~np.isnan(table).any(axis=0 if wide else 1)
    expected = table[:, keep] if wide else table[keep].T
    assert e.values.shape == expected.shape
    np.testing.assert_array_equal(_bits(e.values), _bits(expected))
    # the parser of the reader before pyarrow: pandas' C parser with round_trip
    n_id = 1 + len(extra)
    df = pd.read_csv(
        io.StringIO(text), sep=sep, dtype={k: str for k in range(n_id)},
        na_values=list(MISSING_TOKENS), keep_default_na=False, float_precision="round_trip",
        header=0, index_col=None,
    )  # fmt: skip
    old = df.iloc[:, n_id:].to_numpy(dtype=np.float64)
    old = old[:, keep] if wide else old[keep].T
    np.testing.assert_array_equal(_bits(e.values), _bits(old))
    if extra:
        assert e.annotations["symbol"] == tuple(f"symbol{i}" for i in np.flatnonzero(keep))


def test_one_thread_and_the_strict_path_give_the_same_bits(tmp_path):
    rng = np.random.default_rng(3)
    p, text, _ = _file(tmp_path, rng, n_rows=400, n_cols=9, sep="\t", quote=False, gz=False,
                       wide=False)  # fmt: skip
    ref = read_expression(p, missing="drop-gene")
    assert (
        _bits(read_expression(p, missing="drop-gene", threads=1).values).tobytes()
        == _bits(ref.values).tobytes()
    )
    # a padded missing-value token and a "-nan" send the table through the strict path
    strict = tmp_path / "strict.tsv"
    lines = text.split("\n")
    lines.insert(1, "PAD\t" + "\t".join([" NA "] + ["-nan"] + ["1"] * 7))
    strict.write_text("\n".join(lines))
    s = read_expression(strict, missing="drop-gene")
    assert s.genes == ref.genes
    np.testing.assert_array_equal(_bits(s.values), _bits(ref.values))


def test_a_table_wider_than_the_block_limit(tmp_path):
    rng = np.random.default_rng(5)
    n = WIDE + 50
    p, _, cells = _file(tmp_path, rng, n_rows=3, n_cols=n, sep="\t", quote=False, gz=True,
                        wide=True)  # fmt: skip
    e = read_expression(p, missing="drop-gene")
    table = np.array([[_oracle(c) for c in row] for row in cells])
    np.testing.assert_array_equal(_bits(e.values), _bits(table[:, ~np.isnan(table).any(axis=0)]))


# ------------------------------------------------------------------------- the grammar
_ALPHABET = "0123456789.+-eEinfatyINFAd ,\t\u0661\uff11\u00a0x()"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(token=st.text(alphabet=_ALPHABET, min_size=1, max_size=8))
def test_a_cell_is_read_exactly_when_the_grammar_accepts_it(tmp_path, token):
    sep = "," if "\t" in token else "\t"
    if sep in token:
        return  # a delimiter inside the cell changes the table, not the cell
    p = tmp_path / "g.txt"
    p.write_text(sep.join(["gene", "S1", "S2\nA", "1", "2\nB", "2", f"{token}\nC", "3", "5\n"]))
    t = token.strip(" \t")
    if t in MISSING_TOKENS or (_GRAMMAR.fullmatch(t) and "nan" in t.lower()):
        assert read_expression(p, missing="drop-gene").genes == ("A", "C")
    elif _GRAMMAR.fullmatch(t) and abs(float(t)) <= 1e300:
        assert _bits(read_expression(p).values[1, 1]) == _bits(float(t))
    else:
        with pytest.raises(InputError) as info:
            read_expression(p)
        assert info.value.line == 3 and info.value.column == "S2", str(info.value)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("\u0661\u0662", "digits 0-9"),  # Arabic-Indic
        ("\uff11\uff12.5", "digits 0-9"),  # fullwidth
        ("\u0967.5", "digits 0-9"),  # Devanagari
        ("\u00a01.5", "non-numeric value '\\xa01.5'"),  # no-break space
        ("1.5d3", "non-numeric value '1.5d3'"),
        ("nan(1)", "non-numeric value 'nan(1)'"),
        ("0x1p3", "non-numeric value '0x1p3'"),
    ],
)
def test_bad_cells_are_one_line_naming_the_line(tmp_path, text, hint):
    p = tmp_path / "b.tsv"
    p.write_text(f"gene\tS1\tS2\tS3\nA\t1\t2\t3\nB\t1\t2\t3\nC\t1\t{text}\t3\nD\t1\tx\ty\n")
    with pytest.raises(InputError) as info:
        read_expression(p)
    msg = str(info.value)
    assert "\n" not in msg and str(p) in msg and hint in msg
    assert info.value.line == 4 and info.value.column == "S2"


@pytest.mark.parametrize("wide", [False, True])
def test_the_first_bad_cell_in_file_order(tmp_path, wide):
    """Row first, then column, whichever column fails first in pyarrow's threads."""
    if wide:  # more columns than WIDE: parsed as one block
        rows = [["1"] * (WIDE + 100) for _ in range(40)]
        rows[5][100], rows[5][4000], rows[30][2] = "first", "same-row", "later"
    else:
        rows = [["1"] * 40 for _ in range(3000)]
        rows[2500][3], rows[2000][30], rows[2000][35] = "late", "first", "same-row"
    head = ["id", *(f"C{j}" for j in range(len(rows[0])))]
    lines = ["\t".join(head)] + ["\t".join([f"R{i}", *r]) for i, r in enumerate(rows)]
    p = tmp_path / "f.tsv"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_expression(p, genes_in="columns" if wide else "rows")
    assert "'first'" in str(info.value)
    assert (info.value.line, info.value.column) == ((7, "C100") if wide else (2002, "C30"))


# ------------------------------------------------------------------- the quick scan
_BASE = ["gene\tS1\tS2\tS3", "A\t1\t2\t3", "B\t4\t5\t6", "C\t7\t8\t9.5", "D\t1\t0\t2"]


def _with(i: int, line: str | None) -> str:
    lines = list(_BASE)
    if line is None:
        del lines[i]
    else:
        lines.insert(i, line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text",
    [
        _with(3, "\t\t\t"),  # a line of delimiters only: blank for the full scan
        _with(3, "   "),  # spaces only
        _with(3, "E\t1\t2"),  # a short row later in the file
        _with(3, "E\t1\t2\t3\t4"),  # a long row
        _with(3, "E\t1\t2\t3\t"),  # a trailing delimiter on one later row
        _with(3, "E\t1\t2\t"),  # an empty last cell (a missing value)
        _with(4, 'E\t"1\n2"\t3\t4'),  # a quoted line break
        _with(3, "E\tx\t2\t3"),  # a bad cell before a ragged row
        _with(3, "E\tx\t2\t3") + "F\t1\n",
        "S1\tS2\tS3\n" + "\n".join(_BASE[1:]) + "\nE\t1\t2\n",  # R layout, then a short row
        "\n".join(_BASE) + "\n  ",  # a last line of spaces without a line end
        "\n".join(_BASE),  # no final line end
    ],
)
def test_the_quick_scan_reads_what_the_full_scan_reads(tmp_path, monkeypatch, text):
    """Same values, ids and messages as with the full scan of every line (the quick scan
    checks the header and the first row; the parser finds the rest and falls back)."""
    import kofs.io.expression as expression

    p = tmp_path / "q.tsv"
    p.write_text(text)

    def outcome():
        try:
            e = read_expression(p, missing="drop-gene")
        except InputError as exc:
            return ("error", str(exc), exc.line, exc.column)
        return ("ok", e.genes, e.samples, _bits(e.values).tobytes())

    quick = outcome()
    monkeypatch.setattr(expression, "quick_scan", lambda path, data: None)
    assert quick == outcome()


def test_a_plain_file_takes_the_quick_scan():
    from kofs.io._table import quick_scan

    table = quick_scan("x.tsv", ("\n".join(_BASE) + "\n").encode())
    assert table is not None and not table.checked and table.n_rows == 4
    assert table.line_numbers.tolist() == [2, 3, 4, 5]
    assert quick_scan("x.tsv", _with(3, "").encode()) is None  # a blank line: full scan
