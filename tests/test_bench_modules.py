"""`make bench` (bench/run.py) runs every bench/bench_*.py: each must define ``run()``, and the
loader must import modules that declare dataclasses (bench_fusion's scenarios)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
MODULES = sorted(BENCH.glob("bench_*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_every_benchmark_module_defines_run(path):
    tree = ast.parse(path.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "run" in funcs, f"{path.name} has no run(): make bench would report it FAILED"
    # the runner calls run() without arguments (a module's own run(scn, v, seeds) was one)
    args = funcs["run"].args
    assert len(args.args) == len(args.defaults), f"{path.name}: run() needs arguments"
    assert all(d is not None for d in args.kw_defaults), f"{path.name}: run() needs arguments"


def test_the_runner_loads_a_module_with_dataclasses():
    spec = importlib.util.spec_from_file_location("bench_runner", BENCH / "run.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    try:
        mod = runner.load(BENCH / "bench_fusion.py")
        assert callable(mod.run) and mod.SCENARIOS
    finally:
        sys.modules.pop("bench_fusion", None)
        if str(BENCH) in sys.path:
            sys.path.remove(str(BENCH))


@pytest.mark.slow
def test_the_null_calibration_runs_on_a_users_own_matrix(tmp_path, capsys):
    """``bench_null_calibration.py --own``: true labels, permuted labels and resampled genes,
    each a ``kofs rank`` process, summed up in one table."""
    import numpy as np

    spec = importlib.util.spec_from_file_location("bench_null", BENCH / "bench_null_calibration.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(0)
    values = rng.normal(size=(300, 16))
    values[:20, :8] += 4.0  # 20 genes higher in group a
    samples = [f"s{i}" for i in range(16)]
    expr = tmp_path / "expr.tsv"
    expr.write_text(
        "gene\t"
        + "\t".join(samples)
        + "\n"
        + "".join(
            f"g{i}\t" + "\t".join(f"{v:.4f}" for v in row) + "\n" for i, row in enumerate(values)
        )
    )
    labels = tmp_path / "labels.tsv"
    labels.write_text("sample\tgroup\n" + "".join(f"s{i}\t{'ab'[i >= 8]}\n" for i in range(16)))
    rows = mod.own_table(expr, labels, "group", [1])
    by_case = {r["case"]: r for r in rows}
    assert set(by_case) == {"own true", "own perm", "own resampled, no labels"}
    assert by_case["own true"]["calls"] >= 15 and by_case["own true"]["bh"] >= 15
    assert by_case["own resampled, no labels"]["bh"] == -1
    assert "| own true | 1 | 1 |" in capsys.readouterr().out
