"""Readers of user gene lists (kofs.io.gene_lists) and their harmonisation (aggregate_lists)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from conftest import costly_examples
from hypothesis import given, settings
from hypothesis import strategies as st

import kofs
from kofs.errors import InputError, KofsError, ParameterError
from kofs.io.gene_lists import ListSpec, parse_list_spec, read_ranked_lists
from kofs.pipeline.user_lists import aggregate_lists


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


DESEQ2 = (
    '"","baseMean","log2FoldChange","lfcSE","stat","pvalue","padj"\n'
    '"ENSG00000141510.17",100.5,2.1,0.3,7,1e-12,1e-10\n'
    '"ENSG00000012048.20",50,-1.2,0.3,-4,0.0001,0.001\n'
    '"ENSG00000000003.15",10,0.1,0.3,0.3,0.7,NA\n'
    '"ENSG00000000005.6",0,NA,NA,NA,NA,NA\n'
)
LIMMA = "logFC\tAveExpr\tt\tP.Value\tadj.P.Val\tB\nTP53\t1\t5\t5\t0.01\t0.05\t2\nEGFR\t-1\t4\t-6\t0.001\t0.01\t3\n"
GEO2R = (
    "ID\tadj.P.Val\tP.Value\tt\tB\tlogFC\tGene.symbol\n"
    "1007_s_at\t0.01\t0.001\t5\t2\t1\tDDR1\n"
    "1053_at\t0.05\t0.01\t-4\t1\t-1\tRFC2\n"
    "1054_at\t0.05\t0.0001\t-4\t1\t-1\tRFC2\n"
)
EDGER = '"logFC"\t"logCPM"\t"LR"\t"PValue"\t"FDR"\n"KRAS"\t2\t5\t30\t1e-08\t1e-06\n"TP53"\t1\t4\t10\t0.001\t0.01\n'
MAGECK = (
    "id\tnum\tneg|score\tneg|p-value\tneg|fdr\tneg|rank\tneg|goodsgrna\tneg|lfc\t"
    "pos|score\tpos|p-value\tpos|fdr\tpos|rank\tpos|goodsgrna\tpos|lfc\n"
    "A\t4\t0.1\t0.2\t0.3\t2\t1\t-1\t0.01\t0.02\t0.03\t1\t3\t1\n"
    "B\t4\t0.01\t0.02\t0.03\t1\t3\t-2\t0.1\t0.2\t0.3\t2\t1\t0.5\n"
    "C\t4\t0.5\t0.6\t0.7\t3\t0\t0\t0.5\t0.6\t0.7\t3\t0\t0\n"
)


@pytest.fixture
def files(tmp_path):
    return {
        "deseq2": write(tmp_path / "deseq2.csv", DESEQ2),
        "limma": write(tmp_path / "limma.txt", LIMMA),
        "geo2r": write(tmp_path / "geo2r.tsv", GEO2R),
        "edger": write(tmp_path / "edger.tsv", EDGER),
        "mageck": write(tmp_path / "screen.gene_summary.txt", MAGECK),
        "gmt": write(
            tmp_path / "sets.gmt", "S1\tdesc\tTP53\tBRCA1\tEGFR\nS2\thttp://x\tKRAS\ttp53\n"
        ),
        "top": write(tmp_path / "top.txt", "# my top genes\ngene\nTP53\nEGFR\ntp53\nKRAS\n"),
        "rnk": write(tmp_path / "pre.rnk", "TP53\t3.2\nEGFR\t-1\nKRAS\t5\n"),
        "scores": write(tmp_path / "scores.csv", "gene,score,fdr\nTP53,3,0.2\nKRAS,1,0.01\n"),
    }


def one(spec, **kw):
    (lst,) = read_ranked_lists(spec, **kw)
    return lst


def order(lst):
    r = lst.ranking()
    return [r.genes[i] for i in r.order()]


def test_tool_tables_are_recognised_with_the_documented_direction(files):
    d = one(files["deseq2"])
    assert d.kind == "DESeq2 results" and d.ranked_by == "pvalue ascending"
    assert d.gene_column == "(row names)"
    assert order(d)[:2] == ["ENSG00000141510.17", "ENSG00000012048.20"]
    assert np.isnan(d.scores[-1])  # NA p-value: in the list, tied at its bottom
    lim = one(files["limma"])
    assert lim.kind == "limma topTable" and order(lim) == ["EGFR", "TP53"]
    geo = one(files["geo2r"])
    assert geo.gene_column == "Gene.symbol"  # symbols preferred over probe ids
    assert geo.genes == ("DDR1", "RFC2") and geo.n_repeated == 1
    assert geo.scores[1] == 0.0001  # the best row of a repeated gene is kept
    ed = one(files["edger"])
    assert ed.kind == "edgeR topTags" and order(ed) == ["KRAS", "TP53"]
    mg = one(files["mageck"])
    assert mg.kind == "MAGeCK gene summary, negative selection"
    assert mg.ranked_by == "neg|rank ascending"
    assert order(mg) == ["B", "A", "C"]
    assert order(one(files["mageck"], mageck_side="pos")) == ["A", "B", "C"]
    pos = one(files["mageck"] + ":pos|rank")
    assert order(pos) == ["A", "B", "C"] and pos.kind.endswith("positive selection")


def test_plain_rnk_gmt_and_generic_tables(files):
    top = one(files["top"])
    assert top.kind == "top-k list" and top.genes == ("TP53", "EGFR", "KRAS")
    assert top.n_repeated == 1  # tp53 = TP53 (symbols match case-insensitively)
    np.testing.assert_array_equal(top.ranking().ranks, [1, 2, 3])
    rnk = one(files["rnk"])
    assert order(rnk) == ["KRAS", "TP53", "EGFR"]
    s1, s2 = read_ranked_lists(files["gmt"])
    assert (s1.name, s2.name) == ("S1", "S2")
    np.testing.assert_array_equal(s1.ranking().ranks, [2.0, 2.0, 2.0])  # unranked: tied
    assert order(one(files["scores"] + ":score:desc")) == ["TP53", "KRAS"]
    assert order(one(files["scores"] + ":score:asc")) == ["KRAS", "TP53"]
    assert order(one(files["scores"] + ":fdr")) == ["KRAS", "TP53"]  # an FDR: ascending
    assert order(one(files["scores"], column="score", direction="desc")) == ["TP53", "KRAS"]
    ab = one(files["deseq2"] + ":log2FoldChange:abs")
    assert order(ab)[:2] == ["ENSG00000141510.17", "ENSG00000012048.20"]
    named = one("mine=" + files["scores"] + ":score:desc")
    assert named.name == "mine"


def test_spec_parsing(tmp_path, files):
    assert parse_list_spec(files["top"]) == ListSpec(files["top"])
    assert parse_list_spec(files["scores"] + ":score:DESC") == ListSpec(
        files["scores"], None, "score", "desc"
    )
    assert parse_list_spec("x=" + files["scores"] + ":desc").direction == "desc"
    odd = write(tmp_path / "a:b.txt", "TP53\n")  # an existing name always wins
    assert parse_list_spec(odd) == ListSpec(odd)
    assert parse_list_spec("top.txt", base=tmp_path).path == str(tmp_path / "top.txt")


def test_a_semicolon_table_is_a_table_not_a_list_of_ids(tmp_path):
    # European spreadsheets' CSV: its header has semicolons only (read as one id a line
    # before, with the "genes" 'gene;pvalue' and 'A;0.01')
    semi = write(tmp_path / "semi.csv", "gene;pvalue\nA;0.2\nB;0.01\nC;0.5\n")
    assert order(one(semi)) == ["B", "A", "C"]  # its one p-value column (below)
    assert order(one(semi + ":pvalue:asc")) == ["B", "A", "C"]


def test_a_table_with_one_raw_p_value_column_is_ranked_by_it(tmp_path):
    """gene + pvalue (+ a fold change, an adjusted p) asked "which column ranks the genes?";
    one raw p-value column can only mean that one, ascending. Two, or none, still ask."""
    for header, rows in (
        ("gene\tpvalue", ["A\t0.2", "B\t0.01", "C\t0.5"]),
        ("gene\tlog2FC\tP.Value\tpadj", ["A\t1\t0.2\t0.4", "B\t-2\t0.01\t0.03", "C\t0\t0.5\t0.6"]),
    ):
        path = write(tmp_path / "t.tsv", "\n".join([header, *rows]) + "\n")
        got = one(path)
        assert order(got) == ["B", "A", "C"] and "ascending" in got.describe()
    for header in ("gene\tp_a\tp_b", "gene\tscore"):
        path = write(
            tmp_path / "u.tsv",
            f"{header}\nA\t0.2\t0.3\n".replace("\t0.3", "\t0.3" * (header.count("\t") - 1)),
        )
        with pytest.raises(ParameterError, match="which column ranks the genes"):
            one(path)


def test_a_table_of_z_scores_is_read_as_its_p_values(tmp_path):
    """gene + z asked "which column ranks the genes?", and FILE:z:desc was a ranking alone
    (its scale lost: a ranking says nothing of how many genes are beyond chance). A z-score is
    N(0, 1) where nothing changed: two-sided p-values with its signs by default, one-sided
    with :desc / :asc; the fusion of such tables equals that of the same tables given as
    p-values with fold changes."""
    from scipy.stats import norm

    path = write(tmp_path / "z.tsv", "gene\tz\nA\t-4\nB\t1\nC\t2.5\nD\t0\n")
    got = one(path)
    assert order(got) == ["A", "C", "B", "D"] and got.p_values
    np.testing.assert_allclose(got.scores, 2 * norm.sf([4, 1, 2.5, 0]))
    assert list(got.signs) == [-1, 1, 1, 0] and got.sign_column == "z"
    assert "z as two-sided p-values" in got.describe()
    up = one(path + ":z:desc")
    assert order(up) == ["C", "B", "D", "A"] and up.p_values and up.signs is None
    np.testing.assert_allclose(up.scores, norm.sf([-4, 1, 2.5, 0]))
    down = one(path + ":z:asc")
    assert order(down) == ["A", "D", "B", "C"] and down.signs is None
    assert order(one(path + ":z")) == ["A", "C", "B", "D"]  # named without a direction
    # beside a p-value column the p-values rank and the z-scores sign
    both = write(tmp_path / "b.tsv", "gene\tz\tpvalue\nA\t-2\t0.04\nB\t1\t0.3\n")
    assert one(both).sign_column == "z" and "pvalue ascending" in one(both).describe()
    rng = np.random.default_rng(3)
    genes = [f"G{i}" for i in range(1500)]
    z_tables, p_tables = [], []
    for _ in range(2):
        z = rng.normal(size=1500) + np.r_[np.full(60, 3.5), np.zeros(1440)] * rng.choice(
            [-1, 1], 1500
        )
        z_tables.append(pd.DataFrame({"gene": genes, "z": z}))
        p_tables.append(pd.DataFrame({"gene": genes, "logFC": z, "P.Value": 2 * norm.sf(abs(z))}))
    fz = aggregate_lists(z_tables).to_frame(lists=False)
    fp = aggregate_lists(p_tables).to_frame(lists=False)
    np.testing.assert_allclose(fz["q_value"], fp["q_value"].reindex(fz.index), atol=1e-12)
    assert (fz["q_value"] <= 0.10).sum() > 20


def test_a_list_behind_a_closed_folder_is_not_called_missing(tmp_path, monkeypatch):
    # os.path.exists says False behind a folder the user may not enter: say why
    closed = tmp_path / "closed"
    closed.mkdir()
    monkeypatch.setattr("kofs.io._fsops.os.access", lambda p, mode: os.fspath(p) != str(closed))
    with pytest.raises(InputError, match=f"{closed} may not be entered"):
        parse_list_spec(str(closed / "a.tsv"))
    with pytest.raises(InputError, match="file not found"):
        parse_list_spec(str(tmp_path / "a.tsv"))


def test_a_list_in_a_missing_folder_is_not_found_not_denied(tmp_path):
    # os.access is False for a folder that does not exist: a mistyped folder was reported as
    # "may not be entered (permission denied)"
    for missing in (tmp_path / "typo" / "a.tsv", tmp_path / "typo" / "deeper" / "a.tsv"):
        with pytest.raises(InputError, match="file not found") as err:
            parse_list_spec(str(missing))
        assert "permission" not in str(err.value)


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("{scores}", ParameterError, "which column ranks the genes"),
        ("{scores}:score", ParameterError, "cannot guess the direction of column 'score'"),
        ("{scores}:scroe:desc", ParameterError, "did you mean 'score'"),
        ("{scores}:gene:desc", ParameterError, "holds the gene ids"),
        ("{top}:score:desc", ParameterError, "one-gene-per-line list has no columns"),
        ("{gmt}:x:desc", ParameterError, "GMT file has no score columns"),
        ("{empty}", InputError, "empty"),
        ("{comments}", InputError, "only blank or comment lines"),
        ("{header_only}", InputError, "no data rows"),
        ("{words}", InputError, "several words"),
        ("{text_scores}:score:desc", InputError, "not a number"),
        ("{missing}", InputError, "file not found"),
    ],
)
def test_bad_lists_raise_one_line_errors(tmp_path, files, spec, error, match):
    paths = dict(files)
    paths["empty"] = write(tmp_path / "empty.txt", "")
    paths["comments"] = write(tmp_path / "c.txt", "# nothing\n\n")
    paths["header_only"] = write(tmp_path / "h.tsv", "gene\tscore\n")
    paths["words"] = write(tmp_path / "w.txt", "TP53 EGFR\n")
    paths["text_scores"] = write(tmp_path / "t.tsv", "gene\tscore\nTP53\thigh\n")
    paths["missing"] = str(tmp_path / "nope.txt")
    with pytest.raises(error, match=match) as exc:
        read_ranked_lists(spec.format(**paths))
    assert "\n" not in exc.value.format()


@pytest.mark.slow
def test_harmonised_ids_and_coverage(tmp_path, files):
    other = write(tmp_path / "ens.txt", "ENSG00000141510.5\nensg00000099999\n")
    res = aggregate_lists([files["deseq2"], other, files["top"], files["rnk"]])
    genes = set(res.final.genes)
    assert "ENSG00000141510" in genes  # versions dropped: one gene for .17 and .5
    assert not any(g.startswith("ENSG00000141510.") for g in genes)
    assert {"TP53", "EGFR", "KRAS"} <= genes
    assert res.universe == len(genes)
    cov = {c.source: c for c in res.coverage}
    assert cov["ens"].shared == 1 and cov["top"].shared == 3
    assert cov["deseq2"].target == "universe" and cov["deseq2"].matrix_genes == res.universe
    assert "shared with other lists" in cov["ens"].line()


def test_universe_file_and_number(tmp_path, files):
    uni = write(tmp_path / "universe.txt", "tp53\nEGFR\nMYC\n")
    res = aggregate_lists([files["top"], files["rnk"]], universe=uni, aggregate="rra")
    assert res.universe == 3
    assert set(res.final.genes) == {"TP53", "EGFR", "MYC"}  # KRAS dropped, MYC added
    cov = {c.source: c for c in res.coverage}
    assert cov["top"].dropped == 1 and cov["top"].examples_dropped == ("KRAS",)
    assert res.final.statistics["p_value"][list(res.final.genes).index("MYC")] == 1.0
    assert aggregate_lists([files["top"]], universe="500").universe == 500
    # a size computed in floats; it was refused as "not a number, a file or gene ids"
    assert aggregate_lists([files["top"]], universe=np.float64(500.0)).universe == 500
    with pytest.raises(ParameterError, match="universe 500.5: a universe size must be a whole"):
        aggregate_lists([files["top"]], universe=500.5)
    with pytest.raises(ParameterError, match="smaller than"):
        aggregate_lists([files["top"], files["rnk"]], universe=2)
    with pytest.raises(InputError, match="none of its 3 genes"):
        aggregate_lists([files["top"]], universe=write(tmp_path / "u2.txt", "BRCA2\n"))


def test_a_universe_that_drops_most_of_a_list_is_warned_about(tmp_path, files, caplog):
    """A universe file of another id type or of a few genes dropped 4 of a list's 6 genes with
    only the coverage line (info) to say so."""
    top = write(tmp_path / "t.txt", "TP53\nEGFR\nKRAS\nMYC\nBRCA1\nBRCA2\n")
    with caplog.at_level("WARNING"):
        aggregate_lists([top, files["rnk"]], universe=write(tmp_path / "u.txt", "tp53\nKRAS\n"))
    assert "list t: 4 of its 6 genes (e.g. EGFR, MYC, BRCA1) are not in the universe" in caplog.text
    assert "list pre:" not in caplog.text  # 1 of 3 dropped: no warning


def test_lists_of_other_identifier_types_are_warned_about_but_a_top_list_beside_its_table_not(
    tmp_path, caplog
):
    """Lists sharing almost no genes are likely of different id types; a full list sharing
    only its top 40 genes with a top-40 list of the same genes is not (it was warned about:
    "shares only 40 of its 1000 genes ... do the lists use the same identifier type?")."""
    genes = [f"GENE{i}" for i in range(1000)]
    full = write(tmp_path / "full.txt", "\n".join(genes) + "\n")
    top = write(tmp_path / "top.txt", "\n".join(genes[:40]) + "\n")
    ids = write(tmp_path / "ids.txt", "\n".join(f"ENSG{i:011d}" for i in range(1000)) + "\n")
    with caplog.at_level("WARNING"):
        aggregate_lists([full, top], universe=1000, aggregate="rra")
    assert "identifier type?" not in caplog.text
    with caplog.at_level("WARNING"):
        aggregate_lists([full, ids], aggregate="rra")
    assert "list full shares only 0 of its 1000 genes" in caplog.text


def test_gene_symbols_a_spreadsheet_made_dates_are_warned_about(tmp_path, files, caplog):
    """SEPT2 -> 2-Sep, MARCH1 -> 1-Mar: such ids match no gene and were fused silently."""
    rows = "gene,pvalue\n2-Sep,0.01\nTP53,0.02\n1-Mar,0.3\nDec-01,0.5\nMARCH1,0.6\n"
    table = write(tmp_path / "excel.csv", rows)
    with caplog.at_level("WARNING"):
        aggregate_lists([table, files["rnk"]], aggregate="rra")
    assert "list excel: 3 gene id(s) look like dates a spreadsheet made" in caplog.text
    assert "(e.g. 2-Sep, 1-Mar, Dec-01:" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        aggregate_lists([files["top"], files["rnk"]], aggregate="rra")
    assert "dates" not in caplog.text


def test_two_gmt_files_with_sets_of_one_name_are_named_apart(tmp_path, files):
    """Two GMT files holding a set S1: the error asked for NAME=FILE, which a file of several
    sets ignored (its sets kept their names): the clash could not be mended."""
    other = write(tmp_path / "other.gmt", "S1\tdesc\tTP53\tKRAS\nS2\tdesc\tEGFR\n")
    with pytest.raises(ParameterError, match="two lists are named 'S1'.* NAME.SET"):
        aggregate_lists([files["gmt"], other, files["rnk"]], aggregate="rra")
    res = aggregate_lists([files["gmt"], "o=" + other, files["rnk"]], aggregate="rra")
    assert res.final.list_names == ("S1", "S2", "o.S1", "o.S2", "pre")
    # a mapping's key is the NAME (it was refused: "a name can only be given to a file with
    # one list")
    res = aggregate_lists({"g": files["gmt"], "o": other, "r": files["rnk"]}, aggregate="rra")
    assert res.final.list_names == ("g.S1", "g.S2", "o.S1", "o.S2", "r")


def test_same_name_twice_is_an_error(tmp_path, files):
    sub = tmp_path / "sub"
    sub.mkdir()
    again = write(sub / "top.txt", "TP53\n")
    with pytest.raises(ParameterError, match="two lists are named 'top'") as exc:
        aggregate_lists([files["top"], again])
    assert "NAME=FILE" in str(exc.value)
    assert aggregate_lists([files["top"], "b=" + again]).final.list_names == ("top", "b")


def test_python_objects(files):
    import pandas as pd

    frame = pd.DataFrame(
        {"baseMean": [1.0, 2.0], "log2FoldChange": [1.0, -2.0], "pvalue": [0.5, 0.01]},
        index=pd.Index(["TP53", "KRAS"], name="gene"),
    )
    series = pd.Series([3.0, 1.0, 2.0], index=["KRAS", "EGFR", "MYC"], name="t")
    res = kofs.aggregate_lists(
        {"de": frame, "t": series, "top": ["MYC", "TP53"], "file": files["rnk"]},
        direction="desc",
        aggregate="borda",
    )
    assert res.final.list_names == ("de", "t", "top", "file")
    src = {s.name: s for s in res.sources}
    assert src["de"].kind == "DESeq2 results" and src["de"].ranked_by == "pvalue ascending"
    assert src["t"].ranked_by == "t descending" and src["top"].kind == "top-k list"
    de = res.lists[0]
    assert de.top(1) == ["KRAS"]
    # it said "write <list 0>:score:desc", a FILE spec a Series cannot have
    with pytest.raises(ParameterError, match="cannot guess .*; give direction='desc'"):
        kofs.aggregate_lists([series])
    with pytest.raises(ParameterError, match="expected a file path"):
        kofs.aggregate_lists([3.5])


@settings(max_examples=costly_examples(20))
@given(st.integers(0, 2**32 - 1))
def test_list_order_does_not_change_the_fused_ranking(seed):
    rng = np.random.default_rng(seed)
    pool = [f"G{i}" for i in range(40)]
    lists = {
        f"l{j}": list(rng.choice(pool, int(rng.integers(3, 40)), replace=False)) for j in range(4)
    }
    perm = list(rng.permutation(4))
    for method in ("rra", "stuart", "borda", "em", "mean-rank"):
        a = aggregate_lists(lists, aggregate=method)
        b = aggregate_lists({k: lists[k] for k in np.array(list(lists))[perm]}, aggregate=method)
        sa = pd.Series(a.final.scores, index=list(a.final.genes))
        sb = pd.Series(b.final.scores, index=list(b.final.genes))
        # EM: the optimum is reached to the solver's tolerance, not bit for bit
        rtol = 1e-6 if method == "em" else 1e-9
        np.testing.assert_allclose(sb[sa.index], sa, rtol=rtol, atol=1e-12)


def test_errors_are_kofs_errors(files):
    for bad in ([], [files["top"], files["top"]]):
        with pytest.raises(KofsError):
            aggregate_lists(bad)


@pytest.mark.parametrize("p", ["0.5", True, float("nan"), 1.5])
def test_signal_p_is_a_p_value(p):
    # "0.5" with a fusion that takes none was a ValueError (a message's :g format), True p = 1
    with pytest.raises(ParameterError, match="signal_p must be a p-value in \\[0, 1\\]"):
        aggregate_lists([["A", "B"], ["B", "A"]], aggregate="borda", signal_p=p)


def test_mageck_side_is_neg_or_pos_even_without_a_mageck_table():
    with pytest.raises(ParameterError, match="mageck_side must be neg or pos, got 'up'"):
        aggregate_lists([["A", "B"], ["B", "A"]], aggregate="borda", mageck_side="up")


def test_rankings_with_case_variants_are_merged():
    r = kofs.Ranking("r", ["TP53", "tp53", "MYC"], [1.0, 5.0, 3.0], higher_is_better=True)
    res = aggregate_lists([r, ["MYC", "TP53"]], aggregate="borda")
    src = res.sources[0]
    assert src.genes == ("tp53", "MYC") and src.n_repeated == 1  # the best-ranked spelling
    assert sorted(res.final.genes) == ["MYC", "tp53"]


def test_entrez_ids_written_as_floats_are_the_same_genes(tmp_path):
    # one table's Entrez column read as floating point (pandas, with a missing value): 7157.0
    ids = [7157, 4193, 672, 11200, 5594]
    ints = write(
        tmp_path / "ints.tsv",
        "entrez\tpvalue\n"
        + "".join(f"{g}\t{p}\n" for g, p in zip(ids, (0.001, 0.02, 0.3, 0.5, 0.9), strict=True)),
    )
    floats = pd.Series([0.002, 0.01, 0.4, 0.6, 0.8], index=[float(g) for g in ids], name="pvalue")
    top = write(tmp_path / "top.txt", "672.0\n7157.0\n")
    res = aggregate_lists({"a": ints, "b": floats, "c": top}, aggregate="rra")
    assert res.universe == 5
    assert {c.source: c.shared for c in res.coverage} == {"a": 5, "b": 5, "c": 2}
    res = aggregate_lists({"c": top, "a": ints}, aggregate="rra")
    assert sorted(res.final.genes) == sorted(map(str, ids))  # written as integers


def test_scanpy_marker_tables_are_read_one_group_at_a_time(tmp_path, caplog):
    """scanpy's rank_genes_groups_df of every group: its 'group' column was taken for the gene
    ids (two "genes", a and b); one group's table is read by its p-values."""
    rows = ["group\tnames\tscores\tlogfoldchanges\tpvals\tpvals_adj"]
    rows += [f"{g}\tGENE{i}\t{3 - i * 0.1:.2f}\t1.0\t{0.001 * (i + 1):.4f}\t0.01"
             for g in "ab" for i in range(5)]  # fmt: skip
    both = write(tmp_path / "both.tsv", "\n".join(rows) + "\n")
    with pytest.raises(InputError, match="holds the tables of 2 groups \\(column 'group'"):
        read_ranked_lists(str(both))
    one = write(tmp_path / "a.tsv", "\n".join(rows[:6]) + "\n")
    (lst,) = read_ranked_lists(str(one))
    assert lst.kind == "scanpy rank_genes_groups" and lst.genes[:2] == ("GENE0", "GENE1")
    # its pvals are two-sided p-values of the scores (t or Wilcoxon's z): a calibrated list,
    # signed by the statistic (read as a bare ranking before: 'pvals' was not a p-value name)
    assert lst.p_values and lst.sign_column == "scores"
    assert "null" in lst.ranking().info


@pytest.mark.parametrize("name", ["p_values", "pvalues", "P.values", "pvals"])
def test_plural_p_value_columns_are_raw_p_values(tmp_path, name):
    """A column named in the plural (scanpy's pvals, p_values) is a p-value column: it ranks
    the table ascending, as p-values (such a table was refused: "which column ranks the
    genes?"), and its fold change signs it."""
    path = write(
        tmp_path / "t.tsv",
        f"gene\t{name}\tlog2FoldChanges\nA\t0.01\t-2\nB\t0.2\t1\nC\t0.5\t0.1\n",
    )
    (lst,) = read_ranked_lists(path)
    assert lst.genes == ("A", "B", "C") and lst.p_values
    assert lst.sign_column == "log2FoldChanges" and list(lst.signs) == [-1.0, 1.0, 1.0]


def test_ratio_fold_changes_sign_by_their_log(tmp_path):
    """Ballgown's stattest table (feature, id, fc, pval, qval): its ``fc`` is a ratio, all
    positive, so every gene was read as going up, and its gene ids were taken from
    ``feature`` (the word 'gene' in every row: one gene). Now the ids are ``id``'s and a
    ratio above 1 is up, below 1 down; a log fold change beside a ratio signs the table
    (DESeq's foldChange, log2FoldChange)."""
    rows = "gene\tMSTRG.1\t0.5\t0.001\t0.01\ngene\tMSTRG.2\t2.5\t0.002\t0.01\n"
    rows += "gene\tMSTRG.3\t1.0\t0.9\t0.9\ngene\tMSTRG.4\t1.2\t0.5\t0.9\n"
    (lst,) = read_ranked_lists(write(tmp_path / "bg.tsv", "feature\tid\tfc\tpval\tqval\n" + rows))
    assert lst.genes == ("MSTRG.1", "MSTRG.2", "MSTRG.3", "MSTRG.4")
    assert lst.sign_column == "fc" and list(lst.signs) == [-1.0, 1.0, 0.0, 1.0]
    both = "gene\tfoldChange\tlog2FoldChange\tpval\nA\t0.5\t-1\t0.01\nB\t2\t1\t0.02\n"
    (lst,) = read_ranked_lists(write(tmp_path / "deseq1.tsv", both))
    assert lst.sign_column == "log2FoldChange" and list(lst.signs) == [-1.0, 1.0]
    gone = "gene\tfc\tpval\nA\t0\t0.01\nB\t3\t0.02\nC\t0.5\t0.03\n"  # a ratio of 0: down
    (lst,) = read_ranked_lists(write(tmp_path / "gone.tsv", gone))
    assert list(lst.signs) == [-1.0, 1.0, -1.0]
    signed = "gene\tFoldChange\tpval\nA\t-2.5\t0.01\nB\t3\t0.02\n"  # +-ratio: its sign
    (lst,) = read_ranked_lists(write(tmp_path / "pm.tsv", signed))
    assert list(lst.signs) == [-1.0, 1.0]


def test_sleuth_and_cuffdiff_tables_are_signed_p_value_tables(tmp_path):
    """sleuth's Wald results (target_id, pval, qval, b, ...) are signed by b; Cuffdiff's
    gene_exp.diff by log2(fold_change), its genes the ``gene`` column (not test_id)."""
    sl = "target_id\tpval\tqval\tb\tse_b\nT1\t0.001\t0.01\t-1.5\t0.3\nT2\t0.04\t0.1\t0.8\t0.3\n"
    (lst,) = read_ranked_lists(write(tmp_path / "sleuth.tsv", sl))
    assert lst.kind == "sleuth results" and lst.p_values and lst.sign_column == "b"
    assert list(lst.signs) == [-1.0, 1.0]
    head = "test_id\tgene_id\tgene\tlog2(fold_change)\ttest_stat\tp_value\tq_value\n"
    cd = head + "XLOC_1\tXLOC_1\tCD3E\t-2.1\t-3.3\t0.001\t0.01\n"
    cd += "XLOC_2\tXLOC_2\tLYZ\t1.4\t2.2\t0.02\t0.05\n"
    (lst,) = read_ranked_lists(write(tmp_path / "gene_exp.diff", cd))
    assert lst.genes == ("CD3E", "LYZ") and lst.p_values
    assert lst.sign_column == "log2(fold_change)" and list(lst.signs) == [-1.0, 1.0]


def test_seurat_marker_tables_are_read_by_their_p_values_and_signed(tmp_path):
    """Seurat's FindMarkers written by R's write.csv (genes as row names, an empty first
    header field): no column was recognised ("which column ranks the genes?"). Read by
    ``p_val`` ascending, as p-values, signed by ``avg_log2FC`` (``avg_logFC`` before Seurat
    4); FindAllMarkers' table of several clusters is refused, naming the clusters."""
    rows = ['"","p_val","avg_log2FC","pct.1","pct.2","p_val_adj"',
            '"CD3E",1e-30,2.5,0.9,0.1,1e-26', '"MS4A1",0.002,-1.2,0.2,0.6,1',
            '"LYZ",0.4,0.3,0.5,0.4,1']  # fmt: skip
    one = write(tmp_path / "m.csv", "\n".join(rows) + "\n")
    (lst,) = read_ranked_lists(str(one))
    assert lst.kind == "Seurat FindMarkers" and lst.genes == ("CD3E", "MS4A1", "LYZ")
    assert lst.p_values and lst.sign_column == "avg_log2FC"
    assert list(lst.signs) == [1.0, -1.0, 1.0]
    old = write(tmp_path / "v3.csv", "\n".join(rows).replace("avg_log2FC", "avg_logFC") + "\n")
    (lst,) = read_ranked_lists(str(old))
    assert lst.kind == "Seurat FindMarkers" and lst.sign_column == "avg_logFC"
    bad = write(tmp_path / "bad.csv", "\n".join(rows).replace("1e-30", "3.5") + "\n")
    with pytest.raises(InputError, match="p_val"):
        read_ranked_lists(str(bad))
    every = ["p_val,avg_log2FC,pct.1,pct.2,p_val_adj,cluster,gene",
             "1e-30,2.5,0.9,0.1,1e-26,0,CD3E", "1e-20,2.0,0.9,0.1,1e-16,1,MS4A1"]  # fmt: skip
    both = write(tmp_path / "all.csv", "\n".join(every) + "\n")
    with pytest.raises(InputError, match="holds the tables of 2 groups \\(column 'cluster'"):
        read_ranked_lists(str(both))


def test_a_rnk_column_spec_and_a_descending_p_value_are_not_silent(tmp_path, caplog):
    import logging

    rnk = write(tmp_path / "r.rnk", "G1\t2.0\nG2\t1.0\n")
    with pytest.raises(ParameterError, match="a .rnk file has one score column"):
        read_ranked_lists(f"{rnk}:nosuchcolumn:desc")
    de = write(tmp_path / "d.tsv", "gene\tbaseMean\tlog2FoldChange\tpvalue\n"
               "G1\t10\t1.0\t0.01\nG2\t10\t0.1\t0.5\n")  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="kofs"):
        (lst,) = read_ranked_lists(f"{de}::desc")
    assert lst.higher_is_better and "(the least significant genes) first" in caplog.text


def test_a_table_written_without_its_gene_ids_is_refused(tmp_path):
    """DESeq2 results written with row.names = FALSE: the first column, baseMean, was taken for
    the gene ids and its values ranked as genes (exit 0); a first column of fractional numbers
    alike. Whole numbers (Entrez ids as row names) and a named gene column are still read."""
    rows = ["baseMean,log2FoldChange,pvalue,padj", "10.5,1.0,0.01,0.1", "20.25,-0.5,0.5,0.9"]
    de = write(tmp_path / "de.csv", "\n".join(rows) + "\n")
    with pytest.raises(InputError, match="has no gene ids: .* first column 'baseMean' holds a st"):
        read_ranked_lists(str(de))
    sc = write(tmp_path / "s.tsv", "score\tpvalue\n0.5\t0.01\n0.7\t0.2\n0.1\t0.3\n")
    with pytest.raises(InputError, match="first column 'score' holds numbers \\(e.g. '0.5'\\)"):
        read_ranked_lists(str(sc))
    entrez = write(tmp_path / "e.csv", '"","pvalue"\n"7157",0.01\n"672",0.2\n"1956",0.3\n')
    (lst,) = read_ranked_lists(str(entrez))
    assert lst.genes == ("7157", "672", "1956")
    (lst,) = read_ranked_lists(str(de), gene_column="baseMean")
    assert lst.genes[0] == "10.5"


def test_a_table_without_its_header_line_is_refused(tmp_path):
    """A gene<TAB>score file without a header (RobustRankAggreg users' lists): its first row
    was read as the header, so naming the 'column' ('0.25') ranked the list without G1."""
    rows = "".join(f"G{k}\t{0.25 * k}\n" for k in range(1, 5))
    plain = write(tmp_path / "scores.tsv", rows)
    for spec in (plain, plain + ":0.25:asc"):
        with pytest.raises(InputError, match="first line \\('G1', '0.25'\\) is data, not col"):
            read_ranked_lists(spec)
    (lst,) = read_ranked_lists(write(tmp_path / "h.tsv", "gene\tscore\n" + rows) + ":score:asc")
    assert lst.genes == ("G1", "G2", "G3", "G4")
    # columns named by numbers (time points) under a gene column named as one: a header
    (lst,) = read_ranked_lists(
        write(tmp_path / "t.tsv", "gene\t6\t24\n" + rows.replace("\n", "\t1\n")) + ":24:asc"
    )
    assert lst.genes == ("G1", "G2", "G3", "G4")


def test_a_rnk_file_with_a_header_line_is_read_past_it(tmp_path):
    """R's write.table of a ranking writes a header (gene<TAB>score), which GSEA reads past;
    it was refused ('Score', not a number). A first score that is a damaged number still is."""
    body = "G1\t2.5\nG2\t-1\nG3\t4\n"
    (lst,) = read_ranked_lists(write(tmp_path / "h.rnk", "# made in R\nName\tScore\n" + body))
    assert lst.genes == ("G1", "G2", "G3") and lst.ranking().top(1) == ["G3"]
    with pytest.raises(InputError, match=":1: column 'score' holds '2.5x', not a number"):
        read_ranked_lists(write(tmp_path / "d.rnk", "G0\t2.5x\n" + body))
    with pytest.raises(InputError, match="has a header line but no genes"):
        read_ranked_lists(write(tmp_path / "e.rnk", "gene\tscore\n"))


def test_a_gene_id_holding_a_tab_or_line_break_is_refused(tmp_path):
    """A quoted CSV id holding a tab was written as it was into the tab-separated
    ranking.tsv, whose row then had a column too many (exit 0)."""
    csv = write(tmp_path / "q.csv", 'gene,pvalue\n"G1\tX",0.01\nG2,0.5\nG3,0.2\n')
    with pytest.raises(InputError, match="gene id 'G1\\\\tX' \\(entry 1\\) holds a tab"):
        read_ranked_lists(csv)
    series = pd.Series([0.1, 0.2], index=["G1", "G2\nX"], name="pvalue")
    for bad in (["G1", "G2\rX"], series):
        with pytest.raises(InputError, match="holds a tab or a line break"):
            aggregate_lists({"a": bad, "b": ["G1", "G2"]}, aggregate="rra")


@pytest.mark.parametrize(
    ("sep", "cell", "why"),
    [
        (
            ";",
            "0,0123",
            "not a number \\(a decimal comma\\?\\); write numbers with a decimal point",
        ),
        (";", "1,234", "a decimal comma or a thousands separator\\?"),
        (",", '"1,234.5"', "'1,234.5', not a number \\(thousands separators\\?\\)"),
        ("\t", "<1e-300", "not a number but a bound; write the number itself"),
    ],
)
def test_a_spreadsheet_number_format_is_named(tmp_path, sep, cell, why):
    """A European spreadsheet's CSV (';' and decimal commas: the delimiter is sniffed as
    such), Excel's thousands separators or a p-value bound: the refusal says which."""
    rows = f"gene{sep}pvalue\nG1{sep}{cell}\nG2{sep}0.5\n"
    with pytest.raises(InputError, match=why):
        read_ranked_lists(write(tmp_path / "t.csv", rows))


def test_a_fold_change_column_all_missing_gives_no_directions(tmp_path, caplog):
    """DESeq2 results whose log2FoldChange is NA throughout: the table was reported (stderr,
    manifest's signed_lists) as read with directions from it, which the fusion then dropped."""
    rows = "".join(f"G{k}\t10\tNA\t{k / 10}\tNA\n" for k in range(1, 6))
    de = write(tmp_path / "de.tsv", "\tbaseMean\tlog2FoldChange\tpvalue\tpadj\n" + rows)
    with caplog.at_level("WARNING"):
        (lst,) = read_ranked_lists(de)
    assert lst.kind == "DESeq2 results" and lst.p_values
    assert lst.signs is None and lst.sign_column is None
    assert "directions" not in lst.describe()
    assert "'log2FoldChange' holds no direction (every number 0" in caplog.text


def test_a_fold_change_column_all_zero_gives_no_directions(tmp_path):
    """A fold-change column of zeros (a placeholder): each gene's signed z-score was
    sign(0) * z = 0, so two such tables fused into one tie of every gene (score 0, no call)
    however small their p-values."""
    rng = np.random.default_rng(0)
    tables = []
    for k in range(2):
        p = np.r_[10.0 ** -rng.uniform(5, 8, 10), rng.uniform(size=190)]
        rows = "".join(f"G{i}\t0\t{v:.4g}\n" for i, v in enumerate(p))
        tables.append(write(tmp_path / f"t{k}.tsv", "gene\tlog2FoldChange\tpvalue\n" + rows))
    assert read_ranked_lists(tables[0])[0].signs is None
    res = aggregate_lists(tables)
    assert sorted(res.final.top(10)) == sorted(f"G{i}" for i in range(10))


def test_a_symbol_column_with_gaps_names_the_id_column_beside_it(tmp_path):
    """DESeq2 results annotated with symbols (NA where a gene has none) beside their Ensembl
    ids: the refusal names the id column that would read every row."""
    rows = "symbol\tgene_id\tpvalue\nTP53\tENSG1\t0.01\nNA\tENSG2\t0.2\nMYC\tENSG3\t0.3\n"
    de = write(tmp_path / "de.tsv", rows)
    with pytest.raises(InputError, match=":3: the gene id .* or read the ids of column 'gene_id'"):
        read_ranked_lists(de)
    (lst,) = read_ranked_lists(de, gene_column="gene_id")
    assert lst.genes == ("ENSG1", "ENSG2", "ENSG3")
    gaps = write(tmp_path / "g.tsv", rows.replace("ENSG3", "NA"))
    with pytest.raises(InputError, match="remove the row \\(kofs does not drop"):
        read_ranked_lists(gaps)  # no column without gaps to name


def test_quoted_ids_one_per_line_are_read_without_their_quotes(tmp_path):
    """R's write.csv of one column quotes every id ('"gene"', '"TP53"'): the quotes stayed in
    the ids (no gene matched another list's, and the header was read as a gene '"gene"'), in
    a list as in a universe or relevant-genes file."""
    from kofs.io.genes import read_gene_list

    quoted = write(tmp_path / "q.csv", '"gene"\n"TP53"\n"MYC"\n"KRAS"\n')
    (lst,) = read_ranked_lists(quoted)
    assert lst.genes == ("TP53", "MYC", "KRAS") and lst.kind == "top-k list"
    assert read_gene_list(quoted) == ["TP53", "MYC", "KRAS"]


def test_one_column_with_trailing_delimiters_is_a_list_of_ids(tmp_path):
    """'gene,' / 'TP53,' ...: a column of ids whose rows end with a delimiter was refused as a
    table without a score column ('which column ranks the genes?')."""
    for text, genes in (
        ("gene,\nTP53,\nMYC,\n", ("TP53", "MYC")),
        ("TP53\t\nMYC\t\nKRAS\t\n", ("TP53", "MYC", "KRAS")),
        ("TP53,\nMYC,\nKRAS,\n", ("TP53", "MYC", "KRAS")),
    ):
        (lst,) = read_ranked_lists(write(tmp_path / "ids.csv", text))
        assert lst.genes == genes and lst.kind == "top-k list"


def test_a_gmt_file_named_otherwise_is_named_as_one(tmp_path):
    """Gene sets in a .txt: the rows of different lengths were refused as a damaged table,
    without a word of GMT; a table with one cut row among many is not taken for one."""
    sets = "S1\tdesc\tTP53\tMYC\nS2\tdesc\tKRAS\tEGFR\tBRCA1\nS3\tdesc\tTP53\tMYC\tA\tB\n"
    with pytest.raises(InputError, match="fields but the header .* is it a GMT file"):
        read_ranked_lists(write(tmp_path / "sets.txt", sets))
    rows = "".join(f"G{k}\t0.{k}\t1\n" for k in range(1, 20)) + "G20\t0.5\n"
    with pytest.raises(InputError, match="has 2 fields but the header has 3") as err:
        read_ranked_lists(write(tmp_path / "t.tsv", "gene\tpvalue\tx\n" + rows))
    assert "GMT" not in str(err.value)


def test_robust_rank_aggreg_output_is_named_in_the_refusal(tmp_path):
    """aggregateRanks' Name/Score table: refused without a direction (another tool's
    Name/Score may rank the other way), now saying how RobustRankAggreg's reads."""
    rra = write(tmp_path / "rra.txt", "Name\tScore\nTP53\t0.001\nMYC\t0.2\n")
    with pytest.raises(
        ParameterError, match="RobustRankAggreg's aggregateRanks output: .*:Score:asc"
    ):
        read_ranked_lists(rra)
    (lst,) = read_ranked_lists(rra + ":Score:asc")
    assert lst.genes == ("TP53", "MYC") and not lst.higher_is_better


def test_a_quote_left_open_is_refused_not_read_as_other_rows(tmp_path):
    """An unclosed quote in a one-column file with trailing delimiters: its lines were
    counted as 2 rows of one field each, pandas read them as 1 row ('0.5'), and that row was
    taken for the list (one gene '0.5')."""
    from kofs.io._table import read_table

    bad = write(tmp_path / "q.csv", 'gene,\n"G1"",0.01\n"G2,0.5')
    with pytest.raises(InputError, match="2 lines of data read as 1 rows; check for an unclosed"):
        read_table(bad)
    with pytest.raises(InputError, match="unclosed quote"):
        read_ranked_lists(bad)


def test_excels_sep_line_before_the_header_names_the_delimiter(tmp_path):
    """Excel writes 'sep=;' (or 'sep=,') before a CSV's header; it was read as the header
    ('has 3 fields but the header has 2')."""
    rows = "sep=;\ngene;log2FoldChange;pvalue\nG1;1.5;0.01\nG2;-0.5;0.2\nG3;0.1;0.9\n"
    (lst,) = read_ranked_lists(write(tmp_path / "x.csv", rows))
    assert lst.genes == ("G1", "G2", "G3") and lst.p_values and lst.sign_column == "log2FoldChange"


def test_a_spreadsheets_empty_rows_are_blank_lines(tmp_path):
    """Rows of delimiters only (',,,': a spreadsheet's empty rows, before the header or after
    the data) were read as rows with an empty gene id and refused; a tab-only row was blank."""
    rows = ',,,\ngene,log2FoldChange,pvalue\nG1,1.5,0.01\nG2,-0.5,0.2\n,,\n"","",""\n'
    (lst,) = read_ranked_lists(write(tmp_path / "x.csv", rows))
    assert lst.genes == ("G1", "G2")
    with pytest.raises(InputError, match=":4: the gene id .* is empty"):
        read_ranked_lists(write(tmp_path / "y.csv", rows.replace("G2,", ",")))


def test_a_p_value_a_rounding_error_above_1_is_1(tmp_path):
    """R's fisher.test returns 1 + 2.2e-16 for some tables; written with every digit
    (1.0000000000000002) it refused the whole table. A p-value clearly above 1 still does."""
    rows = "gene\tpvalue\nG1\t0.01\nG2\t1.0000000000000002\nG3\t0.5\n"
    (lst,) = read_ranked_lists(write(tmp_path / "f.tsv", rows))
    assert lst.genes == ("G1", "G2", "G3") and lst.scores.max() == 1.0
    with pytest.raises(InputError, match="holds '1.001', not a p-value"):
        read_ranked_lists(write(tmp_path / "g.tsv", rows.replace("1.0000000000000002", "1.001")))


@pytest.mark.parametrize("column", ["neg_log10_p", "log10_pvalue", "minus_log10_padj", "-log10 q"])
def test_a_log_transformed_p_value_is_not_read_as_a_p_value(tmp_path, column):
    """A -log10 p column was taken for a p-value by its name: refused even with its direction
    given (values above 1), and read ascending -- its least significant genes first, as raw
    p-values -- when its values all lay in [0, 1]."""
    path = write(tmp_path / "t.tsv", f"gene\t{column}\nA\t0.2\nB\t0.9\nC\t0.5\n")
    with pytest.raises(ParameterError, match="which column ranks the genes"):
        one(path)
    path = write(tmp_path / "u.tsv", f"gene\t{column}\nA\t2\nB\t9\nC\t5\n")
    got = one(f"{path}:{column}:desc")
    assert order(got) == ["B", "C", "A"] and "null" not in got.ranking().info


def test_a_tsv_whose_header_starts_with_a_tab_is_a_table(tmp_path):
    """R's write.table(..., col.names = NA, quote = FALSE) heads its row names with an empty
    name: the header '\\tpvalue', stripped, looked like one gene id, and the table was refused
    as a one-gene-per-line list ("'TP53\\t0.01' has several words")."""
    f = write(tmp_path / "t.tsv", "\tpvalue\nTP53\t0.01\nEGFR\t0.2\nKRAS\t0.3\n")
    (lst,) = read_ranked_lists(str(f))
    assert lst.genes == ("TP53", "EGFR", "KRAS")


def test_mageck_ranks_must_be_whole_numbers_from_1(tmp_path):
    head = "id\tnum\tneg|score\tneg|p-value\tneg|fdr\tneg|rank\tpos|score\tpos|p-value\tpos|fdr\tpos|rank"
    for bad in ("NA", "-1", "1.5"):
        f = write(tmp_path / "m.tsv", f"{head}\nG1\t4\t0.1\t0.1\t0.2\t{bad}\t0.9\t0.9\t1\t2\n"
                  "G2\t4\t0.2\t0.2\t0.3\t2\t0.8\t0.8\t1\t1\n")  # fmt: skip
        with pytest.raises(InputError, match="column 'neg\\|rank' holds .* not a rank"):
            read_ranked_lists(str(f))


def test_a_column_name_with_colons_and_a_wrong_direction(tmp_path):
    """kofs's own ranking.tsv columns (rank:Fisher) could not be named, and FILE:COLUMN:sideways
    said "file not found" of a file that exists."""
    t = write(tmp_path / "r.tsv", "gene\trank\trank:Fisher\nA\t1\t2\nB\t2\t1\n")
    (lst,) = read_ranked_lists(f"{t}:rank:Fisher:asc")
    assert lst.higher_is_better is False and dict(zip(lst.genes, lst.scores, strict=True)) == {
        "A": 2.0, "B": 1.0}  # fmt: skip
    with pytest.raises(ParameterError, match="direction 'sideways' after column 'rank': give asc"):
        read_ranked_lists(f"{t}:rank:sideways")
    with pytest.raises(ParameterError, match="column 'rnak' not found; did you mean 'rank'"):
        read_ranked_lists(f"{t}:rnak:asc")


def test_a_gene_column_of_one_value_in_every_row_is_refused(tmp_path):
    """A table whose id-named columns hold one value in every row (a feature type, 'gene')
    was read as one gene, its rows merged; it is refused, naming the column, unless the gene
    column is named."""
    rows = "".join(f"gene\tgene\t{k + 1}\t0.{k + 1}\n" for k in range(3))
    path = write(tmp_path / "t.tsv", "feature\tid\tfc\tpval\n" + rows)
    with pytest.raises(InputError, match="column 'feature', read as the gene ids, holds one"):
        read_ranked_lists(path)
    (lst,) = read_ranked_lists(path, gene_column="id")
    assert lst.genes == ("gene",)
