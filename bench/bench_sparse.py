"""Sparse-representation rankers on the real ALL matrix (128 samples x 8,562 genes).

Each ranker runs in a fresh process (``run_child``) with ``n_jobs=2`` where it has that
parameter; the reported time is that of the ranker call alone (data loading excluded), the
memory the child's peak RSS. Because the machine may be shared, the CPU seconds of the child
and its workers divided by 2 are also reported: the wall time the run would take on 2 idle
cores. Targets: sparsity-score and sps under 60 s, fssi under 5 min, on
2 cores. The machine may be shared with other jobs while this runs: compare the figures with
the load average printed in the note.
"""

from __future__ import annotations

import os

from _util import run_child

CASES = [
    ("sparsity-score", {"n_jobs": 2}, 60.0),
    ("sps", {}, 60.0),
    ("fssi", {"n_jobs": 2}, 300.0),
]

CHILD = """
import sys, time, json
sys.path.insert(0, {bench!r})
from _util import all_expression
from kofs.rankers import run_ranker
X = all_expression()
t0 = time.perf_counter()
r = run_ranker({name!r}, X, params={params!r})
dt = time.perf_counter() - t0
from joblib.externals.loky import get_reusable_executor
get_reusable_executor().shutdown(wait=True)  # so that the workers' CPU time is counted
import resource
cpu = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for f in ("ru_utime", "ru_stime"))
order = sorted(range(X.n_genes), key=lambda j: r.ranks[j])[:5]
print(json.dumps({{"seconds": dt, "cpu": cpu, "top": [X.genes[j] for j in order], "info": r.info}}, default=str))
"""


def run() -> list[dict]:
    import json

    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for name, params, target in CASES:
        load = os.getloadavg()[0]
        _, peak, out = run_child(CHILD.format(bench=here, name=name, params=params))
        res = json.loads(out.strip().splitlines()[-1])
        note = (
            f"ALL 128x8562, {params or 'serial'}, load avg {load:.1f}; top: {', '.join(res['top'])}"
        )
        if name == "fssi":
            info = res["info"]
            note += f"; explicit solves {info['explicit_solves']}/{info['problems']}"
        rows.append(
            {
                "benchmark": f"{name} on ALL (time)",
                "value": round(res["seconds"], 2),
                "unit": "s",
                "target": target,
                "note": note,
            }
        )
        rows.append(
            {
                "benchmark": f"{name} on ALL (CPU time / 2 cores)",
                "value": round(res["cpu"] / 2, 2),
                "unit": "s",
                "target": None,
                "note": "process + worker CPU seconds (incl. data loading) / 2: the wall "
                "time on 2 otherwise idle cores",
            }
        )
        rows.append(
            {
                "benchmark": f"{name} on ALL (peak RSS)",
                "value": round(peak, 1),
                "unit": "MB",
                "target": None,
                "note": "child process, incl. data loading",
            }
        )
    return rows
