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
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "run" in names, f"{path.name} has no run(): make bench would report it FAILED"


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
