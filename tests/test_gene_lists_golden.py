"""Real limma, DESeq2 and edgeR tables read as they are and fused: equal to R RobustRankAggreg
1.2.1 on the same lists (tests/data/golden/gene_lists, see its README)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.pipeline.user_lists import aggregate_lists

FILES = ("limma_ALL_BvsT_top300.tsv.gz", "deseq2_sim.csv.gz", "edger_sim.tsv.gz")


@pytest.fixture(scope="module")
def golden(testdata):
    folder = testdata / "golden" / "gene_lists"
    expected = pd.read_csv(folder / "expected.tsv", sep="\t").set_index("gene")
    return [str(folder / f) for f in FILES], expected


def column(res, name, genes):
    return pd.Series(res.final.statistics[name], index=list(res.final.genes))[genes].to_numpy()


@pytest.mark.parametrize(("universe", "suffix"), [(None, ""), (8562, "_nALL")])
def test_tool_tables_fused_as_robustrankaggreg(golden, universe, suffix):
    paths, expected = golden
    genes = list(expected.index)
    rra = aggregate_lists(paths, aggregate="rra", universe=universe)
    kinds = [s.kind for s in rra.sources]
    assert kinds == ["limma topTable", "DESeq2 results", "edgeR topTags"]
    assert [s.ranked_by for s in rra.sources] == [
        "P.Value ascending",
        "pvalue ascending",
        "PValue ascending",
    ]
    assert [len(s.genes) for s in rra.sources] == [300, 1500, 1200]
    assert sorted(rra.final.genes) == sorted(genes)
    np.testing.assert_allclose(column(rra, "p_value", genes), expected["rra" + suffix], rtol=1e-12)
    stuart = aggregate_lists(paths, aggregate="stuart", universe=universe)
    np.testing.assert_allclose(
        column(stuart, "stuart_q", genes), expected["stuart" + suffix], rtol=1e-12
    )


def test_the_cli_writes_the_same_p_values(golden, tmp_path):
    paths, expected = golden
    out = tmp_path / "fused"
    r = CliRunner().invoke(
        main, ["aggregate", *paths, "-o", str(out), "--aggregate", "rra"], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    table = pd.read_csv(out / "ranking.tsv", sep="\t").set_index("gene")
    np.testing.assert_allclose(
        table.loc[expected.index, "p_value"],
        expected["rra"],
        rtol=1e-9,  # %.10g in the file
    )
    assert table.index[0] in {"CD3D", "SH2D1A", "LAT", "TRAT1", "CD3E"}
