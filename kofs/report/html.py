"""HTML building blocks of the reports: page, tables, figures, provenance; and their checks.

Pages use no script and no network resource, so they read offline in any browser.
:func:`check_report` validates a page (well-formed, no network reference, every referenced
file present); :func:`browser_check` opens it in headless Chromium (what rendered, console
errors, a screenshot).
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from kofs.errors import OutputError

__all__ = [
    "Raw",
    "browser_check",
    "check_report",
    "esc",
    "fmt",
    "html_table",
    "page",
    "provenance_html",
]

CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:1em 0}
td,th{border:1px solid #bbb;padding:3px 6px;text-align:right;white-space:nowrap}
td.text{white-space:normal;min-width:16em;max-width:36em;text-align:left;font-size:12px}
td.name,th.name{text-align:left}caption{text-align:left;font-weight:bold;padding:4px 0}
th{background:#eee}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
.note{color:#555;font-size:13px}figure{margin:1em 0}figcaption{font-size:13px;color:#444}
.bar{display:inline-block;height:10px;background:#3b75af;vertical-align:middle}
.ci{color:#555}code{font-size:12px}nav a{margin-right:1em}"""


class Raw(str):
    """Text already in HTML (inserted unescaped by :func:`html_table`)."""


def esc(value: Any) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


def fmt(v: Any) -> str:
    """Text of a table cell: floats with 3 decimals (0 beyond 100), NaN as ``NA``."""
    if isinstance(v, (float, np.floating)):
        return "NA" if np.isnan(v) else (f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}")
    if v is None:
        return ""
    return str(v)


def html_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    caption: str = "",
    table_id: str | None = None,
    text_columns: Iterable[str] = ("notes", "evidence"),
    name_columns: Iterable[str] = (),
) -> str:
    """An HTML table in a horizontally scrolling box.

    Parameters
    ----------
    columns : sequence of str
    rows : iterable of sequences
        Cells: numbers are formatted by :func:`fmt`, :class:`Raw` cells are inserted as they
        are, anything else is escaped.
    caption : str
    table_id : str, optional
        ``id`` attribute of the table (tests and links find it by this).
    text_columns : iterable of str
        Columns of free text (wrapped, left-aligned).
    name_columns : iterable of str
        Columns of names (left-aligned, not wrapped).
    """
    text = {i for i, c in enumerate(columns) if c in set(text_columns)}
    names = {i for i, c in enumerate(columns) if c in set(name_columns)}

    def cell(i: int, v: Any) -> str:
        content = v if isinstance(v, Raw) else esc(fmt(v))
        cls = " class='text'" if i in text else (" class='name'" if i in names else "")
        return f"<td{cls}>{content}</td>"

    head = "".join(
        f"<th class='name'>{esc(c)}</th>" if i in text | names else f"<th>{esc(c)}</th>"
        for i, c in enumerate(columns)
    )
    body = "".join(
        "<tr>" + "".join(cell(i, v) for i, v in enumerate(rec)) + "</tr>" for rec in rows
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    ident = f" id='{esc(table_id)}'" if table_id else ""
    return (
        f"<div class='scroll'><table{ident}>{cap}<thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def page(title: str, body: Iterable[str]) -> str:
    """A complete HTML document (inline CSS) around the ``body`` parts."""
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        *body,
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _short(v: Any, n: int = 80) -> str:
    if isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float)) for x in v):
        text = ", ".join(map(str, v))
    else:
        text = v if isinstance(v, str) else json.dumps(v, default=str, sort_keys=True)
    return text if len(text) <= n else text[: n - 1] + "…"


def provenance_html(manifest: Mapping[str, Any], *, heading: str = "Provenance") -> str:
    """The provenance of a run from its manifest dict (``manifest.json``).

    Shows the command and main settings, the software versions, every input file with its size
    and sha256, and the knowledge releases read from the files' headers. Missing parts are
    left out.
    """
    out = [f"<h2 id='provenance'>{esc(heading)}</h2>"]
    s = dict(manifest.get("settings") or {})
    facts = []
    if manifest.get("command"):
        facts.append(("command", f"kofs {manifest['command']}"))
    for key in ("method", "aggregate", "seed", "protocols", "classifiers", "hit_top"):
        if key in s and s[key] is not None:
            facts.append((key, _short(s[key])))
    if manifest.get("defaults_version"):
        facts.append(("defaults version", str(manifest["defaults_version"])))
    m = manifest.get("matrix")
    if m:
        facts.append(("matrix", f"{m.get('samples'):,} samples × {m.get('genes'):,} genes"))
    t = manifest.get("timings_seconds")
    if t:
        facts.append(("run time", f"{sum(float(v) for v in t.values()):.2f} s"))
    if facts:
        out.append(
            html_table(["setting", "value"], facts, table_id="settings", name_columns=("value",))
        )
    env = dict(manifest.get("environment") or {})
    if manifest.get("kofs_version") and "kofs" not in env:
        env = {"kofs": manifest["kofs_version"], **env}
    if env:
        out.append(
            html_table(
                ["software", "version"],
                [(k, "" if v is None else v) for k, v in env.items()],
                caption="Software",
                table_id="software",
                name_columns=("version",),
            )
        )
    rows = []
    for role, prints in (manifest.get("inputs") or {}).items():
        for fp in prints if isinstance(prints, list) else [prints]:
            if not fp:
                continue
            rows.append(
                (
                    role,
                    fp.get("path", ""),
                    "" if fp.get("bytes") is None else f"{fp['bytes']:,}",
                    Raw(f"<code>{esc(fp.get('sha256') or '')}</code>"),
                )
            )
    if rows:
        out.append(
            html_table(
                ["input", "file", "bytes", "sha256"],
                rows,
                caption="Input files",
                table_id="inputs",
                name_columns=("file", "sha256"),
            )
        )
    rel = manifest.get("releases") or {}
    if rel:
        out.append(
            html_table(
                ["source", "release and contents"],
                [
                    (
                        k,
                        "; ".join(
                            f"{a}: {_short(b, 60)}" for a, b in dict(v).items() if b is not None
                        ),
                    )
                    for k, v in rel.items()
                ],
                caption="Knowledge releases (from the files' headers)",
                table_id="releases",
                text_columns=("release and contents",),
            )
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- checks


class _Checker(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.refs: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.title: list[str] = []
        self.tables = 0
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.refs.append(a.get("src", ""))
            self.images.append(a.get("src", ""))
        if tag in ("a", "link") and a.get("href"):
            self.refs.append(a["href"])
        if tag == "table":
            self.tables += 1
            if a.get("id"):
                self.ids.append(a["id"])
        for k in ("src", "href"):
            if (a.get(k) or "").startswith(("http:", "https:", "//", "ftp:")):
                self.errors.append(f"network reference {a[k]}")
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
    """Problems of a report page: unbalanced tags, network references, missing files.

    Inline ``data:image/png;base64`` images must decode to a PNG; in-page ``#`` links need no
    file.
    """
    path = Path(path)
    checker = _parse(path.read_text(encoding="utf-8"))
    problems = list(checker.errors)
    if checker.stack:
        problems.append(f"unclosed tags: {checker.stack}")
    for ref in checker.refs:
        if ref.startswith("data:image/png;base64,"):
            try:
                data = base64.b64decode(ref.split(",", 1)[1], validate=True)
            except ValueError:
                data = b""
            if not data.startswith(b"\x89PNG\r\n\x1a\n"):
                problems.append(f"inline image is not a PNG: {ref[:40]}...")
            continue
        if ref.startswith(("data:", "#")) or not ref:
            continue
        if not (path.parent / ref).is_file():
            problems.append(f"missing file {ref}")
    return problems


def find_browser(executable: str | None = None) -> str | None:
    """Path of a Chromium-like browser: ``executable``, else ``chromium``, ``chromium-browser``
    or ``google-chrome`` on the PATH; None when none is found."""
    if executable:
        return executable
    for name in ("chromium", "chromium-browser", "google-chrome"):
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
# loads the report in an iframe and records every image's decoded width (0 = not loaded)
_PROBE = """<!DOCTYPE html><html><body><iframe id="f" src="REPORT"></iframe><script>
const f = document.getElementById("f");
f.onload = () => {
  const d = f.contentDocument;
  const images = [...d.images].map(i => ({src: i.getAttribute("src"), width: i.naturalWidth}));
  document.body.setAttribute("data-kofs", JSON.stringify({images: images}));
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
    report in an iframe and records the decoded width of every image
    (``--allow-file-access-from-files``). Needs ``chromium`` (Debian package) or
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
        ``images`` (``[{"src", "width"}]``; width 0 = not loaded), ``console`` (``[{"message",
        "source"}]``), ``screenshot`` (path) and ``screenshot_stats`` (``width``, ``height``,
        ``non_background`` fraction of pixels, ``colours``); None when no browser is found.

    Raises
    ------
    OutputError
        The browser rendered nothing, or the profile folder is not empty.
    """
    exe = find_browser(executable)
    if exe is None:
        return None
    path = Path(path).resolve()
    root = Path(profile_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise OutputError("the browser profile folder must be new and empty", path=root)
    shot = Path(screenshot).resolve() if screenshot else root / "screenshot.png"
    uri = path.as_uri()
    dom = _chromium(
        exe,
        root / "profile-report",
        ["--dump-dom", f"--screenshot={shot}", f"--window-size={window[0]},{window[1]}", uri],
        timeout,
    )
    if "<html" not in dom.stdout.lower():
        raise OutputError(f"the browser did not render the page (exit {dom.returncode})", path=path)
    probe = root / "probe.html"
    probe.write_text(_PROBE.replace("REPORT", uri), encoding="utf-8")
    seen = _chromium(
        exe,
        root / "profile-probe",
        ["--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom"]
        + [probe.as_uri()],
        timeout,
    )
    marker = 'data-kofs="'
    start = seen.stdout.find(marker)
    images = []
    if start >= 0:
        raw = seen.stdout[start + len(marker) : seen.stdout.index('"', start + len(marker))]
        images = json.loads(html.unescape(raw))["images"]
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
        "console": console,
        "screenshot": str(shot) if shot.is_file() else None,
        "screenshot_stats": _png_stats(shot) if shot.is_file() else None,
    }
