"""GO information content, Resnik/Lin gene similarity, GO relation/functions and `kofs gosim`."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from conftest import needs_shared
from hypothesis import given
from hypothesis import strategies as st

from kofs.cli import main
from kofs.errors import InputError, ParameterError
from kofs.io.annotations import read_go_annotations
from kofs.io.ontology import read_obo
from kofs.knowledge.go import gene_similarity, go_functions, go_relation
from kofs.knowledge.go_ic import ancestor_closure, annotation_counts, information_content
from kofs.knowledge.go_semantics import go_semantics
from kofs.knowledge.go_similarity import (
    _join_exact,
    _split_exact,
    gene_similarity_blocks,
    mica_ic,
    r_round,
)
from kofs.types import Expression

ln = math.log
C, D, E, F = "GO:0000003", "GO:0000004", "GO:0000005", "GO:0000006"


@pytest.fixture(scope="module")
def tiny(testdata):
    onto = read_obo(testdata / "go" / "tiny.obo")
    ann = read_go_annotations(testdata / "go" / "tiny_annotations.tsv")
    return onto, ann


# ---------------------------------------------------------------- hand-computed tiny DAG
# kofs closure (is_a + part_of): A,B,F < root; C < A; D < A,B; E < B,C.  Distinct BP genes: 6
# (G1 C,D; G2 D; G3 E; G4 F; G5 root; G7 C via alt id). Counts: root 6, A 4, B 3, C 3, D 2,
# E 1, F 1.  IC = ln(6 / count).
IC_KOFS = {"GO:0008150": 0.0, "GO:0000001": ln(1.5), "GO:0000002": ln(2), C: ln(2), D: ln(3),
           E: ln(6), F: ln(6)}  # fmt: skip
L_CD = 2 * ln(1.5) / (ln(2) + ln(3))  # MICA A
L_CE = 2 * ln(2) / (ln(2) + ln(6))  # MICA C (E part_of C)
L_DE = 2 * ln(2) / (ln(3) + ln(6))  # MICA B


def test_tiny_information_content(tiny):
    sem = go_semantics(*tiny, aspect="BP")
    for term, ic in IC_KOFS.items():
        assert sem.ic[sem.index[term]] == pytest.approx(ic, abs=1e-12)


def test_tiny_kofs_lin_bma(tiny):
    genes = ["1", "2", "3", "4", "5", "6", "7", "8"]
    s, kept = gene_similarity(*tiny, genes, measure="lin", combine="bma")
    assert kept == ["1", "2", "3", "4", "7"]  # G5 root only, G6 MF only, G8 unknown/obsolete
    i = {g: k for k, g in enumerate(genes)}
    assert s[i["1"], i["2"]] == pytest.approx((L_CD + 1 + 1) / 3)
    assert s[i["1"], i["3"]] == pytest.approx((L_CE + L_DE + max(L_CE, L_DE)) / 3)
    assert s[i["2"], i["3"]] == pytest.approx(L_DE)
    assert s[i["1"], i["7"]] == pytest.approx((2 + L_CD) / 3)
    assert s[i["1"], i["4"]] == 0.0  # kofs mode does not follow F regulates C
    np.testing.assert_allclose(np.diag(s)[[0, 1, 2, 3, 6]], 1.0)
    np.testing.assert_array_equal(s, s.T)
    assert np.isnan(s[i["5"]]).all() and np.isnan(s[:, i["6"]]).all()


def test_tiny_kofs_other_combines(tiny):
    onto, ann = tiny
    s, _ = gene_similarity(onto, ann, ["1", "3"], measure="lin", combine="max")
    assert s[0, 1] == pytest.approx(max(L_CE, L_DE))
    s, _ = gene_similarity(onto, ann, ["1", "3"], measure="lin", combine="avg")
    assert s[0, 1] == pytest.approx((L_CE + L_DE) / 2)
    s, _ = gene_similarity(onto, ann, ["2", "1"], ["3"], measure="resnik", combine="bma")
    assert s.shape == (2, 1)
    assert s[0, 0] == pytest.approx(ln(2))  # IC(B), raw Resnik in nats
    assert s[1, 0] == pytest.approx((ln(2) + ln(2) + ln(2)) / 3)  # C-E: C; D-E: B
    # symbols work as well (the id column is picked automatically)
    s2, kept = gene_similarity(onto, ann, ["G2", "G1"], ["G3"], measure="resnik")
    np.testing.assert_allclose(s2, s)
    assert kept == ["G2", "G1", "G3"]


def test_tiny_gosemsim_mode(tiny):
    # closure adds F regulates C; p counts rows (7 BP rows: C 2, D 2, E 1, F 1, root 1), so
    # count(C) = C 2 + E 1 + F 1 = 4, IC(C) = ln(7/4), IC(F) = ln 7; IEA row G1-D is dropped
    # from G1's set; Resnik is divided by max IC = ln 7; everything rounded to 3 decimals.
    onto, ann = tiny
    sem = go_semantics(onto, ann, aspect="BP", mode="gosemsim")
    assert sem.ic[sem.index[C]] == pytest.approx(ln(7 / 4))
    assert sem.scale == pytest.approx(ln(7))
    s, kept = gene_similarity(onto, ann, ["1", "4", "2"], measure="lin", mode="gosemsim")
    assert kept == ["1", "4", "2"]
    lin_cf = round(2 * ln(7 / 4) / (ln(7 / 4) + ln(7)), 3)
    assert s[0, 1] == lin_cf == 0.447
    lin_cd = round(2 * ln(7 / 6) / (ln(7 / 4) + ln(7 / 2)), 3)  # MICA A, count 6
    assert s[0, 2] == lin_cd
    r, _ = gene_similarity(onto, ann, ["1", "4"], measure="resnik", mode="gosemsim")
    assert r[0, 1] == round(ln(7 / 4) / ln(7), 3)
    assert r[0, 0] == round(ln(7 / 4) / ln(7), 3)  # Resnik diagonal is not 1


def test_parameter_errors(tiny):
    onto, ann = tiny
    with pytest.raises(ParameterError, match="--measure 'jiang'"):
        gene_similarity(onto, ann, ["1"], measure="jiang")
    with pytest.raises(ParameterError, match="--combine"):
        gene_similarity(onto, ann, ["1"], combine="rcmax")
    with pytest.raises(ParameterError, match="--mode"):
        gene_similarity(onto, ann, ["1"], mode="goatools")
    with pytest.raises(ParameterError, match="aspect 'XY'"):
        gene_similarity(onto, ann, ["1"], aspect="XY")
    with pytest.raises(ParameterError, match="no CC annotation"):
        gene_similarity(onto, ann, ["1"], aspect="CC")


# ---------------------------------------------------------------- kernel vs a naive oracle
def _naive(anc, ic, sets1, sets2, measure, combine):
    def sim(s, t):
        m = max((ic[a] for a in anc[s] & anc[t] if np.isfinite(ic[a])), default=0.0)
        if measure == "resnik":
            return m
        den = ic[s] + ic[t]
        return 2 * m / den if den > 0 else float(s == t)

    out = np.zeros((len(sets1), len(sets2)))
    for i, a in enumerate(sets1):
        for j, b in enumerate(sets2):
            mat = np.array([[sim(s, t) for t in b] for s in a])
            if combine == "bma":
                out[i, j] = (mat.max(1).sum() + mat.max(0).sum()) / (len(a) + len(b))
            elif combine == "max":
                out[i, j] = mat.max()
            else:
                out[i, j] = mat.mean()
    return out


@st.composite
def _dags(draw):
    n = draw(st.integers(3, 14))
    edges = [(c, draw(st.integers(0, c - 1))) for c in range(1, n)]  # a tree rooted at 0 ...
    extra = draw(st.lists(st.tuples(st.integers(2, n - 1), st.integers(0, n - 1)), max_size=6))
    edges += [(c, p) for c, p in extra if p < c]  # ... plus extra parents (still acyclic)
    n_genes = draw(st.integers(1, 6))
    sets = [sorted(set(draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=4))))
            for _ in range(n_genes)]  # fmt: skip
    return n, edges, sets


@given(_dags(), st.sampled_from(["lin", "resnik"]), st.sampled_from(["bma", "max", "avg"]),
       st.booleans())  # fmt: skip
def test_kernel_matches_naive(dag, measure, combine, split):
    n, edges, sets = dag
    closure = ancestor_closure(n, np.array(edges))
    anc = [set(closure[t].indices) for t in range(n)]
    inc = sp.csr_matrix((np.ones(sum(map(len, sets))),
                         ([g for g, s in enumerate(sets) for _ in s], [t for s in sets for t in s])),
                        shape=(len(sets), n))  # fmt: skip
    counts = annotation_counts(inc, closure, per="gene")
    ic = information_content(counts, counts[0])
    sets1, sets2 = (sets[: len(sets) // 2 + 1], sets[len(sets) // 2 :]) if split else (sets, sets)
    m1 = inc[: len(sets1)]
    m2 = inc[len(sets) - len(sets2) :] if split else None
    got = np.vstack([v for _, v in gene_similarity_blocks(
        closure, ic, m1, m2, measure=measure, combine=combine, block_bytes=2000)])  # fmt: skip
    np.testing.assert_allclose(got, _naive(anc, ic, sets1, sets2, measure, combine), atol=1e-12)
    if measure == "lin":
        assert np.all((got >= -1e-12) & (got <= 1 + 1e-12))


def test_closure_and_mica_small():
    # 0 root; 1, 2 < 0; 3 < 1, 2; 4 < 3
    closure = ancestor_closure(5, np.array([[1, 0], [2, 0], [3, 1], [3, 2], [4, 3]]))
    assert [sorted(closure[t].indices) for t in range(5)] == [[0], [0, 1], [0, 2], [0, 1, 2, 3],
                                                              [0, 1, 2, 3, 4]]  # fmt: skip
    ic = np.array([0.0, 1.0, 2.0, 3.0, np.inf])  # an infinite IC never acts as ancestor
    m = mica_ic(closure[[1, 2, 4]], closure[[2, 4]], ic)
    np.testing.assert_array_equal(m, [[0, 1], [2, 2], [2, 3]])


def test_r_round_matches_r():
    # values printed by R 4.2.2: round(x, 3)
    x = np.array(
        [
            0.1715,
            1.372 / 8,
            0.5955,
            0.0005,
            0.0015,
            52.40399999999999636 / 88,
            1.37199999999999988631 / 8,
            0.4265,
            -0.1715,
            0.0625,
            2.5e-4,
            0.1235,
            0.8885,
        ]
    )
    np.testing.assert_array_equal(
        r_round(x, 3),
        [0.172, 0.172, 0.596, 0.0, 0.002, 0.595, 0.171, 0.426, -0.172, 0.062, 0.0, 0.124, 0.888],
    )
    # R: sum(c(0.06, 0.063, 0.105)) is the exact tie 0.2279999999999999943... -> even double
    hi, lo = _split_exact(np.array([0.06, 0.063, 0.105]), 62)
    total = _join_exact(hi.sum(), lo.sum(), 62)
    assert total == 0.22799999999999998046  # what R prints with %.20f
    y = 1.37199999999999988631 / 8  # 0.17149999999999998579
    assert np.round(y, 3) == 0.172 and r_round(np.array([y]), 3)[0] == 0.171  # numpy differs


# ---------------------------------------------------------------- golden values of R GOSemSim
@pytest.fixture(scope="module")
def real_go(shared_data):
    onto = read_obo(shared_data / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz")
    ann = read_go_annotations(
        shared_data / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"
    )
    return onto, ann


@needs_shared
@pytest.mark.slow
def test_gosemsim_golden(real_go, testdata):
    gold = testdata / "golden" / "gosemsim"
    genes = gold.joinpath("genes.txt").read_text().split()
    # the term table of GOSemSim 2.24 for GO 2022-07-01 ships with kofs and is picked by release
    sem = go_semantics(*real_go, aspect="BP", mode="gosemsim")
    every = go_semantics(*real_go, aspect="BP", mode="gosemsim", unknown_terms=())
    for measure in ("lin", "resnik"):
        ref = pd.read_csv(gold / f"mgenesim_BP_{measure}_BMA.tsv", sep="\t", index_col=0, dtype=str)
        s, kept = gene_similarity(*real_go, genes, measure=measure, mode="gosemsim", semantics=sem)
        assert kept == list(ref.index.astype(str)) and len(kept) == 46
        pos = [genes.index(g) for g in kept]
        np.testing.assert_array_equal(s[np.ix_(pos, pos)], ref.to_numpy(dtype=float))
        # without the table a few values differ (README: 4 Lin, 6 Resnik values)
        s2, _ = gene_similarity(*real_go, genes, measure=measure, mode="gosemsim", semantics=every)
        assert 0 < int((s2[np.ix_(pos, pos)] != ref.to_numpy(dtype=float)).sum()) <= 12


# ---------------------------------------------------------------- GO relation and functions
def _expr(genes, annotations=None):
    return Expression(np.random.default_rng(0).normal(size=(4, len(genes))), genes,
                      [f"s{i}" for i in range(4)], annotations=annotations or {})  # fmt: skip


def test_go_relation_tiny(tiny):
    onto, ann = tiny
    # matrix genes by symbol with an extra unannotated gene
    expr = _expr(["G3", "G1", "G2", "ZZZ", "G7", "G4"])
    rel, cov = go_relation(expr, onto, ann, top_k=1)
    w = rel.matrix.toarray()
    assert cov.matched == 5 and cov.id_column == "gene" and cov.matrix_genes_covered == 5
    np.testing.assert_array_equal(w, w.T)
    assert np.all(np.diag(w) == 0) and not w[3].any()  # no self loops, ZZZ isolated
    assert not w[5].any()  # G4 (F) shares only the root: similarity 0 is never an edge
    sub = [0, 1, 2, 4]  # G3, G1, G2, G7 (G4 has only similarity 0, ZZZ no terms)
    s, _ = gene_similarity(onto, ann, ["G3", "G1", "G2", "G7"])
    off = np.where(np.eye(4, dtype=bool), -1, s)
    ws = w[np.ix_(sub, sub)]
    for r in range(4):  # each gene keeps (at least) its best neighbour, with the right weight
        assert ws[r].max() == pytest.approx(off[r].max())
    nz = ws > 0
    np.testing.assert_allclose(ws[nz], s[nz])
    assert ws[0, 3] == pytest.approx(L_CE)  # G3's best is G7 (E part_of C)
    rel_all, _ = go_relation(expr, onto, ann, top_k=10)
    dense = rel_all.matrix.toarray()[np.ix_(sub, sub)]
    np.testing.assert_allclose(dense, np.where(np.eye(4, dtype=bool), 0, s))
    rel_min, _ = go_relation(expr, onto, ann, top_k=10, min_similarity=0.9)
    assert rel_min.matrix.nnz == 0
    with pytest.raises(ParameterError, match="top_k"):
        go_relation(expr, onto, ann, top_k=0)


def test_go_functions_tiny(tiny):
    onto, ann = tiny
    expr = _expr(["a", "b", "c", "d"], annotations={"entrez": ["1", "2", "3", "99"]})
    fun, cov = go_functions(expr, onto, ann, min_genes=1)
    assert cov.id_column == "entrez"
    inc = pd.DataFrame(fun.incidence.toarray(), index=fun.genes, columns=fun.terms)
    assert "GO:0008150" not in fun.terms  # root never a column
    # propagated: gene 1 has C, D -> A, B; gene 3 has E -> B, C, A
    assert inc.loc["a"].to_dict() == {"GO:0000001": 1, "GO:0000002": 1, C: 1, D: 1, E: 0}
    assert inc.loc["c"].to_dict() == {"GO:0000001": 1, "GO:0000002": 1, C: 1, D: 0, E: 1}
    assert not inc.loc["d"].any()
    assert fun.term_names[fun.terms.index(C)] == "term C" and fun.relevance is None
    fun2, _ = go_functions(expr, onto, ann, min_genes=2, max_genes=2, propagate=False)
    assert fun2.terms == (D,)
    with pytest.raises(ParameterError, match="min_genes"):
        go_functions(expr, onto, ann, min_genes=3, max_genes=2)


# ---------------------------------------------------------------- kofs gosim
def test_cli_gosim(testdata, tmp_path):
    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("1\n2\n5\n3\n")
    out = tmp_path / "sim.tsv"
    args = ["gosim", "--go", str(go / "tiny.obo"), "--go-annotations", str(go / "tiny_annotations.tsv"),
            "--genes", str(genes)]  # fmt: skip
    res = CliRunner().invoke(main, args + ["-o", str(out)])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(out, sep="\t", index_col=0, dtype={"gene": str})
    df.index = df.index.astype(str)
    assert list(df.index) == ["1", "2", "3"] and list(df.columns) == ["1", "2", "3"]
    assert df.loc["2", "3"] == pytest.approx(L_DE)
    assert "1 of 4 genes have no BP term (omitted): 5" in res.output
    res = CliRunner().invoke(main, args + ["--keep-missing", "--mode", "gosemsim", "-o", "-"])
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0] == "gene\t1\t2\t5\t3"
    assert lines[3].startswith("5\tNA\tNA\tNA")
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("# terms without IC\nGO:0000005  # term E\n")
    res = CliRunner().invoke(main, args + ["--unknown-terms", str(unknown), "-o", "-"])
    assert res.exit_code == 0 and res.stdout.splitlines()[0] == "gene\t1\t2"  # 3 has only E
    unknown.write_text("E\n")
    res = CliRunner().invoke(main, args + ["--unknown-terms", str(unknown), "-o", "-"])
    assert res.exit_code == 2 and "not a GO id" in res.output
    # a Latin-1 or gzip term list was an internal error (UnicodeDecodeError)
    unknown.write_bytes(b"GO:0000005 # terme \xe9\n")
    res = CliRunner().invoke(main, args + ["--unknown-terms", str(unknown), "-o", "-"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert f"{unknown}:1: is not UTF-8 text (byte 0xe9)" in res.stderr
    unknown.write_bytes(gzip.compress(b"GO:0000005\n"))
    res = CliRunner().invoke(main, args + ["--unknown-terms", str(unknown), "-o", "-"])
    assert res.exit_code == 0 and res.stdout.splitlines()[0] == "gene\t1\t2"


def test_an_ontology_without_the_aspect_root_names_its_file(testdata, tmp_path):
    # the error named no file ("the ontology has no BP root term GO:0008150"), and said the
    # root was missing where it is there, obsolete
    text = (testdata / "go" / "tiny.obo").read_text()
    root = "id: GO:0008150\nname: biological_process\n"
    assert root in text
    cut = tmp_path / "no_root.obo"  # the root made obsolete: no live BP root term
    cut.write_text(text.replace(root, root + "is_obsolete: true\n"))
    onto = read_obo(cut)
    ann = read_go_annotations(testdata / "go" / "tiny_annotations.tsv")
    with pytest.raises(InputError, match=r"no_root.obo: the ontology marks its BP root term"):
        go_semantics(onto, ann, aspect="BP")


def _errors(output: str) -> list[str]:
    return [x for x in output.splitlines() if x.startswith("kofs: error")]


def test_cli_gosim_errors(testdata, tmp_path):
    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("nothing_here\n")
    base = ["gosim", "--go", str(go / "tiny.obo"), "--go-annotations", str(go / "tiny_annotations.tsv"),
            "--genes", str(genes), "-o", str(tmp_path / "x.tsv")]  # fmt: skip
    res = CliRunner().invoke(main, base)
    assert res.exit_code == 2
    assert len(_errors(res.output)) == 1 and "none of its 1 genes" in res.output
    bad = base.copy()
    bad[2] = str(tmp_path / "missing.obo")
    res = CliRunner().invoke(main, bad)
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "missing.obo" in res.output
    res = CliRunner().invoke(main, base + ["--go-evidence", "1,2"])
    assert res.exit_code == 2 and len(_errors(res.output)) == 1 and "--go-evidence" in res.output
    res = CliRunner().invoke(main, base + ["--measure", "jiang"])
    assert res.exit_code == 2
    assert not (tmp_path / "x.tsv").exists()


def test_one_string_is_not_a_list_of_genes(tiny):
    onto, ann = tiny
    with pytest.raises(ParameterError, match="give a list of gene ids, not one string"):
        gene_similarity(onto, ann, "G1")
