"""The sample-structure test (parallel analysis) and what the fusion does with it: a matrix
without structure gives its unsupervised lists nothing to find."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from kofs.aggregate import aggregate
from kofs.cli import main
from kofs.datasets.planted import planted_lists
from kofs.errors import ParameterError
from kofs.pipeline.rank import rank
from kofs.pipeline.structure import label_association_test, sample_structure_test
from kofs.types import Expression, SampleCategories


def _expression(X) -> Expression:
    n, m = X.shape
    return Expression(
        values=X, genes=tuple(f"g{i}" for i in range(m)), samples=tuple(f"s{j}" for j in range(n))
    )


def _noise(seed: int, n: int = 40, m: int = 1500) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, m))


def _two_groups(seed: int, n: int = 40, m: int = 1500) -> np.ndarray:
    X = _noise(seed, n, m)
    X[: n // 2, :150] += 1.5  # 150 genes separate two groups of samples
    return X


def test_noise_has_no_structure_and_groups_have():
    p_noise = [sample_structure_test(_expression(_noise(s)))["p_value"] for s in range(8)]
    assert np.mean(np.array(p_noise) < 0.05) <= 0.25 and np.median(p_noise) > 0.2
    for s in range(3):
        test = sample_structure_test(_expression(_two_groups(s)), seed=s)
        assert test["p_value"] < 1e-6
        assert test["statistic"] > test["null_mean"] + 20 * test["null_sd"]
    # seeded: the same value twice; the genes are a seeded subset beyond MAX_GENES
    big = _expression(_noise(0, 30, 1600))
    a, b = sample_structure_test(big, seed=4), sample_structure_test(big, seed=4)
    assert a == b and a["genes"] == 1000


@pytest.mark.parametrize(
    "X",
    [
        sp.csr_matrix(_noise(0)),  # sparse: not tested
        _noise(0, 3, 100),  # too few samples
        np.where(np.eye(40, 1500, dtype=bool), np.nan, _noise(0)),  # missing values
        np.ones((40, 1500)),  # no gene varies
    ],
)
def test_the_test_steps_aside_where_it_cannot_run(X):
    assert sample_structure_test(_expression(X)) is None


@pytest.mark.slow
def test_rank_calls_nothing_on_a_matrix_without_structure():
    """Without labels the default plan's lists (variance, Laplacian, SPEC) agree on pure noise
    because they read the same noise; the sample-structure test says so and no gene is called
    (before it: 24-112 genes at q <= 0.10 on 60 x 3,000 matrices)."""
    for seed in (0, 2):
        result = rank(_expression(_noise(seed, 60, 3000)))
        test = result.final.diagnostics["signal_test"]
        assert test["p_value"] > 0.05 and 0 < test["no_signal_probability"] <= 1
        assert not np.any(result.final.statistics["q_value"] <= 0.10)
        assert any("no structure beyond noise" in n for n in result.final.diagnostics["notices"])
    # with structure the test is far beyond noise and leaves the fusion as it was
    structured = rank(_expression(_two_groups(1, 60, 3000)))
    assert structured.final.diagnostics["signal_test"]["p_value"] < 1e-6
    assert structured.final.diagnostics["signal_test"]["no_signal_probability"] < 1e-4


def _halves(n: int, rng=None) -> SampleCategories:
    labels = ["ab"[j >= n // 2] for j in range(n)]
    if rng is not None:
        labels = list(rng.permutation(labels))
    return SampleCategories(samples=tuple(f"s{j}" for j in range(n)), labels=tuple(labels))


PLAN = ["variance", "fisher", "laplacian", "spec-phi2", "spec-phi3"]


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_labels_unrelated_to_the_values_call_nothing(seed):
    """With labels the lists (Fisher, the graph rankers on the labels' similarity) agree on
    noise when the labels are unrelated to the values (before: 29 and 72 genes at q <= 0.10 in
    two of four such matrices); the global test of the labels says so. The default labelled
    plan (the calibrated Fisher list alone) calls nothing either: its p-values are uniform."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3000))
    labels = _halves(60, rng)
    result = rank(_expression(X), labels=labels, rankers=PLAN)
    test = result.final.diagnostics["signal_test"]
    assert test["name"].startswith("label association") and test["p_value"] > 0.05
    assert not np.any(result.final.statistics["q_value"] <= 0.10)
    assert any("labels explain no more" in n for n in result.final.diagnostics["notices"])
    alone = rank(_expression(X), labels=labels).final
    assert [n for n, w in zip(alone.list_names, alone.weights, strict=True) if w > 0] == ["fisher"]
    assert not np.any(alone.statistics["q_value"] <= 0.10)
    # one list, labels given: its notices spoke of 'the data lists', 'their agreement', 'each
    # list counting equally', and advised giving labels (--labels)
    said = " ".join(alone.diagnostics["notices"])
    assert "labels explain no more" in said and "no relevant class in fisher" in said
    for words in ("data lists", "their agreement", "counting equally", "--labels"):
        assert words not in said, words


def test_labels_that_are_the_groups_are_far_beyond_permuted_labels():
    X = _two_groups(0, 40, 600)
    test = rank(_expression(X), labels=_halves(40), rankers=PLAN).final.diagnostics["signal_test"]
    assert test["p_value"] < 1e-6 and test["statistic"] > 4 * test["null_mean"]


def test_label_association_test_is_calibrated_on_random_labels():
    ps = []
    for s in range(40):
        rng = np.random.default_rng(100 + s)
        e = _expression(rng.normal(size=(30, 400)))
        labels = SampleCategories(
            samples=e.samples, labels=tuple(str(c) for c in rng.integers(0, 3, 30))
        )
        ps.append(label_association_test(e, labels, seed=s)["p_value"])
    assert 0.3 < np.median(ps) < 0.7 and np.mean(np.array(ps) < 0.05) <= 0.15


def test_aggregate_takes_an_outside_signal_test():
    pl = planted_lists(seed=3)
    fit_only = {"resamples": 0}  # the intervals do not enter the q-values
    called = aggregate(pl.rankings, seed=0, params=fit_only)
    assert np.sum(called.statistics["q_value"] <= 0.10) > 5
    null = aggregate(
        pl.rankings, seed=0, params=fit_only, signal_test={"p_value": 0.6, "summary": "Nothing"}
    )
    assert not np.any(null.statistics["q_value"] <= 0.10)
    assert np.array_equal(null.order(), called.order())  # the ranking does not change
    assert null.diagnostics["signal_test"]["p_value"] == 0.6
    assert any(n.startswith("Nothing (p = 0.6)") for n in null.diagnostics["notices"])
    strong = aggregate(pl.rankings, seed=0, params=fit_only, signal_test={"p_value": 1e-30})
    np.testing.assert_array_equal(strong.statistics["q_value"], called.statistics["q_value"])
    with pytest.raises(ParameterError, match="p_value"):
        aggregate(pl.rankings, signal_test={"p_value": "high"})
    with pytest.raises(ParameterError, match="signal test"):
        aggregate(pl.rankings, "borda", signal_test={"p_value": 0.5})


def test_cli_rank_reports_the_structure_test(tmp_path):
    X = _noise(1, 30, 400)
    path = tmp_path / "noise.tsv"
    rows = ["gene\t" + "\t".join(f"s{j}" for j in range(30))]
    rows += [f"g{i}\t" + "\t".join(f"{v:.6f}" for v in X[:, i]) for i in range(400)]
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["rank", str(path), "-o", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    manifest = (out / "manifest.json").read_text()
    assert '"signal_test"' in manifest and "no structure beyond noise" in manifest


def test_kofs_aggregate_takes_a_given_signal_p(tmp_path):
    """`kofs aggregate --signal-p P` and `kofs.aggregate_lists(..., signal_p=P)`: an outside
    test of the experiment the lists come from; a p-value outside [0, 1] is a usage error."""
    from kofs.pipeline.user_lists import aggregate_lists

    pl = planted_lists(seed=3)
    specs = []
    for r in pl.rankings:
        path = tmp_path / f"{r.name}.tsv"
        rows = ["gene\tscore", *(f"{g}\t{s}" for g, s in zip(r.genes, r.scores, strict=True))]
        path.write_text("\n".join(rows) + "\n")
        specs.append(f"{path}:score:desc")
    fit_only = {"resamples": 0}  # the intervals do not enter the q-values
    free = aggregate_lists(specs, aggregate_param=fit_only)
    given = aggregate_lists(specs, aggregate_param=fit_only, signal_p=0.6)
    assert np.sum(free.final.statistics["q_value"] <= 0.10) > 5
    assert not np.any(given.final.statistics["q_value"] <= 0.10)
    assert given.final.diagnostics["signal_test"]["p_value"] == 0.6
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main,
        [
            "aggregate",
            *specs,
            "-o",
            str(out),
            "--signal-p",
            "0.6",
            "--aggregate-param",
            "resamples=0",
        ],
    )
    assert res.exit_code == 0, res.output
    assert '"signal_test"' in (out / "manifest.json").read_text()
    bad = CliRunner().invoke(
        main, ["aggregate", *specs, "-o", str(tmp_path / "b"), "--signal-p", "2"]
    )
    assert bad.exit_code == 2 and "--signal-p" in bad.output
    assert not (tmp_path / "b").exists()


def test_a_small_design_is_not_tested_by_label_permutations():
    """3 vs 3 samples have 10 distinct relabellings: no permutation p-value can be small, so
    the label test steps aside and the fusion's calls stay (a common bulk design)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 800))
    X[:3, :60] += 4.0
    e, labels = _expression(X), _halves(6)
    assert label_association_test(e, labels) is None
    result = rank(e, labels=labels)
    assert result.final.diagnostics.get("signal_test") is None
    assert np.sum(result.final.statistics["q_value"] <= 0.10) > 0
    assert label_association_test(_expression(rng.normal(size=(14, 800))), _halves(14))


def test_a_lone_fisher_list_on_correlated_genes_is_read_with_the_label_test():
    """The default labelled plan is the calibrated Fisher list alone, read through its F test's
    theoretical null. On correlated genes one permutation's p-values are uniform gene by gene
    but spread wider or narrower over the genes, and a wide spread reads as a class of many
    small shifts: before the label-association test also read a lone data list, this matrix
    (three factors, labels unrelated to them) gave 140 genes at q <= 0.10 (real ALL with
    permuted labels: calls in 18 of 120 runs, bench/bench_null_calibration.py)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3)) @ (rng.normal(size=(3, 2000)) * 1.2)
    X += rng.normal(size=(60, 2000))
    result = rank(_expression(X), labels=_halves(60, rng)).final
    assert result.diagnostics["signal_test"]["name"].startswith("label association")
    assert not np.any(result.statistics["q_value"] <= 0.10)
