"""Crash safety of output folders, proved by killing real processes at random points.

Invariant checked after every kill: OUT holds one complete run (its marker valid, every file
of one and the same run, nothing of another run) -- or, only where the atomic swap is
unavailable, is briefly absent with the previous complete run kept in ``.OUT.old-*``. The next
run removes whatever the killed one left. Kill times are seeded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _lines import one_line

from kofs.io import output_folder
from kofs.io.output_folder import MARKER, atomic_dir, check_complete, read_marker

pytestmark = pytest.mark.crash  # every test kills or stops processes (full tier)


def _publish_forever(out: Path, k: int) -> None:
    """Publish generation after generation into ``out`` as fast as possible: even generations
    have weights.tsv, odd ones do not; every file holds the generation number."""
    while True:
        k += 1
        _publish_one(out, k)


def _publish_one(out: Path, k: int) -> None:
    with atomic_dir(out) as tmp:
        names = ["ranking.tsv", "manifest.json"] + (["weights.tsv"] if k % 2 == 0 else [])
        for name in names:
            (tmp / name).write_text(f"{k}\n" * 3000)
        (tmp / "figures").mkdir()
        (tmp / "figures" / "f.txt").write_text(f"{k}\n")


def _generation(folder: Path) -> int:
    """The one generation ``folder`` holds, checking it is complete and unmixed."""
    check_complete(folder)
    marker = read_marker(folder)
    files = sorted(marker["files"])
    values = {(folder / f).read_text().split("\n", 1)[0] for f in files}
    assert len(values) == 1, values  # every file from one run
    k = int(values.pop())
    expected = ["figures/f.txt", "manifest.json", "ranking.tsv"]
    expected += ["weights.tsv"] if k % 2 == 0 else []
    assert files == sorted(expected), (k, files)
    on_disk = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != MARKER
    )
    assert on_disk == files, (k, on_disk)  # nothing of another run beside it
    return k


def _spawn_publisher(out: Path, mode: str, k: int) -> int:
    """A forked process running :func:`_publish_forever` (forked: no start-up cost)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            if mode == "fallback":
                output_folder.exchange = lambda a, b: False
            _publish_forever(out, k)
        finally:
            os._exit(1)
    return pid


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
@pytest.mark.parametrize("mode, kills", [("exchange", 40), ("fallback", 20)])
def test_kill_9_at_random_points_never_leaves_a_mixed_folder(tmp_path, mode, kills):
    rng = np.random.default_rng(15)
    out = tmp_path / "OUT"
    generation = 0
    _publish_one(out, generation)
    published = midway = 0
    for _ in range(kills):
        pid = _spawn_publisher(out, mode, generation)
        time.sleep(float(rng.uniform(0.001, 0.25)))  # a publish takes ~0.1 s (fsyncs)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if out.exists():
            k = _generation(out)
        else:  # only without the atomic swap, and only between its two renames
            assert mode == "fallback"
            old = [p for p in tmp_path.iterdir() if p.name.startswith(".OUT.old-")]
            assert len(old) == 1
            k = _generation(old[0])
        assert k >= generation  # never goes back to an older run
        published += k > generation
        generation = k
        midway += any(p.name.startswith(".OUT.tmp-") for p in tmp_path.iterdir())
    assert published >= 3  # the kills did land while runs were publishing (not all before)
    assert midway >= 3  # ... and in the middle of writing or publishing one
    with atomic_dir(out) as tmp:  # the next run cleans what the killed ones left
        (tmp / "ranking.tsv").write_text("final\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT"]


def _matrix(path: Path) -> Path:
    rng = np.random.default_rng(0)
    n, m = 16, 60
    v = rng.normal(size=(m, n))
    rows = ["gene\t" + "\t".join(f"S{i}" for i in range(n))]
    rows += [f"G{j}\t" + "\t".join(f"{x:.4f}" for x in v[j]) for j in range(m)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _default_sigint() -> None:
    # a shell without job control starts background jobs with Ctrl-C ignored: undo that
    signal.signal(signal.SIGINT, signal.SIG_DFL)


KOFS_RANK = [sys.executable, "-m", "kofs", "rank"]


def _kofs(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kofs", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
        **kw,
    )


def _state(out: Path) -> str | None:
    """'em' or 'borda' (complete and unmixed), or None if absent."""
    if not out.exists():
        return None
    check_complete(out)
    names = sorted(p.name for p in out.iterdir())
    if "weights.tsv" in names:
        assert names == [MARKER, "config.resolved.yaml", "manifest.json", "ranking.tsv",
                         "report.html", "weights.tsv"]  # fmt: skip
        method = "em"
    else:
        assert names == [
            MARKER,
            "config.resolved.yaml",
            "manifest.json",
            "ranking.tsv",
            "report.html",
        ]
        method = "borda"
    assert f"aggregate: {method}" in (out / "config.resolved.yaml").read_text()
    assert f'"method": "{method}"' in (out / "manifest.json").read_text()
    return method


def test_cli_runs_killed_or_stopped_at_random_points(tmp_path):
    """kill -9, SIGTERM and Ctrl-C sent to `kofs rank` at random points (seeded)."""
    rng = np.random.default_rng(1515)
    expr = _matrix(tmp_path / "x.tsv")
    out = tmp_path / "OUT"
    base = ["rank", str(expr), "--rankers", "variance,laplacian", "-o", str(out)]
    t0 = time.perf_counter()
    first = _kofs(*base, "--aggregate", "em")
    assert first.wait() == 0, first.stderr.read()
    first.stderr.close()
    duration = time.perf_counter() - t0
    state = _state(out)
    for sig in [signal.SIGKILL, signal.SIGTERM, signal.SIGINT]:
        method = "borda" if state == "em" else "em"
        # what a run killed before left (its lock file, its temporary folder) until a run
        # claims the folder and cleans it: a run stopped before its claim leaves it as it was
        before = {p.name for p in tmp_path.iterdir() if p.name.startswith(".")}
        proc = _kofs(*base, "--aggregate", method)
        time.sleep(float(rng.uniform(0.3, 1.1)) * duration)
        proc.send_signal(sig)
        code = proc.wait()
        err = proc.stderr.read()
        proc.stderr.close()
        now = _state(out)
        assert now in (state, method)
        if sig != signal.SIGKILL and code != 0:
            # the one line; exit 130/143; no temporary folder left (unless killed before
            # the handlers were installed: then the signal's own default applies)
            assert code in (130, 143, -sig), (code, err)
            if code > 0:
                assert code == (143 if sig == signal.SIGTERM else 130)
                assert len(err.splitlines()) == 1, err
                what = "terminated" if sig == signal.SIGTERM else "interrupted"
                tail = "nothing was written" if now == state else "had been written completely"
                assert err.startswith(f"kofs: {what}; ") and tail in err, err
                leftovers = [
                    p.name
                    for p in tmp_path.iterdir()
                    if p.name.startswith(".") and p.name not in before
                ]
                assert leftovers == [], leftovers
        state = now
    with atomic_dir(out) as tmp:  # the next run cleans what a killed run left
        (tmp / "ranking.tsv").write_text("x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT", "x.tsv"]


def test_two_runs_into_one_folder(tmp_path):
    """One wins whole, the other fails at once with one line."""
    expr = _matrix(tmp_path / "x.tsv")
    out = tmp_path / "OUT"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom kofs.io.output_folder import claim_output\n"
            "with claim_output(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        r = subprocess.run(
            [*KOFS_RANK, str(expr), "--rankers", "variance", "-o", str(out), "--aggregate", "em"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 2
        one_line(
            r.stderr, str(out), "another kofs run", f"process {holder.pid}", start="kofs: error:"
        )
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    r = subprocess.run(
        [*KOFS_RANK, str(expr), "--rankers", "variance", "-o", str(out), "--aggregate", "em"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    _state(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["OUT", "x.tsv"]
