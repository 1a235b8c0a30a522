"""Output folders published whole (kofs.io.output_folder): the swap, the completion marker,
the lock, stale leftovers, the weaker fallbacks, and the readers that check the marker."""

from __future__ import annotations

import errno
import os
import signal
import threading
import time

import numpy as np
import pytest
from _lines import one_line
from click.testing import CliRunner

from kofs.cli import main
from kofs.errors import InputError, OutputError
from kofs.evaluate.rankfiles import read_rank_output
from kofs.io import _fsops, output_folder
from kofs.io.output_folder import (
    MARKER,
    atomic_dir,
    check_complete,
    claim_output,
    read_marker,
    verify_output_file,
)


def publish(out, files):
    with atomic_dir(out) as tmp:
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)


def entries(folder):
    return sorted(p.name for p in folder.iterdir())


def _expression(path, n=12, m=30, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(m, n))
    v[:3, : n // 2] += 3
    rows = ["gene\t" + "\t".join(f"S{i}" for i in range(n))]
    rows += [f"G{j}\t" + "\t".join(f"{x:.4f}" for x in v[j]) for j in range(m)]
    path.write_text("\n".join(rows) + "\n")
    return path


# ---------------------------------------------------------------- publishing and the marker
def test_publish_replaces_everything_and_writes_the_marker_last(tmp_path):
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "a\n", "weights.tsv": "w\n", "figures/f.txt": "f"})
    marker = read_marker(out)
    assert sorted(marker["files"]) == ["figures/f.txt", "ranking.tsv", "weights.tsv"]
    assert marker["files"]["ranking.tsv"]["bytes"] == 2
    check_complete(out)
    publish(out, {"ranking.tsv": "b\n"})
    assert entries(out) == [MARKER, "ranking.tsv"]  # weights.tsv of the earlier run is gone
    assert entries(tmp_path) == ["out"]  # no temporary folder, no lock file


def test_check_complete_and_verify_output_file(tmp_path):
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "gene\trank\nA\t1\nB\t2\n", "notes.md": "x"})
    verify_output_file(out / "ranking.tsv")
    with open(out / "ranking.tsv", "r+") as fh:  # cut mid-line
        fh.truncate(12)
    with pytest.raises(InputError, match="differs from what kofs wrote"):
        verify_output_file(out / "ranking.tsv")
    with pytest.raises(InputError, match="ranking.tsv is missing or was changed"):
        check_complete(out)
    os.unlink(out / MARKER)
    with pytest.raises(InputError, match=f"has no {MARKER}"):
        check_complete(out)
    verify_output_file(out / "ranking.tsv")  # a plain file outside any output folder: as is
    lone = tmp_path / "ranking.tsv"
    lone.write_text("gene\trank\n")
    verify_output_file(lone)


def test_readers_check_the_marker(tmp_path):
    expr = _expression(tmp_path / "x.tsv")
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main,
        ["rank", str(expr), "--rankers", "variance,laplacian", "--aggregate", "em", "-o", str(out)],
    )
    assert r.exit_code == 0, r.stderr
    assert read_rank_output(out).genes[:1]
    text = (out / "ranking.tsv").read_text()
    rows = text.splitlines(keepends=True)  # an edit that keeps the table whole and its size
    a, b = rows[1].split("\t", 1)[0], rows[2].split("\t", 1)[0]
    assert len(a) == len(b) and a != b
    rows[1], rows[2] = rows[1].replace(a, b, 1), rows[2].replace(b, a, 1)
    (out / "ranking.tsv").write_text("".join(rows))
    with pytest.raises(InputError, match="differs from what kofs wrote"):
        read_rank_output(out / "ranking.tsv")
    with pytest.raises(InputError, match="differs from what kofs wrote"):
        read_rank_output(out)
    (out / "weights.tsv").unlink()
    with pytest.raises(InputError, match="weights.tsv is missing or was changed"):
        read_rank_output(out)
    cfg = out / "config.resolved.yaml"
    assert "\nseed: 0\n" in cfg.read_text()
    cfg.write_text(cfg.read_text().replace("\nseed: 0\n", "\nseed: 3\n"))
    r = CliRunner().invoke(main, ["run", str(cfg), "-o", str(tmp_path / "again")])
    assert r.exit_code == 0, r.stderr  # an edited config is run as it is, with a warning
    first = r.stderr.splitlines()[0]
    assert first.startswith("kofs: WARNING: ") and str(cfg) in first, first
    assert "changed after the run" in first and ".kofs-complete" in first, first


def test_earlier_run_files_do_not_survive(tmp_path):
    expr = _expression(tmp_path / "x.tsv")
    out = tmp_path / "st"
    base = ["rank", str(expr), "--rankers", "variance,laplacian", "-o", str(out), "--aggregate"]
    assert CliRunner().invoke(main, [*base, "em"]).exit_code == 0
    assert (out / "weights.tsv").exists()
    r = CliRunner().invoke(main, [*base, "borda"])
    assert r.exit_code == 0, r.stderr
    assert entries(out) == [
        MARKER,
        "config.resolved.yaml",
        "manifest.json",
        "ranking.tsv",
        "report.html",
    ]
    check_complete(out)


def test_stale_leftovers_of_killed_runs_are_cleaned(tmp_path):
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "1\n"})
    for name in (".out.tmp-0123abcd", ".out.old-89abcdef"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ranking.tsv").write_text("stale")
    (tmp_path / ".out.lock").write_text("999999\n")  # a lock file whose holder died
    keep = [".other.tmp-0123abcd", ".out.tmp-xyz", ".outx"]
    for name in keep:
        (tmp_path / name).mkdir()
    publish(out, {"ranking.tsv": "2\n"})
    assert entries(tmp_path) == sorted([*keep, "out"])


def test_files_kofs_did_not_write_are_never_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputError, match=r"thesis.tex\); a run replaces the whole"):
        publish(out, {"ranking.tsv": "x"})
    assert entries(out) == ["thesis.tex"]
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o750)
    publish(empty, {"ranking.tsv": "x"})
    assert (empty.stat().st_mode & 0o777) == 0o750  # the folder keeps its permissions
    legacy = tmp_path / "legacy"  # kofs's names without a marker (an in-place swap was killed)
    legacy.mkdir()
    (legacy / "ranking.tsv").write_text("old")
    (legacy / "weights.tsv").write_text("old")
    publish(legacy, {"ranking.tsv": "new"})
    assert entries(legacy) == [MARKER, "ranking.tsv"]


def test_files_added_during_the_run_are_not_deleted(tmp_path):
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "1"})
    with pytest.raises(OutputError, match=r"did not write \(notes.txt\)"):
        with atomic_dir(out) as tmp:
            (tmp / "ranking.tsv").write_text("2")
            (out / "notes.txt").write_text("written while kofs ran")
    assert entries(out) == [MARKER, "notes.txt", "ranking.tsv"]
    assert (out / "ranking.tsv").read_text() == "1" and entries(tmp_path) == ["out"]


def test_current_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for target in (".", str(tmp_path.parent)):
        with pytest.raises(OutputError, match="is the current folder"):
            publish(target, {"ranking.tsv": "x"})


# ---------------------------------------------------------------- fallbacks
def test_without_exchange_two_renames(tmp_path, monkeypatch):
    monkeypatch.setattr(output_folder, "exchange", lambda a, b: False)
    monkeypatch.setattr(output_folder, "rename_noreplace", lambda a, b: False)
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "1\n", "weights.tsv": "w\n"})
    publish(out, {"ranking.tsv": "2\n"})
    assert entries(out) == [MARKER, "ranking.tsv"] and entries(tmp_path) == ["out"]
    assert (out / "ranking.tsv").read_text() == "2\n"


@pytest.mark.parametrize("how", ["mount point", "busy"])
def test_in_place_when_the_folder_cannot_be_renamed(tmp_path, monkeypatch, how):
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "1\n", "figures/a.png": "p"})
    if how == "mount point":
        real = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda p: str(p) == str(out) or real(p))
    else:

        def busy(a, b):
            raise OSError(errno.EBUSY, "Device or resource busy", str(a))

        monkeypatch.setattr(output_folder, "exchange", busy)
    publish(out, {"ranking.tsv": "2\n"})
    assert entries(out) == [MARKER, "ranking.tsv"] and entries(tmp_path) == ["out"]
    check_complete(out)


def test_without_file_locks(tmp_path, monkeypatch):
    monkeypatch.setattr(output_folder, "fcntl", None)  # e.g. Windows: publishing still works
    out = tmp_path / "out"
    publish(out, {"ranking.tsv": "1\n", "weights.tsv": "w\n"})
    publish(out, {"ranking.tsv": "2\n"})
    assert entries(out) == [MARKER, "ranking.tsv"] and entries(tmp_path) == ["out"]


def test_exchange_swaps_two_folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "x").write_text("b")
    if not _fsops.exchange(a, b):
        pytest.skip("renameat2(RENAME_EXCHANGE) unavailable here")
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"
    assert _fsops.rename_noreplace(a, tmp_path / "c")
    with pytest.raises(FileExistsError):
        _fsops.rename_noreplace(b, tmp_path / "c")


@pytest.mark.parametrize("why", ["no renameat2", "filesystem refuses", "other failure"])
def test_renameat2_unavailable_is_a_clean_false(tmp_path, monkeypatch, why):
    import ctypes

    def refused(code):
        def fn(a, b, flags):
            ctypes.set_errno(code)
            return -1

        return lambda: fn

    lookup = {
        "no renameat2": lambda: None,
        "filesystem refuses": refused(errno.EINVAL),
        "other failure": refused(errno.EACCES),
    }[why]
    monkeypatch.setattr(_fsops, "_lookup", lookup)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    if why == "other failure":
        with pytest.raises(PermissionError):
            _fsops.exchange(a, b)
    else:
        assert _fsops.exchange(a, b) is False and _fsops.rename_noreplace(a, b) is False


def test_signals_wait_for_the_end_of_the_swap():
    # Python's own Ctrl-C handler, whatever the parent left: a shell without job control
    # starts background jobs with SIGINT ignored, and deferred_signals leaves ignored ones be
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    got = []
    try:
        _interrupted_swap(got)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert got == ["swap finished"]


def _interrupted_swap(got: list[str]) -> None:
    with pytest.raises(KeyboardInterrupt):
        with _fsops.deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            got.append("swap finished")


def test_interrupt_after_publishing_is_not_reported_as_nothing_written(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt) as info:
        with claim_output(out):
            publish(out, {"ranking.tsv": "x"})
            raise KeyboardInterrupt
    assert info.value.kofs_written == [str(out)]
    with pytest.raises(KeyboardInterrupt) as info:
        with claim_output(tmp_path / "other"):
            raise KeyboardInterrupt
    assert not hasattr(info.value, "kofs_written")


# ---------------------------------------------------------------- concurrent runs
def test_second_run_into_the_same_folder_fails_at_once(tmp_path):
    out = tmp_path / "out"
    errors = []
    with claim_output(out):

        def other():
            try:
                publish(out, {"ranking.tsv": "thread"})
            except OutputError as exc:
                errors.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join()
        publish(out, {"ranking.tsv": "main"})  # the claim holder's own writes go through
    assert len(errors) == 1 and "another kofs run (process" in errors[0]
    assert (out / "ranking.tsv").read_text() == "main" and entries(tmp_path) == ["out"]


# ---------------------------------------------------------------- -o checked before any work
@pytest.mark.parametrize(
    "case, says",
    [
        ("dangling", "is a symbolic link to nowhere, which does not exist"),
        ("dangling parent", "cannot be created: {tmp}/gone is a symbolic link to nowhere"),
        ("loop", "is a symbolic link that loops"),
        ("file", "is an existing file"),
        ("link to file", "is an existing file"),
        ("under file", "cannot be created"),
        ("foreign", "holds files that kofs did not write (notes.txt)"),
    ],
)
def test_output_checked_before_any_work(tmp_path, monkeypatch, case, says):
    import kofs.pipeline.rank

    def never(*a, **k):
        raise AssertionError("the run started before the output was checked")

    monkeypatch.setattr(kofs.pipeline.rank, "run_plan", never)
    expr = _expression(tmp_path / "x.tsv")
    afile = tmp_path / "afile"
    afile.write_text("x")
    if case == "dangling":
        out = tmp_path / "link"
        out.symlink_to("nowhere")
    elif case == "dangling parent":
        (tmp_path / "gone").symlink_to("nowhere")
        out = tmp_path / "gone" / "out"
    elif case == "loop":
        out = tmp_path / "loop"
        out.symlink_to(out)
    elif case == "file":
        out = afile
    elif case == "link to file":
        out = tmp_path / "flink"
        out.symlink_to(afile)
    elif case == "under file":
        out = afile / "sub"
    else:
        out = tmp_path / "mine"
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    r = CliRunner().invoke(main, ["rank", str(expr), "--rankers", "variance", "-o", str(out)])
    assert r.exit_code == 2, (r.stderr, r.exception)
    assert r.stderr.splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith(f"kofs: error: {out}: "), r.stderr
    assert says.format(tmp=tmp_path) in r.stderr
    assert ".tmp-" not in r.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("command", ["rank", "run", "aggregate-run", "reproduce"])
@pytest.mark.parametrize("where", ["link", "link/sub"])
def test_relative_output_through_a_dangling_link_is_refused(tmp_path, monkeypatch, command, where):
    """A relative -o (or a config's relative output) through a link to nowhere is refused as an
    absolute one is: made absolute with its links resolved, the link vanished into its target's
    name and the run created the target, writing outside the folder named (was exit 0)."""
    monkeypatch.chdir(tmp_path)
    _expression(tmp_path / "x.tsv")
    (tmp_path / "top.txt").write_text("A\nB\nC\n")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    if command == "rank":
        args = ["rank", "x.tsv", "--rankers", "variance", "--no-report", "-o", where]
    elif command == "run":
        (tmp_path / "c.yaml").write_text(f"expression: x.tsv\nrankers: variance\noutput: {where}\n")
        args = ["run", "c.yaml", "--no-report"]
    elif command == "aggregate-run":
        (tmp_path / "c.yaml").write_text(f"command: aggregate\nlists: [top.txt]\noutput: {where}\n")
        args = ["run", "c.yaml"]
    else:
        (tmp_path / "c.yaml").write_text(
            f"expression: x.tsv\nlabels: x.tsv\nlists: [SPEC]\noutput: {where}\n"
        )
        args = ["reproduce", "c.yaml"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, (r.stderr, r.exception)
    assert one_line(r.stderr) and "is a symbolic link to" in r.stderr, r.stderr
    assert f"{tmp_path / 'link'}" in r.stderr and "target" in r.stderr
    assert not (tmp_path / "target").exists()


def test_symlink_to_a_folder_is_followed(tmp_path):
    real = tmp_path / "scratch" / "results"
    publish(real, {"ranking.tsv": "1"})
    link = tmp_path / "results"
    link.symlink_to(real)
    publish(link, {"ranking.tsv": "2"})
    assert link.is_symlink() and (real / "ranking.tsv").read_text() == "2"
    assert entries(tmp_path / "scratch") == ["results"]


# ---------------------------------------------------------------- signals through the CLI
def test_sigterm_mid_run_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    import kofs.pipeline.rank

    real = kofs.pipeline.build.run_plan

    def stopped(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler of `kofs` raises in the main thread
        time.sleep(1)
        return real(*a, **k)

    monkeypatch.setattr(kofs.pipeline.rank, "run_plan", stopped)
    expr = _expression(tmp_path / "x.tsv")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["rank", str(expr), "--rankers", "variance", "-o", str(out)])
    assert r.exit_code == 143
    one_line(r.stderr, "terminated", "nothing was written")
    assert entries(tmp_path) == ["x.tsv"]
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)  # restored


def test_interrupt_after_publishing_says_so(tmp_path, monkeypatch):
    import kofs.cli._summary

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(kofs.cli._summary, "print_summary", interrupted)
    expr = _expression(tmp_path / "x.tsv")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["rank", str(expr), "--rankers", "variance", "-o", str(out)])
    assert r.exit_code == 130
    one_line(r.stderr, "interrupted", str(out), "written completely")
    check_complete(out)


def test_signal_while_parsing_the_command_line(monkeypatch):
    from kofs.cli._group import KofsGroup
    from kofs.errors import Terminated

    def stopped(self, ctx, args):
        raise Terminated

    monkeypatch.setattr(KofsGroup, "parse_args", stopped)
    r = CliRunner().invoke(main, ["methods"])
    assert r.exit_code == 143
    one_line(r.stderr, "terminated", "nothing was written")


def test_interrupt_after_an_evaluation_was_published_says_so(tmp_path, monkeypatch):
    import kofs.evaluate.run

    expr = _expression(tmp_path / "x.tsv")
    labels = tmp_path / "labels.tsv"
    labels.write_text("sample\tgroup\n" + "".join(f"S{i}\t{'ab'[i % 2]}\n" for i in range(12)))
    ranked = tmp_path / "ranked"
    r = CliRunner().invoke(main, ["rank", str(expr), "--rankers", "variance", "-o", str(ranked)])
    assert r.exit_code == 0, r.stderr
    real = kofs.evaluate.run.evaluate_outputs

    def interrupted(*a, **k):
        real(*a, **k)
        raise KeyboardInterrupt

    monkeypatch.setattr(kofs.evaluate.run, "evaluate_outputs", interrupted)
    out = tmp_path / "ev"
    args = ["evaluate", str(ranked), str(expr), "--labels", str(labels), "-o", str(out)]
    r = CliRunner().invoke(main, [*args, "--top", "5", "--folds", "2", "--classifiers", "1nn"])
    assert r.exit_code == 130, (r.stderr, r.exception)
    one_line(r.stderr, "interrupted", str(out), "written completely")
    check_complete(out)
