#!/usr/bin/env python3
"""bench/openflow/ovs_side_by_side.py: warpath's switch beside Open vSwitch's userspace datapath
on the same veth pairs, with the same flows, the same source, one core each (root).

Topology: one network namespace, srcA <-> wA and wB <-> dstB (tests/cli/netns_util.py's).

    source  warpath run --chain wire --port g=gen:max --port out=afpacket:srcA   (core 0)
    DUT     either  warpath run --app switch --port a=afpacket:wA --port b=afpacket:wB
                    --workers 1 --cpus 1 --openflow none
            or      ovs-vswitchd (Open vSwitch 3.1, Debian) pinned to core 1, a netdev bridge
                    with wA and wB as `system` ports (AF_PACKET, the main thread's poll loop;
                    Open vSwitch's AF_XDP ports want a PMD core of their own, which a 2-core
                    machine with a source on the other core does not have)
    flows   in_port=1,actions=output:2 and in_port=2,actions=output:1, priority 100, loaded
            by ovs-ofctl into Open vSwitch and from a flow file into warpath
    sink    dstB: the kernel drops what arrives

Each DUT runs while the source sends for --seconds. Reported: the source's rate onto srcA,
what reached dstB (dstB's rx counter) in Mpps, and the DUT's CPU time per forwarded packet
(utime + stime of its process from /proc over the run, divided by the packets that reached
dstB). No hardware counters here (perf reports none in this VM), hence CPU time rather than
cycles. warpath's worker polls its ports without sleeping, so its CPU time is the whole core
whatever the load: for it the figure is an upper bound, reached only at saturation. Open
vSwitch's main thread sleeps in poll() when idle, so its figure is its real cost. On this
2-core machine one core's sender offers about 0.5 Mpps: a DUT that forwards all of it is not
saturated, and the comparison is then forwarded rate (who keeps up) plus the bound above. The
last column is each one's own account of its work per packet, different in scope: warpath's
switch module alone (lookup, counters, actions; not the ports), Open vSwitch's PMD processing
cycles (ovs-appctl dpif-netdev/pmd-stats-show: its whole receive-classify-send path, AF_XDP
only).

With --kind afxdp both use AF_XDP instead: warpath's afxdp ports, Open vSwitch's afxdp ports
(native XDP mode) polled by a PMD thread on core 1 (pmd-cpu-mask=0x2), its main thread unpinned.

Usage: ovs_side_by_side.py [--warpath build/warpath] [--seconds 5] [--kind afpacket|afxdp]
                           [--results bench/results]
"""

import argparse
import re
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2] / "tests" / "cli"))
sys.path.insert(0, str(HERE.parents[1]))
import netns_util as nu  # noqa: E402
from machine_info import cpu_model  # noqa: E402

FLOWS = "priority=100,in_port=1,actions=output:2\npriority=100,in_port=2,actions=output:1\n"


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rx(ns, ifname):
    r = nu.sh("cat", f"/sys/class/net/{ifname}/statistics/rx_packets", ns=ns)
    return int(r.stdout)


def run_source(o, ns, work):
    cmd = ["ip", "netns", "exec", ns, "taskset", "-c", "0", o.warpath, "run", "--chain", "wire",
           "--port", "g=gen:max", "--port", "out=afpacket:srcA", "--no-pin", "--duration",
           str(o.seconds), "--no-progress", "--json", str(work / "source.json")]
    subprocess.run(cmd, capture_output=True, timeout=o.seconds + 60, check=True)
    j = json.loads((work / "source.json").read_text())
    return j["ports"][1]["tx"] / j["seconds"] / 1e6, j["seconds"]


def measure(o, ns, work, pid, name):
    time.sleep(1.0)
    c0, r0 = cpu_seconds(pid), rx(ns, "dstB")
    offered, seconds = run_source(o, ns, work)
    time.sleep(0.3)
    c1, r1 = cpu_seconds(pid), rx(ns, "dstB")
    got = r1 - r0
    return {"dut": name, "offered_mpps": offered, "forwarded_mpps": got / seconds / 1e6,
            "forwarded": got, "cpu_ns_per_packet": (c1 - c0) * 1e9 / max(got, 1)}


def warpath_point(o, ns, work):
    (work / "flows.txt").write_text(FLOWS)
    dut = subprocess.Popen(["ip", "netns", "exec", ns, o.warpath, "run", "--app", "switch", "--flows",
                            str(work / "flows.txt"), "--port", f"a={o.kind}:wA", "--port", f"b={o.kind}:wB",
                            "--workers", "1", "--cpus", "1", "--openflow", "none", "--no-progress",
                            "--duration", str(o.seconds + 60), "--json", str(work / "dut.json")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        p = measure(o, ns, work, dut.pid, f"warpath switch ({o.kind} ports)")
    finally:
        dut.send_signal(2)
        dut.communicate(timeout=30)
    j = json.loads((work / "dut.json").read_text())
    p["own_cost"] = "switch module %.0f ns/pkt" % j["modules"][0]["ns_per_packet"]
    return p


def ovs_point(o, ns, work):
    d = work / "ovs"
    d.mkdir(exist_ok=True)
    env = {**os.environ, "OVS_RUNDIR": str(d), "OVS_LOGDIR": str(d), "OVS_DBDIR": str(d)}
    db = f"unix:{d}/db.sock"

    def sh(*cmd, netns=True):
        full = (["ip", "netns", "exec", ns] if netns else []) + list(cmd)
        r = subprocess.run(full, env=env, capture_output=True, text=True, timeout=60)
        if r.returncode:
            raise RuntimeError(f"{cmd}: {r.stderr}")
        return r

    sh("ovsdb-tool", "create", f"{d}/conf.db", "/usr/share/openvswitch/vswitch.ovsschema", netns=False)
    sh("ovsdb-server", f"--remote=punix:{d}/db.sock", f"--pidfile={d}/db.pid", "--detach",
       f"--log-file={d}/db.log", f"{d}/conf.db", netns=False)
    try:
        sh("ovs-vsctl", f"--db={db}", "--no-wait", "init", netns=False)
        sh("taskset", "-c", "1", "ovs-vswitchd", db, f"--pidfile={d}/ovs-vswitchd.pid", "--detach",
           f"--log-file={d}/vs.log")
        sh("ovs-vsctl", f"--db={db}", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
           netns=False)
        if o.kind == "afxdp":  # a PMD thread on core 1 polls the AF_XDP ports
            sh("ovs-vsctl", f"--db={db}", "set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x2",
               netns=False)
        for port, num in (("wA", 1), ("wB", 2)):
            extra = (["type=afxdp", "options:xdp-mode=native"] if o.kind == "afxdp" else [])
            sh("ovs-vsctl", f"--db={db}", "add-port", "br0", port, "--", "set", "Interface", port,
               f"ofport_request={num}", *extra, netns=False)
        sh("ovs-ofctl", "-O", "OpenFlow10", "del-flows", "br0", netns=False)
        (work / "ovs-flows.txt").write_text(FLOWS)
        sh("ovs-ofctl", "-O", "OpenFlow10", "add-flows", "br0", str(work / "ovs-flows.txt"), netns=False)
        pid = int((d / "ovs-vswitchd.pid").read_text())
        label = "afxdp ports, native XDP, PMD on core 1" if o.kind == "afxdp" else "system ports"
        p = measure(o, ns, work, pid, f"Open vSwitch 3.1 netdev ({label})")
        if o.kind == "afxdp":
            stats = sh("ovs-appctl", "dpif-netdev/pmd-stats-show", netns=False).stdout
            m = re.search(r"avg processing cycles per packet: ([0-9.]+)", stats)
            p["own_cost"] = "PMD %s cycles/pkt processing" % (m.group(1) if m else "?")
        return p
    finally:
        for f in ("ovs-vswitchd.pid", "db.pid"):
            try:
                os.kill(int((d / f).read_text()), 15)
            except (OSError, ValueError):
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warpath", default="build/warpath")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--kind", choices=["afpacket", "afxdp"], default="afpacket",
                    help="ports: AF_PACKET (Open vSwitch: system) or AF_XDP (Open vSwitch: afxdp)")
    ap.add_argument("--results", default="bench/results")
    o = ap.parse_args()
    o.warpath = str(Path(o.warpath).resolve())
    topo = nu.Topology(f"wpovs{os.getpid()}")
    topo.create()
    points = []
    try:
        with tempfile.TemporaryDirectory() as t:
            work = Path(t)
            for fn in (warpath_point, ovs_point):
                p = fn(o, topo.ns, work)
                points.append(p)
                print(json.dumps(p), flush=True)
    finally:
        topo.destroy()
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    date = datetime.date.today().isoformat()
    name = f"switch-ovs-veth-{o.kind}-{date}-{commit}"
    out = Path(o.results)
    (out / f"{name}.json").write_text(json.dumps({"tool": "bench/openflow/ovs_side_by_side.py", "commit": commit,
                                                   "date": date, "machine": cpu_model(),
                                                   "command": " ".join(sys.argv), "points": points}, indent=2) + "\n")
    rows = ["| DUT | offered Mpps | forwarded Mpps | DUT CPU ns per forwarded packet | its own measure |",
            "|---|---:|---:|---:|---|"]
    for p in points:
        rows.append(f"| {p['dut']} | {p['offered_mpps']:.3f} | {p['forwarded_mpps']:.3f} | "
                    f"{p['cpu_ns_per_packet']:.0f} | {p.get('own_cost', '-')} |")
    (out / f"{name}.md").write_text(f"# warpath's switch beside Open vSwitch on veth\n\nCommit {commit}, {date}, "
                                    f"{cpu_model()}, 2 cores. Command: `{' '.join(sys.argv)}`\n\n"
                                    + "\n\n".join(__doc__.split("\n\n")[1:4]) + "\n\n"
                                    + "\n".join(rows) + "\n")
    print(f"wrote {out / name}.md")


if __name__ == "__main__":
    main()
