"""Checks of report pages, used by the report tests (not part of the package).

:func:`check_report` reads a page as text: unbalanced tags, resources loaded from the network,
missing files, inline images that are not PNG. :func:`browser_check` opens a page in headless
Chromium (Debian's ``chromium``): what it rendered, the console messages, a screenshot, and the
layout at a window width: horizontal overflow (the page, or any element wider than its box) and
figure legends that overlap a figure.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np


def find_browser(executable: str | None = None) -> str | None:
    """Path of a Chromium-like browser: ``executable``, else ``chromium``, Debian's
    ``chromium-headless-shell`` (what ``.ci/run`` installs), ``chromium-browser`` or
    ``google-chrome`` on the PATH; None when none is found."""
    if executable:
        return executable
    for name in ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


# Console messages in Chromium's log (--enable-logging=stderr), e.g.
# [123:123:1123/191118.817514:INFO:CONSOLE:1] "Uncaught ...", source: file:///x.html (1)
_CONSOLE = re.compile(r":[A-Z]+:CONSOLE[:(]\d+\)?\] \"(.*)\", source: (.*?)(?: \(\d+\))?$")
_BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
# loads the report in an iframe of the window's width and records every image's decoded width
# (0 = not loaded), the page's horizontal overflow, elements whose content is wider than their
# box, and legends (class "legend") whose box intersects a figure image's box
_PROBE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="REPORT" style="border:0;width:WIDTHpx;height:HEIGHTpx"></iframe><script>
const f = document.getElementById("f");
f.onload = () => {
  const d = f.contentDocument, w = d.documentElement;
  const images = [...d.images].map(i => ({src: i.getAttribute("src").slice(0, 40),
                                          width: i.naturalWidth}));
  const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
                    (e.className ? "." + String(e.className).split(" ")[0] : "");
  const wide = [...d.body.querySelectorAll("*")]
    .filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 &&
                 getComputedStyle(e).overflowX !== "visible")
    .map(e => ({element: name(e), scroll: e.scrollWidth, client: e.clientWidth}));
  const right = [...d.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > w.clientWidth + 1)
    .map(e => ({element: name(e), right: e.getBoundingClientRect().right}));
  const box = e => e.getBoundingClientRect();
  const cut = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const overlaps = [];
  for (const lg of d.querySelectorAll(".legend"))
    for (const im of d.querySelectorAll("figure img, figure .plot"))
      if (cut(box(lg), box(im))) overlaps.push({legend: name(lg), figure: name(im)});
  const legends = d.querySelectorAll(".legend").length;
  document.body.setAttribute("data-kofs", JSON.stringify({images: images, layout: {
    page_width: w.scrollWidth, window_width: w.clientWidth, wide: wide, beyond_right: right,
    overlaps: overlaps, legends: legends}}));
};
</script></body></html>
"""


def _chromium(exe: str, profile: Path, args: Sequence[str], timeout: float):
    """Run the browser once on a new profile; its home and caches stay in it."""
    for sub in ("data", "home"):
        (profile / sub).mkdir(parents=True)
    # TMPDIR is left alone: the browser's sockets there need a short path (108 bytes)
    env = {
        **os.environ,
        "HOME": str(profile / "home"),
        "XDG_CACHE_HOME": str(profile / "home" / ".cache"),
        "XDG_CONFIG_HOME": str(profile / "home" / ".config"),
    }
    return subprocess.run(
        [exe, *_BROWSER_FLAGS, f"--user-data-dir={profile / 'data'}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _png_stats(path: Path) -> dict[str, Any]:
    """Size and colour spread of a PNG screenshot (a blank page has one colour)."""
    from matplotlib.image import imread

    rgb = np.asarray(imread(path)[..., :3], dtype=np.float64)
    flat = rgb.reshape(-1, 3)
    background = np.median(flat, axis=0)
    differs = np.abs(flat - background).max(axis=1) > 0.05
    return {
        "width": int(rgb.shape[1]),
        "height": int(rgb.shape[0]),
        "non_background": float(differs.mean()),
        "colours": int(len(np.unique((flat[::7] * 255).astype(np.uint8), axis=0))),
    }


def browser_check(
    path: str | os.PathLike,
    *,
    profile_dir: str | os.PathLike,
    screenshot: str | os.PathLike | None = None,
    executable: str | None = None,
    timeout: float = 60.0,
    window: tuple[int, int] = (1280, 2000),
) -> dict[str, Any] | None:
    """Open a report in headless Chromium: what it rendered, console messages, a screenshot.

    Two browser runs, each on a new empty profile under ``profile_dir``: the report itself with
    ``--dump-dom`` (the DOM after loading) and ``--screenshot``, the browser's console
    messages read from its log (``--enable-logging=stderr``); then a probe page that loads the
    report in an iframe of ``window``'s size and records the decoded width of every image and
    the layout (``--allow-file-access-from-files``). Needs ``chromium`` (Debian package) or
    ``executable``. The reports run no script, so any console message is a problem.

    Parameters
    ----------
    path : path
        The report page.
    profile_dir : path
        A new or empty folder for the browser profiles and the probe page.
    screenshot : path, optional
        Where to write the PNG screenshot (default: ``profile_dir/screenshot.png``).
    executable : str, optional
    timeout : float
        Seconds per browser run.
    window : (int, int)
        Window size of the screenshot in pixels.

    Returns
    -------
    dict or None
        ``title``, ``tables`` (count), ``table_ids``, ``dom`` (the dumped DOM),
        ``images`` (``[{"src", "width"}]``; width 0 = not loaded), ``layout``
        (``page_width``, ``window_width``, ``wide``: elements whose content is wider than their
        scrolling box, ``beyond_right``: elements past the window's right edge, ``overlaps``:
        legend/figure pairs whose boxes intersect, ``legends``: their count), ``console`` (``[{"message",
        "source"}]``), ``screenshot`` (path) and ``screenshot_stats`` (``width``, ``height``,
        ``non_background`` fraction of pixels, ``colours``); None when no browser is found.

    Raises
    ------
    RuntimeError
        The browser rendered nothing, or the profile folder is not empty.
    """
    exe = find_browser(executable)
    if exe is None:
        return None
    path = Path(path).resolve()
    root = Path(profile_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise RuntimeError(f"the browser profile folder must be new and empty: {root}")
    shot = Path(screenshot).resolve() if screenshot else root / "screenshot.png"
    uri = path.as_uri()
    dom = _chromium(
        exe,
        root / "profile-report",
        ["--dump-dom", f"--screenshot={shot}", f"--window-size={window[0]},{window[1]}", uri],
        timeout,
    )
    if "<html" not in dom.stdout.lower():
        raise RuntimeError(f"the browser did not render {path} (exit {dom.returncode})")
    probe = root / "probe.html"
    probe.write_text(
        _PROBE.replace("REPORT", uri)
        .replace("WIDTH", str(window[0]))
        .replace("HEIGHT", str(window[1])),
        encoding="utf-8",
    )
    seen = _chromium(
        exe,
        root / "profile-probe",
        ["--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom"]
        + [f"--window-size={window[0] + 40},{window[1] + 40}", probe.as_uri()],
        timeout,
    )
    marker = 'data-kofs="'
    start = seen.stdout.find(marker)
    images: list[dict[str, Any]] = []
    layout: dict[str, Any] | None = None
    if start >= 0:
        raw = seen.stdout[start + len(marker) : seen.stdout.index('"', start + len(marker))]
        probed = json.loads(html.unescape(raw))
        images, layout = probed["images"], probed["layout"]
    console = []
    for run in (dom, seen):
        for line in run.stderr.splitlines():
            m = _CONSOLE.search(line)
            if m:
                console.append({"message": m.group(1), "source": m.group(2)})
    parsed = _parse(dom.stdout)
    return {
        "title": "".join(parsed.title).strip(),
        "tables": parsed.tables,
        "table_ids": parsed.ids,
        "dom": dom.stdout,
        "images": images,
        "layout": layout,
        "console": console,
        "screenshot": str(shot) if shot.is_file() else None,
        "screenshot_stats": _png_stats(shot) if shot.is_file() else None,
    }


# --------------------------------------------------------------------------- page as text


class _Checker(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.refs: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.all_ids: list[str] = []
        self.title: list[str] = []
        self.tables = 0
        self.images: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.all_ids.append(a["id"])
        if tag == "img":
            self.refs.append(a.get("src", ""))
            self.images.append(a.get("src", ""))
        remote = ("http:", "https:", "//", "ftp:")
        href = a.get("href") or ""
        if tag == "a" and href.startswith(remote):
            self.links.append(href)  # opened on a click only: not a load
        elif tag in ("a", "link") and href:
            self.refs.append(href)
        if tag == "table":
            self.tables += 1
            if a.get("id"):
                self.ids.append(a["id"])
        for k in ("src", "href"):
            v = a.get(k) or ""
            if v.startswith(remote) and not (tag == "a" and k == "href"):
                self.errors.append(f"network reference {v}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}>")
        else:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "title":
            self.title.append(data)


def _parse(text: str) -> _Checker:
    checker = _Checker()
    checker.feed(text)
    checker.close()
    return checker


def check_report(path: str | os.PathLike) -> list[str]:
    """Problems of a report page: unbalanced tags, resources loaded from the network (links
    to other sites are fine: they open on a click), missing files.

    Inline ``data:image/png;base64`` images must decode to a PNG; an in-page ``#`` link needs an
    element of that id, and no id may be given twice.
    """
    path = Path(path)
    checker = _parse(path.read_text(encoding="utf-8"))
    problems = list(checker.errors)
    if checker.stack:
        problems.append(f"unclosed tags: {checker.stack}")
    ids = set(checker.all_ids)
    problems += [f"id given twice: {i}" for i in sorted(ids) if checker.all_ids.count(i) > 1]
    problems += [
        f"in-page link to no element: {ref}"
        for ref in checker.refs
        if ref.startswith("#") and ref[1:] not in ids
    ]
    for ref in checker.refs:
        if ref.startswith("data:image/png;base64,"):
            try:
                data = base64.b64decode(ref.split(",", 1)[1], validate=True)
            except ValueError:
                data = b""
            if not data.startswith(b"\x89PNG\r\n\x1a\n"):
                problems.append(f"inline image is not a PNG: {ref[:40]}...")
            continue
        if ref.startswith(("data:", "#", "http:", "https:", "//", "ftp:")) or not ref:
            continue
        if not (path.parent / ref).is_file():
            problems.append(f"missing file {ref}")
    return problems
