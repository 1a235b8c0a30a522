"""Start-up time of the command line: ``kofs --version``, ``kofs --help`` (target < 0.3 s) and
``kofs rank --help`` (target < 0.5 s; its options come from every knowledge plug-in), best of
7 runs of a fresh interpreter. The note gives the child's CPU time (user + sys), which is what
the wall time is on an idle machine: on a loaded one the wall time also counts the waits for a
core. Command modules and plug-ins import numpy/scipy/pandas lazily (tests/test_cli_startup.py
checks which modules each help loads)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

TARGETS = {("--version",): 0.3, ("--help",): 0.3, ("rank", "--help"): 0.5}


def _best(args: tuple[str, ...], repeat: int = 7) -> tuple[float, float]:
    """(best wall seconds, CPU seconds of that run)."""
    best, cpu = float("inf"), float("nan")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kofs", *args], capture_output=True, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if wall < best:
            best = wall
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return best, cpu


def run() -> list[dict]:
    rows = []
    for args, target in TARGETS.items():
        wall, cpu = _best(args)
        rows.append({"benchmark": f"kofs {' '.join(args)} (fresh interpreter, best of 7)",
                     "value": wall, "unit": "s", "target": target,
                     "note": f"CPU {cpu:.2f} s"})  # fmt: skip
    return rows
