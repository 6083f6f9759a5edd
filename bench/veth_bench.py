#!/usr/bin/env python3
"""bench/veth_bench.py: `warpath run` forwarding over veth, GSwitch Figures 9-10 style.

Run by scripts/bench-veth.sh, which builds warpath, creates the network namespace and deletes it
on exit. The namespace holds two veth pairs, srcA <-> wA and wB <-> dstB, all up, no addresses,
IPv6 off (tests/cli/netns_util.py's topology), so every frame on the wires is the benchmark's.

    source  warpath run --app acl (one catch-all rule, permit) --port g=gen:RATE
            --port out=afpacket:srcA: the generator's frames leave through srcA (the acl app
            sends what it permits from port 0 to its paired port 1)
    DUT     warpath run --app router+acl --port a=KIND:wA --port b=KIND:wB (KIND afpacket or
            afxdp) --engine cpu|gpu|auto --workers 1: a 1,000-rule ACL (warpath gen rules, all
            permit), then a FIB whose every route leaves through port b
    sink    dstB: the kernel drops what arrives (no address, foreign destination MAC)

Each point starts the DUT (it runs until SIGINT), sends probe frames on srcA until one arrives
at dstB (ports open and workers forwarding: no fixed sleep), reads the veth counters, runs the
source for --duration seconds, waits until dstB is quiet, reads the counters again and stops
the DUT with SIGINT (it drains and writes its JSON report). Rates are over the source's run
time (its report's `seconds`): forwarded Mpps = (DUT port b tx - probes) / seconds.

Sweeps, for each port kind and offload policy:
  throughput  source at full speed (gen:max), DUT --batch 32, 128, 512, 2048, --delay-us 1000
  delay       source at --delay-rate pps (default: half the best forwarded rate of the
              throughput sweep of that kind and policy, rounded down to 10 kpps), DUT
              --batch 8192, --delay-us 10, 50, 200, 1000, 5000
Latency is the DUT's own RX-to-TX figure (its monotonic clock, from the worker's read of the
packet to the return of its chunk's tx_burst()): time in the kernel's rings (AF_PACKET with a
delay bound of 1 ms or more: until a TPACKET_V3 block is full or 1 ms old) and on the veth is
not in it.

Cores: the machine this was written for has two. The DUT keeps warpath's default pinning (its
worker on core 1; with an offload policy the GPU master on core 0); the source runs with
--no-pin under `taskset -c 0`, so it never competes with the DUT's worker. The kernel's work is
not pinned: the veth delivers srcA's frames to wA in the sending thread's softirq (core 0, the
source's), and wB's frames to dstB on the DUT's core.

Quiet machine: each point records the user-space CPU time other processes used meanwhile
(/proc/stat user + nice minus the benchmark's own processes); a point where that exceeds
QUIET_CPU_S is run again after --retry-wait seconds, at most --retries times, and the .md says
which points still ran beside other work.

Checks, per point (recorded in the JSON, summarised in the .md; the run exits 1 when one fails):
the DUT's counters add up (rx = tx + dropped + slow_path, nothing in flight, its own check ok,
drops and slow path by reason sum to the totals, per-port rx + rx_dropped and tx sum to the
totals, exit status 130 after our SIGINT); the source's too; and against the kernel's veth counters: what reached
wA is what the DUT received or lost in its RX ring, what the DUT sent on wB reached dstB or
was counted as a veth drop, and what the source sent went onto srcA or was counted as dropped.

Usage (normally through scripts/bench-veth.sh):
  veth_bench.py --warpath BIN --ns NS --work DIR --commit C --results DIR [--command TEXT]
                [--duration 2] [--kinds afpacket,afxdp] [--engines cpu[,gpu,auto]]
                [--batches 32,128,512,2048] [--delays 10,50,200,1000,5000]
                [--delay-rate auto|PPS] [--retries 2] [--retry-wait 15] [--quick]
  veth_bench.py probe --inject srcA --watch dstB [--timeout 15]     (inside the namespace)
  veth_bench.py render bench/results/veth-....json                  (.md and .png again)
"""

import argparse
import datetime
import json
import os
import platform
import random
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from machine_info import cpu_model

IFACES = ("srcA", "wA", "wB", "dstB")
QUIET_CPU_S = 0.2  # other processes' user CPU time per point above which a point is suspect
NEIGHBOR_MAC = "00:00:5e:00:53:{:02x}"
PORT1_MAC = "02:00:00:00:be:01"
NEXT_HOPS = 8

# --- the probe (runs inside the namespace) ------------------------------------------------------


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def probe_frame(k):
    """IPv4/UDP 10.255.0.1 -> 10.254.x.y (routed to port b like the rest), 64 bytes."""
    payload = b"WARPATH-VETH-PROBE" + struct.pack("!I", k)
    udp = struct.pack("!HHHH", 40000 + k % 1000, 9, 8 + len(payload), 0) + payload
    dst = bytes([10, 254, (k >> 8) & 255, k & 255])
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), k & 0xFFFF, 0x4000, 64, 17, 0,
                      bytes([10, 255, 0, 1]), dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    frame = bytes.fromhex("02bb00000001" "02bb00000002" "0800") + hdr + udp
    return frame + bytes(max(0, 60 - len(frame)))


def counter(ifname, name):
    return int(Path(f"/sys/class/net/{ifname}/statistics/{name}").read_text())


def probe_main(args):
    """Sends probes on `inject` until `watch` has received one more frame than at the start."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((args.inject, 0))
    start = counter(args.watch, "rx_packets")
    deadline = time.monotonic() + args.timeout
    k = 0
    while time.monotonic() < deadline:
        s.send(probe_frame(k))
        k += 1
        t_end = time.monotonic() + 0.05
        while time.monotonic() < t_end:
            if counter(args.watch, "rx_packets") > start:
                print(json.dumps({"probes": k}))
                return 0
            time.sleep(0.002)
    print(json.dumps({"probes": k, "error": f"no frame reached {args.watch} within "
                      f"{args.timeout} s"}))
    return 0


# --- inputs -------------------------------------------------------------------------------------


def write_inputs(work, warpath):
    """The DUT's FIB, neighbour file and ACL; the source's one-rule ACL."""
    rng = random.Random(1)
    lines = ["# veth bench FIB: the generator's addresses are 10.0.0.0/8 and fd00::/8; every",
             f"# next hop (1..{NEXT_HOPS}) is a neighbour on port 1 (wB)",
             "0.0.0.0/0 1", "::/0 2", "10.0.0.0/8 3", "fd00::/8 4"]
    seen = set()
    while len(seen) < 4000:
        ln = rng.randint(12, 24)
        net = (0x0A000000 | rng.getrandbits(24)) >> (32 - ln) << (32 - ln)
        if (net, ln) not in seen:
            seen.add((net, ln))
            lines.append(f"{socket.inet_ntoa(struct.pack('!I', net))}/{ln} "
                         f"{rng.randint(1, NEXT_HOPS)}")
    seen6 = set()
    while len(seen6) < 1000:
        ln = rng.randint(16, 64)
        net = ((0xFD << 120) | (rng.getrandbits(120))) >> (128 - ln) << (128 - ln)
        if (net, ln) not in seen6:
            seen6.add((net, ln))
            a = socket.inet_ntop(socket.AF_INET6, net.to_bytes(16, "big"))
            lines.append(f"{a}/{ln} {rng.randint(1, NEXT_HOPS)}")
    (work / "fib.txt").write_text("\n".join(lines) + "\n")
    nb = ["# nexthop port dst_mac"]
    nb += [f"{n} 1 {NEIGHBOR_MAC.format(n)}" for n in range(1, NEXT_HOPS + 1)]
    nb.append(f"port 1 {PORT1_MAC}")
    (work / "neighbors.txt").write_text("\n".join(nb) + "\n")
    r = subprocess.run([warpath, "gen", "rules", "--out", work / "acl.rules", "-N", "1000",
                        "-f", "5", "--seed", "1"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"warpath gen rules: {r.stderr}")
    (work / "source.rules").write_text("@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\n")
    return {"fib": f"{len(seen)} random IPv4 prefixes (/12../24) in 10.0.0.0/8 and {len(seen6)} "
                   f"IPv6 (/16../64) in fd00::/8 plus defaults, next hops 1..{NEXT_HOPS}, all "
                   "neighbours on port b",
            "acl": "warpath gen rules -N 1000 -f 5 --seed 1 (GSwitch synthetic 5-tuple, C=128 "
                   "F=128), --match-action permit --default-action permit: nothing is denied",
            "traffic": "warpath's generator, default profile (IMIX sizes, 25% IPv6 flows, 10% "
                       "802.1Q, TCP/UDP/ICMP 6:3:1, 4096-frame pool, seed 1); the CLI has no "
                       "profile option, so 64-byte frames are not available"}


# --- the namespace ------------------------------------------------------------------------------


def link_counters(ns):
    r = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"], capture_output=True,
                       text=True, check=True)
    out = {}
    for link in json.loads(r.stdout):
        if link["ifname"] in IFACES:
            s = link["stats64"]
            out[link["ifname"]] = {"rx_packets": s["rx"]["packets"],
                                   "rx_dropped": s["rx"]["dropped"],
                                   "tx_packets": s["tx"]["packets"],
                                   "tx_dropped": s["tx"]["dropped"]}
    return out


def user_ticks():
    """(user + nice time of all CPUs, this process's and its waited children's user time), both
    in seconds: their difference over a point is what other processes ran in user space (a
    compile next door shows there; the kernel's veth work is system time and does not)."""
    f = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    hz = os.sysconf("SC_CLK_TCK")
    t = os.times()
    return (int(f[1]) + int(f[2])) / hz, t.user + t.children_user


def delta(a, b):
    return {i: {k: b[i][k] - a[i][k] for k in a[i]} for i in a}


def probe(ns, timeout=15):
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__),
                        "probe", "--inject", "srcA", "--watch", "dstB", "--timeout",
                        str(timeout)], capture_output=True, text=True, timeout=timeout + 30)
    if r.returncode != 0:
        return {"probes": 0, "error": f"probe failed: {r.stderr.strip()}"}
    return json.loads(r.stdout)


def wait_quiet(ns, quiet_s=0.25, max_s=5.0):
    """Until dstB's receive counter has not moved for `quiet_s` (the DUT has drained)."""
    end = time.monotonic() + max_s
    last = link_counters(ns)["dstB"]["rx_packets"]
    since = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.05)
        now = link_counters(ns)["dstB"]["rx_packets"]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


# --- one point ----------------------------------------------------------------------------------


def report_checks(j, rc, who, stopped=False):
    """Failed checks (strings) of a warpath run report; a run stopped by our SIGINT exits 130."""
    bad = []
    if rc != (128 + signal.SIGINT if stopped else 0) and rc != 0:
        bad.append(f"{who}: exit status {rc}")
    if j is None:
        return bad + [f"{who}: no JSON report"]
    t = j["totals"]
    if t["rx"] != t["tx"] + t["dropped"] + t["slow_path"]:
        bad.append(f"{who}: rx {t['rx']} != tx {t['tx']} + dropped {t['dropped']} + slow_path "
                   f"{t['slow_path']}")
    if t["in_flight"] != 0:
        bad.append(f"{who}: {t['in_flight']} in flight")
    if not j["check"]["ok"]:
        bad.append(f"{who}: check: {j['check']['message']}")
    if sum(j["drops_by_reason"].values()) != t["dropped"]:
        bad.append(f"{who}: drops by reason {j['drops_by_reason']} != {t['dropped']}")
    if sum(j["slow_path_by_reason"].values()) != t["slow_path"]:
        bad.append(f"{who}: slow path by reason != {t['slow_path']}")
    if sum(p["tx"] for p in j["ports"]) != t["tx"]:
        bad.append(f"{who}: port tx sum != {t['tx']}")
    if sum(p["rx"] + p["rx_dropped"] for p in j["ports"]) != t["rx"]:
        bad.append(f"{who}: port rx + rx_dropped sum != {t['rx']}")
    if j["drops_by_reason"].get("rx_queue_full", 0) != sum(p["rx_dropped"] for p in j["ports"]):
        bad.append(f"{who}: rx_queue_full != sum of port rx_dropped")
    if j["latency_us"]["count"] != t["tx"]:
        bad.append(f"{who}: latency count {j['latency_us']['count']} != tx {t['tx']}")
    return bad


def essentials(j):
    keep = ("app", "engine", "engines", "workers", "batch", "delay_us", "seconds", "mpps",
            "mpps_out", "gbps", "gbps_out", "totals", "check", "drops_by_reason",
            "slow_path_by_reason", "batches", "latency_us", "stopped_by", "command")
    out = {k: j[k] for k in keep if k in j}
    out["ports"] = [{k: p[k] for k in ("name", "spec", "description", "rx", "rx_dropped", "tx",
                                       "tx_errors", "rx_bytes", "tx_bytes")} for p in j["ports"]]
    return out


def run_point(o, work, sweep, kind, engine, batch, delay_us, rate, attempt=1):
    tag = f"{sweep}-{kind}-{engine}-{batch}-{delay_us}-{attempt}"
    d = work / tag
    d.mkdir()
    point = {"sweep": sweep, "kind": kind, "engine": engine, "batch": batch,
             "delay_us": delay_us, "source_rate": rate}
    dut_cmd = [o.warpath, "run", "--app", "router+acl", "--fib", work / "fib.txt",
               "--neighbors", work / "neighbors.txt", "--rules", work / "acl.rules",
               "--format", "classbench", "--match-action", "permit", "--default-action",
               "permit", "--port", f"a={kind}:wA", "--port", f"b={kind}:wB", "--engine", engine,
               "--workers", "1", "--batch", str(batch), "--delay-us", str(delay_us),
               # A watchdog only: the point stops the DUT with SIGINT.
               "--duration", str(o.duration + 60), "--no-progress", "--json", d / "dut.json"]
    src_cmd = ["taskset", "-c", str(o.source_cpu), o.warpath, "run", "--app", "acl", "--rules",
               work / "source.rules", "--format", "classbench", "--match-action", "permit",
               "--default-action", "permit", "--port", f"g=gen:{rate}", "--port",
               "out=afpacket:srcA", "--engine", "cpu", "--workers", "1", "--no-pin",
               "--duration", str(o.duration), "--no-progress", "--json", d / "source.json"]
    point["dut_command"] = " ".join(map(str, dut_cmd[1:]))
    point["source_command"] = " ".join(map(str, src_cmd))
    ns = ["ip", "netns", "exec", o.ns]
    u0 = user_ticks()
    c0 = link_counters(o.ns)
    with open(d / "dut.out", "w") as out, open(d / "dut.err", "w") as err:
        dut = subprocess.Popen(ns + list(map(str, dut_cmd)), stdout=out, stderr=err)
    try:
        pr = probe(o.ns)
        point["probes_sent"] = pr["probes"]
        if "error" in pr or dut.poll() is not None:
            raise RuntimeError(pr.get("error", "the DUT exited"))
        time.sleep(0.1)  # late probes out of the way
        c1 = link_counters(o.ns)
        src = subprocess.run(ns + list(map(str, src_cmd)), capture_output=True, text=True,
                             timeout=o.duration + 60)
        (d / "source.out").write_text(src.stdout + src.stderr)
        wait_quiet(o.ns)
        c2 = link_counters(o.ns)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        dut.send_signal(signal.SIGINT)
        try:
            dut.wait(timeout=20)
        except subprocess.TimeoutExpired:
            dut.kill()
            dut.wait()
        point["error"] = f"{e}: {(d / 'dut.err').read_text().strip()}"
        return point
    dut.send_signal(signal.SIGINT)
    try:
        rc = dut.wait(timeout=30)
    except subprocess.TimeoutExpired:
        dut.kill()
        rc = dut.wait()
        point["error"] = "the DUT did not stop within 30 s of SIGINT"
    point["dut_rc"] = rc
    u1 = user_ticks()
    # User-space CPU time of processes other than this point's (the DUT, the source, the
    # driver and its probes): a busy neighbour makes the point suspect (see the .md).
    point["other_user_cpu_s"] = round((u1[0] - u0[0]) - (u1[1] - u0[1]), 2)
    point["dut_stderr"] = (d / "dut.err").read_text().strip()
    j = json.loads((d / "dut.json").read_text()) if (d / "dut.json").exists() else None
    sj = json.loads((d / "source.json").read_text()) if (d / "source.json").exists() else None
    point["dut"] = essentials(j) if j else None
    point["source_rc"] = src.returncode
    point["source"] = essentials(sj) if sj else None
    # probes: what arrived at wA / left dstB while probing (between c0 and c1)
    pd = delta(c0, c1)
    gd = delta(c1, c2)
    point["veth_probe_phase"] = pd
    point["veth"] = gd
    checks = report_checks(j, rc, "DUT", stopped=True) + report_checks(sj, src.returncode, "source")
    if j and sj:
        a, b = j["ports"]
        g, out = sj["ports"]
        # Probes: every one the DUT received it forwarded (all are routed to b, none is
        # denied); those that reached wA before the DUT's sockets were open it never saw.
        probes_out = pd["dstB"]["rx_packets"] + pd["wB"]["tx_dropped"]
        probes_in = probes_out
        secs = sj["seconds"]
        # Against the kernel's counters.
        if a["rx"] + a["rx_dropped"] != probes_in + gd["wA"]["rx_packets"]:
            checks.append(f"veth: DUT a rx {a['rx']} + rx_dropped {a['rx_dropped']} != "
                          f"probes {probes_in} + arrived at wA {gd['wA']['rx_packets']}")
        sent_b = b["tx"]
        seen_b = pd["dstB"]["rx_packets"] + gd["dstB"]["rx_packets"] + \
            pd["wB"]["tx_dropped"] + gd["wB"]["tx_dropped"]
        if sent_b != seen_b:
            checks.append(f"veth: DUT b tx {sent_b} != dstB rx + wB tx_dropped {seen_b}")
        if out["tx"] != gd["srcA"]["tx_packets"] + gd["srcA"]["tx_dropped"]:
            checks.append(f"veth: source tx {out['tx']} != srcA tx {gd['srcA']['tx_packets']} + "
                          f"tx_dropped {gd['srcA']['tx_dropped']}")
        if j["totals"]["slow_path"] or set(j["drops_by_reason"]) - {"rx_queue_full"}:
            checks.append(f"DUT: unexpected drops or slow path: {j['drops_by_reason']} "
                          f"{j['slow_path_by_reason']}")
        fwd = b["tx"] - probes_out
        lat = j["latency_us"]
        point["result"] = {
            "seconds": secs,
            "source_mpps": out["tx"] / secs / 1e6,          # what the source put on srcA
            "source_tx_errors": out["tx_errors"],
            "source_rx_dropped": g["rx_dropped"],           # generator's modelled ring (at a rate)
            "veth_src_dropped": gd["srcA"]["tx_dropped"],   # lost between srcA and wA
            "arrived_mpps": gd["wA"]["rx_packets"] / secs / 1e6,
            "rx_mpps": (a["rx"] - probes_in) / secs / 1e6,   # what the DUT took from its ring
            "mpps": fwd / secs / 1e6,                        # forwarded
            "gbps": (b["tx_bytes"] * 8) / secs / 1e9,
            "rx_queue_full": a["rx_dropped"],
            "rx_queue_full_share": a["rx_dropped"] / max(1, a["rx"] + a["rx_dropped"]),
            "batch_fill": j["batches"]["fill"],
            "chunks": j["batches"]["chunks"],
            "packets_per_chunk": a["rx"] / max(1, j["batches"]["chunks"]),
            # Who set the pace: the DUT when its RX ring overflowed (more than 0.1% lost
            # there), else the source (then Mpps is a lower bound of what the DUT can do).
            "bound_by": "DUT" if a["rx_dropped"] > 0.001 * (a["rx"] + a["rx_dropped"])
                        else "source",
            "gpu_share": j["batches"]["gpu_share"],
            "latency_us": {k: lat[k] for k in ("p50", "p99", "p999", "max", "mean")},
            "probes": {"sent": point["probes_sent"], "reached_wa": pd["wA"]["rx_packets"],
                       "forwarded": probes_out}}
    point["checks_failed"] = checks
    return point


# --- output -------------------------------------------------------------------------------------


def fmt_rate(pps):
    return f"{pps / 1e6:g}M" if pps >= 1e6 else f"{pps / 1e3:g}k"


def write_md(doc, prefix):
    m = doc["machine"]
    pts = doc["points"]
    ok = [p for p in pts if "result" in p]
    lines = [
        "# veth forwarding benchmark (`warpath run`, router+acl, 1 worker)", "",
        f"commit `{doc['commit']}`, {m['cpu']} ({m['cores']} cores), kernel {m['kernel']}, "
        f"{doc['duration_s']} s per point, command `{doc['command']}`; warpath built from "
        f"`{doc['warpath_build'].get('commit', '?')}` ({doc['warpath_build'].get('type', '?')}, "
        f"{doc['warpath_build'].get('compiler', '?')})", "",
        "source: " + doc["source"], "", "DUT: " + doc["dut"], "",
        f"FIB: {doc['data']['fib']}. ACL: {doc['data']['acl']}. Traffic: "
        f"{doc['data']['traffic']}.", "",
        "Mpps = forwarded by the DUT (port b tx, probes excluded) over the source's run time; "
        "offered = what the source put on srcA; rx-ring = the DUT's rx_queue_full (its kernel "
        "RX ring overflowed); src-veth = lost between srcA and wA (veth / backlog drops before "
        "the DUT's ring); bound = who set the pace (DUT: its RX ring overflowed, more than 0.1% "
        "lost; source: the DUT kept up, so its Mpps is a lower bound); pkts/chunk = the DUT's "
        "mean chunk. Latency is the DUT's own RX-to-TX figure: from the worker's read of the "
        "packet to the return of its chunk's tx_burst().", "",
        "| sweep | port | engine | batch | delay us | source | offered Mpps | Mpps | Gbps "
        "| bound | pkts/chunk | fill | rx-ring drops | src-veth drops | p50 us | p99 us "
        "| p99.9 us | other CPU s |",
        "|---|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in pts:
        if "result" not in p:
            lines.append(f"| {p['sweep']} | {p['kind']} | {p['engine']} | {p['batch']} | "
                         f"{p['delay_us']} | {p['source_rate']} | - | - | - | - | - | - | - | - "
                         f"| - | - | - | - |")
            continue
        r = p["result"]
        lat = r["latency_us"]
        lines.append(
            f"| {p['sweep']} | {p['kind']} | {p['engine']} | {p['batch']} | {p['delay_us']} | "
            f"gen:{p['source_rate']} | {r['source_mpps']:.3f} | {r['mpps']:.3f} | "
            f"{r['gbps']:.2f} | {r['bound_by']} | {r['packets_per_chunk']:.0f} | "
            f"{r['batch_fill']:.3f} | {r['rx_queue_full']} "
            f"({100 * r['rx_queue_full_share']:.1f}%) | {r['veth_src_dropped']} | "
            f"{lat['p50']:.0f} | {lat['p99']:.0f} | {lat['p999']:.0f} | "
            f"{max(0.0, p.get('other_user_cpu_s', 0)):.2f} |")
    lines.append("")
    busy = [p for p in ok if p.get("other_user_cpu_s", 0) > QUIET_CPU_S]
    lines.append(
        "other CPU s = user-space CPU time of other processes on the machine during the point "
        "(/proc/stat user + nice minus the benchmark's own processes): "
        + (f"**{len(busy)} point(s) ran beside other work (over {QUIET_CPU_S} s); their numbers "
           "are suspect.**" if busy else f"at most {QUIET_CPU_S} s in every point: the machine "
           "was quiet.")
        + (f" {sum(p.get('attempt', 1) > 1 for p in ok)} point(s) were run again because "
           "other work ran during an earlier attempt." if any(p.get("attempt", 1) > 1
                                                               for p in ok) else ""))
    lines.append("")
    errs = [p for p in pts if "error" in p]
    for p in errs:
        lines.append(f"- not measured: {p['sweep']} {p['kind']} {p['engine']} batch "
                     f"{p['batch']} delay {p['delay_us']}: {p['error']}")
    failed = [(p, c) for p in pts for c in p.get("checks_failed", [])]
    if failed:
        lines.append(f"**Checks failed** in {len({id(p) for p, _ in failed})} point(s):")
        lines += [f"- {p['sweep']} {p['kind']} {p['engine']} batch {p['batch']} delay "
                  f"{p['delay_us']}: {c}" for p, c in failed]
    else:
        lines.append(
            f"Checks: in all {len(ok)} measured points the DUT's and the source's counters add "
            "up (rx = tx + dropped + slow_path, nothing in flight, the report's own check ok, "
            "drops by reason and per-port counters sum to the totals, rx_queue_full = port "
            "rx_dropped, one latency sample per forwarded packet, exit status 130 after SIGINT), "
            "the only drops are rx_queue_full (no slow path, no ACL denies), and they agree "
            "with the kernel's veth counters: DUT port a rx + rx_dropped = frames that reached "
            "wA, DUT port b tx = frames that reached dstB + wB tx_dropped, source tx = srcA "
            "tx_packets + tx_dropped.")
    if doc.get("notes"):
        lines += [""] + [f"- {n}" for n in doc["notes"]]
    Path(prefix + ".md").write_text("\n".join(lines) + "\n")


def write_png(doc, prefix):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    pts = [p for p in doc["points"] if "result" in p]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    series = sorted({(p["kind"], p["engine"]) for p in pts})
    for kind, eng in series:
        label = f"{kind} {eng}"
        t = [p for p in pts if p["sweep"] == "throughput" and (p["kind"], p["engine"]) ==
             (kind, eng)]
        if t:
            line, = a.plot([p["batch"] for p in t], [p["result"]["mpps"] for p in t],
                           marker="o", label=f"{label} forwarded")
            a.plot([p["batch"] for p in t], [p["result"]["source_mpps"] for p in t],
                   marker=".", linestyle=":", color=line.get_color(),
                   label=f"{label} offered (srcA)")
        dl = [p for p in pts if p["sweep"] == "delay" and (p["kind"], p["engine"]) ==
              (kind, eng)]
        if dl:
            off = dl[0]["source_rate"]
            line, = b.plot([p["delay_us"] for p in dl],
                           [p["result"]["latency_us"]["p50"] for p in dl], marker="o",
                           label=f"{label} p50 (gen:{off})")
            b.plot([p["delay_us"] for p in dl], [p["result"]["latency_us"]["p99"] for p in dl],
                   marker="x", linestyle="--", color=line.get_color(), label=f"{label} p99")
    a.set_xscale("log", base=2)
    a.set_xlabel("maximum batch (packets), delay bound 1 ms")
    a.set_ylabel("Mpps (source at full speed)")
    a.set_ylim(bottom=0)
    a.set_title("Throughput vs batch size")
    a.legend(fontsize=8)
    b.set_xscale("log")
    b.set_yscale("log")
    b.plot(doc["delays"], doc["delays"], color="grey", linewidth=0.8, linestyle=":",
           label="delay bound")
    b.set_xlabel("delay bound (us), maximum batch 8192")
    b.set_ylabel("RX-to-TX latency (us)")
    b.set_title("Latency vs delay bound")
    b.legend(fontsize=8)
    fig.suptitle(f"warpath run over veth, router+acl, 1 worker, commit {doc['commit']}")
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=110)
    return True


# --- main ---------------------------------------------------------------------------------------

NOTES = [
    "Where the CPU goes (2 cores): core 0 runs the source, its sendmmsg() on srcA and, in the "
    "same softirq context, wA's receive path (the kernel's copy into the DUT's AF_PACKET ring "
    "or, with XDP, the veth NAPI poll, the XSK program and the copy into the UMEM); core 1 runs "
    "the DUT's worker, its transmit on wB and dstB's receive path (the kernel dropping the "
    "frames). The veth path costs about as much per frame as warpath itself, so on this "
    "machine the source and the DUT saturate at similar rates: see the bound column.",
    "AF_PACKET uses TPACKET_V3 rings with a delay bound of 1 ms or more: they hand the DUT "
    "whole blocks (32 KiB, about 70 IMIX frames) when full or after 1 ms (afpacket_port.cpp "
    "kRetireMs), so below the time a block takes to fill the bound would not shape the chunks, "
    "and the time a frame waits in a block not yet handed over is not in the latency. Below "
    "1 ms (the delay sweep's 10, 50 and 200 us points; the throughput sweep runs at 1 ms, on "
    "V3) the rings are TPACKET_V2: every frame is handed over as soon as it is written, as "
    "AF_XDP does.",
    "The worker takes one timestamp per port and chunk after tx_burst() returns, so every "
    "packet's latency includes the transmit time of its whole chunk (over veth: the kernel's "
    "transmit and the peer's receive, per frame); this is why p50 exceeds the delay bound at "
    "5 ms (chunks of thousands of packets) and grows with the batch in the throughput sweep.",
]


def warpath_info(warpath):
    r = subprocess.run([warpath, "info", "--json"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def main(argv):
    if len(argv) == 3 and argv[1] == "render":
        # The .md and .png again from a result file (after a change to their layout).
        prefix = argv[2].removesuffix(".json")
        doc = json.loads(Path(prefix + ".json").read_text())
        write_md(doc, prefix)
        write_png(doc, prefix)
        return 0
    if len(argv) > 1 and argv[1] == "probe":
        ap = argparse.ArgumentParser(prog="veth_bench.py probe")
        ap.add_argument("--inject", required=True)
        ap.add_argument("--watch", required=True)
        ap.add_argument("--timeout", type=float, default=15)
        return probe_main(ap.parse_args(argv[2:]))

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warpath", required=True)
    ap.add_argument("--ns", required=True, help="namespace with srcA<->wA, wB<->dstB")
    ap.add_argument("--work", required=True, help="scratch directory")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--results", required=True, help="directory for the result files")
    ap.add_argument("--command", default="bench/veth_bench.py")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds of traffic per point")
    ap.add_argument("--kinds", default="afpacket,afxdp")
    ap.add_argument("--engines", default="", help="default: cpu, and gpu,auto with a CUDA device")
    ap.add_argument("--batches", default="32,128,512,2048")
    ap.add_argument("--delays", default="10,50,200,1000,5000")
    ap.add_argument("--delay-rate", default="auto",
                    help="source rate of the delay sweep: auto (half the best forwarded rate) "
                         "or packets/s")
    ap.add_argument("--source-cpu", type=int, default=0, help="core the source runs on")
    ap.add_argument("--retries", type=int, default=2,
                    help="times a point is run again when other processes used more than "
                         f"{QUIET_CPU_S} s of CPU during it")
    ap.add_argument("--retry-wait", type=float, default=15, help="seconds before a retry")
    ap.add_argument("--quick", action="store_true", help="1 s points, batches 32,512, "
                                                         "delays 10,1000")
    o = ap.parse_args(argv[1:])
    if o.quick:
        o.duration, o.batches, o.delays = 1.0, "32,512", "10,1000"
    info = warpath_info(o.warpath)
    devices = info.get("cuda", {}).get("devices", [])
    built = info.get("build", {}).get("commit", "")
    if built and not built.startswith(o.commit[:12]):
        print(f"warning: --commit {o.commit} but the binary was built from {built}",
              file=sys.stderr)
    engines = o.engines.split(",") if o.engines else (["cpu", "gpu", "auto"] if devices
                                                      else ["cpu"])
    kinds = o.kinds.split(",")
    batches = [int(x) for x in o.batches.split(",")]
    delays = [int(x) for x in o.delays.split(",")]
    work = Path(o.work)
    data = write_inputs(work, o.warpath)

    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = Path("/proc/loadavg").read_text().strip()
    points = []
    t0 = time.monotonic()

    def run(*args):
        for attempt in range(1, o.retries + 2):
            p = run_point(o, work, *args, attempt)
            p["attempt"] = attempt
            if p.get("other_user_cpu_s", 0) <= QUIET_CPU_S or attempt > o.retries:
                break
            print(f"  (other processes used {p['other_user_cpu_s']:.2f} s of CPU during the "
                  f"point: again in {o.retry_wait:g} s)", flush=True)
            time.sleep(o.retry_wait)
        points.append(p)
        r = p.get("result")
        what = (f"{p['sweep']:10} {p['kind']:8} {p['engine']:4} batch {p['batch']:5} "
                f"delay {p['delay_us']:5} gen:{p['source_rate']:6}")
        if r:
            print(f"{what}: offered {r['source_mpps']:.3f} Mpps, forwarded {r['mpps']:.3f} Mpps,"
                  f" rx-ring drops {r['rx_queue_full']}, fill {r['batch_fill']:.2f}, p50 "
                  f"{r['latency_us']['p50']:.0f} p99 {r['latency_us']['p99']:.0f} us, other "
                  f"CPU {p['other_user_cpu_s']:.2f} s"
                  + (f"  CHECKS FAILED: {p['checks_failed']}" if p["checks_failed"] else ""),
                  flush=True)
        else:
            print(f"{what}: {p.get('error')}", flush=True)
        return p

    for kind in kinds:
        for eng in engines:
            tp = [run("throughput", kind, eng, b, 1000, "max") for b in batches]
            if all("error" in p for p in tp) and any("afxdp" in p.get("error", "")
                                                    for p in tp):
                continue  # AF_XDP refused here: no delay sweep either (the error says why)
            if o.delay_rate == "auto":
                best = max((p["result"]["mpps"] for p in tp if "result" in p), default=0.4)
                rate = max(10_000, int(best * 1e6 / 2) // 10_000 * 10_000)
            else:
                rate = int(float(o.delay_rate))
            for dl in delays:
                run("delay", kind, eng, 8192, dl, fmt_rate(rate))

    kind_name = "gpu" if devices and any(e != "cpu" for e in engines) else "cpu"
    prefix = str(Path(o.results) / f"veth-{kind_name}-{started:%Y-%m-%d}-{o.commit}")
    doc = {
        "tool": "bench/veth_bench.py", "commit": o.commit,
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "command": o.command,
        "warpath_build": info.get("build", {}),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
                    "host": platform.node(), "cuda_devices": devices,
                    "loadavg_start": load_start,
                    "loadavg_end": Path("/proc/loadavg").read_text().strip()},
        "duration_s": o.duration, "elapsed_s": round(time.monotonic() - t0, 1),
        "source": f"warpath run --app acl (one catch-all rule, permit), gen:RATE -> "
                  f"afpacket:srcA, --no-pin under taskset -c {o.source_cpu}",
        "dut": "warpath run --app router+acl --workers 1, port a = KIND:wA, port b = KIND:wB, "
               "default pinning (worker on core 1), stopped with SIGINT after the source ends "
               "and dstB is quiet",
        "notes": NOTES, "data": data, "kinds": kinds, "engines": engines, "batches": batches,
        "delays": delays, "points": points}
    Path(prefix + ".json").write_text(json.dumps(doc, indent=1) + "\n")
    write_md(doc, prefix)
    png = write_png(doc, prefix)
    print(f"wrote {prefix}.json, .md" + (" and .png" if png else " (no matplotlib: no plot)"))
    return 1 if any(p.get("checks_failed") for p in points) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
