"""Whole-process time of bulk runs: kofs now, the first release, and the floor, in one table.

Run ``python bench/bench_bulk.py`` (options: ``--sizes small,medium,large``, ``--repeat N``,
``--no-first-release``, ``--data DIR``, ``--baseline DIR``); ``python bench/run.py bulk`` gives
the headline rows with their targets.

For each size a seeded synthetic gzip TSV of log expression (genes in rows, Ensembl-like ids,
70 % zeros as in single-cell data, other values ``log2(1 + gamma)`` written with 6 significant
digits) is made once in ``--data`` (default ``$TMPDIR/kofs-bench-bulk``); the large one has the
shape of issue 25's public single-cell set, 271 samples x 47,192 genes. Every figure is the wall
time of a fresh process, and the variants run one after another in each round (alternating, so
that a change of machine load hits them alike); the table gives the median over the rounds.
The kofs trees are byte-compiled first and the children may write bytecode (as an installed
copy has it), whatever ``PYTHONDONTWRITEBYTECODE`` says.

* ``pandas``: ``pandas.read_csv(FILE, sep="\\t", index_col=0)``;
* ``pyarrow``: ``pyarrow.csv.read_csv(FILE)`` (tab-delimited); ``arrow read`` is the import of
  ``pyarrow.csv`` and the read call, without the interpreter's start;
* ``kofs read``: ``kofs.io.expression.read_expression(FILE)`` in a process set up as the
  ``kofs`` command sets it up (its allocator settings, :func:`kofs.__main__._command_allocators`);
  ``kofs read call`` is the call alone (it imports pyarrow itself);
* ``kofs first`` / ``kofs second``: ``kofs rank FILE --rankers spec-phi2,laplacian -o OUT``
  (report included) with empty on-disk caches (numba's ``NUMBA_CACHE_DIR``, kofs's
  ``KOFS_CACHE_DIR``), then again with the caches the first run left;
* ``first release``: the same command on the code of the first commit that could run
  ``kofs rank`` (:data:`FIRST_RELEASE`), extracted with ``git archive`` into a scratch
  directory outside the repository;
* ``baseline`` (with ``--baseline DIR``): the same command as ``kofs second`` on the kofs
  sources in ``DIR`` (e.g. a worktree of ``main``), in the same rounds: the change measured
  side by side with the code it replaces;
* ``rank --help``: ``kofs rank --help``.

``--stages`` prints instead where the time of one ``kofs rank`` of the large size goes: the run
(:func:`kofs.pipeline.run.run`, then :func:`kofs.pipeline.write.write_result`) under cProfile in a fresh
process, the cumulative seconds of its stages (reading, each ranker, the fusion, the report, the
ranking table) and of the imports, read off the profile by function name.

Ratios: ``now/release`` = kofs second / first release; ``now/pandas`` = kofs second / pandas;
``read/arrow`` = kofs read call / pyarrow read call; ``1st/2nd`` = kofs first / kofs second.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: ``kofs rank`` appeared in db624c5, but that commit and the next ones stopped at a missing
#: module (kofs.io.genes, kofs.io.output); 5bb9b0b is the first commit on which
#: ``kofs rank FILE --rankers spec-phi2,laplacian`` runs.
FIRST_RELEASE = "5bb9b0b"
SIZES = {"small": (40, 2_000), "medium": (120, 12_000), "large": (271, 47_192)}
RANKERS = "spec-phi2,laplacian"


def make_matrix(path: Path, n_samples: int, n_genes: int, *, seed: int = 25) -> Path:
    """Write the seeded synthetic matrix (byte-identical for the same arguments)."""
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".part")
    with gzip.GzipFile(tmp, "wb", compresslevel=6, mtime=0) as fh:
        fh.write(("gene\t" + "\t".join(f"cell_{i:03d}" for i in range(n_samples)) + "\n").encode())
        for start in range(0, n_genes, 2000):
            stop = min(n_genes, start + 2000)
            x = rng.gamma(0.8, 40.0, size=(stop - start, n_samples))
            keep = rng.random(x.shape) < 0.3
            rows = []
            for j in range(stop - start):
                values = np.log2(1 + x[j])
                cells = (f"{v:.6g}" if k else "0" for v, k in zip(values, keep[j], strict=True))
                rows.append(f"ENSG{start + j:011d}\t" + "\t".join(cells))
            fh.write(("\n".join(rows) + "\n").encode())
    tmp.rename(path)
    return path


def first_release_tree(scratch: Path) -> Path | None:
    """The first release's sources (``git archive``) under ``scratch``, or None without git."""
    tree = scratch / f"kofs-{FIRST_RELEASE}"
    if (tree / "kofs").is_dir():
        return tree
    tree.mkdir(parents=True, exist_ok=True)
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", FIRST_RELEASE],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


_TIMED = """
import sys, time
t0 = time.perf_counter()
{body}
print("CALL", time.perf_counter() - t0)
"""


def _child(
    code: str, *, env: dict | None = None, cwd: Path | None = None
) -> tuple[float, float, float]:
    """(wall seconds of a fresh interpreter running ``code``, the seconds it printed as CALL,
    its CPU seconds: user + sys, which on a loaded machine do not count the waits for a core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip()[-1500:]}")
    call = [float(x.split()[1]) for x in proc.stdout.splitlines() if x.startswith("CALL ")]
    return wall, call[-1] if call else float("nan"), cpu


def _env(pythonpath: Path, caches: Path | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    # as installed: with bytecode (PYTHONDONTWRITEBYTECODE made every child compile the ~150
    # kofs modules from source, 0.25-0.4 s of CPU that no installed copy pays)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if caches is not None:
        env.update(NUMBA_CACHE_DIR=str(caches / "numba"), KOFS_CACHE_DIR=str(caches / "kofs"))
    return env


def _rank_code(path: Path, out: Path, entry: str) -> str:
    args = ["rank", str(path), "--rankers", RANKERS, "-o", str(out)]
    return f"import sys\nsys.argv = ['kofs', *{args!r}]\n{entry}"


_NOW = "from kofs.__main__ import entry\nentry()"
_OLD = "from kofs.cli import main\nsys.exit(main())"


def measure(
    path: Path, *, rounds: int, release: Path | None, work: Path, baseline: Path | None = None
) -> dict[str, list]:
    """Alternating rounds of every variant on ``path``; each value a list over the rounds
    (``KEY cpu``: the CPU seconds of the same runs)."""
    now = _env(ROOT)
    times: dict[str, list] = {}

    def add(key, wall, cpu):
        times.setdefault(key, []).append(wall)
        times.setdefault(f"{key} cpu", []).append(cpu)

    for r in range(rounds):
        code = f"import pandas as pd\npd.read_csv({str(path)!r}, sep='\\t', index_col=0)"
        wall, _, cpu = _child(code, env=now, cwd=work)
        add("pandas", wall, cpu)
        wall, call, cpu = _child(
            "import time\nt1 = time.perf_counter()\nimport pyarrow.csv as c\n"
            f"c.read_csv({str(path)!r}, parse_options=c.ParseOptions(delimiter='\\t'))\n"
            "print('CALL', time.perf_counter() - t1)",
            env=now,
            cwd=work,
        )
        add("pyarrow", wall, cpu)
        times.setdefault("arrow read", []).append(call)
        wall, call, cpu = _child(
            "import time\nfrom kofs.__main__ import _command_allocators\n_command_allocators()\n"
            "from kofs.io.expression import read_expression\n"
            f"t1 = time.perf_counter()\nread_expression({str(path)!r})\n"
            "print('CALL', time.perf_counter() - t1)",
            env=now,
            cwd=work,
        )
        add("kofs read", wall, cpu)
        times.setdefault("kofs read call", []).append(call)
        caches = work / f"caches-{r}"
        shutil.rmtree(caches, ignore_errors=True)
        for key in ("kofs first", "kofs second"):
            out = work / f"out-{key.split()[1]}"
            shutil.rmtree(out, ignore_errors=True)
            wall, _, cpu = _child(_rank_code(path, out, _NOW), env=_env(ROOT, caches), cwd=work)
            add(key, wall, cpu)
        if baseline is not None:
            out = work / "out-baseline"
            shutil.rmtree(out, ignore_errors=True)
            wall, _, cpu = _child(_rank_code(path, out, _NOW), env=_env(baseline, caches), cwd=work)
            add("baseline", wall, cpu)
        if release is not None:
            out = work / "out-release"
            shutil.rmtree(out, ignore_errors=True)
            wall, _, cpu = _child(_rank_code(path, out, _OLD), env=_env(release), cwd=work)
            add("first release", wall, cpu)
    return times


def help_times(rounds: int, work: Path) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of ``kofs rank --help`` in fresh interpreters."""
    code = "import sys\nsys.argv = ['kofs', 'rank', '--help']\n" + _NOW
    runs = [_child(code + "\n", env=_env(ROOT), cwd=work) for _ in range(rounds)]
    return [(wall, cpu) for wall, _, cpu in runs]


COLUMNS = ("pandas", "pyarrow", "arrow read", "kofs read", "kofs read call", "kofs first",
           "kofs second", "baseline", "first release")  # fmt: skip


CPU_COLUMNS = ("pandas", "pyarrow", "kofs read", "kofs first", "kofs second", "baseline",
               "first release")  # fmt: skip


def cpu_table(results: dict[str, dict[str, list]]) -> str:
    """Median CPU seconds (user + sys) of the same runs."""
    head = (f"{'CPU s':<8}" + "".join(f"{c:>15}" for c in CPU_COLUMNS) + f"{'now/release':>13}"
            + f"{'now/pandas':>12}{'now/base':>10}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for size, t in results.items():
        med = {k: statistics.median(v) for k, v in t.items()}
        cells = "".join(
            f"{med[c + ' cpu']:>14.2f}s" if c + " cpu" in med else f"{'-':>15}" for c in CPU_COLUMNS
        )
        now = med.get("kofs second cpu", math.nan)
        rel = now / med.get("first release cpu", math.nan)
        lines.append(
            f"{size:<8}{cells}{rel:>13.2f}{now / med['pandas cpu']:>12.2f}"
            f"{now / med.get('baseline cpu', math.nan):>10.2f}"
        )
    return "\n".join(lines)


def table(results: dict[str, dict[str, list]], shapes: dict[str, tuple[int, int]]) -> str:
    head = (f"{'size':<8}{'shape':>15}" + "".join(f"{c:>15}" for c in COLUMNS)
            + f"{'now/release':>13}{'now/pandas':>12}{'now/base':>10}{'read/arrow':>12}"
            + f"{'1st/2nd':>9}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for size, t in results.items():
        med = {k: statistics.median(v) for k, v in t.items()}
        cells = "".join(f"{med[c]:>14.2f}s" if c in med else f"{'-':>15}" for c in COLUMNS)
        rel = med["kofs second"] / med["first release"] if "first release" in med else float("nan")
        lines.append(
            f"{size:<8}{'{} x {}'.format(*shapes[size]):>15}{cells}{rel:>13.2f}"
            f"{med['kofs second'] / med['pandas']:>12.2f}"
            f"{med['kofs second'] / med.get('baseline', math.nan):>10.2f}"
            f"{med['kofs read call'] / med['arrow read']:>12.2f}"
            f"{med['kofs first'] / med['kofs second']:>9.2f}"
        )
    return "\n".join(lines)


def run_all(
    sizes, *, rounds, data: Path, with_release: bool, log=print, baseline: Path | None = None
):
    work = Path(tempfile.mkdtemp(prefix="kofs-bench-bulk-"))
    try:
        release = first_release_tree(data) if with_release else None
        if with_release and release is None:
            log("# git archive failed: the first-release column is left out")
        for tree in (ROOT, baseline, release):
            if tree is not None:  # bytecode written once, before the timed runs
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "kofs")],
                               env=_env(tree), check=False, capture_output=True)  # fmt: skip
        results, shapes = {}, {}
        for size in sizes:
            n, m = SIZES[size]
            path = make_matrix(data / f"bulk_{n}x{m}.tsv.gz", n, m)
            log(f"# {size}: {n} samples x {m} genes ({path.stat().st_size / 1e6:.1f} MB gzip), "
                f"{rounds} rounds")  # fmt: skip
            results[size] = measure(
                path, rounds=rounds, release=release, work=work, baseline=baseline
            )
            shapes[size] = (n, m)
        helps = help_times(max(rounds, 5), work)
        return results, shapes, helps
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _load() -> str:
    try:
        return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def run() -> list[dict]:
    """Headline rows for ``bench/run.py``: the large size, 3 rounds."""
    data = Path(
        os.environ.get("KOFS_BENCH_BULK_DATA", Path(tempfile.gettempdir()) / "kofs-bench-bulk")
    )
    data.mkdir(parents=True, exist_ok=True)
    results, _, helps = run_all(["large"], rounds=3, data=data, with_release=True,
                                log=lambda s: print(s, file=sys.stderr))  # fmt: skip
    med = {k: statistics.median(v) for k, v in results["large"].items()}
    note = f"271 x 47,192 gzip TSV, median of 3 alternating rounds; {_load()}"
    rows = [
        {"benchmark": "kofs rank spec-phi2,laplacian, 271 x 47,192 (second run)",
         "value": med["kofs second"], "unit": "s", "note": note},
        {"benchmark": "  / pandas.read_csv of the same file (fresh process)",
         "value": med["kofs second"] / med["pandas"], "unit": "ratio", "target": 2.0},
        {"benchmark": "  read_expression call / pyarrow read_csv call",
         "value": med["kofs read call"] / med["arrow read"], "unit": "ratio", "target": 1.5},
        {"benchmark": "  first run (empty caches) / second run",
         "value": med["kofs first"] / med["kofs second"], "unit": "ratio", "target": 1.2},
        {"benchmark": "kofs rank --help (fresh process, median)",
         "value": statistics.median(w for w, _ in helps), "unit": "s", "target": 0.5,
         "note": f"CPU {statistics.median(c for _, c in helps):.2f} s"},
    ]  # fmt: skip
    if "first release" in med:
        rows.insert(1, {"benchmark": f"  / first release ({FIRST_RELEASE}), same command",
                        "value": med["kofs second"] / med["first release"], "unit": "ratio",
                        "target": 1.0})  # fmt: skip
    return rows


_STAGES = """
import cProfile, pstats, sys, time
t0 = time.perf_counter()
from kofs.pipeline.config import as_config
from kofs.pipeline.write import write_result
from kofs.pipeline.run import run
imports = time.perf_counter() - t0
cfg = as_config({{"expression": {path!r}, "rankers": {rankers!r}, "output": {out!r}}})
prof = cProfile.Profile()
t1 = time.perf_counter()
prof.enable()
write_result(run(cfg))
prof.disable()
total = time.perf_counter() - t1
stats = pstats.Stats(prof).stats
def cum(name):
    hits = [v[3] for (f, _, fn), v in stats.items() if fn == name and "kofs" in f]
    return (max(hits) if hits else float("nan")), len(hits)
print("STAGE imports (kofs.pipeline.run, kofs.pipeline.write and what they load)", imports)
for name, label in {stages!r}:
    print("STAGE", label, cum(name)[0])
print("STAGE whole run (profiled)", total)
"""
#: (function, label) of the stages ``--stages`` reports.
STAGES = (
    ("read_expression", "reading the matrix (read_expression)"),
    ("run_ranker", "the rankers (run_ranker, all calls: the Gram matrix, graphs, scores)"),
    ("build_lists", "the lists (build_lists: the rankers and their checks)"),
    ("aggregate", "fusion (kofs.aggregate.aggregate)"),
    ("run_report_html", "report.html"),
    ("write_ranking", "ranking.tsv"),
    ("write_result", "all output files (write_result, report included)"),
)


def stages(path: Path, work: Path) -> list[tuple[str, float]]:
    """(stage, seconds) of one profiled run on ``path`` in a fresh process (see ``--stages``)."""
    code = _STAGES.format(path=str(path), rankers=RANKERS.split(","), out=str(work / "out"),
                          stages=list(STAGES))  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(ROOT), cwd=work)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip()[-1500:]}")
    rows = [
        line[6:].rsplit(" ", 1) for line in proc.stdout.splitlines() if line.startswith("STAGE ")
    ]
    return [(label, float(value)) for label, value in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="small,medium,large")
    ap.add_argument("--repeat", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--no-first-release", action="store_true")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "kofs-bench-bulk")
    ap.add_argument("--stages", action="store_true",
                    help="where one run of the largest size goes (profiled), instead of the table")  # fmt: skip
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another kofs source tree (its folder holding kofs/) run side by side")  # fmt: skip
    args = ap.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "kofs" / "__init__.py").is_file():
        ap.error(f"--baseline {args.baseline}: no kofs/__init__.py in this folder")
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        ap.error(f"unknown size {unknown[0]!r}; sizes are {', '.join(SIZES)}")
    args.data.mkdir(parents=True, exist_ok=True)
    print(f"# {_load()} at the start", flush=True)
    if args.stages:
        n, m = SIZES[sizes[-1]]
        path = make_matrix(args.data / f"bulk_{n}x{m}.tsv.gz", n, m)
        work = Path(tempfile.mkdtemp(prefix="kofs-bench-bulk-"))
        try:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "kofs")],
                           env=_env(ROOT), check=False, capture_output=True)  # fmt: skip
            for _ in range(args.repeat):
                rows = stages(path, work)
                print(f"# {sizes[-1]} ({n} x {m}), {_load()}")
                for label, value in rows:
                    print(f"{value:8.2f} s  {label}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    results, shapes, helps = run_all(
        sizes, rounds=args.repeat, data=args.data, with_release=not args.no_first_release,
        log=lambda s: print(s, flush=True), baseline=args.baseline,
    )  # fmt: skip
    print(table(results, shapes))
    print()
    print(cpu_table(results))
    walls, cpus = [w for w, _ in helps], [c for _, c in helps]
    print(f"\nkofs rank --help: wall median {statistics.median(walls):.2f} s (best "
          f"{min(walls):.2f} s), CPU median {statistics.median(cpus):.2f} s, {len(helps)} runs")  # fmt: skip
    print(f"# {_load()} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
