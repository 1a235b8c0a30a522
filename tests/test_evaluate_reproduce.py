"""The Table 6.5 reproduction config runs end to end on the real ALL data (reduced in CI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from _report_check import check_report
from conftest import needs_shared

from kofs.errors import ParameterError
from kofs.evaluate.reproduce import BOOK_TABLE_6_5, read_config, run_experiment
from kofs.io.expression import read_expression
from kofs.io.labels import align_labels, read_labels
from kofs.rankers import run_ranker
from kofs.types import RankerInputs

REPO = Path(__file__).resolve().parents[1]


def test_configs_are_valid_yaml_with_the_books_lists():
    for name in ("all_lineage", "all_bcell_molbio", "all_bcell_molbio_disjoint", "all_lineage_ci"):
        cfg = yaml.safe_load((REPO / "configs" / f"{name}.yaml").read_text())
        renamed = [cfg["rename"].get(n, n) for n in cfg["lists"]] + [
            a["name"] for a in cfg["aggregations"]
        ]
        # the book's lists and aggregations first, then kofs's posterior aggregations
        assert renamed[: len(BOOK_TABLE_6_5)] == list(BOOK_TABLE_6_5)
        assert set(renamed[len(BOOK_TABLE_6_5) :]) <= {
            "KOFS_Post",
            "KOFS_Post-SUP",
            "KOFS_Post-LAB",
        }


def test_aggregation_without_name_is_a_parameter_error(tmp_path, shared_data):
    cfg = yaml.safe_load((REPO / "configs" / "all_lineage_ci.yaml").read_text())
    cfg.update(
        shared=str(shared_data),
        go=None,
        go_annotations=None,
        go_term_ids=None,
        aggregations=[{"method": "borda"}],
    )
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ParameterError, match="needs a 'name'"):
        run_experiment(p)


def test_unknown_config_key_is_a_one_line_error(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("expression: x\nlabels: y\nlists: [SPEC]\nevalution: {}\n")
    with pytest.raises(ParameterError) as exc:
        run_experiment(p)
    assert "evalution" in str(exc.value) and "\n" not in str(exc.value)


@needs_shared
@pytest.mark.slow
def test_reduced_reproduction_runs_end_to_end(shared_data, tmp_path):
    cfg = yaml.safe_load((REPO / "configs" / "all_lineage_ci.yaml").read_text())
    # CI: the 300 genes of largest variance and the bundled GO extract (it covers the 1,200 genes of
    # largest variance of the same matrix), so the test does not parse the whole GO
    example = REPO / "kofs" / "data" / "example"
    cfg.update(
        shared=str(shared_data),
        max_genes=300,
        output=str(tmp_path / "out"),
        go=str(example / "go.obo.gz"),
        go_annotations=str(example / "go_annotations.tsv.gz"),
    )
    cfg["evaluation"].update(folds=2, repeats=1, curve_ks=[10, 30, 50])
    p = tmp_path / "ci.yaml"
    p.write_text(yaml.safe_dump(cfg))
    written = run_experiment(p)
    out = tmp_path / "out"
    assert str(out / "report.html") in written and check_report(out / "report.html") == []
    t = pd.read_csv(out / "table65.tsv", sep="\t").set_index("list")
    assert list(t.index) == list(BOOK_TABLE_6_5)
    # the book's columns hold the book's Table 6.5, ours this run's evaluation.tsv (3 digits)
    assert t.loc["Fisher score", "ACC Ave book"] == pytest.approx(0.97)
    assert t.loc["KOFS_Prob-SUP", "HIT_leu book"] == 17
    ev = pd.read_csv(out / "evaluation.tsv", sep="\t").set_index("list")
    for col in ("ACC Ave", "honest ACC Ave", "HIT_canc", "HIT_leu"):
        np.testing.assert_allclose(t[f"{col} ours"], ev.loc[t.index, col], rtol=5e-3)
    # B vs T lineage is easy: the Fisher list separates it under both protocols
    assert (
        ev.loc["Fisher score", "ACC Ave"] > 0.9 and ev.loc["Fisher score", "honest ACC Ave"] > 0.9
    )
    # HIT = known genes among a list's top 50, recomputed here for the Fisher list from the
    # files: the 300 genes of largest variance, Fisher score, the cancer gene table
    labels = read_labels(shared_data / "ALL" / "ALL_samples.tsv", label_column="lineage")
    expr = read_expression(shared_data / "ALL" / "ALL_gene_expr.tsv.gz", gene_column="symbol")
    expr, labels = align_labels(expr, labels)
    expr = expr.subset_genes(np.sort(np.argsort(-expr.values.var(axis=0), kind="stable")[:300]))
    top50 = set(run_ranker("fisher", expr, RankerInputs(categories=labels)).top(50))
    cancer = pd.read_csv(shared_data / "cancer" / "cancer_genes_summary.tsv", sep="\t", dtype=str)
    leu = cancer["symbol"][cancer["oncokb_msk_heme"] == "True"]
    assert ev.loc["Fisher score", ["HIT_canc", "HIT_leu"]].tolist() == [
        len(top50 & set(cancer["symbol"])),
        len(top50 & set(leu)),
    ]
    assert "circular" in ev.loc["KOFS_Prob-SUP", "notes"]
    assert (ev["Sim_anno_leu"] > 0).all()
    for fig in ("heatmap_1", "heatmap_2", "accuracy_1nn", "weights", "agreement"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 5000


def test_cross_fit_key_is_checked_first(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("expression: x\nlabels: y\nlists: [SPEC]\ncross_fit: 1\n")
    with pytest.raises(ParameterError) as exc:
        run_experiment(p)
    assert "cross" in str(exc.value).lower() and "\n" not in str(exc.value)
    p.write_text("expression: x\nlabels: y\nlists: [SPEC]\ncross_fit: five\n")
    with pytest.raises(ParameterError, match="'cross-fit': expected an integer"):
        run_experiment(p)


def test_cli_reproduce_reports_config_errors_in_one_line(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    p = tmp_path / "c.yaml"
    p.write_text("labels: y\nlists: [SPEC]\n")
    r = CliRunner().invoke(main, ["reproduce", str(p)])
    assert (
        r.exit_code == 2 and "'expression'" in r.output and len(r.output.strip().splitlines()) == 1
    )


def test_an_unknown_list_names_the_config_key(tmp_path):
    """An unknown list of a reproduction config was '--lists: unknown list', an option that
    config has not, naming no file, and only after the data were read."""
    from kofs.evaluate.reproduce import read_config

    p = tmp_path / "c.yaml"
    p.write_text("expression: x\nlabels: y\nlists: [Fisher, Fisher-score]\n")
    with pytest.raises(
        ParameterError, match="config key 'lists': 'Fisher-score' is not a KOFS"
    ) as e:
        read_config(p)
    assert e.value.path == str(p)


def test_known_set_exclude(tmp_path):
    from kofs.evaluate.reproduce import _known

    t = tmp_path / "c.tsv"
    t.write_text("symbol\theme\nAAA\tTrue\nBBB\tFalse\nCCC\tTrue\nDDD\tFalse\n")
    resolve = str
    leu = _known({"file": str(t), "where": "heme"}, "leu", resolve, "cfg")
    solid = _known(
        {"file": str(t), "gene_column": "symbol", "exclude": "leu"},
        "solid",
        resolve,
        "cfg",
        {"leu": leu},
    )
    assert leu.genes == ("AAA", "CCC") and solid.genes == ("BBB", "DDD")
    with pytest.raises(ParameterError, match="exclude 'x'"):
        _known({"file": str(t), "exclude": "x"}, "s", resolve, "cfg", {})


def test_cli_reproduce_refuses_standard_output_before_any_work(tmp_path, monkeypatch):
    # it computed the whole experiment, then wrote a folder named '-'
    from click.testing import CliRunner

    from kofs.cli import main

    p = tmp_path / "c.yaml"
    p.write_text("labels: y\nlists: [SPEC]\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["reproduce", str(p), "-o", "-"])
    assert r.exit_code == 2 and "kofs reproduce writes a folder" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "-").exists()


def test_reproduce_says_once_that_ids_of_an_unbuilt_list_change_nothing(tmp_path):
    """pathway_ids in a config whose lists leave Pathway-FILT out: one warning naming the config
    keys (each fold's rerun of the plan said it again, with the CLI's option names)."""
    from click.testing import CliRunner

    from kofs.cli import main

    rng = np.random.default_rng(0)
    genes = [f"G{i:02d}" for i in range(60)]
    samples = [f"s{j:02d}" for j in range(16)]
    y = np.repeat(["a", "b"], 8)
    X = rng.normal(size=(60, 16)) + np.outer(np.arange(60) < 6, y == "b")
    pd.DataFrame(X, index=pd.Index(genes, name="gene"), columns=samples).to_csv(
        tmp_path / "expr.tsv", sep="\t"
    )
    pd.DataFrame({"sample": samples, "class": y}).to_csv(
        tmp_path / "lab.tsv", sep="\t", index=False
    )
    (tmp_path / "p.gmt").write_text("P1\tna\t" + "\t".join(genes[:8]) + "\n")
    (tmp_path / "known.txt").write_text("\n".join(genes[:5]) + "\n")
    cfg = {
        "expression": str(tmp_path / "expr.tsv"),
        "labels": str(tmp_path / "lab.tsv"),
        "pathways": str(tmp_path / "p.gmt"),
        "pathway_ids": ["P1"],
        "lists": ["Fisher", "SPEC"],
        "known_genes": {"known": {"file": str(tmp_path / "known.txt")}},
        "aggregations": [{"name": "B", "method": "borda"}],
        "evaluation": {
            "top": [5],
            "classifiers": ["1nn"],
            "folds": 2,
            "repeats": 1,
            "protocols": ["book", "honest"],
        },  # fmt: skip
        "output": str(tmp_path / "out"),
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    r = CliRunner().invoke(main, ["reproduce", str(p)])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("no effect") == 1, r.stderr
    assert (
        "pathway_ids: P1 has no effect: it chooses the genes of Pathway-FILT, which this run does "
        "not build (add Pathway-FILT to lists)" in r.stderr
    )


def _small_study(tmp_path):
    """A 40-gene, 12-sample matrix, its labels and 6 known genes, in ``tmp_path``."""
    rng = np.random.default_rng(1)
    genes = [f"G{i:02d}" for i in range(40)]
    samples = [f"s{j:02d}" for j in range(12)]
    y = np.repeat(["a", "b"], 6)
    X = rng.normal(size=(40, 12)) + 2 * np.outer(np.arange(40) < 6, y == "b")
    pd.DataFrame(X, index=pd.Index(genes, name="gene"), columns=samples).to_csv(
        tmp_path / "expr.tsv", sep="\t"
    )
    pd.DataFrame({"sample": samples, "class": y}).to_csv(
        tmp_path / "lab.tsv", sep="\t", index=False
    )
    (tmp_path / "known.txt").write_text("\n".join(genes[:6]) + "\n")


def test_default_top_sizes_larger_than_the_matrix_are_left_out(tmp_path):
    """A config without evaluation.top or split_known.top on a 40-gene matrix failed: '--top
    asks for 50 genes but the matrix has 40' (an option reproduce does not have), then
    'split-half top asks for 100 genes'; the defaults are cut to the matrix, as kofs evaluate
    cuts its --top."""
    _small_study(tmp_path)
    cfg = {
        "expression": "expr.tsv",
        "labels": "lab.tsv",
        "lists": ["Fisher", "SPEC"],
        "known_genes": {"known": {"file": "known.txt"}},
        "split_known": {"set": "known", "repeats": 2, "null_repeats": 0},
        "evaluation": {"classifiers": ["1nn"], "folds": 2, "repeats": 1},
        "output": "out",
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    run_experiment(p)
    table = pd.read_csv(tmp_path / "out" / "evaluation.tsv", sep="\t")
    assert {"ACC-10", "ACC-30"} <= set(table.columns) and "ACC-50" not in table.columns
    split = pd.read_csv(tmp_path / "out" / "split_half.tsv", sep="\t")
    assert sorted(set(split["k"])) == [10, 30]


def test_a_quick_reproduction_says_so_and_names_every_file_it_writes(tmp_path):
    """The report of `kofs reproduce --quick` compared its figures with the book's without
    saying they came from a reduced run, and its 'Files:' line left out table65.tsv/.md."""
    _small_study(tmp_path)
    cfg = {
        "expression": "expr.tsv",
        "labels": "lab.tsv",
        "lists": ["Fisher", "SPEC"],
        "evaluation": {"classifiers": ["1nn"], "folds": 2, "repeats": 1},
        "output": "out",
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    run_experiment(p, quick=True)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "A reduced run (--quick)" in page and "3-fold stratified CV run once" in page
    files = page.split("Files: ")[1]
    for name in ("evaluation.tsv", "table65.tsv", "table65.md"):
        assert f"href='{name}'" in files and (tmp_path / "out" / name).is_file()


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        # an internal error (TypeError: 'int' object is not a mapping) when the lists were built
        ("{fisher: 3}", "c.yaml: config key 'params.fisher': expected a mapping of parameter"),
        # named --param (an option reproduce lacks) without the config
        ("{nope: {k: 1}}", "c.yaml: config key 'params': unknown list or ranker 'nope'"),
        ("{fisher: {x: 1}}", "c.yaml: config key 'params': ranker 'fisher': unknown parameter"),
    ],
)
def test_a_bad_params_entry_names_the_config(tmp_path, params, needle):
    _small_study(tmp_path)
    p = tmp_path / "c.yaml"
    p.write_text(
        f"expression: expr.tsv\nlabels: lab.tsv\nlists: [Fisher]\nparams: {params}\n"
        "evaluation: {classifiers: [1nn], folds: 2, repeats: 1, top: [5]}\noutput: out\n"
    )
    with pytest.raises(ParameterError) as exc:
        run_experiment(p)
    assert needle in str(exc.value) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["[a]", "null", "true", "{a: 1}"])
def test_a_rename_that_is_no_name_is_refused(tmp_path, value):
    # a list was an internal error (unhashable type), null was run without a word
    p = tmp_path / "c.yaml"
    p.write_text(
        f"expression: e.tsv\nlabels: l.tsv\nlists: [Fisher]\nrename: {{Fisher: {value}}}\n"
    )
    with pytest.raises(ParameterError, match="c.yaml: config key 'rename.Fisher': expected the"):
        read_config(p)
    p.write_text("expression: e.tsv\nlabels: l.tsv\nlists: [Fisher]\nrename: {Fisher: 3}\n")
    assert read_config(p)["rename"] == {"Fisher": "3"}


def test_keep_samples_true_matches_the_tables_spelling(tmp_path):
    # YAML reads TRUE as a boolean, which became 'True': R's TRUE column kept no sample
    from kofs.evaluate.reproduce import _paths, _read_data

    _small_study(tmp_path)
    lab = pd.read_csv(tmp_path / "lab.tsv", sep="\t")
    lab["flag"] = ["TRUE", "FALSE"] * 6
    lab.to_csv(tmp_path / "lab.tsv", sep="\t", index=False)
    p = tmp_path / "c.yaml"
    p.write_text(
        "expression: expr.tsv\nlabels: lab.tsv\nlabel_column: class\nlists: [Fisher]\n"
        "keep_samples: {flag: [TRUE]}\n"
    )
    cfg = read_config(p)
    _, labels, _ = _read_data(cfg, _paths(cfg, tmp_path), str(p))
    assert list(labels.samples) == [f"s{j:02d}" for j in range(0, 12, 2)]


@pytest.mark.parametrize(("given", "other"), [("go", "go_annotations"), ("go_annotations", "go")])
def test_go_without_its_annotations_names_the_config_keys(tmp_path, given, other):
    # was 'GO needs both --go (the OBO ontology) and --go-annotations', naming no file
    p = tmp_path / "c.yaml"
    p.write_text(f"expression: e.tsv\nlabels: l.tsv\nlists: [Fisher]\n{given}: x\n")
    with pytest.raises(ParameterError, match=f"c.yaml: config key '{given}' needs '{other}' too"):
        read_config(p)


def test_a_missing_shared_folder_says_how_to_point_at_it(tmp_path, monkeypatch):
    # a clone without ../shared read "ALL_samples.tsv: file not found", naming no way out
    from kofs.errors import InputError
    from kofs.evaluate.reproduce import _paths

    cfg = {"shared": "nowhere/data/real"}
    monkeypatch.delenv("KOFS_SHARED", raising=False)
    with pytest.raises(InputError, match=r"key 'shared' of the config.*set KOFS_SHARED"):
        _paths(cfg, tmp_path)("{shared}/ALL/ALL_samples.tsv")
    monkeypatch.setenv("KOFS_SHARED", str(tmp_path / "absent"))
    with pytest.raises(InputError, match=r"KOFS_SHARED=.*absent\) is not there"):
        _paths(cfg, tmp_path)("{shared}/ALL/ALL_samples.tsv")
    assert _paths(cfg, tmp_path)("out/results") == str(tmp_path / "out" / "results")
    (tmp_path / "absent" / "data" / "real").mkdir(parents=True)
    assert _paths(cfg, tmp_path)("{shared}/x.tsv") == str(tmp_path / "absent/data/real/x.tsv")
