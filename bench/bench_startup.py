"""Start-up time of the command line: ``kofs --version`` and ``kofs --help`` (best of 7 runs of
a fresh interpreter; target < 0.3 s: command modules import numpy/pandas/scipy lazily)."""

from __future__ import annotations

import subprocess
import sys
import time


def _best(args: list[str], repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kofs", *args], capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def run() -> list[dict]:
    return [
        {"benchmark": f"kofs {arg} (fresh interpreter, best of 7)", "value": _best([arg]),
         "unit": "s", "target": 0.3, "note": ""}
        for arg in ("--version", "--help")
    ]  # fmt: skip
