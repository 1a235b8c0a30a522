"""kofs.resources: sizes, estimates, the limit check, and --max-memory end to end."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import ParameterError, ResourceError
from kofs.pipeline.rank import rank
from kofs.rankers import RANKERS, estimate_ranker
from kofs.rankers.multivariate import estimate_mcsf, estimate_mrsf
from kofs.resources import (
    check_memory,
    default_memory_limit,
    estimate_dense_similarity,
    estimate_expression_file,
    estimate_go_all_pairs,
    estimate_knn_graph,
    estimate_mahalanobis,
    format_size,
    parse_size,
    resolve_limit,
    total_memory,
)
from kofs.types import Expression


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("4G", 4 * 2**30),
        ("512M", 512 * 2**20),
        ("1.5GB", 3 * 2**29),
        ("2GiB", 2 * 2**30),
        ("100k", 102400),
        ("1000000", 1000000),
        (" 3 t ", 3 * 2**40),
        ("1e3", 1000),
        (2048, 2048),
    ],
)
def test_parse_size(text, nbytes):
    assert parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["", "G", "4x", "-1G", "0", "0.1", "four", "1..2G", True, "inf"])
def test_parse_size_rejects(text):
    with pytest.raises(ParameterError, match="--max-memory") as e:
        parse_size(text)
    assert "\n" not in str(e.value)


def test_format_size():
    assert format_size(512) == "512 B"
    assert format_size(3 * 2**20 + 2**19) == "3.5 MB"
    assert format_size(3 * 2**29) == "1.50 GB"


def test_total_memory_reads_meminfo_and_cgroup(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:  1 kB\n")
    nocg = tmp_path / "absent"
    assert total_memory(meminfo=meminfo, cgroup=nocg) == 16000000 * 1024
    cg = tmp_path / "memory.max"
    cg.write_text("max\n")
    assert total_memory(meminfo=meminfo, cgroup=cg) == 16000000 * 1024
    cg.write_text("1073741824\n")  # a 1 GiB container inside a 16 GB machine
    assert total_memory(meminfo=meminfo, cgroup=cg) == 2**30
    assert default_memory_limit(meminfo=meminfo, cgroup=cg) == int(0.8 * 2**30)


def test_default_limit_on_this_machine():
    limit = default_memory_limit()
    assert limit is None or 0 < limit < total_memory()
    assert resolve_limit(None) == limit
    assert resolve_limit("1M") == 2**20
    assert resolve_limit(12345) == 12345
    with pytest.raises(ParameterError):
        resolve_limit(0)


def test_check_memory_message():
    check_memory(10, limit=None, what="x", suggestion="y")  # no limit: no check
    check_memory(10, limit=10, what="x", suggestion="y")  # equal is fine
    with pytest.raises(ResourceError) as e:
        check_memory(
            3 * 2**30, limit=2**30, what="expression similarity", suggestion="use a kNN graph"
        )
    msg = str(e.value)  # the step, what it needs, the limit and its option, the way out
    for part in ("expression similarity", "3.00 GB", "--max-memory", "1.00 GB", "use a kNN graph"):
        assert part in msg, msg
    assert e.value.exit_code == 2


def test_estimates_scale_as_documented():
    # dense n x n: quadratic in n, 4 float64 copies by default
    assert estimate_dense_similarity(1000) == 4 * 8 * 10**6
    assert estimate_dense_similarity(2000) == 4 * estimate_dense_similarity(1000)
    # the exact Mahalanobis path adds 5 dense m x m arrays to the scalable one
    sc = estimate_mahalanobis(100, 5000, nnz=50000)
    ex = estimate_mahalanobis(100, 5000, nnz=50000, method="exact")
    assert ex - sc == 5 * 8 * 5000**2
    assert sc == 2 * 8 * 100 * 5000 + 2 * 12 * (50000 + 5000) + 3 * 8 * 100**2
    # GO all pairs: quadratic in genes
    assert estimate_go_all_pairs(8562) > 2 * 8 * 8562**2 - 1
    assert estimate_go_all_pairs(8562, itemsize=4) < estimate_go_all_pairs(8562)
    # kNN graph: linear in n for a fixed block
    a, b, c = (estimate_knn_graph(n, 50, k=10) for n in (10**5, 2 * 10**5, 3 * 10**5))
    assert c - b == b - a == 10**5 * (4 * 12 * 10 + 8 * 50)
    assert estimate_mrsf(100, 1000, l=10, n_targets=2) > 2 * 8 * 100 * 1000
    assert estimate_mcsf(100, 1000, l=10) == 3 * 8 * 100 * 1000 + 8 * 100**2 + 8 * 100 * 10
    # rankers: a univariate ranker holds ~2 copies of X, a graph ranker adds the n x n kernel
    assert estimate_ranker("variance", 100, 1000) == 2 * 8 * 100 * 1000
    x2 = 2 * 8 * 100 * 1000
    assert (
        estimate_ranker("spec-phi2", 100, 1000, params={"similarity": "auto"})
        == x2 + 3 * 8 * 100**2
    )
    assert estimate_ranker(
        "spec-phi2", 100, 1000, params={"similarity": "auto"}, given_similarity="sparse"
    ) == x2 + estimate_knn_graph(100, 1000)
    assert estimate_ranker(
        "spec-phi2", 5000, 10, params={"similarity": "auto"}
    ) == 2 * 8 * 5000 * 10 + estimate_knn_graph(5000, 10)
    assert estimate_ranker(
        "laplacian", 100, 1000, params={"graph": "auto", "k": 5}
    ) == x2 + estimate_knn_graph(100, 1000, k=5)
    assert (
        estimate_ranker("laplacian", 100, 1000, params={"graph": "auto"}, given_similarity="dense")
        == x2 + 3 * 8 * 100**2
    )
    assert estimate_ranker("mrsf", 100, 1000, params={"l": 5000}) == estimate_mrsf(
        100, 1000, l=1000
    )
    # SPEC's kNN graph uses `neighbors` (spec-phi3's `k` is its number of clusters)
    assert estimate_ranker(
        "spec-phi3", 5000, 10, params={"similarity": "knn", "neighbors": 7}
    ) == 2 * 8 * 5000 * 10 + estimate_knn_graph(5000, 10, k=7)
    # (the estimate once read spec-phi3's k=None as the kNN size and failed with a TypeError)
    assert estimate_ranker(
        "spec-phi3", 5000, 10, params={"similarity": "knn"}
    ) == 2 * 8 * 5000 * 10 + estimate_knn_graph(5000, 10, k=5)


def test_every_ranker_has_an_estimate_from_its_registry_entry():
    for spec in RANKERS:
        need = spec.estimate_memory(200, 500)
        assert need >= 2 * 8 * 200 * 500, spec.name
        assert need == estimate_ranker(spec.name, 200, 500)


def test_estimate_expression_file(tmp_path):
    plain = tmp_path / "x.tsv"
    text = "gene\tS1\n" + "".join(f"G{i}\t{i}.5\n" for i in range(2000))
    plain.write_text(text)
    assert estimate_expression_file(plain) == 4 * len(text.encode())
    gz = tmp_path / "x.tsv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    assert estimate_expression_file(gz) == 4 * len(text.encode())  # from the gzip trailer
    assert estimate_expression_file("-") is None
    assert estimate_expression_file(tmp_path / "absent") is None
    assert estimate_expression_file(tmp_path) is None


def _tall(rng, n=2000, m=20) -> Expression:
    return Expression(
        rng.normal(size=(n, m)),
        genes=[f"G{j}" for j in range(m)],
        samples=[f"S{i}" for i in range(n)],
    )


def test_pipeline_fails_early_above_the_limit(rng):
    expr = _tall(rng)  # 2000 samples: a dense 2000 x 2000 similarity is ~96-128 MB
    with pytest.raises(
        ResourceError,
        match=r"step list spec-phi1 \(spec-phi1\) needs ~.* MB, "
        r"above --max-memory 20.0 MB; use a sparser similarity",
    ):
        rank(expr, rankers=["variance", "spec-phi1"], max_memory=20 * 2**20)
    # the same run within a generous limit works, and the limit does not change its result
    res = rank(expr, rankers=["variance"], max_memory=20 * 2**20)
    free = rank(expr, rankers=["variance"])
    assert res.final.genes == free.final.genes
    np.testing.assert_array_equal(res.final.scores, free.final.scores)
    assert res.final.top(1) == [expr.genes[int(np.argmax(expr.values.var(axis=0)))]]


def test_pipeline_checks_the_knowledge_similarity(rng):
    from kofs.sources import KnowledgeSources

    expr = _tall(rng, n=1500, m=10)
    aux = _tall(np.random.default_rng(1), n=1500, m=5)
    with pytest.raises(ResourceError, match="step auxiliary data .*similarity \\(1500 samples\\)"):
        rank(
            expr,
            sources=KnowledgeSources({"aux": (aux,)}),
            lists=["AUX-SPEC"],
            max_memory=30 * 2**20,
        )


def _write_tall(path, rng, n=2000, m=20):
    X = rng.normal(size=(m, n))
    lines = ["gene\t" + "\t".join(f"S{i}" for i in range(n))]
    lines += [f"G{j}\t" + "\t".join(f"{v:.3f}" for v in X[j]) for j in range(m)]
    path.write_text("\n".join(lines) + "\n")


def test_cli_max_memory_fails_early_with_one_line(tmp_path, rng):
    expr = tmp_path / "tall.tsv"
    _write_tall(expr, rng)
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--rankers", "spec-phi2", "--max-memory", "40M", "-o", str(out)]
    )
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("kofs: error: step list spec-phi2 (spec-phi2) needs ~")
    assert "above --max-memory 40.0 MB" in lines[0] and "spec-phi2.similarity=knn" in lines[0]
    assert not out.exists()
    # the suggestion works: a sparse kNN graph fits
    r = CliRunner().invoke(
        main,
        [
            "rank",
            str(expr),
            "--rankers",
            "spec-phi2",
            "--param",
            "spec-phi2.similarity=knn",
            "--max-memory",
            "40M",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert (out / "ranking.tsv").is_file()


def test_cli_max_memory_reading_step(tmp_path, rng):
    expr = tmp_path / "tall.tsv"
    _write_tall(expr, rng, n=300, m=20)
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--max-memory", "10K", "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1
    assert f"step reading {expr} needs ~" in r.stderr
    r = CliRunner().invoke(
        main, ["rank", str(expr), "--max-memory", "lots", "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 2 and "--max-memory 'lots'" in r.stderr
    assert not (tmp_path / "o").exists()


def test_config_max_memory_key(tmp_path, rng):
    expr = tmp_path / "tall.tsv"
    _write_tall(expr, rng)
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"expression: {expr}\nrankers: spec-phi2\nmax-memory: 40M\n")
    r = CliRunner().invoke(main, ["run", str(cfg), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert "above --max-memory 40.0 MB" in r.stderr and r.stderr.count("\n") == 1
    # the command line overrides the config
    r = CliRunner().invoke(
        main, ["run", str(cfg), "--max-memory", "1G", "-o", str(tmp_path / "out")]
    )
    assert r.exit_code == 0, r.stderr
    assert "max-memory: 1G" in (tmp_path / "out" / "config.resolved.yaml").read_text()


def test_gosim_max_memory(tmp_path):
    from pathlib import Path

    go = Path(__file__).parent / "data" / "go"
    genes = tmp_path / "genes.txt"
    genes.write_text("".join(f"G{i}\n" for i in range(1, 3001)))
    out = tmp_path / "sim.tsv"
    args = [
        "gosim",
        "--go",
        str(go / "tiny.obo"),
        "--go-annotations",
        str(go / "tiny.gaf"),
        "--genes",
        str(genes),
        "-o",
        str(out),
    ]
    r = CliRunner().invoke(main, [*args, "--max-memory", "50M"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("kofs: error: step all-pairs GO similarity of 3000 genes needs ~")
    assert not out.exists()
    genes.write_text("G1\nG2\nG3\n")
    r = CliRunner().invoke(main, [*args, "--max-memory", "100M"])
    assert r.exit_code == 0, r.stderr
    assert out.read_text().startswith("gene\t")


def _many_samples(tmp_path, n=3001, m=12):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, m))
    X[: n // 2, 0] += 3.0  # one gene splits the samples in two clusters
    path = tmp_path / "m.tsv"
    lines = ["gene\t" + "\t".join(f"s{i}" for i in range(n))]
    lines += [f"g{j}\t" + "\t".join(f"{v:.6g}" for v in X[:, j]) for j in range(m)]
    path.write_text("\n".join(lines) + "\n")
    return X, path


@pytest.mark.slow
def test_more_than_3000_samples_run(tmp_path):
    """Above 3,000 samples SPEC switches to a kNN graph; the memory check used to crash on
    spec-phi3's k=None (number of clusters) taken for the number of neighbours."""
    X, path = _many_samples(tmp_path)
    expr = Expression(X, [f"g{j}" for j in range(X.shape[1])], [f"s{i}" for i in range(3001)])
    res = rank(expr, rankers=["spec-phi3"], max_memory="8G")
    assert res.lists[0].top(1) == ["g0"]
    res = rank(expr, max_memory="8G")  # the default plan
    assert {r.name for r in res.lists} >= {"laplacian", "spec-phi3"}
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["rank", str(path), "--rankers", "spec-phi3", "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert (out / "ranking.tsv").read_text().splitlines()[1].split("\t")[0] == "g0"
