"""One self-contained HTML page about a capture: a summary, the protocol mix over time, packet
sizes, top talkers, flow sizes and durations, and with rules the NIDS's alerts over time and by
signature. Plots are PNGs inside the page (data URIs); nothing else is fetched.

    python -m warpath report CAPTURE --html report.html [--rules FILE ...]
    warpath report CAPTURE --html report.html              (the CLI runs the same)
"""
from __future__ import annotations

import base64
import html
import io
import os
from collections import Counter
from typing import Optional, Sequence

from . import _as_capture, flows as _flows, nids as _nids


def _png(ax) -> str:
    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png", dpi=90)
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _table(head: Sequence[str], rows) -> str:
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def build(capture, rules: Optional[Sequence[str]] = None, title: Optional[str] = None) -> str:
    """The report's HTML for a capture (a ``Capture`` or a path), with the NIDS's alerts when
    ``rules`` are given."""
    import matplotlib

    matplotlib.use("Agg")
    from . import plot

    cap = _as_capture(capture)
    title = title or f"warpath report: {os.path.basename(cap.path)}"
    info = cap.parse()
    n = len(cap)
    parts = [f"<h1>{html.escape(title)}</h1>"]
    ts = cap.timestamps
    duration = (int(ts.max()) - int(ts.min())) / 1e9 if n else 0.0
    total = int(cap.meta["len"].sum()) if n else 0
    protos = Counter(plot._PROTOCOLS.get(int(p), "other") if v else "non-IP"
                     for p, v in zip(info["proto"], info["ip_version"]))
    conns = _flows(cap)
    parts.append("<h2>Summary</h2>" + _table(
        ["capture", "packets", "bytes", "seconds", "flows", "protocols"],
        [[cap.path, n, total, f"{duration:.3f}", len(conns),
          ", ".join(f"{k} {v}" for k, v in protos.most_common())]]))
    figures = []
    if n:
        figures.append(("Protocol mix over time", plot.protocol_mix(cap, bins=40)))
        figures.append(("Packet sizes", plot.packet_sizes(cap)))
        figures.append(("Top talkers", plot.top_talkers(cap)))
    if len(conns):
        figures.append(("Flow sizes", plot.flow_sizes(conns)))
        figures.append(("Flow durations", plot.flow_durations(conns)))
    alerts = []
    if rules:
        alerts = [e for e in _nids(list(rules), cap, flows=False) if e["event_type"] == "alert"]
        if alerts:
            figures.append(("Alerts over time", plot.alerts_over_time(alerts)))
    for name, ax in figures:
        parts.append(f'<h2>{html.escape(name)}</h2><img class="plot" alt="{html.escape(name)}" '
                     f'src="{_png(ax)}">')
    top = sorted(conns, key=lambda f: -(f["orig_bytes"] + f["resp_bytes"]))[:20]
    parts.append("<h2>Largest flows</h2>" + _table(
        ["src", "sport", "dst", "dport", "proto", "bytes", "seconds", "history"],
        [[f["src"], f["sport"], f["dst"], f["dport"], f["proto"],
          f["orig_bytes"] + f["resp_bytes"], f"{f['duration']:.3f}", f["history"]] for f in top]))
    if rules:
        by_sig = Counter((a["alert"]["signature_id"], a["alert"]["signature"]) for a in alerts)
        parts.append(f"<h2>Alerts ({len(alerts)})</h2>" + _table(
            ["sid", "signature", "alerts"], [[s, m, c] for (s, m), c in by_sig.most_common()]))
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
             "padding:3px 8px;text-align:left}img.plot{max-width:100%}")
    # The page says, once loaded, whether every plot decoded (the tests read the title back
    # from a headless browser).
    check = ("<script>window.addEventListener('load',function(){var i=document.images,ok="
             "i.length>0;for(var k=0;k<i.length;k++)ok=ok&&i[k].complete&&i[k].naturalWidth>0;"
             "document.body.setAttribute('data-plots',ok?'ok':'broken');});</script>")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style>{check}</head><body>{''.join(parts)}</body></html>")


def write(capture, path, rules: Optional[Sequence[str]] = None) -> str:
    """Writes the report to ``path`` (via a temporary name, renamed when complete)."""
    text = build(capture, rules)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(path)
