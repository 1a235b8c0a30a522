"""ReliefF, trace ratio, HSIC, MRSF and MCSF on the real ALL data (128 x 8,562, B/T lineage).

Targets: each univariate ranker under 10 s; MRSF and MCSF selecting 50 genes under 60 s
(supervised with the lineage labels, and unsupervised with the RBF sample similarity).
Wall times are in-process on a machine shared with other jobs.
"""

from __future__ import annotations

from _util import all_expression, all_labels, timed

from kofs.rankers import run_ranker
from kofs.types import RankerInputs

CASES = [
    ("relieff", {}, True, 10.0),
    ("trace-ratio", {}, True, 10.0),
    ("hsic", {}, True, 10.0),
    ("mrsf", {"l": 50}, True, 60.0),
    ("mcsf", {"l": 50}, True, 60.0),
    ("mcsf", {"l": 50, "early_stop": False}, True, 60.0),
    ("mrsf", {"l": 50, "target": "rbf"}, False, 60.0),
    ("mcsf", {"l": 50, "target": "rbf"}, False, 60.0),
]


def run() -> list[dict]:
    expr = all_expression()
    labels = all_labels("lineage")
    rows = []
    for name, params, supervised, target in CASES:
        inputs = RankerInputs(categories=labels) if supervised else RankerInputs()
        secs, r = timed(run_ranker, name, expr, inputs, params=params)
        extra = ""
        if "order" in r.info:
            extra = f"; {len(r.info['order'])} selected"
        if "path_steps" in r.info:
            extra += f", {r.info['path_steps']} path steps, {r.info['agd_calls']} AGD calls"
        mode = "labels" if supervised else "rbf"
        if params.get("early_stop") is False:
            mode += ", early_stop=false"
        rows.append(
            {
                "benchmark": f"{name} ({mode}) on ALL 128x8562",
                "value": secs,
                "unit": "s",
                "target": target,
                "note": f"top: {', '.join(r.top(3))}{extra}",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
