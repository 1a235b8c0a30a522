"""Claims the README makes about results and installation are checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _demo_claim() -> tuple[int, list[str]]:
    """``its top N genes ... include A, B and C`` of the README's demo sentence."""
    text = " ".join(README.split())
    m = re.search(r"`kofs demo` runs .*? its top (\d+) genes .*? include ([^—.]+)", text)
    assert m, "the README's sentence about the demo's top genes is gone or reworded"
    genes = re.split(r",\s*|\s+and\s+", m.group(2).strip())
    return int(m.group(1)), [g.strip() for g in genes if g.strip()]


@pytest.mark.slow
def test_readme_demo_top_genes_are_the_demos():
    import kofs
    from kofs.datasets.example import example_config

    n, claimed = _demo_claim()
    assert len(claimed) >= 3
    res = kofs.run(example_config())
    symbols = res.symbols or {}
    top = [symbols.get(g, g) for g in res.final.top(n)]
    missing = [g for g in claimed if g not in top]
    assert not missing, f"README claims {missing} in the demo's top {n}; it is {top}"


def test_install_lines_work_from_a_clone():
    """kofs is not on the package index: an extra is installed from the clone
    (``pip install -e '.[sc]'``), in every message and document that names one."""
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    files += sorted((REPO / "kofs").rglob("*.py"))
    bad = []
    for path in files:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"kofs\[\w+\]", line):
                bad.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not bad, "install lines that cannot work (kofs is not published):\n" + "\n".join(bad)
    assert "pip install -e '.[sc]'" in README


@pytest.mark.slow
def test_readme_python_runs_as_written():
    """The README's "Ten lines of Python" run as they stand (on the bundled example) and give
    the columns the README's "Reading the results" explains."""
    blocks = re.findall(r"^```python\n(.*?)\n```", README, flags=re.S | re.M)
    assert blocks, "the README's Python example is gone"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    result = namespace["result"]
    top = result.top(10)
    for column in ("posterior", "lfdr", "q_value", "data_posterior"):
        assert column in top.columns and f"`{column}`" in README, column
    weights = result.weights_frame()
    assert {"weight", "ci_low", "ci_high"} <= set(weights.columns)
    assert abs(float(weights["weight"].sum()) - 1) < 1e-6  # "the weights sum to 1"
