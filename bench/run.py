"""Run every benchmark module ``bench/bench_*.py`` and print one table.

Each module defines ``run() -> list[dict]``; a row has keys ``benchmark`` (what was measured),
``value`` (number), ``unit``, and optionally ``target`` (a number, the upper limit for the value)
and ``note``. Run with ``make bench`` or ``python bench/run.py [NAME ...]``; ``--json FILE``
also saves the rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE))
    sys.modules[path.stem] = mod  # dataclasses look their module up while it is executed
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "names",
        nargs="*",
        help="only these modules: a name given whole (single_cell or bench_single_cell) selects "
        "that module, else every module whose name contains it",
    )
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    failed = 0
    paths = sorted(HERE.glob("bench_*.py"))
    short = {p.stem: p.stem.removeprefix("bench_") for p in paths}

    def wanted(path: Path) -> bool:
        for n in args.names:
            whole = [q for q in paths if n in (q.stem, short[q.stem])]
            if (whole and path in whole) or (not whole and n in path.stem):
                return True
        return False

    for path in paths:
        if args.names and not wanted(path):
            continue
        t0 = time.perf_counter()
        print(f"# {path.stem} ...", file=sys.stderr, flush=True)
        try:
            for row in load(path).run():
                row.setdefault("module", path.stem)
                rows.append(row)
        except Exception:  # a broken benchmark is reported, the others still run
            failed += 1
            traceback.print_exc()
            rows.append(
                {"module": path.stem, "benchmark": "FAILED", "value": float("nan"), "unit": ""}
            )
        print(f"#   {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    header = (
        f"{'module':<18} {'benchmark':<58} {'value':>12} {'unit':<6} {'target':>9} {'ok':<3} note"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        tgt = r.get("target")
        val = r["value"]
        ok = "" if tgt is None else ("yes" if val <= tgt else "NO")
        tgt_s = "" if tgt is None else f"{tgt:g}"
        val_s = f"{val:.4g}" if isinstance(val, float) else str(val)
        print(
            f"{r['module']:<18} {r['benchmark']:<58} {val_s:>12} {r.get('unit', ''):<6} {tgt_s:>9} {ok:<3} {r.get('note', '')}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
