#!/usr/bin/env python3
"""bench/openflow/switch_bench.py: the OpenFlow switch's throughput, one worker, with tables of
1K / 100K / 1M exact-match flows, without and with a stream of flow_mods arriving through the
OpenFlow agent while packets flow.

    warpath run --chain "switch(flows=F)" --port gen=gen:max --port p2=null --port p3=null
                --workers 1 --batch 256 --openflow ptcp:127.0.0.1:0     (--seconds, then SIGINT)

Table: N exact-match flows of random 12-tuples (the microflow entries a reactive controller
installs; the generator's packets do not hit them, so every packet probes the exact-match
table and misses) and two wildcard flows that switch the traffic (IPv4 out of port 2, the rest
out of port 3): every packet pays the exact-match probe and the ranked subtables, as in a
switch whose exact entries serve other traffic.

With --kind wildcard, the N flows are wildcard rules instead (TCP from a /24 to a /16 and one
destination port, priorities 100-149: a proactive controller's table, one mask), and the stream
adds and deletes such rules; results then go to switch-cpu-DATE-COMMIT-wildcard.

Flow_mod stream (--flowmods RATE per second, default 1000, then --flowmods-high, default 20,000,
to see how many the agent acknowledges): a client speaking OpenFlow 1.0 over
the agent's socket adds a new exact flow and deletes (strictly) the oldest one, so the table
keeps its size, with a BARRIER every 100 flow_mods; the client reports the flow_mods the switch
acknowledged per second. Each barrier publishes a new image on the agent's thread: an
incremental one (FlowImage::publish: override tables of the matches changed since the last full
image, exact or wildcard), a full rebuild once the changes pass a sixteenth of the table; the
worker keeps switching on the image it has.

Reported per point: Mpps in (the generator's packets over the run), the switch module's ns per
packet (its own clock), and, with the stream, the flow_mods acknowledged per second. Pinning:
the worker on --cpu (default 1), everything else (the agent, the client) left to the other
core. Results: a .md and a .json in --results (default bench/results) named
switch-cpu-DATE-COMMIT, with the machine, the commit and the command.

Usage: switch_bench.py [--warpath build/warpath] [--flows 1000,100000,1000000]
                       [--kind exact|wildcard] [--seconds 3] [--flowmods 1000] [--cpu 1]
                       [--results DIR]
"""

import argparse
import datetime
import json
import os
import random
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine_info import cpu_model  # noqa: E402

OFP_HELLO, OFP_FLOW_MOD, OFP_BARRIER_REQUEST, OFP_BARRIER_REPLY = 0, 14, 18, 19


def mac(rng):
    return bytes([2] + [rng.randrange(256) for _ in range(5)])


def exact_flow(rng):
    """(text for a flow file, ofp_match bytes) of one random exact-match flow."""
    in_port = rng.randrange(1, 4)
    src, dst = mac(rng), mac(rng)
    nw_src, nw_dst = rng.getrandbits(32), rng.getrandbits(32)
    tp_src, tp_dst = rng.randrange(65536), rng.randrange(65536)
    ip = lambda a: ".".join(str(a >> s & 255) for s in (24, 16, 8, 0))
    m = lambda b: ":".join("%02x" % x for x in b)
    text = (f"priority=100,in_port={in_port},dl_src={m(src)},dl_dst={m(dst)},dl_vlan=0xffff,"
            f"dl_vlan_pcp=0,tcp,nw_src={ip(nw_src)},nw_dst={ip(nw_dst)},nw_tos=0,"
            f"tp_src={tp_src},tp_dst={tp_dst},actions=output:2")
    match = struct.pack("!IH6s6sHBxHBBxxIIHH", 0, in_port, src, dst, 0xFFFF, 0, 0x0800, 0, 6,
                        nw_src, nw_dst, tp_src, tp_dst)
    return text, match


# ofp_match wildcards of wildcard_flow(): in_port, dl_vlan, dl_src, dl_dst, tp_src, pcp, tos
# wildcarded; nw_src /24 (8 bits ignored), nw_dst /16 (16 ignored).
WILDCARD_BITS = 1 | 2 | 4 | 8 | 1 << 6 | 8 << 8 | 16 << 14 | 1 << 20 | 1 << 21


def wildcard_flow(rng):
    """(text, ofp_match bytes, priority) of one random wildcard flow (a proactive controller's
    rule: TCP from a /24 to a /16 and one destination port, priorities 100-149)."""
    nw_src, nw_dst = rng.getrandbits(24) << 8, rng.getrandbits(16) << 16
    tp_dst, prio = rng.randrange(65536), 100 + rng.randrange(50)
    ip = lambda a: ".".join(str(a >> s & 255) for s in (24, 16, 8, 0))
    text = (f"priority={prio},tcp,nw_src={ip(nw_src)}/24,nw_dst={ip(nw_dst)}/16,"
            f"tp_dst={tp_dst},actions=output:2")
    match = struct.pack("!IH6s6sHBxHBBxxIIHH", WILDCARD_BITS, 0, bytes(6), bytes(6), 0, 0, 0x0800,
                        0, 6, nw_src, nw_dst, 0, tp_dst)
    return text, match, prio


def flow_of(kind, rng):
    if kind == "wildcard":
        return wildcard_flow(rng)
    text, match = exact_flow(rng)
    return text, match, 100


def flow_mod(xid, match, command, priority=100):
    body = match + struct.pack("!QHHHHIHH", 0, command, 0, 0, priority, 0xFFFFFFFF, 0xFFFF, 0)
    acts = struct.pack("!HHHH", 0, 8, 2, 0) if command == 0 else b""
    return struct.pack("!BBHI", 1, OFP_FLOW_MOD, 8 + len(body) + len(acts), xid) + body + acts


class FlowModStream(threading.Thread):
    """Adds a new exact flow and deletes the oldest, RATE per second, a barrier every 100."""

    def __init__(self, address, matches, rate, seed, kind):
        super().__init__(daemon=True)
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.sock.sendall(struct.pack("!BBHI", 1, OFP_HELLO, 8, 0))
        self.matches, self.rate, self.rng = list(matches), rate, random.Random(seed)
        self.kind = kind
        self.acked, self.stop, self.t0, self.t1 = 0, threading.Event(), 0.0, 0.0

    def wait_barrier(self, xid):
        buf = b""
        while True:
            while len(buf) < 8:
                buf += self.sock.recv(65536)
            v, t, n, x = struct.unpack("!BBHI", buf[:8])
            while len(buf) < n:
                buf += self.sock.recv(65536)
            buf = buf[n:]
            if t == OFP_BARRIER_REPLY and x == xid:
                return
            if t == 1:
                raise RuntimeError("the switch answered a flow_mod with an error")

    def run(self):
        self.t0 = time.monotonic()
        xid, sent = 1, 0
        while not self.stop.is_set():
            batch = []
            for _ in range(50):
                _, new, prio = flow_of(self.kind, self.rng)
                batch.append(flow_mod(xid, new, 0, prio))
                old, old_prio = self.matches.pop(0)
                batch.append(flow_mod(xid + 1, old, 4, old_prio))  # DELETE_STRICT
                self.matches.append((new, prio))
                xid += 2
            xid += 1
            self.sock.sendall(b"".join(batch) + struct.pack("!BBHI", 1, OFP_BARRIER_REQUEST, 8, xid))
            self.wait_barrier(xid)
            sent += 100
            self.acked = sent
            ahead = sent / self.rate - (time.monotonic() - self.t0)
            if ahead > 0:
                time.sleep(ahead)
        self.t1 = time.monotonic()


def run_point(args, work, n, stream_rate):
    rng = random.Random(n)
    flows, matches = [], []
    for _ in range(n):
        text, match, prio = flow_of(args.kind, rng)
        flows.append(text)
        matches.append((match, prio))
    flows += ["priority=10,ip,actions=output:2", "priority=5,actions=output:3"]
    path = work / f"flows-{n}.txt"
    path.write_text("\n".join(flows) + "\n")
    report = work / f"run-{n}-{stream_rate}.json"
    cmd = [args.warpath, "run", "--chain", f"switch(flows={path})", "--port",
           "gen=gen:max", "--port", "p2=null", "--port", "p3=null",
           "--workers", "1", "--batch", "256", "--cpus", str(args.cpu), "--openflow",
           "ptcp:127.0.0.1:0", "--no-progress", "--json", str(report)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = proc.stderr.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        raise SystemExit(line + proc.stderr.read())
    stream = None
    if stream_rate:
        stream = FlowModStream(m.group(1), matches, stream_rate, n, args.kind)
        stream.start()
    time.sleep(args.seconds)  # the generator runs until stopped
    if stream:
        stream.stop.set()
        stream.join(timeout=120)
    proc.send_signal(2)
    proc.communicate(timeout=600)
    j = json.loads(report.read_text())
    sw = j["modules"][0]
    point = {"flows": n, "kind": args.kind, "flowmods_per_s_asked": stream_rate, "mpps": j["mpps"],
             "ns_per_packet": sw["ns_per_packet"], "rx": j["totals"]["rx"],
             "check": j["check"] if isinstance(j["check"], str) else j["check"].get("ok")}
    if stream:
        point["flowmods_per_s_acked"] = stream.acked / max(1e-9, stream.t1 - stream.t0)
    return point


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warpath", default="build/warpath")
    ap.add_argument("--flows", default="1000,100000,1000000")
    ap.add_argument("--seconds", type=float, default=3.0, help="run time of each point")
    ap.add_argument("--flowmods", type=int, default=1000)
    ap.add_argument("--flowmods-high", type=int, default=20000,
                    help="a second stream, to see how many the agent takes")
    ap.add_argument("--kind", choices=("exact", "wildcard"), default="exact",
                    help="the table's N flows and the stream's: exact microflows, or wildcard rules")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--results", default="bench/results")
    args = ap.parse_args()
    work = Path("build/switch-bench")
    work.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    points = []
    for n in [int(x) for x in args.flows.split(",")]:
        for rate in (0, args.flowmods, args.flowmods_high):
            p = run_point(args, work, n, rate)
            points.append(p)
            print(json.dumps(p), flush=True)
    date = datetime.date.today().isoformat()
    name = f"switch-cpu-{date}-{commit}" + ("-wildcard" if args.kind == "wildcard" else "")
    meta = {"tool": "bench/openflow/switch_bench.py", "commit": commit, "date": date,
            "machine": cpu_model(), "command": " ".join(sys.argv), "points": points}
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    rows = [f"| {args.kind} flows | flow_mods/s asked | acked | Mpps | switch ns/pkt |", "|---:|---:|---:|---:|---:|"]
    for p in points:
        rows.append(f"| {p['flows']:,} | {p['flowmods_per_s_asked']} | "
                    f"{p.get('flowmods_per_s_acked', 0):.0f} | {p['mpps']:.2f} | {p['ns_per_packet']:.1f} |")
    (out / f"{name}.md").write_text(
        f"# OpenFlow switch throughput, one worker\n\nCommit {commit}, {date}, {cpu_model()}.\n"
        f"Command: `{' '.join(sys.argv)}`\n\n" + __doc__.split("\n\n")[1] + "\n\n" + "\n".join(rows) + "\n")
    print(f"wrote {out / name}.md")


if __name__ == "__main__":
    main()
