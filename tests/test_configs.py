"""Every shipped example config in configs/ validates and runs (outputs redirected)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kofs.cli import main

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
EXAMPLES = [
    pytest.param(p, marks=pytest.mark.slow)  # each a full run on the bundled example (~10 s)
    for p in sorted(CONFIGS.glob("*_example.yaml"))
] + [CONFIGS / "expression_only.yaml"]


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: Path(p).stem)
@pytest.mark.slow
def test_example_config_runs(config, tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["run", str(config), "-o", str(out)])
    assert r.exit_code == 0, r.output
    ranking = pd.read_csv(out / "ranking.tsv", sep="\t")
    assert ranking["rank"].iloc[0] == 1 and len(ranking) == 1549
    assert (out / "config.resolved.yaml").is_file()
