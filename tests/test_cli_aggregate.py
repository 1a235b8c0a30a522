"""CLI contract of `kofs aggregate` and of `kofs run` on its resolved config."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from kofs.cli import main


def run(args, **kw):
    return CliRunner().invoke(main, args, catch_exceptions=False, **kw)


@pytest.fixture
def lists(tmp_path):
    rng = np.random.default_rng(7)
    genes = [f"G{i}" for i in range(60)]
    signal = np.r_[np.full(6, 2.0), np.zeros(54)]
    # a DESeq2 table, an edgeR table and a top-k list of different lengths and universes
    de_genes = genes[:50]
    p = 10 ** -(signal[:50] * 3 + rng.uniform(0, 1, 50))
    pd.DataFrame(
        {"baseMean": 10.0, "log2FoldChange": rng.normal(size=50), "pvalue": p, "padj": p},
        index=de_genes,
    ).to_csv(tmp_path / "de.csv")
    ed_genes = genes[3:60]
    q = 10 ** -(signal[3:60] * 3 + rng.uniform(0, 1, 57))
    pd.DataFrame(
        {"logFC": 1.0, "logCPM": 5.0, "LR": 3.0, "PValue": q, "FDR": q}, index=ed_genes
    ).to_csv(tmp_path / "edger.tsv", sep="\t")
    top = [genes[i] for i in (1, 0, 4, 17, 2, 30, 5, 9)]
    (tmp_path / "top.txt").write_text("\n".join(top) + "\n")
    (tmp_path / "rel.txt").write_text("G0\nG1\nG2\n")
    return tmp_path


def files(folder):
    return [str(folder / n) for n in ("de.csv", "edger.tsv", "top.txt")]


@pytest.mark.slow
def test_aggregate_writes_the_run_files_and_run_repeats_it(lists):
    out = lists / "out"
    r = run(["aggregate", *files(lists), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [
        ".kofs-complete",
        "config.resolved.yaml",
        "manifest.json",
        "ranking.tsv",
        "report.html",
        "weights.tsv",
    ]
    table = pd.read_csv(out / "ranking.tsv", sep="\t", keep_default_na=False)
    # the default fusion, as kofs rank's: a posterior, local fdr and q-value per gene
    assert list(table.columns[:7]) == [
        "gene", "rank", "score", "posterior", "lfdr", "q_value", "data_posterior"
    ]  # fmt: skip
    assert "rank:de" in table.columns and "score:edger" in table.columns
    assert len(table) == 60  # the union of the lists
    assert (table.loc[table.gene == "G55", "rank:de"] == "NA").all()  # not in the DE table
    assert set(table.gene[:3]) == {"G3", "G4", "G5"}  # high in all three lists
    # the two tables are ranked by raw p-values, read as such (calibrated lists): the genes
    # called are the six with signal (p ~ 1e-6 against p >= 0.1 for the others)
    q = table["q_value"].astype(float)
    assert set(table.gene[q <= 0.10]) <= {f"G{i}" for i in range(6)}
    assert (q <= 0.10).sum() >= 4 and (q <= 1.0).all()
    # read as rankings: 60 genes, the lists' agreement is no more than their correlation
    # alone explains, so no gene is called; before the relevant-class test 33 were, 27 of them
    # without signal
    ranks = lists / "ranks"
    assert run(["aggregate", *files(lists), "--ranks-only", "-o", str(ranks)]).exit_code == 0
    q = pd.read_csv(ranks / "ranking.tsv", sep="\t")["q_value"]
    assert ((q > 0.10) & (q <= 1.0)).all()
    notices = json.loads((ranks / "manifest.json").read_text())["aggregation"]["diagnostics"]
    assert any("no more than lists sharing noise" in n for n in notices["notices"])
    # the summary says how every list was read and ranked
    assert "de: DESeq2 results" in r.stderr and "ranked by pvalue ascending" in r.stderr
    assert "edger: edgeR topTags" in r.stderr and "PValue ascending" in r.stderr
    assert "top: top-k list" in r.stderr and "coverage: top: 8 genes" in r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "aggregate" and manifest["universe"] == 60
    assert [x["kind"] for x in manifest["lists"]] == [
        "DESeq2 results",
        "edgeR topTags",
        "top-k list",
    ]
    assert len(manifest["inputs"]["lists"]) == 3
    cfg = yaml.safe_load((out / "config.resolved.yaml").read_text())
    assert cfg["command"] == "aggregate" and cfg["aggregate"] == "posterior"
    again = lists / "again"
    r2 = run(["run", str(out / "config.resolved.yaml"), "-o", str(again)])
    assert r2.exit_code == 0, r2.output
    assert (again / "ranking.tsv").read_bytes() == (out / "ranking.tsv").read_bytes()


def test_stdout_stuart_em_weights_and_universe(lists):
    r = run(["aggregate", *files(lists), "-o", "-", "--aggregate", "stuart"])
    assert r.exit_code == 0
    head = r.stdout.splitlines()[0].split("\t")
    assert head[:4] == ["gene", "rank", "score", "stuart_q"]
    out = lists / "em"
    r = run(
        ["aggregate", *files(lists), "-o", str(out), "--aggregate", "em"]
        + ["--relevant-genes", str(lists / "rel.txt"), "--universe", "20000"]
    )
    assert r.exit_code == 0, r.output
    w = pd.read_csv(out / "weights.tsv", sep="\t")
    assert list(w["list"]) == ["de", "edger", "top"] and w["weight"].sum() == pytest.approx(1)
    assert {"ci_low", "ci_high", "sd"} <= set(w.columns)
    assert (w["ci_low"] <= w["weight"]).all() and (w["weight"] <= w["ci_high"]).all()
    manifest = json.loads((out / "manifest.json").read_text())
    diag = manifest["aggregation"]["diagnostics"]
    assert manifest["universe"] == 20000 and len(diag["weight_ci"]) == 3
    exact = run(
        ["-q", "aggregate", *files(lists), "-o", "-", "--aggregate", "rra"]
        + ["--aggregate-param", "exact=true"]
    )
    assert exact.exit_code == 0 and exact.stderr == ""


def _bad_cases(folder):
    (folder / "empty.txt").write_text("")
    (folder / "scores.tsv").write_text("gene\tscore\nA\t1\nB\t2\n")
    sub = folder / "sub"
    sub.mkdir()
    (sub / "top.txt").write_text("G1\n")
    return [
        (["aggregate", str(folder / "empty.txt")], "empty"),
        (["aggregate", str(folder / "scores.tsv") + ":scroe:desc"], "did you mean 'score'"),
        (["aggregate", str(folder / "scores.tsv") + ":score"], "cannot guess the direction"),
        (
            ["aggregate", str(folder / "scores.tsv") + ":score:sideways"],
            "direction 'sideways' after column 'score'",
        ),  # it read "column 'score:sideways' not found"
        (["aggregate", str(folder / "scores.tsv")], "which column ranks the genes"),
        (["aggregate", str(folder / "top.txt"), str(sub / "top.txt")], "two lists are named"),
        (["aggregate", str(folder / "nope.txt")], "file not found"),
        (["aggregate", str(folder / "top.txt"), "--universe", "3"], "smaller than"),
        (
            [
                "aggregate",
                str(folder / "top.txt"),
                "--aggregate",
                "borda",
                "--relevant-genes",
                str(folder / "rel.txt"),
            ],
            "does not use relevant genes",
        ),  # fmt: skip
        (["aggregate", str(folder / "top.txt"), "--aggregate-param", "exact=maybe"], "exact"),
    ]


def test_bad_input_exits_2_with_one_line_and_writes_nothing(lists):
    for args, message in _bad_cases(lists):
        out = lists / "never"
        r = run([*args, "-o", str(out)])
        assert r.exit_code == 2, (args, r.output)
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("kofs: error")]
        assert len(lines) == 1 and message in lines[0], (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert not out.exists()


def test_run_rejects_a_bad_aggregate_config(lists):
    cfg = lists / "agg.yaml"
    cfg.write_text("command: aggregate\nlists: [top.txt]\naggregat: rra\n")
    r = run(["run", str(cfg)])
    assert r.exit_code == 2 and "did you mean 'aggregate'" in r.stderr
    cfg.write_text("command: aggregate\nlists:\n  - top.txt\n  - {file: de.csv, name: x}\n")
    out = lists / "fromcfg"
    r = run(["run", str(cfg), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "rank:x" in (out / "ranking.tsv").read_text().splitlines()[0]
    r = run(["run", str(cfg), "--seed", "3"])
    assert r.exit_code == 2 and "cannot be overridden with --seed" in r.stderr
    cfg.write_text("command: aggregate\nlists: []\n")  # it read "must be a list of files"
    r = run(["run", str(cfg)])
    assert r.exit_code == 2 and "config key 'lists' is empty" in r.stderr


def test_aggregate_param_on_the_command_line_merges_into_the_configs(lists):
    # `kofs run agg.yaml --aggregate-param n_bins=20` dropped the config's resamples: 30
    from kofs.pipeline.user_lists_config import read_aggregate_config

    cfg = lists / "agg.yaml"
    cfg.write_text("command: aggregate\nlists: [top.txt]\naggregate-param: {resamples: 30}\n")
    _, config = read_aggregate_config(cfg, overrides={"aggregate_param": ["n_bins=20"]})
    assert config.aggregate_param == {"resamples": 30, "n_bins": "20"}


def test_the_envelope_can_be_turned_off_from_the_command_line(lists):
    # read as rankings, every list's evidence is bounded by its histogram class by default;
    # envelope=false gives the binormal model alone
    base = ["-q", "aggregate", *files(lists), "-o", "-", "--ranks-only"]
    on = run(base)
    off = run([*base, "--aggregate-param", "envelope=false"])
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    score_on = pd.read_csv(io.StringIO(on.stdout), sep="\t")["score"]
    score_off = pd.read_csv(io.StringIO(off.stdout), sep="\t")["score"]
    assert not np.allclose(score_on, score_off)
    bad = CliRunner().invoke(main, [*base, "--aggregate-param", "envelope=maybe"])
    assert bad.exit_code == 2 and "envelope" in bad.output


def test_top_k_lists_alone_ask_for_a_universe(tmp_path):
    # in the union of two top-k lists, genes in one list are below the other: the lists look
    # complementary (docs/aggregation.md); a universe says how many genes could have been listed
    (tmp_path / "a.txt").write_text("\n".join(f"G{i}" for i in range(0, 40)) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(f"G{i}" for i in range(30, 70)) + "\n")
    files = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    r = CliRunner().invoke(main, ["aggregate", *files, "-o", "-"])
    assert r.exit_code == 0 and "give --universe" in r.stderr
    # (the warning only: the relevant-class test's simulated null is not needed)
    quick = ["--aggregate-param", "top_k_null=independent"]
    r = CliRunner().invoke(main, ["aggregate", *files, "-o", "-", "--universe", "20000", *quick])
    assert r.exit_code == 0 and "give --universe" not in r.stderr
    # lists of ids that all hold the same genes are full rankings of them: nothing to ask
    (tmp_path / "c.txt").write_text("\n".join(f"G{i}" for i in range(69, -1, -1)) + "\n")
    (tmp_path / "d.txt").write_text("\n".join(f"G{i}" for i in range(70)) + "\n")
    full = [str(tmp_path / "c.txt"), str(tmp_path / "d.txt")]
    r = CliRunner().invoke(main, ["aggregate", *full, "-o", "-", *quick])
    assert r.exit_code == 0 and "give --universe" not in r.stderr
    # also when their ids differ in case only (one gene to the fusion: they were compared
    # before they were harmonised, and the warning asked for a universe they do not need)
    (tmp_path / "e.txt").write_text("\n".join(f"g{i}" for i in range(70)) + "\n")
    cased = [str(tmp_path / "c.txt"), str(tmp_path / "e.txt")]
    r = CliRunner().invoke(main, ["aggregate", *cased, "-o", "-", *quick])
    assert r.exit_code == 0 and "give --universe" not in r.stderr
    assert len(r.stdout.strip().splitlines()) == 71  # a header and the 70 genes


@pytest.mark.slow
def test_the_null_of_brought_p_values_is_chosen_from_the_command_line(tmp_path):
    """Two tools' p-value tables (no fold change) where nothing changed but correlated genes
    widen the null: by default each is read against its empirical null (no call);
    ``null=theoretical`` reads the p-values as they are (calls); a bad value exits 2."""
    from scipy.stats import norm

    rng = np.random.default_rng(5)
    genes = [f"G{i}" for i in range(3000)]
    common = rng.normal(size=3000)
    paths = []
    for k in range(2):
        z = 1.4 * (np.sqrt(0.3) * common + np.sqrt(0.7) * rng.normal(size=3000))
        path = tmp_path / f"t{k}.tsv"
        pd.DataFrame({"gene": genes, "PValue": 2 * norm.sf(np.abs(z))}).to_csv(
            path, sep="\t", index=False
        )
        paths.append(f"{path}:PValue")
    base = ["-q", "aggregate", *paths, "-o", "-"]

    def calls(*extra):
        out = run([*base, *extra])
        assert out.exit_code == 0, out.output
        return int((pd.read_csv(io.StringIO(out.stdout), sep="\t")["q_value"] <= 0.10).sum())

    assert calls() == 0
    assert calls("--aggregate-param", "null=theoretical") > 50
    bad = CliRunner().invoke(main, [*base, "--aggregate-param", "null=maybe"])
    assert bad.exit_code == 2 and "null" in bad.output


def test_many_short_lists_do_not_build_the_pairwise_table(tmp_path):
    """2,000 lists of two genes took 17 s, 14 of them in the L x L agreement table (10,000
    lists: 5 minutes), which manifest.json then held entry by entry."""
    import json

    from kofs.aggregate import AGREEMENT_MAX_LISTS

    rng = np.random.default_rng(2)
    n = AGREEMENT_MAX_LISTS + 1
    specs = []
    for i in range(n):
        p = tmp_path / f"l{i}.txt"
        p.write_text(f"G{rng.integers(50)}\nH{rng.integers(50)}\n")
        specs.append(str(p))
    r = CliRunner().invoke(
        main, ["aggregate", *specs, "--aggregate", "borda", "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 0, r.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert "agreement" not in manifest["aggregation"]["diagnostics"]  # 3 lists: it is there


def test_a_list_named_with_knowledge_is_a_prior_and_run_repeats_it(lists):
    """--knowledge NAME: the list ranks genes by what is known; it enters the prior (an odds
    ratio in the manifest), not the evidence (no weight of its own), and the resolved config
    keeps it."""
    out = lists / "out"
    r = run(["aggregate", *files(lists), "--knowledge", "top", "-o", str(out)])
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    effects = manifest["aggregation"]["diagnostics"]["prior_effects"]
    assert "top" in {e["covariate"] for e in effects}
    assert yaml.safe_load((out / "config.resolved.yaml").read_text())["knowledge"] == ["top"]
    again = lists / "again"
    assert run(["run", str(out / "config.resolved.yaml"), "-o", str(again)]).exit_code == 0
    assert (again / "ranking.tsv").read_text() == (out / "ranking.tsv").read_text()
    bad = CliRunner().invoke(main, ["aggregate", *files(lists), "--knowledge", "nope", "-o", "x"])
    assert bad.exit_code == 2 and "no list is named 'nope'" in bad.output
    assert not (lists / "x").exists()


def test_a_table_named_with_top_k_is_read_as_the_top_of_a_ranking(lists):
    """--top-k NAME: a gene that scored table lacks lies below it (it is the top of a longer
    ranking), not untested; the resolved config keeps it; a name no list has, or one also
    named as knowledge, is refused (exit 2, nothing written)."""
    out = lists / "out"
    r = run(["aggregate", *files(lists), "--top-k", "edger", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((out / "config.resolved.yaml").read_text())["top-k"] == ["edger"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["settings"]["top_k"] == ["edger"]
    again = lists / "again"
    assert run(["run", str(out / "config.resolved.yaml"), "-o", str(again)]).exit_code == 0
    assert (again / "ranking.tsv").read_text() == (out / "ranking.tsv").read_text()
    for method, said in (("rra", "normalised rank 1"), ("borda", "bottom block")):
        other = CliRunner().invoke(
            main, ["aggregate", *files(lists), "--top-k", "edger", "--aggregate", method, "-o", "-"]
        )
        assert other.exit_code == 0, other.output
        assert (
            f"--top-k is ignored by --aggregate {method}" in other.stderr and said in other.stderr
        )
    for extra in (["--top-k", "nope"], ["--top-k", "top", "--knowledge", "top"]):
        bad = CliRunner().invoke(main, ["aggregate", *files(lists), *extra, "-o", str(lists / "x")])
        assert bad.exit_code == 2, bad.output
        assert "nope" in bad.output or "named as knowledge and as a top-k list" in bad.output
        assert not (lists / "x").exists()


def test_a_table_of_p_values_that_shows_its_cut_is_read_as_cut_unless_named_tested(lists):
    """A DESeq2 table cut to its genes with p <= 0.01 (6 genes, p-values that stop at ~1e-6):
    read as the top of the study's ranking without being named, with a warning naming
    --tested; --tested keeps it a table of tested genes, which the resolved config repeats; a
    --tested name that is no table of p-values is refused (exit 2, nothing written)."""
    de = pd.read_csv(lists / "de.csv", index_col=0)
    de[de.pvalue <= 0.01].to_csv(lists / "cut.csv")
    specs = [str(lists / "cut.csv"), str(lists / "edger.tsv"), str(lists / "top.txt")]
    out = lists / "out"
    r = run(["aggregate", *specs, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "'cut' lists 6 genes whose p-values stop at" in r.stderr
    assert "--tested cut" in r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["settings"]["read_as_cut"] == ["cut"]
    kept = lists / "kept"
    r = run(["aggregate", *specs, "--tested", "cut", "-o", str(kept)])
    assert r.exit_code == 0, r.output
    assert "p-values stop at" not in r.stderr
    manifest = json.loads((kept / "manifest.json").read_text())
    assert manifest["settings"]["tested"] == ["cut"] and manifest["settings"]["read_as_cut"] == []
    assert yaml.safe_load((kept / "config.resolved.yaml").read_text())["tested"] == ["cut"]
    again = lists / "again"
    assert run(["run", str(kept / "config.resolved.yaml"), "-o", str(again)]).exit_code == 0
    assert (again / "ranking.tsv").read_text() == (kept / "ranking.tsv").read_text()
    bad = CliRunner().invoke(main, ["aggregate", *specs, "--tested", "top", "-o", str(lists / "x")])
    assert bad.exit_code == 2 and "'top' is not a table of p-values" in bad.output
    assert not (lists / "x").exists()


def _tables_with_a_reversed_copy(folder, m: int, relevant: int) -> list[str]:
    """Score tables of ``m`` genes written to ``folder`` as a user names them (FILE:score:desc):
    two informative (``relevant`` genes), one random, and the weaker informative one again with
    its scores negated (``fair_again``)."""
    rng = np.random.default_rng(11)
    genes = [f"G{i}" for i in range(m)]
    effect = np.where(np.arange(m) < relevant, rng.exponential(1.0, m) + 0.5, 0.0)
    scores = {
        "good": 3.0 * effect + rng.normal(size=m),
        "fair": 1.5 * effect + rng.normal(size=m),
        "random": rng.normal(size=m),
    }
    scores["fair_again"] = -scores["fair"]
    specs = []
    for name, s in scores.items():
        pd.DataFrame({"gene": genes, "score": s}).to_csv(folder / f"{name}.tsv", sep="\t")
        specs.append(f"{folder / name}.tsv:score:desc")
    return specs


def test_a_list_given_also_the_wrong_way_round_is_left_out_with_a_notice(tmp_path):
    """Three score tables of 2,000 genes (two informative, one random) and the weaker
    informative table again with its scores negated, named as a user names files: the reversed
    copy gets weight 0, a notice on stderr and in the manifest, and the fused ranking is that
    of the three lists alone."""
    paths = _tables_with_a_reversed_copy(tmp_path, 2000, 60)
    quick = ["--aggregate-param", "resamples=0"]
    out, alone = tmp_path / "out", tmp_path / "alone"
    r = run(["aggregate", *paths, "-o", str(out), *quick])
    assert r.exit_code == 0 and "fair_again ranks the genes it shares with fair" in r.stderr
    assert run(["aggregate", *paths[:3], "-o", str(alone), *quick]).exit_code == 0
    weights = pd.read_csv(out / "weights.tsv", sep="\t").set_index("list")["weight"]
    assert weights["fair_again"] == 0.0
    manifest = json.loads((out / "manifest.json").read_text())
    notices = manifest["aggregation"]["diagnostics"]["notices"]
    assert any("left out of the fusion" in n for n in notices)
    both = pd.read_csv(out / "ranking.tsv", sep="\t").gene.tolist()
    assert both == pd.read_csv(alone / "ranking.tsv", sep="\t").gene.tolist()


@pytest.mark.parametrize("method", ["posterior", "rra"])
def test_a_universe_too_large_for_the_memory_fails_before_fusing(lists, method):
    """The genes no list holds are modelled too: --universe 1e9 (accepted as a size) took ~24
    GB and was killed. Now the fusion's memory is estimated first and the run stops with a
    one-line error, exit 2, and nothing written."""
    out = lists / "huge"
    r = CliRunner().invoke(
        main,
        ["aggregate", *files(lists), "--aggregate", method, "--universe", "1e9", "-o", str(out)],
    )
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "1,000,000,000 genes (--universe)" in line and "needs ~" in line and "\n" not in line
    assert not out.exists()


def test_two_tools_rankings_of_one_null_data_set_make_no_calls(tmp_path):
    """`kofs aggregate` of a t-test's and a Mann-Whitney test's rankings of one data set where
    nothing changed, beside two random rankings: the two are one source (their noise is
    shared), one stands for both, and nothing is called -- before, 300-500 of 1,500 genes
    were --; stderr and the manifest say why."""
    from scipy.stats import mannwhitneyu, ttest_ind

    rng = np.random.default_rng(5)
    genes = [f"G{i}" for i in range(1500)]
    A, B = rng.normal(size=(20, 1500)), rng.normal(size=(20, 1500))
    scores = {
        "t": -np.log(ttest_ind(B, A, axis=0).pvalue),
        "mw": -np.log(mannwhitneyu(B, A, axis=0).pvalue),
        "r1": rng.normal(size=1500),
        "r2": rng.normal(size=1500),
    }
    paths = []
    for name, s in scores.items():
        pd.DataFrame({"gene": genes, "score": s}).to_csv(tmp_path / f"{name}.tsv", sep="\t")
        paths.append(f"{tmp_path / name}.tsv:score:desc")
    out = tmp_path / "out"
    r = run(["aggregate", *paths, "-o", str(out), "--aggregate-param", "resamples=0"])
    assert r.exit_code == 0, r.output
    q = pd.read_csv(out / "ranking.tsv", sep="\t")["q_value"]
    assert (q > 0.10).all()
    diagnostics = json.loads((out / "manifest.json").read_text())["aggregation"]["diagnostics"]
    (group,) = diagnostics["sources"]
    assert sorted(group) == ["mw", "t"]
    assert any("are one source" in n for n in diagnostics["notices"])
    assert "are one source" in r.stderr
    # an outside test given with --signal-p does not make them separate sources
    given = tmp_path / "given"
    r = run(["aggregate", *paths, "-o", str(given), "--aggregate-param", "resamples=0",
             "--signal-p", "0.001"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert (pd.read_csv(given / "ranking.tsv", sep="\t")["q_value"] > 0.10).all()
    manifest = json.loads((given / "manifest.json").read_text())
    assert manifest["aggregation"]["diagnostics"]["sources"] is not None


def test_a_table_that_looks_cut_to_its_top_gets_a_warning(tmp_path):
    """A scored table of 100 of 2,000 genes whose genes head a table of every gene (a t-test's
    top 100 beside the Mann-Whitney table of the same samples) is read as a table of tested
    genes; a warning names it and --top-k. None once it is given, and none for a table of
    100 genes spread through the other (tested genes, not a top)."""
    from scipy.stats import mannwhitneyu, ttest_ind

    rng = np.random.default_rng(3)
    genes = [f"G{i}" for i in range(2000)]
    A, B = rng.normal(size=(15, 2000)), rng.normal(size=(15, 2000))
    t = pd.Series(-np.log(ttest_ind(B, A, axis=0).pvalue), index=genes, name="score")
    mw = pd.Series(-np.log(mannwhitneyu(B, A, axis=0).pvalue), index=genes, name="score")
    t.nlargest(100).rename_axis("gene").to_csv(tmp_path / "t.csv")
    t.sample(100, random_state=0).rename_axis("gene").to_csv(tmp_path / "some.csv")
    mw.rename_axis("gene").to_csv(tmp_path / "mw.csv")
    base = ["aggregate", str(tmp_path / "mw.csv:score:desc"), "-o", "-", "--top", "0"]
    params = ["--aggregate-param", "resamples=0"]
    r = CliRunner().invoke(main, [*base, str(tmp_path / "t.csv:score:desc"), *params])
    assert r.exit_code == 0, r.output
    assert "'t' lists 100 genes, and they sit at the top of 'mw'" in r.stderr
    assert "--top-k t" in r.stderr
    told = CliRunner().invoke(
        main, [*base, str(tmp_path / "t.csv:score:desc"), "--top-k", "t", *params]
    )
    assert told.exit_code == 0 and "looks like the top" not in told.stderr
    spread = CliRunner().invoke(main, [*base, str(tmp_path / "some.csv:score:desc"), *params])
    assert spread.exit_code == 0 and "looks like the top" not in spread.stderr


def test_coverage_is_said_once_on_a_terminal(tmp_path, monkeypatch):
    """On a terminal each list's coverage line came twice: echoed, then again at the end of
    the summary."""
    import kofs.cli._summary as summary
    import kofs.cli.aggregate as agg

    genes = [f"G{i}" for i in range(40)]
    for name, seed in (("a", 0), ("b", 1)):
        rng = np.random.default_rng(seed)
        pd.DataFrame({"gene": genes, "s": rng.normal(size=40)}).to_csv(
            tmp_path / f"{name}.tsv", sep="\t", index=False
        )
    args = ["aggregate", str(tmp_path / "a.tsv") + ":s:desc", str(tmp_path / "b.tsv") + ":s:desc"]
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "pipe")])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("coverage: a: 40 genes") == 1  # not a terminal: echoed
    monkeypatch.setattr(summary, "summary_shown", lambda top, force=False: True)
    monkeypatch.setattr(agg, "summary_shown", lambda top, force=False: True)
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "tty")])
    assert r.exit_code == 0, r.output
    assert "top 10 genes" in r.stderr and r.stderr.count("coverage: a: 40 genes") == 1


def test_a_list_whose_scores_are_all_equal_is_named_or_refused(tmp_path):
    """A table whose every score is one number ranks nothing: a warning names it beside lists
    that rank, and alone it is refused (one line, exit 2, nothing written)."""
    from kofs import aggregate_lists
    from kofs.errors import InputError

    (tmp_path / "flat.tsv").write_text("gene\tscore\n" + "".join(f"G{i}\t1\n" for i in range(8)))
    (tmp_path / "good.tsv").write_text("gene\tscore\n" + "".join(f"G{i}\t{i}\n" for i in range(8)))
    flat, good = str(tmp_path / "flat.tsv:score:desc"), str(tmp_path / "good.tsv:score:desc")
    r = CliRunner().invoke(main, ["aggregate", flat, good, "-o", "-", "--aggregate", "borda"])
    assert r.exit_code == 0, r.output
    assert "list 'flat': all its 8 scores are 1, so it carries no ranking information" in r.stderr
    assert r.stderr.count("carries no ranking information") == 1
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["aggregate", flat, "-o", str(out), "--aggregate", "borda"])
    assert r.exit_code == 2 and not out.exists()
    assert r.stderr.strip().splitlines()[-1].startswith("kofs: error: ")
    assert "flat.tsv: list 'flat': all its 8 scores are 1" in r.stderr
    assert "Traceback" not in r.stderr
    with pytest.raises(InputError, match="carries no ranking information"):
        aggregate_lists([flat], aggregate="borda")
    # a gene set (tied by design) and a list with missing scores (ranked above them) pass
    one = pd.Series([1.0, 1.0, np.nan], index=["A", "B", "C"], name="s")
    aggregate_lists({"one": one, "good": good}, aggregate="borda", direction="desc")


def test_a_notice_is_said_once_on_a_terminal(tmp_path, monkeypatch):
    """On a terminal a list left out as reversed (or as one source with another) was said in
    the summary and again as a WARNING line; in a pipe (no summary) the WARNING line stays."""
    import kofs.cli._summary as summary
    import kofs.cli.aggregate as agg

    args = ["aggregate", "--aggregate-param", "resamples=0"]
    args += _tables_with_a_reversed_copy(tmp_path, 300, 20)
    said = "fair_again ranks the genes it shares with fair"
    r = run([*args, "-o", str(tmp_path / "pipe")])
    assert r.exit_code == 0 and r.stderr.count(said) == 1 and "WARNING: " + said in r.stderr
    monkeypatch.setattr(summary, "summary_shown", lambda top, force=False: True)
    monkeypatch.setattr(agg, "summary_shown", lambda top, force=False: True)
    r = run([*args, "-o", str(tmp_path / "tty")])
    flat = " ".join(r.stderr.split())  # rich wraps the summary's lines
    assert r.exit_code == 0 and "top 10 genes" in flat
    assert flat.count(said) == 1 and "WARNING: " + said not in flat


def test_aggregate_parameters_are_recorded_typed_and_run_repeats_them(lists):
    # --aggregate-param exact=true was written to config.resolved.yaml as the text 'true'
    out = lists / "out"
    r = run(["aggregate", *files(lists), "--aggregate", "rra", "--aggregate-param", "exact=yes",
             "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    cfg = yaml.safe_load((out / "config.resolved.yaml").read_text())
    assert cfg["aggregate-param"] == {"exact": True}
    again = lists / "again"
    r2 = run(["run", str(out / "config.resolved.yaml"), "-o", str(again)])
    assert r2.exit_code == 0, r2.output
    assert (out / "ranking.tsv").read_bytes() == (again / "ranking.tsv").read_bytes()


def test_a_run_with_inputs_from_standard_input_says_how_to_repeat_it(lists):
    # a universe read from standard input was written to config.resolved.yaml as '-' with the
    # header's "repeats the run" alone: `kofs run` then read an empty stream
    universe = "\n".join(f"G{i}" for i in range(80)) + "\n"
    out = lists / "piped"
    base = ["aggregate", *files(lists), "--aggregate", "borda"]
    assert run([*base, "--universe", "-", "-o", str(out)], input=universe).exit_code == 0
    text = (out / "config.resolved.yaml").read_text()
    assert "read from standard input: pipe the same data" in text
    assert yaml.safe_load(text)["universe"] == "-"
    again = lists / "again"
    assert (
        run(["run", str(out / "config.resolved.yaml"), "-o", str(again)], input=universe).exit_code
        == 0
    )
    assert (again / "ranking.tsv").read_text() == (out / "ranking.tsv").read_text()
    plain = lists / "plain"
    assert run([*base, "-o", str(plain)]).exit_code == 0
    assert "standard input" not in (plain / "config.resolved.yaml").read_text()


def test_aggregate_writes_a_report_page_of_the_fusion(lists):
    # kofs rank wrote report.html and kofs aggregate none: the fusion's per-gene q-values,
    # weights and notices were in files and the terminal only
    import kofs

    out = lists / "rep"
    assert run(["aggregate", *files(lists), "-o", str(out)]).exit_code == 0
    page = (out / "report.html").read_text()
    table = pd.read_csv(out / "ranking.tsv", sep="\t")
    first = str(table.gene[0])
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert f">{first}<" in page and "q-value" in page and "rank in each list" in page
    for name in ("de", "edger", "top"):
        assert f">{name}<" in page  # the weights table names every list
    assert "de: DESeq2 results" in page and "Provenance" in page
    called = int((table["q_value"] <= 0.10).sum())
    assert f"{called:,} of at most 0.10" in page
    # the same page from Python, and none with --no-report
    result = kofs.aggregate_lists(files(lists))
    assert "rank in each list" in kofs.aggregate_report_html(result, top=5)
    with pytest.raises(kofs.KofsError, match="must be what kofs.aggregate_lists returns"):
        kofs.aggregate_report_html(result.final)
    quiet = lists / "quiet"
    assert run(["aggregate", *files(lists), "--no-report", "-o", str(quiet)]).exit_code == 0
    assert not (quiet / "report.html").exists()


def test_aggregate_report_reads_top_five_percent_of_the_universe(tmp_path):
    # two top-k lists of 40 and 60 genes with --universe 20000: 'lists agreeing' counted the
    # lists ranking a gene in the top 5 % of the 60 listed genes (3), so a gene at rank 11 of
    # 20,000 was 'agreed' by no list; and a manifest not a dict failed with an AttributeError
    import kofs

    (tmp_path / "a.txt").write_text("\n".join(f"G{i}" for i in range(40)) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(f"G{i}" for i in range(60)) + "\n")
    result = kofs.aggregate_lists([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")],
                                  universe=20000)  # fmt: skip
    page = kofs.aggregate_report_html(result)
    assert "top 5% (1,000 genes)" in page and "2 of 2" in page
    assert "of a universe of 20,000" in page
    with pytest.raises(kofs.KofsError, match="manifest must be a mapping"):
        kofs.aggregate_report_html(result, manifest="manifest.json")
    one = kofs.aggregate_lists([str(tmp_path / "b.txt")])
    assert "Ranked among 60 genes by one ranked list" in kofs.aggregate_report_html(one)


def test_a_z_table_of_zeros_is_said_to_be_read_as_p_values_of_1(tmp_path):
    # every z 0: 'all its 8 scores are 1' spoke of scores the file does not hold (its z are 0,
    # read as two-sided p-values of 1)
    (tmp_path / "z0.tsv").write_text("gene\tz\n" + "".join(f"G{i}\t0\n" for i in range(8)))
    r = CliRunner().invoke(main, ["aggregate", str(tmp_path / "z0.tsv"), "-o", "-"])
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "all its 8 scores (z as two-sided p-values) are 1" in r.stderr
