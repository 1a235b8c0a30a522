"""End-to-end pipeline on the bundled example: every knowledge source, KOFS and MSFS plans."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.datasets.example import example_paths
from kofs.errors import ParameterError
from kofs.io.genes import read_gene_list
from kofs.io.output import write_ranking
from kofs.pipeline.rank import rank
from kofs.sources import KnowledgeSources
from kofs.types import Expression

PATHS = example_paths()


@pytest.fixture(scope="module")
def example(example_data):
    return example_data.expression, example_data.labels, example_data.sources


@pytest.fixture(scope="module")
def kofs_result(example):
    expr, labels, sources = example
    return rank(expr, labels=labels, sources=sources, seed=0)


@pytest.mark.slow
def test_kofs_plan_builds_every_list_the_sources_allow(kofs_result):
    names = [r.name for r in kofs_result.lists]
    assert names == [
        "SPEC",
        "Fisher",
        "Pathway-FILT",
        "Pathway-REL-VOTE",
        "GO-REL-VOTE",
        "GO-MAH",
        "GO-REL-PROP",
        "PPI-PROP",
    ]
    w = kofs_result.final.weights
    assert w.shape == (8,) and abs(w.sum() - 1) < 1e-12 and (w >= 0).all()
    assert kofs_result.final.info["converged"]


@pytest.mark.slow
def test_fused_list_is_biologically_sensible(kofs_result):
    # B vs T lineage: T-cell receptor / lineage genes and HLA class II must lead
    top = set(kofs_result.final.top(30))
    assert {"CD3D", "LCK", "GATA3"} & top
    assert any(g.startswith("HLA-D") for g in top)


@pytest.mark.slow
def test_coverage_reported_once_per_source(kofs_result):
    sources = [c.source for c in kofs_result.coverage]
    assert len(sources) == len(set(sources)) == 3
    go = next(c for c in kofs_result.coverage if c.source.startswith("GO"))
    assert go.matched > 1400 and go.id_column == "entrez_id"


@pytest.mark.slow
def test_evidence_names_terms_pathways_and_neighbours(kofs_result):
    ev = kofs_result.evidence
    assert ev is not None and len(ev) > 1000
    text = " ".join(ev.values())
    assert "GO:" in text and "KEGG_" in text and "interactors:" in text
    buf = io.StringIO()
    write_ranking(buf, kofs_result.final, kofs_result.lists, evidence=kofs_result.evidence)
    table = pd.read_csv(io.StringIO(buf.getvalue()), sep="\t")
    assert table.columns[-1] == "evidence"


def test_supervised_lists_need_relevant_genes(example):
    expr, labels, sources = example
    with pytest.raises(ParameterError, match="relevant"):
        rank(expr, labels=labels, sources=sources, lists=["GO-CAN-MAH"])
    with pytest.raises(ParameterError, match="did you mean 'GO-MAH'"):
        rank(expr, labels=labels, sources=sources, lists=["GO-MHA"])


@pytest.mark.slow
def test_relevant_genes_enable_go_can_mah_and_supervised_em(example):
    expr, labels, sources = example
    relevant = read_gene_list(PATHS["relevant_genes"])
    res = rank(
        expr,
        labels=labels,
        sources=sources,
        relevant_genes=relevant,
        lists=["Fisher", "GO-CAN-MAH", "GO-REL-VOTE"],
        aggregate="em",
    )
    assert [r.name for r in res.lists] == ["Fisher", "GO-CAN-MAH", "GO-REL-VOTE"]
    assert res.final.info["n_G"] == len(set(relevant) & set(expr.genes))


def test_msfs_is_one_spec_list_on_combined_similarities(example):
    expr, labels, sources = example
    res = rank(expr, labels=labels, sources=sources.only("pathways"), method="msfs")
    assert [r.name for r in res.lists] == ["MSFS"]
    assert res.lists[0].params["ranker"] == "spec-phi2"
    np.testing.assert_array_equal(res.final.ranks, res.lists[0].ranks)


def test_aux_data_on_shuffled_samples_gives_an_aux_list(example, rng):
    expr, labels, _ = example
    order = rng.permutation(expr.n_samples)
    aux = Expression(
        expr.values[order][:, :50] + rng.normal(size=(expr.n_samples, 50)),
        [f"mir{i}" for i in range(50)],
        [expr.samples[i] for i in order],
    )
    res = rank(
        expr, labels=labels, sources=KnowledgeSources({"aux": (aux,)}), lists=["AUX-SPEC", "SPEC"]
    )
    assert [r.name for r in res.lists] == ["AUX-SPEC", "SPEC"]
    assert not np.allclose(res.lists[0].scores, res.lists[1].scores, equal_nan=True)


def test_aux_data_with_samples_in_columns_is_aligned(example, rng):
    """An auxiliary file of fewer features than samples was read as samples x features by its
    longer axis, then refused: 'N samples of the expression matrix are missing'."""
    expr, labels, _ = example
    X = expr.values[:, :50] + rng.normal(size=(expr.n_samples, 50))
    rows = Expression(X, [f"mir{i}" for i in range(50)], expr.samples)
    cols = Expression(X.T.copy(), expr.samples, [f"mir{i}" for i in range(50)])  # transposed
    got = [
        rank(expr, labels=labels, sources=KnowledgeSources({"aux": (a,)}), lists=["AUX-SPEC"])
        for a in (rows, cols)
    ]
    np.testing.assert_array_equal(got[0].lists[0].scores, got[1].lists[0].scores)


def test_an_aux_file_of_few_features_reads_without_an_orientation_warning(tmp_path, caplog):
    """Read by its longer axis, a 40 x 128 miRNA file warned 'guessed that genes are the
    columns ...; if not, use --genes-in rows', an option of EXPRESSION only: the matrix's
    sample ids orient it (AUX-SPEC below)."""
    import logging

    from kofs.io.expression import read_expression
    from kofs.sources import read_sources

    samples = [f"{1005 + i:05d}" for i in range(30)]  # ALL's sample ids: neither axis votes
    X = np.random.default_rng(0).normal(size=(12, 30))
    pd.DataFrame(X, index=[f"miR-{i}" for i in range(12)], columns=samples).rename_axis(
        "mirna"
    ).to_csv(tmp_path / "aux.tsv", sep="\t")
    with caplog.at_level(logging.WARNING, logger="kofs"):
        read_expression(tmp_path / "aux.tsv")  # as EXPRESSION it is a guess, and says so
        assert "guessed that genes are the columns" in caplog.text
        caplog.clear()
        (aux,) = read_sources(aux=[str(tmp_path / "aux.tsv")]).get("aux")
    assert "guessed that genes are" not in caplog.text
    expr = Expression(
        np.random.default_rng(1).normal(size=(30, 60)), [f"g{i}" for i in range(60)], samples
    )
    res = rank(expr, sources=read_sources(aux=[str(tmp_path / "aux.tsv")]), lists=["AUX-SPEC"])
    assert [r.name for r in res.lists] == ["AUX-SPEC"]


@pytest.mark.slow
def test_runs_are_deterministic(example):
    expr, labels, sources = example
    a = rank(
        expr,
        labels=labels,
        sources=sources.only("pathways", "interactions"),
    )
    b = rank(
        expr,
        labels=labels,
        sources=sources.only("pathways", "interactions"),
    )
    np.testing.assert_array_equal(a.final.scores, b.final.scores)


def test_kofs_sources_command_reports_coverage():
    p = PATHS
    r = CliRunner().invoke(
        main,
        [
            "sources",
            p["expression"],
            "--labels",
            p["labels"],
            "--label-column",
            "lineage",
            "--pathways",
            p["pathways"],
            "--interactions",
            p["interactions"],
        ],
    )
    assert r.exit_code == 0, r.output
    assert "pathways kegg.gmt: 696 genes, 696 matched" in r.output
    assert "Pathway-FILT (spec-phi2)" in r.output and "PPI-PROP (relevance-propagation)" in r.output


def test_go_needs_both_files():
    r = CliRunner().invoke(main, ["rank", PATHS["expression"], "--go", PATHS["go"], "-o", "-"])
    assert r.exit_code == 2 and "--go-annotations" in r.stderr


@pytest.mark.slow
def test_end_to_end_on_real_all_with_every_source(shared_data, tmp_path):
    """`kofs rank` on the real ALL matrix (128 x 8,562) with labels, GO 2022, KEGG, STRING and
    known haematological cancer genes: every list of the catalogue is built and fused."""
    R = shared_data
    cancer = pd.read_csv(R / "cancer" / "cancer_genes_summary.tsv", sep="\t", dtype=str)
    rel = tmp_path / "heme.txt"
    rel.write_text("\n".join(cancer.loc[cancer["oncokb_msk_heme"] == "True", "symbol"]) + "\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main,
        [
            "rank",
            str(R / "ALL" / "ALL_gene_expr.tsv.gz"),
            "--gene-column",
            "symbol",
            "--labels",
            str(R / "ALL" / "ALL_samples.tsv"),
            "--label-column",
            "lineage",
            "--go",
            str(R / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz"),
            "--go-annotations",
            str(R / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"),
            "--pathways",
            str(R / "KEGG" / "msigdb_c2_cp_kegg_symbols_qusage.gmt"),
            "--pathway-ids",
            "KEGG_B_CELL_RECEPTOR_SIGNALING_PATHWAY,KEGG_T_CELL_RECEPTOR_SIGNALING_PATHWAY",
            "--interactions",
            str(R / "PPI" / "string_example_gene_edges.tsv.gz"),
            "--relevant-genes",
            str(rel),
            "--aggregate",
            "em",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert len(ranking) == 8562
    lists = [c[5:] for c in ranking.columns if c.startswith("rank:")]
    assert lists == [
        "SPEC",
        "Fisher",
        "Pathway-FILT",
        "Pathway-REL-VOTE",
        "GO-REL-VOTE",
        "GO-MAH",
        "GO-CAN-MAH",
        "GO-REL-PROP",
        "PPI-PROP",
    ]
    weights = pd.read_csv(out / "weights.tsv", sep="\t")
    assert abs(weights["weight"].sum() - 1) < 1e-9
    import json

    manifest = json.loads((out / "manifest.json").read_text())
    cov = {c["source"].split()[0]: c for c in manifest["coverage"]}
    assert cov["GO"]["matched"] > 8000 and cov["pathways"]["matched"] > 3000
    assert manifest["releases"]["go_ontology"]["data-version"] == "releases/2022-07-01"
    assert manifest["aggregation"]["info"]["n_G"] > 400


@pytest.mark.slow
def test_go_closure_and_ic_are_computed_once_per_run(example, monkeypatch):
    import kofs.knowledge.go_semantics as go

    expr, labels, sources = example
    calls = []
    real = go.go_semantics
    monkeypatch.setattr(go, "go_semantics", lambda *a, **k: calls.append(k) or real(*a, **k))
    relevant = read_gene_list(PATHS["relevant_genes"])
    rank(
        expr,
        labels=labels,
        sources=sources.only("go"),
        relevant_genes=relevant,
        lists=["GO-REL-VOTE", "GO-CAN-MAH", "GO-REL-PROP"],
    )
    assert len(calls) == 1


@pytest.mark.slow
def test_unsupervised_all_is_ranked_by_the_lists_when_no_class_is_found(shared_data):
    """ALL without labels or knowledge: the default plan's four data lists agree through their
    correlation and the fit puts every separation at 0. The fused ranking is then the lists'
    average normal score (it used to tie every gene, the file's order: AADAC, AAK1, ...), with
    the lineage markers on top, and the run says why."""
    from kofs.io.expression import read_expression

    e = read_expression(shared_data / "ALL" / "ALL_gene_expr.tsv.gz", gene_column="symbol")
    result = rank(e)
    fused = result.final
    assert np.allclose(fused.info["mu"], 0.0)
    assert len(np.unique(fused.ranks)) > 0.99 * len(fused.genes)  # no tied ranking
    top = set(fused.top(50))
    assert {"CD3D", "LCK", "CD19", "CD79B"} <= top
    assert any("finds no relevant class" in n for n in fused.diagnostics["notices"])
    assert np.allclose(fused.weights[np.isfinite(fused.weights)].sum(), 1.0)


def test_lineage_labels_lead_the_fusion_of_all(shared_data):
    """ALL with the B/T lineage labels, default plan: every list predicts the labels perfectly
    but SPEC phi2, which is tempered to ~0. Scaling each list's share of the correlation
    correction by its label weight broke the cancellation between the Laplacian and SPEC phi2
    (correlation 0.86): the tempered fit ran to a class of half the genes (prior at its cap,
    4,763 calls), the Laplacian weighing 1.00 and Fisher 0, with RASA4 (Fisher rank 2,163),
    AZGP1 (5,306) and KMT2D in the top 20. Tempering as added noise keeps the discriminant
    coherent: the labelled list leads and the top is the lineage's."""
    from kofs.io.expression import read_expression

    e = read_expression(shared_data / "ALL" / "ALL_gene_expr.tsv.gz", gene_column="symbol")
    samples = pd.read_csv(shared_data / "ALL" / "ALL_samples.tsv", sep="\t")
    labels = pd.Series(samples["lineage"].to_numpy(), index=samples["sample_id"].astype(str))
    # the plan of defaults version 5 (version 6 gives labelled data the Fisher list alone)
    plan = ["variance", "fisher", "laplacian", "spec-phi2", "spec-phi3"]
    result = rank(e, labels=labels, rankers=plan)
    fused = result.final
    names = [r.name for r in result.lists]
    weights = dict(zip(names, fused.weights, strict=True))
    assert max(weights, key=weights.get) == "fisher"
    # not the degenerate half of the genes (the cap); the F test alone finds ~0.28 (below)
    assert fused.info["prior"] < 0.4
    fisher = next(r for r in result.lists if r.name == "fisher")
    head = set(fisher.top(len(fisher.genes) // 20))  # its top 5 %
    assert set(fused.top(30)) <= head
    # the default (the calibrated Fisher list alone): at least most of the F test's calls
    # with Benjamini-Hochberg at q <= 0.10, and no more than Storey's adaptive BH, which
    # estimates the share of null genes (0.47: BH's 2,866 assume 1; Storey 3,850). 2,434 when
    # the F p-values' relevant class had one effect size, 3,281 with its spread (2026-11-30)
    from scipy.stats import f_oneway

    default = rank(e, labels=labels).final
    X = np.asarray(e.values)
    lab = labels.reindex(list(e.samples)).to_numpy()
    p = f_oneway(*(X[lab == k] for k in np.unique(lab))).pvalue
    ps, m = np.sort(p), p.size

    def step_up(share_null: float) -> int:
        below = ps <= 0.10 * np.arange(1, m + 1) / (m * share_null)
        return int(np.max(np.flatnonzero(below))) + 1

    calls = int(np.sum(default.statistics["q_value"] <= 0.10))
    assert 0.7 * step_up(1.0) <= calls <= step_up(np.mean(p > 0.5) / 0.5)


#: Y-chromosome genes of the ALL matrix (HG-U95Av2; NLGN4Y is barely expressed on it): the
#: genes a sex contrast must find, whatever the knowledge sources favour.
Y_GENES = {"RPS4Y1", "DDX3Y", "KDM5D", "USP9Y", "UTY", "EIF1AY", "TTTY15", "ZFY", "PRKY"}


def test_a_label_no_default_was_chosen_on_is_answered_by_the_data(shared_data, tmp_path):
    """ALL by sex (never used to choose a default; 3 of 128 samples without one) with GO, KEGG
    and STRING: the knowledge hubs stay out, the fused top 10 is Welch's t-test's (nine
    Y-chromosome genes and an X gene), and every call at q <= 0.10 is a Y gene."""
    R = shared_data
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main,
        [
            "rank", str(R / "ALL" / "ALL_gene_expr.tsv.gz"), "--gene-column", "symbol",
            "--labels", str(R / "ALL" / "ALL_samples.tsv"), "--label-column", "sex",
            "--missing-labels", "drop",
            "--go", str(R / "GO" / "go-basic_2022-07-01_from_GO.db.obo.gz"),
            "--go-annotations", str(R / "GO" / "goa_human_entrez_2022-Sep12_from_org.Hs.eg.db.tsv.gz"),
            "--pathways", str(R / "KEGG" / "kegg_hsa_pathways_2011-Mar15.tsv"),
            "--interactions", str(R / "PPI" / "string_example_gene_edges.tsv.gz"),
            "-o", str(out),
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "dropping 3 samples without a label" in r.stderr
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    top10 = set(ranking["gene"][:10])
    assert len(top10 & Y_GENES) == 9
    called = set(ranking.loc[ranking["q_value"] <= 0.10, "gene"])
    assert called and called <= Y_GENES
    weights = pd.read_csv(out / "weights.tsv", sep="\t").set_index("list")["weight"]
    assert weights.idxmax() == "Fisher" and weights["Fisher"] > 0.9


def test_relevant_genes_that_are_most_genes_warn(caplog):
    """A 'relevant genes' file listing every gene of the matrix ran exactly as without it,
    silently: such known genes cannot tell relevant from other genes."""
    import logging

    from kofs.pipeline.rank import relevant_gene_ids
    from kofs.types import Expression

    e = Expression(np.arange(12.0).reshape(3, 4), ["A", "B", "C", "D"], ["s1", "s2", "s3"])
    with caplog.at_level(logging.WARNING, logger="kofs"):
        assert relevant_gene_ids(e, ["A", "B"]) == ("A", "B")
    assert "given as relevant" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="kofs"):
        assert relevant_gene_ids(e, ["D", "C", "B", "A"]) == ("A", "B", "C", "D")
    assert "4 of the matrix's 4 genes are given as relevant (all of them)" in caplog.text


def test_a_list_whose_genes_all_tie_is_named(caplog):
    # --param laplacian.t=2.5 (every heat-kernel edge weight 0 on this unscaled matrix) gave
    # every gene the Laplacian score 2: the list was fused, ranking nothing, without a word
    import logging

    import kofs

    ex = example_paths()
    config = {"expression": ex["expression"], "labels": ex["labels"],
              "rankers": "laplacian,fisher", "param": ["laplacian.t=2.5"]}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="kofs"):
        r = kofs.run(config)
    assert len(set(r.lists[0].ranks)) == 1
    said = [m for m in caplog.messages if "ranks nothing" in m]
    assert said == [
        f"list laplacian: all its {len(r.lists[0].genes)} genes score 2, so it ranks nothing "
        "(its genes all tie in the fusion); check its parameters (t=2.5)"
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kofs"):
        kofs.run({**config, "param": []})
    assert not [m for m in caplog.messages if "ranks nothing" in m]
