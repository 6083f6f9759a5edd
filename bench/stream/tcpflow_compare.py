#!/usr/bin/env python3
"""`warpath reassemble` beside tcpflow (Debian's tcpflow 1.6): the same bytes, and the time.

Both tools write one file per direction of each TCP connection. tcpflow names a file
SRCIP.SRCPORT-DSTIP.DSTPORT with zero-padded numbers (010.000.000.001.01024-...; a 4-tuple
used again gets "c1", "c2", ... after it); warpath names it FLOW-SRC.PORT-DST.PORT (index.json
has the rest). A direction is compared where both tools define its bytes the same way:

  - tcpflow writes each segment at its sequence offset from the first it saw (holes stay
    zeros, an overlap keeps the last bytes written); warpath delivers what the receiver
    acknowledged, under the receiver's overlap policy, and leaves out gaps (index.json lists
    them). On a capture without loss or conflicting overlaps the two agree byte for byte.
  - tcpflow takes an Ethernet frame's padding (a 60-byte minimum frame around a segment
    without payload) for payload: a direction of only such zeros, which warpath rightly does
    not write, is counted as `padding`, not compared.
  - IPv6 directions are not compared (tcpflow names them differently); a VLAN-tagged capture
    gives `only_warpath` directions (tcpflow does not decode 802.1Q).
  - A 4-tuple seen in more than one connection is left out (tcpflow's c1/c2 files and
    warpath's flows pair up only by order); so is a direction whose warpath stream has gaps.

As a library (tests/cli/test_reassemble_tcpflow.py): compare(warpath_dir, tcpflow_dir).
As a benchmark: times both on each capture (files on tmpfs, both pinned to one core, rounds
alternating the tools, medians), beside the I/O floor (warpath-reassemble-floor, beside the
warpath binary: reading the capture and writing each direction's payload to its file, nothing
else; run with 4 KiB and with 64 KiB buffers, the faster of the two in each round is the floor),
and checks the bytes:

  bench/stream/tcpflow_compare.py [--warpath build/warpath] [--rounds 5] [--cpu 1]
      [--workloads small,reorder,inorder,short] [--captures FILE...] [--json OUT] [--md OUT]

Generated workloads come from warpath-stream-bench --write-pcap (beside the warpath binary).
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TCPFLOW_NAME = re.compile(
    r"^(\d{3})\.(\d{3})\.(\d{3})\.(\d{3})\.(\d{5})-(\d{3})\.(\d{3})\.(\d{3})\.(\d{3})\.(\d{5})(c\d+)?$")
WARPATH_NAME = re.compile(r"^\d+-(\d+\.\d+\.\d+\.\d+)\.(\d+)-(\d+\.\d+\.\d+\.\d+)\.(\d+)$")


def _ip(parts):
    return ".".join(str(int(p)) for p in parts)


def tcpflow_streams(directory):
    """{(src, sport, dst, dport): [path, ...]} of tcpflow's IPv4 stream files."""
    out = {}
    for p in sorted(Path(directory).iterdir()):
        m = TCPFLOW_NAME.match(p.name)
        if m:
            g = m.groups()
            key = (_ip(g[0:4]), int(g[4]), _ip(g[5:9]), int(g[9]))
            out.setdefault(key, []).append(p)
    return out


def warpath_streams(directory):
    """{(src, sport, dst, dport): [path, ...]} of warpath's IPv4 stream files, and the set of
    those (by name) whose stream has gaps (index.json)."""
    out, gapped = {}, set()
    index = Path(directory) / "index.json"
    if index.exists():
        doc = json.loads(index.read_text())
        for s in doc.get("streams", []):
            if s.get("gaps"):
                gapped.add(s.get("file"))
    for p in sorted(Path(directory).iterdir()):
        m = WARPATH_NAME.match(p.name)
        if m:
            key = (m.group(1), int(m.group(2)), m.group(3), int(m.group(4)))
            out.setdefault(key, []).append(p)
    return out, gapped


def compare(warpath_dir, tcpflow_dir):
    """What the two tools wrote, direction by direction: a dict of counts and the first
    differences (equal, differ, only_warpath, only_tcpflow, reused, gapped, bytes)."""
    w, gapped = warpath_streams(warpath_dir)
    t = tcpflow_streams(tcpflow_dir)
    r = {"equal": 0, "differ": [], "only_warpath": [], "only_tcpflow": [], "reused": 0,
         "gapped": 0, "padding": 0, "bytes": 0}
    for key in sorted(set(w) | set(t)):
        wf, tf = w.get(key, []), t.get(key, [])
        if len(wf) > 1 or len(tf) > 1:
            r["reused"] += 1
            continue
        if not tf:
            # tcpflow writes no file for a direction without payload; warpath neither
            r["only_warpath"].append(key)
            continue
        if not wf:
            data = tf[0].read_bytes()
            if data and not data.strip(b"\0"):
                r["padding"] += 1
            elif data:
                r["only_tcpflow"].append(key)
            continue
        if wf[0].name in gapped:
            r["gapped"] += 1
            continue
        a, b = wf[0].read_bytes(), tf[0].read_bytes()
        if a == b:
            r["equal"] += 1
            r["bytes"] += len(a)
        else:
            r["differ"].append((key, len(a), len(b)))
    return r


def timed(cmd, cpu):
    t0 = time.perf_counter()
    subprocess.run(["taskset", "-c", str(cpu)] + cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


FLOOR_BUFFERS = {"floor-4k": 4096, "floor-64k": 65536}


def bench_capture(name, pcap, warpath, tmp, rounds, cpu):
    """Alternating rounds of warpath reassemble, tcpflow and the I/O floor on one capture."""
    floor = str(Path(warpath).with_name("warpath-reassemble-floor"))
    tools = ["warpath", "tcpflow"] + list(FLOOR_BUFFERS)
    times = {t: [] for t in tools}
    for r in range(rounds):
        for tool in tools if r % 2 == 0 else reversed(tools):
            out = tmp / f"out-{tool}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            if tool == "warpath":
                # --midstream: tcpflow picks up connections whose handshake it missed too
                cmd = [warpath, "reassemble", "--midstream", "--in", str(pcap), "--out-dir",
                       str(out)]
            elif tool == "tcpflow":
                cmd = ["tcpflow", "-r", str(pcap), "-o", str(out)]
            else:
                cmd = [floor, "--buffer", str(FLOOR_BUFFERS[tool]), str(pcap), str(out)]
            times[tool].append(timed(cmd, cpu))
    times["floor"] = [min(v) for v in zip(*(times[t] for t in FLOOR_BUFFERS))]
    check = compare(tmp / "out-warpath", tmp / "out-tcpflow")
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = [tf / w for w, tf in zip(times["warpath"], times["tcpflow"])]
    floors = [w / f for w, f in zip(times["warpath"], times["floor"])]
    tcpflow_floors = [t / f for t, f in zip(times["tcpflow"], times["floor"])]
    return {"capture": name, "capture_bytes": pcap.stat().st_size, "rounds": rounds,
            "seconds": times, "median_s": med,
            "speedup_vs_tcpflow_paired": statistics.median(ratios),
            "warpath_vs_floor_paired": statistics.median(floors),
            "tcpflow_vs_floor_paired": statistics.median(tcpflow_floors),
            "check": {k: (len(v) if isinstance(v, list) else v) for k, v in check.items()},
            "first_differences": [list(map(str, d)) for d in check["differ"][:5]]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--warpath", default=str(root / "build" / "warpath"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--workloads", default="small,reorder,inorder,short")
    ap.add_argument("--captures", nargs="*", default=[])
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    if not shutil.which("tcpflow"):
        sys.exit("tcpflow_compare: tcpflow is not installed (apt-get install tcpflow)")
    stream_bench = Path(a.warpath).with_name("warpath-stream-bench")
    floor = Path(a.warpath).with_name("warpath-reassemble-floor")
    if not floor.exists():
        sys.exit(f"tcpflow_compare: {floor} is not built (the I/O floor; cmake builds it with "
                 "the benches)")
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None
    rows = []
    with tempfile.TemporaryDirectory(dir=base) as d:
        tmp = Path(d)
        inputs = []
        for w in [x for x in a.workloads.split(",") if x]:
            pcap = tmp / f"{w}.pcap"
            subprocess.run([str(stream_bench), "--workload", w, "--engine", "warpath",
                            "--write-pcap", str(pcap)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            inputs.append((f"generated {w}", pcap))
        for k, c in enumerate(a.captures):
            copy = tmp / f"capture{k}-{Path(c).name}"  # unique beside the generated ones
            shutil.copy(c, copy)
            inputs.append((Path(c).name, copy))
        for name, pcap in inputs:
            print(f"tcpflow_compare: {name}", file=sys.stderr)
            rows.append(bench_capture(name, pcap, a.warpath, tmp, a.rounds, a.cpu))
            pcap.unlink()
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    tcpflow_version = subprocess.run(["tcpflow", "-V"], capture_output=True,
                                     text=True).stdout.strip()
    doc = {"tool": "bench/stream/tcpflow_compare.py", "commit": commit,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": " ".join(sys.argv), "machine": platform.processor() or platform.machine(),
           "cpu_model": next((l.split(":", 1)[1].strip() for l in
                              open("/proc/cpuinfo") if l.startswith("model name")), ""),
           "pinned_cpu": a.cpu, "tcpflow": tcpflow_version, "results": rows}
    lines = ["| capture | MB | warpath s | tcpflow s | I/O floor s | warpath vs tcpflow (paired) "
             "| warpath / floor (paired) | tcpflow / floor (paired) | directions equal | differ "
             "| only warpath | only tcpflow | tcpflow padding | gapped | reused |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        m, c = r["median_s"], r["check"]
        lines.append(f"| {r['capture']} | {r['capture_bytes'] / 1e6:.1f} | {m['warpath']:.3f} | "
                     f"{m['tcpflow']:.3f} | {m['floor']:.3f} | "
                     f"{r['speedup_vs_tcpflow_paired']:.2f}x | {r['warpath_vs_floor_paired']:.2f}x "
                     f"| {r['tcpflow_vs_floor_paired']:.2f}x "
                     f"| {c['equal']} | {c['differ']} | {c['only_warpath']} | {c['only_tcpflow']} "
                     f"| {c['padding']} | {c['gapped']} | {c['reused']} |")
    print("\n".join(lines))
    if a.json:
        Path(a.json).write_text(json.dumps(doc, indent=2) + "\n")
    if a.md:
        Path(a.md).write_text("\n".join(lines) + "\n")
    return 1 if any(r["check"]["differ"] or r["check"]["only_tcpflow"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
