"""CLI contract of `kofs rank`, `kofs methods`, `kofs demo`, `kofs run` (click's CliRunner)."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.registry import AGGREGATORS, RANKERS


def _write_matrix(path, rng, n=12, m=30, genes_in="rows"):
    X = rng.normal(size=(n, m))
    X[: n // 2, :3] += 3.0  # three informative genes
    genes = [f"G{j}" for j in range(m)]
    samples = [f"S{i}" for i in range(n)]
    df = (
        pd.DataFrame(X.T, index=genes, columns=samples)
        if genes_in == "rows"
        else pd.DataFrame(X, index=samples, columns=genes)
    )
    df.index.name = "gene" if genes_in == "rows" else "sample"
    df.to_csv(path, sep="\t")
    labels = pd.DataFrame({"sample": samples, "group": ["a"] * (n // 2) + ["b"] * (n - n // 2)})
    return genes, samples, labels


@pytest.fixture
def small(tmp_path, rng):
    expr = tmp_path / "expr.tsv"
    genes, samples, labels = _write_matrix(expr, rng)
    lab = tmp_path / "labels.tsv"
    labels.to_csv(lab, sep="\t", index=False)
    return expr, lab, genes


def run(args, **kw):
    return CliRunner().invoke(main, args, catch_exceptions=False, **kw)


def test_version():
    r = run(["--version"])
    assert r.exit_code == 0 and "kofs" in r.output


def test_methods_lists_every_registered_method():
    r = run(["methods", "--format", "tsv"])
    assert r.exit_code == 0
    names = [line.split("\t")[0] for line in r.output.strip().split("\n")[1:]]
    assert names == RANKERS.names() + AGGREGATORS.names()
    for required in (
        "variance",
        "fisher",
        "laplacian",
        "spec-phi1",
        "spec-phi2",
        "spec-phi3",
        "em",
        "borda",
    ):
        assert required in names


def test_rank_writes_outputs(small, tmp_path):
    expr, lab, genes = small
    out = tmp_path / "out"
    r = run(["rank", str(expr), "--labels", str(lab), "-o", str(out)])
    assert r.exit_code == 0, r.output
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert list(ranking.columns[:3]) == ["gene", "rank", "score"]
    lists = [c.split(":", 1)[1] for c in ranking.columns if c.startswith("rank:")]
    # with labels a dense matrix's default plan is the calibrated Fisher list alone
    # (defaults version 6: docs/aggregation.md, "Labels: the F test's null")
    assert set(lists) == {"fisher"}
    assert {"posterior", "lfdr", "q_value"} <= set(ranking.columns)
    assert sorted(ranking["gene"]) == sorted(genes)
    assert ranking["rank"].iloc[0] == 1
    # the planted genes lead the fused list (default: posterior with label supervision; on
    # this toy every list predicts the labels perfectly, so the lists weigh about the same and
    # two genes high in three lists each may slip in between)
    assert {"G0", "G1", "G2"} <= set(ranking["gene"].iloc[:5])
    weights = pd.read_csv(out / "weights.tsv", sep="\t")
    # label-supervised weights: a bootstrap interval over samples
    assert list(weights.columns) == ["list", "weight", "ci_low", "ci_high", "sd"]
    assert abs(weights["weight"].sum() - 1) < 1e-9
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["inputs"]["expression"]["sha256"]
    assert manifest["settings"]["seed"] == 0
    assert (out / "config.resolved.yaml").is_file()


def test_unsupervised_default_skips_supervised_rankers(small, tmp_path):
    expr, _, _ = small
    # (on 30 genes a tie of two is a block of 3 % of the positions, so lists read as partial and
    # the class test's null would be simulated: 6 s of a test about the plan)
    r = run(["rank", str(expr), "-o", "-", "--aggregate-param", "top_k_null=independent"])
    assert r.exit_code == 0
    # (the runner mixes stderr in: skip the log lines, e.g. the identification warning)
    header = next(x for x in r.output.split("\n") if not x.startswith("kofs:")).split("\t")
    assert "rank:fisher" not in header and "rank:laplacian" in header


def test_stdout_gets_only_the_table(small):
    expr, lab, genes = small
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--labels", str(lab), "-o", "-", "--rankers", "fisher,variance"]
    )
    assert r.exit_code == 0
    lines = r.stdout.strip().split("\n")
    assert lines[0].startswith("gene\trank\tscore")
    assert len(lines) == 1 + len(genes)


def test_genes_as_columns_are_detected_through_labels(tmp_path, rng):
    expr = tmp_path / "expr.csv"
    genes, samples, labels = _write_matrix(expr, rng, n=40, m=12, genes_in="columns")
    pd.read_csv(expr, sep="\t").to_csv(expr, index=False)  # as CSV
    lab = tmp_path / "l.csv"
    labels.to_csv(lab, index=False)
    r = run(["rank", str(expr), "--labels", str(lab), "--rankers", "fisher", "-o", "-"])
    assert r.exit_code == 0, r.output
    assert sorted(pd.read_csv(__import__("io").StringIO(r.stdout), sep="\t")["gene"]) == sorted(
        genes
    )


@pytest.mark.slow
def test_seed_and_threads_give_identical_ranking(small, tmp_path):
    expr, lab, _ = small
    outs = []
    for threads in ("1", "2"):
        out = tmp_path / f"o{threads}"
        assert (
            run(
                ["rank", str(expr), "--labels", str(lab), "-o", str(out), "--threads", threads]
            ).exit_code
            == 0
        )
        outs.append((out / "ranking.tsv").read_bytes())
    assert outs[0] == outs[1]


def test_supervised_em_with_relevant_genes(small, tmp_path):
    expr, lab, _ = small
    rel = tmp_path / "rel.txt"
    rel.write_text("G0\nG1\nNOT_A_GENE\n")
    out = tmp_path / "o"
    r = run(
        [
            "rank",
            str(expr),
            "--labels",
            str(lab),
            "--relevant-genes",
            str(rel),
            "--aggregate",
            "em",
            "-o",
            str(out),
        ]
    )
    assert r.exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["aggregation"]["info"]["n_G"] == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rankers", "fishr"], "did you mean 'fisher'"),
        (["--rankers", "fisher,laplacian", "--param", "laplacian.kk=3"], "kk"),
        (["--param", "nonsense"], "NAME.KEY=VALUE"),
        (["--rankers", "fisher,laplacian", "--param", "laplacian.k=abc"], "must be an int"),
    ],
)
def test_bad_options_exit_2_with_one_line(small, tmp_path, args, needle):
    expr, lab, _ = small
    out = tmp_path / "never"
    r = CliRunner().invoke(main, ["rank", str(expr), "--labels", str(lab), "-o", str(out), *args])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.count("\n") == 0 and needle in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--frobnicate", "rank", "x"], "No such option '--frobnicate'"),
        (["--log-file"], "'--log-file' requires an argument"),
        (["--log-file", "{tmp}", "rank", "x"], "is a directory"),
        (["-q"], "Missing command"),
    ],
)
def test_bad_options_of_kofs_itself_exit_2_with_one_line(tmp_path, args, needle):
    # they printed click's usage line, a hint and the error (three lines and a blank)
    r = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args], prog_name="kofs")
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("kofs: error: ") and needle in err, err
    assert err.endswith("(see 'kofs --help')")
    r = CliRunner().invoke(main, [], prog_name="kofs")  # `kofs` alone still shows the help
    assert "Usage: kofs [OPTIONS] COMMAND" in r.output


def test_fisher_without_labels_is_a_clear_error(small, tmp_path):
    expr, _, _ = small
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--rankers", "fisher", "-o", str(tmp_path / "x")]
    )
    assert r.exit_code == 2
    assert "--labels" in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"gene\tS1\tS2\n",
        b"\x1f\x8b\x08garbage",
        b"gene\tS1\tS2\nG1\t1\tfoo\nG2\t3\t4\n",
        bytes(range(256)) * 4,
    ],
    ids=["empty", "header-only", "bad-gzip", "non-numeric", "random-bytes"],
)
def test_bad_expression_files(tmp_path, content):
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(content)
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["rank", str(bad), "-o", str(out)])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert "bad.tsv" in err and err.count("\n") == 0 and "Traceback" not in err
    assert not out.exists()


def test_missing_file(tmp_path):
    r = CliRunner().invoke(main, ["rank", str(tmp_path / "nope.tsv"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "nope.tsv" in r.stderr


def test_output_path_that_is_a_file(small, tmp_path):
    expr, _, _ = small
    target = tmp_path / "file.txt"
    target.write_text("x")
    r = CliRunner().invoke(main, ["rank", str(expr), "-o", str(target)])
    assert r.exit_code == 2 and "file.txt" in r.stderr
    assert target.read_text() == "x"


def test_gzip_input_and_stdin(small, tmp_path):
    expr, lab, genes = small
    gz = tmp_path / "e.tsv.gz"
    gz.write_bytes(gzip.compress(expr.read_bytes()))
    a = run(["rank", str(gz), "--rankers", "variance", "-o", "-"])
    b = CliRunner().invoke(
        main, ["rank", "-", "--rankers", "variance", "-o", "-"], input=expr.read_bytes()
    )
    assert a.exit_code == 0 and b.exit_code == 0
    assert a.stdout == b.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["aggregate", "-", "-"],
        ["aggregate", "a=-", "b=-"],
        ["aggregate", "-", "--relevant-genes", "-"],
        ["rank", "-", "--labels", "-", "--rankers", "variance"],
    ],
)
def test_stdin_given_twice_says_it_can_be_read_once(tmp_path, small, args):
    """The second input given as - found standard input empty ('<stdin>: file is empty')."""
    expr, _, _ = small
    text = expr.read_bytes() if args[0] == "rank" else b"G1\nG2\nG3\n"
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "o")], input=text)
    assert r.exit_code == 2, r.stderr
    assert r.stderr == (
        "kofs: error: <stdin>: standard input can be read only once, and another input given "
        "as - has read it; save this one to a file and give its path\n"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_run_config_reproduces_rank(small, tmp_path):
    expr, lab, _ = small
    out1 = tmp_path / "o1"
    assert (
        run(["rank", str(expr), "--labels", str(lab), "-o", str(out1), "--seed", "3"]).exit_code
        == 0
    )
    out2 = tmp_path / "o2"
    r = run(["run", str(out1 / "config.resolved.yaml"), "-o", str(out2)])
    assert r.exit_code == 0, r.output
    assert (out1 / "ranking.tsv").read_bytes() == (out2 / "ranking.tsv").read_bytes()


def test_run_config_relative_paths_and_unknown_keys(small, tmp_path):
    expr, lab, _ = small
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        f"expression: {expr.name}\nlabels: {lab.name}\nrankers: fisher,variance\noutput: res\n"
    )
    r = run(["run", str(cfg)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "res" / "ranking.tsv").is_file()
    cfg.write_text(f"expression: {expr.name}\nlabel-colum: group\n")
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 2 and "did you mean 'label-column'" in r.stderr
    cfg.write_text("expression: !!python/object/apply:os.system ['echo hi']\n")
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 2 and "tags are not allowed" in r.stderr
    cfg.write_text(f"expression: {expr.name}\nseed: abc\n")
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 2 and "seed" in r.stderr


@pytest.mark.slow
def test_demo_runs(tmp_path):
    out = tmp_path / "demo"
    r = run(["demo", "-o", str(out), "--top", "0"])
    assert r.exit_code == 0, r.output
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert len(ranking) > 1000 and np.isfinite(ranking["score"]).all()


def test_gosim_output_checked_before_work(tmp_path):
    from kofs.datasets.example import example_paths

    p = example_paths()
    r = CliRunner().invoke(
        main,
        [
            "gosim",
            "--go",
            p["go"],
            "--go-annotations",
            p["go_annotations"],
            "--genes",
            p["relevant_genes"],
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 2 and "is a folder" in r.stderr


def test_parameter_of_a_ranker_without_parameters(small):
    expr, _, _ = small
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--rankers", "variance", "--param", "variance.x=1", "-o", "-"]
    )
    assert r.exit_code == 2 and "there is none to set" in r.stderr


def test_a_file_name_that_is_not_utf8_is_written_and_read_back(small, tmp_path):
    """A Latin-1 file name (or any non-ASCII name under LC_ALL=C without UTF-8 mode) reaches
    Python as lone surrogates, which UTF-8 cannot encode: the run writes its folder (the
    manifest and the resolved config keep the exact path as escapes, the tables show "?"),
    and `kofs run` of that config finds the file again."""
    expr, _, _ = small
    try:
        odd = tmp_path / os.fsdecode(b"lat\xe9")
        odd.mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    data = odd / "expr.tsv"
    data.write_bytes(expr.read_bytes())
    lists = odd / os.fsdecode(b"l\xe9.tsv")  # a list named after its file
    lists.write_text("gene\tscore\nG0\t3\nG1\t2\nG2\t1\n")
    other = odd / "other.tsv"
    other.write_text("gene\tscore\nG0\t3\nG2\t2\nG1\t1\n")
    out = tmp_path / "out"
    assert run(["rank", str(data), "--rankers", "variance", "-o", str(out)]).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["inputs"]["expression"]["path"] == str(data)
    assert (
        run(["run", str(out / "config.resolved.yaml"), "-o", str(tmp_path / "again")]).exit_code
        == 0
    )
    assert (tmp_path / "again" / "ranking.tsv").read_bytes() == (out / "ranking.tsv").read_bytes()
    (out / "report.html").read_text(encoding="utf-8")  # valid UTF-8
    agg = tmp_path / "agg"
    r = run(
        [
            "aggregate",
            f"{lists}:score:desc",
            f"{other}:score:desc",
            "--aggregate",
            "borda",
            "-o",
            str(agg),
        ]
    )
    assert r.exit_code == 0, r.output
    header = (agg / "ranking.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith("rank:l?\tscore:l?\trank:other\tscore:other")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["rank", "E", "--go", "-", "--go-annotations", "E"], "--go"),
        (["rank", "E", "--go", "E", "--go-annotations", "-"], "--go-annotations"),
        (["rank", "E", "--pathways", "-"], "--pathways"),
        (["rank", "E", "--pathways", "E", "--kegg-names", "-"], "--kegg-names"),
        (["rank", "E", "--interactions", "-"], "--interactions"),
        (["rank", "E", "--interactions", "E", "--string-aliases", "-"], "--string-aliases"),
        (["rank", "E", "--graph", "-"], "--graph"),
        (["gosim", "--go", "-", "--go-annotations", "E", "--genes", "E", "-o", "-"], "--go"),
        (["evaluate", "E", "E", "--labels", "E", "--go", "-", "--go-annotations", "E"], "--go"),
    ],
)
def test_an_option_that_cannot_read_stdin_says_so(small, tmp_path, args, flag):
    # `--go -` said "-: GO ontology file not found; check the --go path", `--interactions -`
    # "-: file not found", `--graph -` asked for a --graph-format: - was taken for a file name
    expr, _, _ = small
    args = [str(expr) if a == "E" else a for a in args]
    out = [] if "-o" in args else ["-o", str(tmp_path / "o")]
    r = CliRunner().invoke(main, [*args, *out], input="G1\nG2\n")
    assert r.exit_code == 2, r.output
    assert r.stderr == f"kofs: error: {flag}: cannot read standard input (-); give a file path\n"
    assert not (tmp_path / "o").exists()
    r = CliRunner().invoke(main, ["rank", str(expr), "--cache-dir", "-", "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--cache-dir: - is no folder here" in r.stderr


def test_the_inputs_that_read_stdin_still_do(small, tmp_path):
    expr, lab, genes = small
    go = os.path.join(os.path.dirname(__file__), "data", "go")
    r = CliRunner().invoke(main, ["rank", str(expr), "--relevant-genes", "-", "--rankers",
                                  "variance", "-o", str(tmp_path / "a")], input="G1\nG2\nG3\n")  # fmt: skip
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main,
        ["gosim", "--go", os.path.join(go, "tiny.obo"), "--go-annotations",
         os.path.join(go, "tiny_annotations.tsv"), "--genes", "-", "-o", "-"],
        input="G1\nG2\nG3\n",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].split("\t") == ["gene", "G1", "G2", "G3"]


def test_known_genes_read_from_stdin(small, tmp_path):
    # --known-genes k=- said "-: known-gene file for 'k' not found; check the path", while
    # every other list of kofs evaluate reads standard input
    expr, lab, _ = small
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--rankers", "variance", "-o", str(tmp_path / "r")]
    )
    assert r.exit_code == 0, r.output
    args = ["evaluate", str(tmp_path / "r"), str(expr), "--labels", str(lab), "--known-genes",
            "k=-", "--folds", "2", "--repeats", "1", "--classifiers", "1nn", "--top", "5",
            "-o", str(tmp_path / "e")]  # fmt: skip
    r = CliRunner().invoke(main, args, input="G1\nG2\nG3\n")
    assert r.exit_code == 0, r.output
    assert "HIT_k" in (tmp_path / "e" / "evaluation.tsv").read_text()


def test_an_error_in_standard_input_names_it_stdin(small, tmp_path):
    # the readers name - "<stdin>", but an error raised with the path as given said
    # "-:1 (column 2): relevance 'x' is not a number"
    expr, _, _ = small
    r = CliRunner().invoke(
        main,
        ["rank", str(expr), "--term-relevance", "-", "-o", str(tmp_path / "o")],
        input="term\trelevance\nGO:0000001\tx\n",
    )
    assert r.exit_code == 2
    assert r.stderr.startswith("kofs: error: <stdin>:2 (column 2): relevance 'x' is not a number")


def test_demo_to_stdout_warns_of_no_option_it_was_not_given(monkeypatch, tmp_path):
    """`kofs demo -o -` said "--title '...' has no effect: -o - writes ranking.tsv only" of the
    title the demo sets itself (`kofs demo` has no --title)."""
    import kofs.cli.rank
    from kofs.pipeline.write import _warn_report_options

    seen = []

    def execute(config, named):  # the demo's run, up to its check of the report's options
        seen.append(config)
        _warn_report_options(config)

    monkeypatch.setattr(kofs.cli.rank, "execute", execute)
    r = CliRunner().invoke(main, ["demo", "-o", "-"])
    assert r.exit_code == 0, r.output
    assert seen and "no effect" not in r.stderr and "--title" not in r.stderr
    CliRunner().invoke(main, ["demo", "-o", str(tmp_path / "demo")])  # a folder: the title
    assert seen[-1].output.title.startswith("kofs demo:")
