#!/usr/bin/env python3
"""The framework's floor beside dpdk-testpmd (issue 62): one forwarding core, pinned, the same
DPDK virtual devices on both sides, paired rounds (every configuration once per round, in
turn), medians.

Configurations (each over the same ports for testpmd and for `warpath run`):
  null      net_null0 <-> net_null1: both generate empty 64-byte mbufs, both sink what they
            get (no packet bytes are written by the PMD): the cost of moving packets alone
  pcap      net_pcap0 (a capture of 64-byte IPv4/UDP/TCP packets replayed from memory,
            infinite_rx=1) -> net_null1 (no-rx=1)
testpmd runs `--forward-mode=io` (and `macswap` on null, which touches each packet); warpath
runs `--chain wire` (the empty chain: out of the paired port, unchanged) and, on pcap,
`--chain router` (the built-in full table), each with zero copy (the default: frames hold the
received mbufs and send them) and with `--copy` (packets copied into frames and out again).
Mpps are packets forwarded per second over every port; ns a packet = 1000 / Mpps (one core),
cycles at the nominal clock of /proc/cpuinfo.

  bench/anchors/floor_bench.py [--rounds 5] [--seconds 3] [--core 1] [--out bench/results]
                               [--compare OTHER_WARPATH] [--only TEXT]

--compare runs each warpath row again with another binary (a build before a change) beside it,
in every round (which of the two runs first alternates by round), so that a change is measured
in paired rounds, not across runs. --only keeps the rows whose name holds TEXT (and the testpmd
io rows, the anchors): `--only "wire, null" --rounds 15 --seconds 2` for a quick A/B.

Needs dpdk-testpmd (Debian's dpdk package) and a warpath built with DPDK ports (build/warpath).
"""
import argparse
import datetime
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def testpmd(vdevs, mode, seconds, core):
    """Mpps forwarded (sum over ports of each period's Rx-pps, median of the steady periods)."""
    args = ["dpdk-testpmd", "-l", f"0,{core}", "--main-lcore", "0", "--no-huge", "-m", "1024",
            "--no-pci", "--file-prefix", f"wpfloor{os.getpid()}"]
    for v in vdevs:
        args += ["--vdev", v]
    args += ["--", f"--forward-mode={mode}", "--nb-cores=1", "--auto-start", "--stats-period=1",
             "--total-num-mbufs=16384"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=seconds + 3)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=20)
    ports = len(vdevs)
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out)]
    periods = [sum(pps[i:i + ports]) for i in range(0, len(pps) - ports + 1, ports)]
    steady = [v for v in periods[1:] if v > 0]  # the first period includes the start
    if not steady:
        raise RuntimeError("testpmd reported no traffic:\n" + out[-2000:])
    return statistics.median(steady) / 1e6


def warpath(binary, ports, chain, seconds, core, *extra):
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        args = [str(binary), "run", "--chain", chain, "--workers", "1", "--duration", str(seconds),
                "--cpus", str(core), "--no-progress", "--json", j.name, *extra]
        for name, spec in ports:
            args += ["--port", f"{name}=dpdk:{spec}"]
        r = sh(args, timeout=seconds + 60)
        if r.returncode != 0:
            raise RuntimeError(" ".join(args) + "\n" + r.stdout[-1500:] + r.stderr[-1500:])
        rep = json.loads(Path(j.name).read_text())
    return rep["mpps_out"], rep.get("stages_ns_per_packet", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--warpath", default=str(REPO / "build" / "warpath"))
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--compare", metavar="BIN",
                    help="another warpath binary (a build before a change): each warpath row "
                         "again with it, beside it in the same rounds, which runs first "
                         "alternating by round (rows marked 'BIN')")
    ap.add_argument("--only", metavar="TEXT",
                    help="only the rows whose name holds TEXT (and the testpmd io anchors)")
    a = ap.parse_args()
    if not Path(a.warpath).exists() or sh(["which", "dpdk-testpmd"]).returncode != 0:
        sys.exit("floor_bench: needs build/warpath and dpdk-testpmd")
    tmp = Path(tempfile.mkdtemp())
    cap = tmp / "g64.pcap"
    r = sh([a.warpath, "gen", "traffic", "--out", str(cap), "--count", "4096", "--sizes", "fixed",
            "--size", "64", "--ipv6-share", "0"])
    if r.returncode != 0:
        sys.exit(r.stderr)
    null = ["net_null0", "net_null1"]
    pcap = [f"net_pcap0,rx_pcap={cap},infinite_rx=1", "net_null1,no-rx=1"]
    def warpath_rows(binary, mark=""):
        """The warpath rows of `binary`, named with `mark` after the chain when given."""
        out = {}
        for ports, spec in (("null", null), ("pcap", pcap)):
            for chain in ("wire", "router") if ports == "pcap" else ("wire",):
                for extra in ((), ("--copy",)):
                    name = f"warpath {chain}{' --copy' if extra else ''}{mark}, {ports}"
                    out[name] = (lambda spec=spec, chain=chain, extra=extra:
                                 warpath(binary, [("a", spec[0]), ("b", spec[1])], chain,
                                         a.seconds, a.core, *extra))
        return out

    def with_twins(mine):
        """Each row of this binary, then (--compare) the same row of the other beside it."""
        if not a.compare:
            return mine
        theirs = warpath_rows(a.compare, f" [{Path(a.compare).name}]")
        out = {}
        for k, f in mine.items():
            name, ports = k.rsplit(", ", 1)
            out[k] = f
            out[f"{name} [{Path(a.compare).name}], {ports}"] = theirs[f"{name} [{Path(a.compare).name}], {ports}"]
        return out

    own = warpath_rows(a.warpath)
    rows = {"testpmd io, null": lambda: (testpmd(null, "io", a.seconds, a.core), {}),
            "testpmd macswap, null": lambda: (testpmd(null, "macswap", a.seconds, a.core), {})}
    rows.update(with_twins({k: f for k, f in own.items() if k.endswith("null")}))
    rows["testpmd io, pcap"] = lambda: (testpmd(pcap, "io", a.seconds, a.core), {})
    rows.update(with_twins({k: f for k, f in own.items() if k.endswith("pcap")}))
    twin = f" [{Path(a.compare).name}]" if a.compare else None
    if a.only:  # a twin goes with its row
        rows = {k: f for k, f in rows.items()
                if a.only in (k.replace(twin, "") if twin else k) or k.startswith("testpmd io")}
    got = {k: [] for k in rows}
    stages = {k: [] for k in rows}
    for rnd in range(a.rounds):
        order = list(rows)
        if twin and rnd % 2:  # every other round, each twin runs before its row
            for i in range(len(order) - 1):
                if twin in order[i + 1] and twin not in order[i]:
                    order[i], order[i + 1] = order[i + 1], order[i]
        for k in order:
            f = rows[k]
            mpps, st = f()
            got[k].append(mpps)
            if st:
                stages[k].append(st)
            print(f"round {rnd + 1}: {k}: {mpps:.2f} Mpps", file=sys.stderr)
    mhz = 0.0
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            mhz = float(line.split(":")[1])
            break
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                  if l.startswith("model name")), platform.processor())
    commit = sh(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"]).stdout.strip()
    result = {"bench": "floor", "commit": commit, "machine": model, "cpu_mhz": mhz,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "rounds": a.rounds, "seconds": a.seconds, "core": a.core,
              "command": " ".join(sys.argv), "rows": []}
    anchor = {"null": statistics.median(got["testpmd io, null"]), "pcap": statistics.median(got["testpmd io, pcap"])}
    for k, v in got.items():
        med = statistics.median(v)
        ports = "null" if k.endswith("null") else "pcap"
        ratios = [x / y for x, y in zip(v, got[f"testpmd io, {ports}"])]  # paired, per round
        row = {"row": k, "mpps_median": med, "mpps": v, "ns_per_packet": 1e3 / med if med else 0,
               "cycles_per_packet": 1e3 / med * mhz / 1e3 if med and mhz else 0,
               "ratio_to_testpmd_io": statistics.median(ratios), "anchor_mpps": anchor[ports]}
        if stages[k]:
            row["stages_ns_per_packet"] = {s: statistics.median(x[s] for x in stages[k]) for s in stages[k][0]}
        result["rows"].append(row)
    day = datetime.date.today().isoformat()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    base = out / f"floor-{day}-{commit[:7]}"
    base.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# The framework's floor beside dpdk-testpmd ({day}, {commit})", "",
             f"Machine: {model}, {mhz:.0f} MHz nominal; one forwarding core ({a.core}), pinned; "
             f"{a.rounds} paired rounds of {a.seconds:g} s; medians. Command: `{result['command']}`.", "",
             "| row | Mpps | ns/packet | cycles/packet | ratio to testpmd io (paired) | warpath stages ns (rx, parse, modules, tx, other) |",
             "|---|---|---|---|---|---|"]
    for row in result["rows"]:
        st = row.get("stages_ns_per_packet")
        sts = ", ".join(f"{st[s]:.1f}" for s in ("rx", "parse", "modules", "tx", "other")) if st else ""
        lines.append(f"| {row['row']} | {row['mpps_median']:.2f} | {row['ns_per_packet']:.1f} | "
                     f"{row['cycles_per_packet']:.0f} | {row['ratio_to_testpmd_io']:.2f}x | {sts} |")
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
