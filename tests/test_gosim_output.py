"""`kofs gosim`: binary output (.npz, .parquet), GOSemSim term tables picked by GO release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import ParameterError
from kofs.io.ontology import read_obo
from kofs.io.output import read_similarity_npz
from kofs.knowledge.gosemsim_terms import go_release, gosemsim_term_lists, gosemsim_unknown_terms


@pytest.fixture
def tiny_args(testdata, tmp_path):
    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("1\n2\n5\n3\n")
    return ["gosim", "--go", str(go / "tiny.obo"), "--go-annotations",
            str(go / "tiny_annotations.tsv"), "--genes", str(genes)]  # fmt: skip


def test_npz_output_matches_the_tsv(tiny_args, tmp_path):
    r = CliRunner().invoke(main, [*tiny_args, "-o", str(tmp_path / "s.tsv")])
    assert r.exit_code == 0, r.stderr
    tsv = pd.read_csv(tmp_path / "s.tsv", sep="\t", index_col=0, dtype={"gene": str})
    r = CliRunner().invoke(main, [*tiny_args, "-o", str(tmp_path / "s.npz")])
    assert r.exit_code == 0, r.stderr
    values, genes, info = read_similarity_npz(tmp_path / "s.npz")
    assert genes == ["1", "2", "3"] and values.dtype == np.float32
    np.testing.assert_allclose(values, tsv.to_numpy(), rtol=1e-6)
    assert info["measure"] == "lin" and info["mode"] == "kofs" and info["aspect"] == "BP"
    with np.load(tmp_path / "s.npz") as z:  # plain numpy reads it too, without pickle
        assert z["similarity"].shape == (3, 3)
    r = CliRunner().invoke(
        main, [*tiny_args, "--keep-missing", "--mode", "gosemsim", "-o", str(tmp_path / "g.npz")]
    )
    values, genes, info = read_similarity_npz(tmp_path / "g.npz")
    assert genes == ["1", "2", "5", "3"] and values.dtype == np.float64
    assert np.isnan(values[2]).all() and info["mode"] == "gosemsim"


def test_parquet_output(tiny_args, tmp_path):
    r = CliRunner().invoke(main, [*tiny_args, "-o", str(tmp_path / "s.parquet")])
    assert r.exit_code == 0, r.stderr
    df = pd.read_parquet(tmp_path / "s.parquet")
    assert list(df.columns) == ["gene", "1", "2", "3"]


def test_a_gz_name_is_compressed_and_other_formats_refused(tiny_args, tmp_path):
    # -o sim.tsv.gz wrote plain text that every .gz reader (kofs' own too) refused, and
    # -o sim.csv a tab-separated table that a CSV reader takes as one column
    r = CliRunner().invoke(main, [*tiny_args, "-o", str(tmp_path / "s.tsv.gz")])
    assert r.exit_code == 0, r.stderr
    df = pd.read_csv(tmp_path / "s.tsv.gz", sep="\t", index_col=0, dtype={"gene": str})
    assert list(df.index) == ["1", "2", "3"] and df.shape == (3, 3)
    for name in ("s.csv", "s.csv.gz", "s.xlsx"):
        r = CliRunner().invoke(main, [*tiny_args, "-o", str(tmp_path / name)])
        assert r.exit_code == 2 and "gosim writes no" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / name).exists()


def test_term_tables_are_picked_by_release(testdata):
    lists = gosemsim_term_lists()
    assert [(t.gosemsim_version, t.go_release) for t in lists] == [("2.24", "2022-07-01")]
    assert len(lists[0].terms()) == 402 and all(t.startswith("GO:") for t in lists[0].terms())
    tiny = read_obo(testdata / "go" / "tiny.obo")
    assert go_release(tiny) == "2099-01-01"  # the test file's data-version
    with pytest.raises(ParameterError, match="--gosemsim-version '9.9'.*2.24 for GO 2022-07-01"):
        gosemsim_unknown_terms(tiny, "9.9")


def test_warns_once_when_the_release_has_no_table(tiny_args):
    r = CliRunner().invoke(main, [*tiny_args, "--mode", "gosemsim", "-o", "-"])
    assert r.exit_code == 0, r.stderr
    warn = [ln for ln in r.stderr.splitlines() if "GOSemSim term table" in ln]
    assert len(warn) == 1 and "--unknown-terms" in warn[0]
    r = CliRunner().invoke(main, [*tiny_args, "--gosemsim-version", "2.24", "-o", "-"])
    assert r.exit_code == 2 and "--mode gosemsim only" in r.stderr


def test_gosemsim_exact_out_of_the_box(shared_data, testdata, tmp_path):
    """R GOSemSim 2.24 mgeneSim Lin-BMA golden values, without --unknown-terms."""
    gold = testdata / "golden" / "gosemsim"
    go = shared_data / "GO"
    out = tmp_path / "lin.tsv"
    r = CliRunner().invoke(
        main,
        ["gosim", "--go", str(go / "go-basic_2022-07-01_from_GO.db.obo.gz"), "--go-annotations",
         str(go / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"), "--genes",
         str(gold / "genes.txt"), "--mode", "gosemsim", "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "GOSemSim term table" not in r.stderr
    ours = pd.read_csv(out, sep="\t", index_col=0, dtype={"gene": str})
    ref = pd.read_csv(gold / "mgenesim_BP_lin_BMA.tsv", sep="\t", index_col=0, dtype={"gene": str})
    ours.index = ours.index.astype(str)
    ref.index = ref.index.astype(str)
    assert list(ours.index) == list(ref.index)
    np.testing.assert_array_equal(ours.to_numpy(), ref.to_numpy())


def test_taxon_messages_name_the_option_of_gosim(testdata, tmp_path):
    """`kofs gosim` takes --taxon (not `kofs rank`'s --go-taxon): its messages name it."""
    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("P00001\nP00002\n")
    base = ["gosim", "--go", str(go / "tiny.obo"), "--genes", str(genes), "-o", "-"]
    r = CliRunner().invoke(
        main, [*base, "--go-annotations", str(go / "tiny_annotations.tsv"), "--taxon", "9606"]
    )
    assert r.exit_code == 2
    assert "--taxon 9606 cannot filter" in r.stderr and "leave --taxon out" in r.stderr
    assert "--go-taxon" not in r.stderr
    r = CliRunner().invoke(main, [*base, "--go-annotations", str(go / "tiny.gaf"), "--taxon", "1"])
    assert r.exit_code == 2
    assert "no usable GO annotation left" in r.stderr and "other taxa than --taxon 1" in r.stderr
    assert "--go-taxon" not in r.stderr


def test_repeated_genes_are_merged_with_a_notice(testdata, tmp_path):
    """A gene list naming an id twice gets one row for it and a warning that counts them."""
    go = testdata / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("1\n2\n5\n2\n3\n1\n")
    args = ["gosim", "--go", str(go / "tiny.obo"), "--go-annotations",
            str(go / "tiny_annotations.tsv"), "--genes", str(genes), "-o", "-"]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "genes.txt: 2 repeated gene ids merged (first kept)" in r.stderr
    assert r.stdout.splitlines()[0].split("\t") == ["gene", "1", "2", "3"]
    genes.write_text("1\n2\n5\n3\n")
    assert "repeated" not in CliRunner().invoke(main, args).stderr
