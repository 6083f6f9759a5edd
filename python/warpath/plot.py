"""Plots of captures and benchmarks, with matplotlib (an optional dependency: ``pip install
.[plot]``). Each function draws on ``ax`` (a new figure's axes when not given) and returns the
axes, so a notebook shows it and a script saves it with ``ax.figure.savefig(...)``.
"""
from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import numpy as np

from . import Capture, InvalidArgumentError

_PROTOCOLS = {6: "TCP", 17: "UDP", 1: "ICMP", 58: "ICMPv6", 50: "ESP", 47: "GRE", 132: "SCTP"}


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    return ax


def protocol_mix(capture: Capture, bins: int = 60, ax=None):
    """Packets per second of each transport protocol over the capture's time, stacked."""
    info = capture.parse()
    if len(info) == 0:
        raise InvalidArgumentError("protocol_mix: the capture has no packets")
    t = (capture.timestamps - capture.timestamps.min()).astype(np.float64) / 1e9
    edges = np.linspace(0.0, max(float(t.max()), 1e-6), bins + 1)
    width = edges[1] - edges[0]
    names = np.array([_PROTOCOLS.get(int(p), "other") if v else "non-IP"
                      for p, v in zip(info["proto"], info["ip_version"])])
    ax = _axes(ax)
    labels, series = [], []
    for name in sorted(set(names), key=lambda n: -int((names == n).sum())):
        counts, _ = np.histogram(t[names == name], bins=edges)
        labels.append(name)
        series.append(counts / width)
    ax.stackplot(edges[:-1], *series, labels=labels, step="post")
    ax.set_xlabel("seconds since the first packet")
    ax.set_ylabel("packets per second")
    ax.set_title(f"protocol mix: {capture.path}")
    ax.legend(loc="upper right")
    return ax


def top_talkers(capture: Capture, n: int = 10, ax=None):
    """The ``n`` source addresses that sent the most bytes (wire lengths), as bars."""
    frame = capture.parse().to_pandas()
    frame["bytes"] = capture.meta["len"]
    top = frame.dropna(subset=["src"]).groupby("src")["bytes"].sum().nlargest(n)
    ax = _axes(ax)
    ax.barh(list(top.index)[::-1], list(top.values)[::-1])
    ax.set_xlabel("bytes sent")
    ax.set_title(f"top {len(top)} talkers: {capture.path}")
    return ax


def packet_sizes(capture: Capture, bins: int = 50, ax=None):
    """The distribution of packet lengths on the wire (log-scaled counts)."""
    ax = _axes(ax)
    ax.hist(capture.meta["len"], bins=bins, log=True)
    ax.set_xlabel("packet length on the wire (bytes)")
    ax.set_ylabel("packets")
    ax.set_title(f"packet sizes: {capture.path}")
    return ax


def flow_sizes(flows, bins: int = 40, ax=None):
    """Flow sizes (bytes both directions) of ``warpath.flows(...)``, a log-scaled histogram."""
    sizes = np.array([f["orig_bytes"] + f["resp_bytes"] for f in flows], dtype=np.float64)
    if len(sizes) == 0:
        raise InvalidArgumentError("flow_sizes: no flows")
    ax = _axes(ax)
    edges = np.logspace(0, np.log10(max(float(sizes.max()), 10.0)), bins)
    ax.hist(sizes, bins=edges, alpha=0.8, label="bytes per flow")
    ax.set_xscale("log")
    ax.set_xlabel("bytes per flow (both directions)")
    ax.set_ylabel("flows")
    ax.set_title(f"{len(sizes)} flows: sizes")
    return ax


def flow_durations(flows, bins: int = 40, ax=None):
    """Flow durations of ``warpath.flows(...)`` (seconds, log-scaled; zero-length flows at
    1 microsecond)."""
    d = np.array([max(float(f["duration"]), 1e-6) for f in flows])
    if len(d) == 0:
        raise InvalidArgumentError("flow_durations: no flows")
    ax = _axes(ax)
    ax.hist(d, bins=np.logspace(-6, np.log10(max(d.max(), 1e-5)) + 0.01, bins))
    ax.set_xscale("log")
    ax.set_xlabel("flow duration (s)")
    ax.set_ylabel("flows")
    ax.set_title(f"{len(d)} flows: durations")
    return ax


def alerts_over_time(events, bins: int = 40, ax=None):
    """Alerts of ``warpath.nids(...)`` over time, stacked by signature (the five most frequent,
    the rest as other)."""
    import datetime as _dt

    alerts = [e for e in events if e.get("event_type") == "alert"]
    if not alerts:
        raise InvalidArgumentError("alerts_over_time: no alerts")
    t = np.array([_dt.datetime.strptime(a["timestamp"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
                  for a in alerts])
    t = t - t.min()
    sigs = [a["alert"]["signature"] for a in alerts]
    top = [s for s, _ in sorted(((s, sigs.count(s)) for s in set(sigs)), key=lambda x: -x[1])][:5]
    edges = np.linspace(0, max(float(t.max()), 1e-6), bins + 1)
    ax = _axes(ax)
    series, labels = [], []
    for s in top + ["other"]:
        mask = np.array([(x == s) if s != "other" else (x not in top) for x in sigs])
        if mask.any():
            series.append(np.histogram(t[mask], bins=edges)[0])
            labels.append(s)
    ax.stackplot(edges[:-1], *series, labels=labels, step="post")
    ax.set_xlabel("seconds since the first alert")
    ax.set_ylabel("alerts per bin")
    ax.set_title(f"{len(alerts)} alerts")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def measure_batches(call: Callable[[int], object], batches: Sequence[int],
                    seconds: float = 0.2) -> np.ndarray:
    """Items per second of ``call(n)`` (one call answers n items) at each batch size: the
    median of timed rounds within ``seconds`` a size. Returns an array of rates."""
    rates = []
    for n in batches:
        call(n)  # warm
        samples, spent = [], 0.0
        while spent < seconds or len(samples) < 3:
            t0 = time.perf_counter()
            call(n)
            dt = time.perf_counter() - t0
            spent += dt
            samples.append(n / dt if dt > 0 else float("inf"))
        rates.append(float(np.median(samples)))
    return np.array(rates)


def bench_batches(kind: str, args: Sequence[str], batches: Sequence[int],
                  engines: Optional[Sequence[str]] = None, cli: Optional[str] = None) -> dict:
    """An engine against its anchor over batch sizes: runs ``warpath bench lookup|classify
    ARGS --batch B --json ...`` for each batch size (the C++ benchmark, pinned, with the DPDK
    anchors it was built with: rte_lpm/rte_fib, rte_acl) and gathers each row's rate. Returns
    {label: rates} for ``batch_curve`` (labels are engine ids; anchors' rows say their
    library). ``engines`` keeps those rows only; ``cli``: the warpath binary (default
    $WARPATH_BIN, the one beside the package's build, or ``warpath`` on the PATH)."""
    import json
    import os
    import shutil
    import subprocess
    import tempfile

    if kind not in ("lookup", "classify"):
        raise InvalidArgumentError(f"bench_batches: kind {kind!r} is lookup or classify")
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cli = cli or os.environ.get("WARPATH_BIN") or (
        os.path.join(here, "warpath") if os.path.isfile(os.path.join(here, "warpath"))
        else shutil.which("warpath"))
    if not cli:
        raise InvalidArgumentError("bench_batches: no warpath binary (set WARPATH_BIN)")
    curves: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        for i, b in enumerate(batches):
            r = subprocess.run([cli, "bench", kind, *map(str, args), "--batch", str(b),
                                "--json", out], capture_output=True, text=True)
            if r.returncode != 0:
                raise InvalidArgumentError(f"warpath bench {kind}: {r.stderr.strip()}")
            with open(out) as f:
                rows = json.load(f)["results"]
            for row in rows:
                if engines and row["engine"] not in engines:
                    continue
                rate = row.get("rate")  # items a second (bench/harness/report.hpp)
                curves.setdefault(row["engine"], [float("nan")] * len(batches))[i] = (
                    rate if rate else float("nan"))
    return curves


def batch_curve(curves: dict, batches: Sequence[int], unit: str = "items/s",
                title: str = "throughput against batch size", ax=None):
    """Throughput against batch size, one line per engine: ``curves`` maps a label (an engine,
    its anchor) to the rates of ``measure_batches`` (or a benchmark's figures) at ``batches``."""
    ax = _axes(ax)
    for label, rates in curves.items():
        ax.plot(batches, np.asarray(rates) / 1e6, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size")
    ax.set_ylabel(f"M{unit}")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return ax
