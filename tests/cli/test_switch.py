"""The OpenFlow switch (`warpath run --app switch`, the `switch` module): actions end to end on
captures (rewrites with checksums tshark verifies, VLAN push and strip, copies, flood, the
controller as the slow path, the L2 learning `normal`), counters as `ovs-ofctl dump-flows`
prints them, flow-file errors, and Open vSwitch as a differential oracle: the same random
tables loaded into a port-less OVS bridge and traced packet by packet with `ofproto/trace`."""
import json
import os
import random
import re
import shutil
import subprocess
import time

import pytest
from warpath_cli import WARPATH_BIN, assert_ok, run, skip_without_binary

skip_without_binary()
scapy = pytest.importorskip("scapy.all")
from scapy.all import ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, Raw, rdpcap, wrpcap  # noqa: E402

A, B, C = "00:00:00:00:00:0a", "00:00:00:00:00:0b", "00:00:00:00:00:0c"


def switch(tmp_path, flows, inputs, chain_args="", extra=(), batch=64):
    """Runs the switch over per-port captures; returns (report, [frames out of each port])."""
    (tmp_path / "flows.txt").write_text(flows)
    ports = []
    for p, frames in enumerate(inputs):
        wrpcap(str(tmp_path / f"in{p}.pcap"), frames or [Ether()][:0], linktype=1)
        ports += ["--port", f"p{p}=pcap:{tmp_path / f'in{p}.pcap'}:{tmp_path / f'o{p}.pcap'}"]
    app = (["--chain", f"switch(flows={tmp_path / 'flows.txt'}{chain_args})"] if chain_args
           else ["--app", "switch", "--flows", tmp_path / "flows.txt"])
    out = tmp_path / "run.json"
    assert_ok(run("run", *app, *ports, "--no-progress", "--batch", batch, "--json", out, *extra))
    j = json.loads(out.read_text())
    t = j["totals"]
    assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"], t
    outs = []
    for p in range(len(inputs)):
        f = tmp_path / f"o{p}.pcap"
        outs.append(list(rdpcap(str(f))) if f.exists() and f.stat().st_size > 24 else [])
    return j, outs


def tshark_checksums(path):
    """(ip, tcp, udp) checksum status per packet as tshark verifies them (1 = good)."""
    r = subprocess.run(["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE", "-o",
                        "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-T", "fields",
                        "-e", "ip.checksum.status", "-e", "tcp.checksum.status", "-e",
                        "udp.checksum.status"], capture_output=True, text=True, check=True)
    return [line.split("\t") for line in r.stdout.splitlines()]


def tcp_pkt(i, src="10.0.0.1", dst="20.0.0.1", dport=80, vlan=None, mac=A, dmac=B):
    p = Ether(src=mac, dst=dmac)
    if vlan is not None:
        p = p / Dot1Q(vlan=vlan, prio=3)
    return p / IP(src=src, dst=dst, tos=0x21) / TCP(sport=1000 + i, dport=dport) / Raw(b"pkt%04d" % i)


def test_actions_rewrite_copy_flood_and_count(tmp_path):
    flows = """
# web: rewritten and tagged out of port 2
priority=100,tcp,tp_dst=80,actions=mod_nw_dst:30.0.0.1,mod_tp_dst:8080,mod_nw_tos:64,mod_vlan_vid:5,output:2
# tagged DNS: untagged, copied out of ports 2 and 3, and to the controller
priority=90,dl_vlan=7,actions=strip_vlan,mod_dl_dst:02:00:00:00:00:99,output:2,output:3,controller
priority=80,arp,actions=flood
priority=70,tcp,tp_dst=22,actions=in_port
cookie=0x5,priority=1,actions=drop
"""
    pkts = ([tcp_pkt(i) for i in range(3)] +
            [Ether(src=A, dst=B) / Dot1Q(vlan=7) / IP(src="1.1.1.1", dst="2.2.2.2") /
             UDP(sport=5, dport=53) / Raw(b"q")] +
            [Ether(src=A, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1", pdst="10.0.0.2")] +
            [tcp_pkt(9, dport=22), tcp_pkt(10, dport=443)])
    j, (o0, o1, o2) = switch(tmp_path, flows, [pkts, [], []], extra=(
        "--slow-path", tmp_path / "slow.pcap"))
    assert j["totals"] == {**j["totals"], "rx": 7, "tx": 6, "dropped": 1, "slow_path": 0}
    assert j["drops_by_reason"] == {"flow_drop": 1}
    # Port 2 (p1): the three web packets, the DNS copy, the flooded ARP.
    assert len(o1) == 5 and len(o2) == 2 and len(o0) == 1
    for p in o1[:3]:
        assert p[Dot1Q].vlan == 5 and p[Dot1Q].prio == 0
        assert p[IP].dst == "30.0.0.1" and p[TCP].dport == 8080 and p[IP].tos == 0x41
    dns = [p for p in o1 if UDP in p][0]
    assert Dot1Q not in dns and dns.dst == "02:00:00:00:00:99"
    assert bytes(dns) == bytes(o2[0]), "copies are identical"
    assert ARP in o1[4] and ARP in o2[1], "flood: every port but the ingress one"
    assert TCP in o0[0] and o0[0][TCP].dport == 22, "in_port sends it back"
    slow = list(rdpcap(str(tmp_path / "slow.pcap")))
    assert len(slow) == 1 and bytes(slow[0]) == bytes(dns), "the controller gets a copy"
    for row in tshark_checksums(tmp_path / "o1.pcap"):
        assert "2" not in row, row  # 2 = bad
    assert [r[1] for r in tshark_checksums(tmp_path / "o1.pcap")][:3] == ["1", "1", "1"]


def test_dump_counts_like_dump_flows(tmp_path):
    flows = "priority=10,ip,nw_src=10.0.0.0/8,actions=output:2\npriority=5,ip,actions=drop\n"
    pkts = [tcp_pkt(i, src="10.0.0.%d" % (i + 1)) for i in range(4)] + [tcp_pkt(9, src="11.0.0.1")]
    switch(tmp_path, flows, [pkts, []], chain_args=f", dump={tmp_path / 'dump.txt'}",
           extra=("--workers", 2))
    lines = (tmp_path / "dump.txt").read_text().splitlines()
    assert len(lines) == 2
    n = [re.search(r"n_packets=(\d+), n_bytes=(\d+)", line).groups() for line in lines]
    assert n[0] == ("4", str(sum(len(p) for p in pkts[:4]))), lines
    assert n[1] == ("1", str(len(pkts[4])))
    assert lines[0].endswith("priority=10,ip,nw_src=10.0.0.0/8 actions=output:2"), lines[0]


def test_table_miss_modes_and_normal_learning(tmp_path):
    # No flows: every packet misses.
    pkts = [tcp_pkt(0, mac=A, dmac=B), tcp_pkt(1, mac=A, dmac=B)]
    j, outs = switch(tmp_path, "", [pkts, []])
    assert j["slow_path_by_reason"] == {"to_controller": 2}
    j, outs = switch(tmp_path, "", [pkts, []], chain_args=", miss=drop")
    assert j["drops_by_reason"] == {"table_miss": 2}
    # normal: A on port 1 and B on port 2 each send one packet to the other. Whichever comes
    # first finds its destination unknown and is flooded (out of the two other ports); the
    # second goes out of the port the first one's source was learnt on, and only there.
    a_to_b, b_to_a = tcp_pkt(0, mac=A, dmac=B), tcp_pkt(1, mac=B, dmac=A)
    j, (o0, o1, o2) = switch(tmp_path, "actions=normal\n", [[a_to_b], [b_to_a], []], batch=1)
    assert len(o0) + len(o1) + len(o2) == 3
    assert [bytes(p) for p in o1] == [bytes(a_to_b)] and [bytes(p) for p in o0] == [bytes(b_to_a)]
    assert len(o2) == 1, "the first one was flooded"
    assert j["modules"][0]["stats"]["macs_learned"] == 2
    assert j["modules"][0]["stats"]["flooded"] == 1


def test_flow_file_errors_name_file_line_and_field(tmp_path):
    (tmp_path / "bad.txt").write_text("ip,actions=drop\nip,nw_dst=10.0.0.0/255.0.255.0,actions=drop\n")
    r = run("run", "--app", "switch", "--flows", tmp_path / "bad.txt", "--port", "gen=gen:10",
            "--no-progress")
    assert r.returncode != 0
    assert f"{tmp_path / 'bad.txt'}:2: nw_dst=10.0.0.0/255.0.255.0: not a CIDR prefix" in r.stderr, r.stderr
    (tmp_path / "two.txt").write_text("actions=output:1,mod_vlan_vid:3,output:2\n")
    r = run("run", "--app", "switch", "--flows", tmp_path / "two.txt", "--port", "gen=gen:10",
            "--no-progress")
    assert r.returncode != 0 and "headers change between two outputs" in r.stderr, r.stderr


# --- Open vSwitch as the oracle ----------------------------------------------------------------

@pytest.fixture(scope="module")
def ovs(tmp_path_factory):
    if not shutil.which("ovs-vswitchd"):
        pytest.skip("Open vSwitch is not installed (scripts/setup.sh installs openvswitch-switch)")
    d = tmp_path_factory.mktemp("ovs")
    env = {**os.environ, "OVS_RUNDIR": str(d), "OVS_LOGDIR": str(d), "OVS_DBDIR": str(d),
           "OVS_SYSCONFDIR": str(d)}
    db = f"unix:{d}/db.sock"

    def sh(*cmd):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{cmd}: {r.stderr}"
        return r

    sh("ovsdb-tool", "create", f"{d}/conf.db", "/usr/share/openvswitch/vswitch.ovsschema")
    sh("ovsdb-server", f"--remote=punix:{d}/db.sock", f"--pidfile={d}/db.pid", "--detach",
       f"--log-file={d}/db.log", f"{d}/conf.db")
    try:
        sh("ovs-vsctl", f"--db={db}", "--no-wait", "init")
        # In a network namespace of its own: the netdev datapath makes a tap device named
        # ovs-netdev, which two instances (parallel test workers) would both want.
        sh("unshare", "--net", "ovs-vswitchd", db, f"--pidfile={d}/ovs-vswitchd.pid", "--detach",
           f"--log-file={d}/vs.log")
        sh("ovs-vsctl", f"--db={db}", "add-br", "bro", "--", "set", "bridge", "bro",
           "datapath_type=netdev")
        yield sh
    finally:
        for pid in ("ovs-vswitchd.pid", "db.pid"):
            try:
                os.kill(int((d / pid).read_text()), 15)
            except (OSError, ValueError):
                pass


def random_table(rng, n):
    """Tie-free flows (distinct priorities); flow k stamps dl_src 02:00:00:00:00:k."""
    prios = rng.sample(range(1, 60000), n)
    flows = []
    for k in range(n):
        m = []
        proto = rng.choice(["ip", "tcp", "udp", "icmp", "arp", "tcp", "udp", ""])
        if proto:
            m.append(proto)
        if not proto or rng.random() < 0.3:
            m.append("dl_vlan=%s" % rng.choice(["7", "0xffff"] if proto else ["7", "8"]))
        if proto != "" and rng.random() < 0.7:
            m.append("nw_src=%s" % rng.choice(["10.0.0.0/8", "10.1.0.0/16", "10.1.2.3", "11.0.0.0/8"]))
        if proto != "" and rng.random() < 0.4:
            m.append("nw_dst=%s" % rng.choice(["20.0.0.0/8", "20.0.0.1", "21.0.0.0/24"]))
        if proto in ("tcp", "udp") and rng.random() < 0.5:
            m.append("tp_dst=%d" % rng.choice([80, 53, 443]))
        if proto in ("ip", "tcp", "udp") and rng.random() < 0.2:
            m.append("nw_tos=%d" % rng.choice([0, 32]))
        if rng.random() < 0.2:
            m.append("dl_dst=%s" % rng.choice([B, C]))
        acts = ["mod_dl_src:02:00:00:00:%02x:%02x" % (k >> 8, k & 255)]
        for a in rng.sample(["mod_nw_tos:64", "mod_tp_dst:9999", "mod_vlan_vid:5", "strip_vlan",
                             "mod_nw_src:99.0.0.1", "mod_dl_dst:02:00:00:00:00:77",
                             "mod_vlan_pcp:6", "mod_tp_src:7"], rng.randint(0, 3)):
            acts.append(a)
        if len(m) < 2 and not any(x.startswith("dl_dst") for x in m):
            m.append("dl_dst=%s" % C)  # no catch-all: misses must happen too
        flows.append("priority=%d,%s,actions=%s,output:2" % (prios[k], ",".join(m), ",".join(acts)))
    return flows


def random_packet(rng, i):
    p = Ether(src="02:00:00:00:ff:ff", dst=rng.choice([B, C]))
    if rng.random() < 0.3:
        p = p / Dot1Q(vlan=rng.choice([7, 8]), prio=rng.choice([0, 3]))
    kind = rng.choice(["tcp", "udp", "icmp", "arp"])
    pay = Raw(b"pkt%04d" % i)
    if kind == "arp":
        return p / ARP(psrc=rng.choice(["10.1.2.3", "11.0.0.1"]), pdst="20.0.0.1") / pay
    ip = IP(src=rng.choice(["10.1.2.3", "10.2.0.1", "11.0.0.1", "12.0.0.1"]),
            dst=rng.choice(["20.0.0.1", "21.0.0.9", "22.0.0.1"]), tos=rng.choice([0, 32, 33]))
    if kind == "tcp":
        return p / ip / TCP(sport=1234, dport=rng.choice([80, 53, 443, 8])) / pay
    if kind == "udp":
        return p / ip / UDP(sport=1234, dport=rng.choice([80, 53, 443, 8])) / pay
    return p / ip / ICMP() / pay


def final_flow(text):
    """Open vSwitch's `Final flow:` as a dict (None when no flow matched)."""
    if re.search(r"^ ?0\. No match", text, re.M):
        return None
    line = re.search(r"^Final flow: (.*)$", text, re.M).group(1)
    if line == "unchanged":
        line = re.search(r"^Flow: (.*)$", text, re.M).group(1)
    out = {}
    for item in line.split(","):
        k, _, v = item.partition("=")
        out[k] = v
    return out


def warpath_fields(p):
    """The same fields of a packet warpath sent."""
    f = {"dl_src": p.src, "dl_dst": p.dst}
    if Dot1Q in p:
        f["dl_vlan"], f["dl_vlan_pcp"] = str(p[Dot1Q].vlan), str(p[Dot1Q].prio)
    if IP in p:
        f["nw_src"], f["nw_dst"], f["nw_tos"] = p[IP].src, p[IP].dst, str(p[IP].tos & 0xFC)
        l4 = p[TCP] if TCP in p else p[UDP] if UDP in p else None
        if l4 is not None:
            f["tp_src"], f["tp_dst"] = str(l4.sport), str(l4.dport)
    return f


def ovs_fields(f):
    out = {"dl_src": f["dl_src"], "dl_dst": f["dl_dst"]}
    if f.get("vlan_tci", "0x0000") != "0x0000" or "dl_vlan" in f:
        out["dl_vlan"], out["dl_vlan_pcp"] = f["dl_vlan"], f["dl_vlan_pcp"]
    if "nw_src" in f and "arp_spa" not in f:
        out["nw_src"], out["nw_dst"], out["nw_tos"] = f["nw_src"], f["nw_dst"], f["nw_tos"]
        if "tp_src" in f and "icmp_type" not in f:
            out["tp_src"], out["tp_dst"] = f["tp_src"], f["tp_dst"]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_open_vswitch_packet_by_packet(tmp_path, ovs, seed):
    rng = random.Random(seed)
    flows = random_table(rng, 25)
    pkts = [random_packet(rng, i) for i in range(150)]
    ovs("ovs-ofctl", "-O", "OpenFlow10", "del-flows", "bro")
    (tmp_path / "ovs-flows.txt").write_text("\n".join(flows) + "\n")
    ovs("ovs-ofctl", "-O", "OpenFlow10", "add-flows", "bro", str(tmp_path / "ovs-flows.txt"))
    _, (o0, o1) = switch(tmp_path, "\n".join(flows) + "\n", [pkts, []], chain_args=", miss=drop")
    out = {m.group(0): p for p in o1 if (m := re.search(rb"pkt\d{4}", bytes(p)))}
    assert len(out) == len(o1), "every output carries its packet's index"
    hits = 0
    for i, p in enumerate(pkts):
        trace = ovs("ovs-appctl", "ofproto/trace", "bro", "in_port=1", bytes(p).hex()).stdout
        want = final_flow(trace)
        got = out.get(b"pkt%04d" % i)
        if want is None:
            assert got is None, f"packet {i}: OVS matched nothing, warpath sent it\n{p!r}"
            continue
        hits += 1
        assert got is not None, f"packet {i}: OVS matched, warpath did not\n{trace}"
        assert warpath_fields(got) == ovs_fields(want), f"packet {i} {p!r}\n{trace}"
    assert 20 < hits < len(pkts) - 10, f"{hits} hits: the flows must be hit and missed"


# --- the OpenFlow agent, driven by real ovs-ofctl ----------------------------------------------

class Agent:
    """`warpath run --app switch` with generated traffic and an agent on a free port."""

    def __init__(self, tmp_path, flows="", rate=2000, extra=()):
        if not shutil.which("ovs-ofctl"):
            pytest.skip("ovs-ofctl is not installed (scripts/setup.sh installs openvswitch-common)")
        (tmp_path / "flows.txt").write_text(flows)
        self.json = tmp_path / "run.json"
        self.proc = subprocess.Popen(
            [str(WARPATH_BIN), "run", "--app", "switch", "--flows", str(tmp_path / "flows.txt"),
             "--port", f"p0=gen:{rate}", "--port", "p1=null", "--port", "p2=null",
             "--openflow", "ptcp:127.0.0.1:0", "--no-progress", "--duration", "60",
             "--json", str(self.json), *map(str, extra)],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        # The listening line; with a controller to connect to as well, its "connected" line may
        # come first (the two happen on different threads).
        seen = ""
        for _ in range(4):
            line = self.proc.stderr.readline()
            seen += line
            m = re.search(r"openflow: listening on (\S+)", line)
            if m or not line:
                break
        assert m, seen + self.proc.stderr.read()
        self.target = "tcp:" + m.group(1)
        self.env = {**os.environ, "OVS_RUNDIR": str(tmp_path)}

    def ofctl(self, *args, ok=True, timeout=20):
        opts = [x for x in args if x.startswith("--")]
        args = [x for x in args if not x.startswith("--")]
        r = subprocess.run(["ovs-ofctl", "-O", "OpenFlow10", *opts, args[0], self.target, *args[1:]],
                           capture_output=True, text=True, env=self.env, timeout=timeout)
        if ok:
            assert r.returncode == 0, f"ovs-ofctl {args}: {r.stderr}"
        return r

    def flows(self, *filter_):
        """dump-flows as [(n_packets, 'priority=...,match actions=...')]."""
        out = []
        for line in self.ofctl("dump-flows", *filter_).stdout.splitlines()[1:]:
            n = int(re.search(r"n_packets=(\d+)", line).group(1))
            out.append((n, re.sub(r"^.*?(idle_timeout|hard_timeout|priority)", r"\1", line.strip())))
        return out

    def stop(self):
        self.proc.send_signal(2)
        _, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 130, err  # 128 + SIGINT, after a complete report
        return json.loads(self.json.read_text())


def test_ovs_ofctl_drives_the_switch(tmp_path):
    a = Agent(tmp_path, "priority=1,actions=drop\n")
    try:
        show = a.ofctl("show").stdout
        assert " 1(p0): addr:" in show and " 3(p2): addr:" in show, show
        assert "n_tables:1" in show
        a.ofctl("add-flow", "priority=100,udp,actions=output:2")
        (tmp_path / "more.txt").write_text("priority=90,tcp,actions=output:3\n"
                                           "priority=80,ip,nw_src=10.0.0.0/8,actions=output:2,output:3\n")
        a.ofctl("add-flows", str(tmp_path / "more.txt"))
        assert [f for _, f in a.flows()] == [
            "priority=100,udp actions=output:2", "priority=90,tcp actions=output:3",
            "priority=80,ip,nw_src=10.0.0.0/8 actions=output:2,output:3", "priority=1 actions=drop"]
        # Counters move while the generator's traffic flows.
        time.sleep(0.5)
        first = dict((f, n) for n, f in a.flows())
        time.sleep(0.5)
        later = dict((f, n) for n, f in a.flows())
        assert later["priority=100,udp actions=output:2"] > first["priority=100,udp actions=output:2"] > 0
        agg = a.ofctl("dump-aggregate").stdout
        assert "flow_count=4" in agg, agg
        assert [f for _, f in a.flows("udp")] == ["priority=100,udp actions=output:2"]
        assert [f for _, f in a.flows("out_port=3")] == [
            "priority=90,tcp actions=output:3", "priority=80,ip,nw_src=10.0.0.0/8 actions=output:2,output:3"]
        # mod-flows keeps counters; --strict only the exact flow.
        a.ofctl("mod-flows", "ip,nw_src=10.0.0.0/8,actions=output:3")
        a.ofctl("--strict", "mod-flows", "priority=90,tcp,actions=drop")
        fl = [f for _, f in a.flows()]
        assert "priority=90,tcp actions=drop" in fl and "priority=80,ip,nw_src=10.0.0.0/8 actions=output:3" in fl
        # check_overlap and actions the data path cannot run are refused with the spec's errors.
        r = a.ofctl("add-flow", "check_overlap,priority=100,udp,tp_dst=53,actions=drop", ok=False)
        assert r.returncode != 0 and "OFPFMFC_OVERLAP" in r.stderr, r.stderr
        r = a.ofctl("add-flow", "actions=output:1,mod_vlan_vid:3,output:2", ok=False)
        assert r.returncode != 0 and "OFPFMFC_UNSUPPORTED" in r.stderr, r.stderr
        tables = a.ofctl("dump-tables").stdout
        assert "active=4" in tables and "max_entries=1048576" in tables, tables
        ports = a.ofctl("dump-ports").stdout
        assert re.search(r"port  1: rx pkts=[1-9]", ports), ports
        assert "Manufacturer: warpath" in a.ofctl("dump-desc").stdout
        # Deletes: strict needs the priority; out_port filters.
        a.ofctl("--strict", "del-flows", "udp")
        assert len(a.flows()) == 4, "strict without priority=100 deletes nothing"
        a.ofctl("del-flows", "out_port=3")
        assert [f for _, f in a.flows()] == ["priority=100,udp actions=output:2", "priority=90,tcp actions=drop",
                                            "priority=1 actions=drop"]
        a.ofctl("del-flows")
        assert a.flows() == []
    finally:
        j = a.stop()
    t = j["totals"]
    assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"] and t["rx"] > 0, t
    # The wildcard adds, modifies and deletes reached the data path as incremental images.
    assert re.search(r"images published: \d+ full, [1-9]\d* incremental", j["modules"][0]["describe"]), j["modules"][0]


def test_packet_in_reaches_ovs_ofctl_monitor(tmp_path):
    a = Agent(tmp_path, rate=200)
    try:
        mon = subprocess.Popen(["ovs-ofctl", "-O", "OpenFlow10", "monitor", a.target, "65535"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=a.env)
        time.sleep(0.5)
        a.ofctl("add-flow", "priority=10,udp,actions=controller:64")
        time.sleep(1.5)
        mon.terminate()
        out, _ = mon.communicate(timeout=10)
        lines = out.splitlines()
        ins = [(lines[k], lines[k + 1] if k + 1 < len(lines) else "")
               for k in range(len(lines)) if lines[k].startswith("OFPT_PACKET_IN")]
        action = [(h, p) for h, p in ins if "(via action)" in h]
        miss = [(h, p) for h, p in ins if "(via no_match)" in h]
        assert action and miss, out[-2000:]
        assert all("in_port=1" in h for h, _ in ins)
        # The controller action's max_len (64) cuts the UDP packets; misses come whole
        # (monitor set miss_send_len 65535), and none of them is UDP (the flow took those).
        assert all(int(re.search(r"data_len=(\d+)", h).group(1)) <= 64 for h, _ in action)
        whole = [p for h, p in action if "total_len != data_len" not in h]
        assert whole and all(p.startswith("udp") for p in whole), action[:3]
        assert not any(p.startswith("udp,") for _, p in miss[-20:]), miss[-3:]  # udp6: not OF1.0 udp
    finally:
        a.stop()


def test_flow_removed_on_delete_and_timeout(tmp_path):
    a = Agent(tmp_path, "priority=0,actions=drop\n", rate=200)  # no table misses
    try:
        mon = subprocess.Popen(["ovs-ofctl", "-O", "OpenFlow10", "monitor", a.target, "65535"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=a.env)
        time.sleep(0.5)
        a.ofctl("add-flow", "send_flow_rem,hard_timeout=1,priority=5,tcp,actions=drop")
        a.ofctl("add-flow", "send_flow_rem,priority=6,udp,actions=drop")
        a.ofctl("del-flows", "udp")
        time.sleep(2.0)
        mon.terminate()
        out, _ = mon.communicate(timeout=10)
        removed = [line for line in out.splitlines() if line.startswith("OFPT_FLOW_REMOVED")]
        assert any("reason=delete" in line and "udp" in line for line in removed), out[-2000:]
        assert any("reason=hard" in line and "tcp" in line for line in removed), out[-2000:]
        assert [f for _, f in a.flows()] == ["priority=0 actions=drop"]
    finally:
        a.stop()


def test_misbehaving_peers_get_errors_and_cannot_stall_the_switch(tmp_path):
    import socket
    import struct
    a = Agent(tmp_path, "priority=1,actions=output:2\n")
    try:
        host, port = a.target[4:].rsplit(":", 1)

        def talk(payload, want=True):
            s = socket.create_connection((host, int(port)), timeout=5)
            s.recv(8)  # the switch's HELLO
            s.sendall(payload)
            data = b""
            try:
                while want and len(data) < 12:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                pass
            s.close()
            return data

        hdr = lambda t, n, xid=7, v=1: struct.pack("!BBHI", v, t, n, xid)
        # Unknown type: BAD_REQUEST/BAD_TYPE; vendor: BAD_VENDOR; wrong version: BAD_VERSION.
        assert talk(hdr(200, 8))[8:12] == struct.pack("!HH", 1, 1)
        assert talk(hdr(4, 16) + b"\0" * 8)[8:12] == struct.pack("!HH", 1, 3)
        assert talk(hdr(5, 8, v=4))[8:12] == struct.pack("!HH", 1, 0)
        # A short flow_mod: BAD_LEN; a bad action: BAD_ACTION.
        assert talk(hdr(14, 20) + b"\0" * 12)[8:12] == struct.pack("!HH", 1, 6)
        fm = hdr(14, 72 + 8) + struct.pack("!I", 0x3820FF) + b"\0" * 36 + b"\0" * 8 + \
            struct.pack("!HHHHIHH", 0, 0, 0, 1, 0xFFFFFFFF, 0xFFFF, 0) + struct.pack("!HHHH", 0x99, 8, 0, 0)
        assert talk(fm)[8:12] == struct.pack("!HH", 2, 0)
        # A length below 8 closes that connection only; a peer that never reads is dropped.
        talk(hdr(0, 4), want=False)
        s = socket.create_connection((host, int(port)))
        s.sendall(hdr(2, 8) * 20000)  # echo requests, replies never read
        time.sleep(0.5)
        assert "priority=1 actions=output:2" in a.flows()[0][1]
        s.close()
    finally:
        j = a.stop()
    assert j["totals"]["tx"] > 0


def normalized_dump(text):
    """dump-flows lines without the counters and ages, sorted."""
    out = []
    for line in text.splitlines()[1:]:
        line = re.sub(r"(cookie|duration|n_packets|n_bytes|idle_age|hard_age)=[^,]*, ", "", line.strip())
        out.append(re.sub(r"^table=0, ", "", line))
    return sorted(out)


@pytest.mark.parametrize("seed", [4, 5])
def test_flow_mods_leave_the_table_open_vswitch_leaves(tmp_path, ovs, seed):
    """The same random add/mod/del sequence through ovs-ofctl to OVS and to warpath: the same
    dump-flows after every few commands (strict and loose, out_port, MODIFY that adds)."""
    rng = random.Random(seed)
    a = Agent(tmp_path, rate=100)
    ovs("ovs-ofctl", "-O", "OpenFlow10", "del-flows", "bro")
    matches = ["ip", "tcp", "udp,tp_dst=53", "ip,nw_src=10.0.0.0/8", "ip,nw_src=10.1.0.0/16",
               "tcp,nw_dst=20.0.0.1,tp_dst=80", "arp", "dl_vlan=7", "in_port=2", "udp"]
    try:
        for step in range(40):
            m = rng.choice(matches)
            prio = rng.choice([1, 5, 5, 100])
            acts = rng.choice(["output:1", "output:2", "output:1,output:3", "drop", "controller",
                               "mod_nw_tos:32,output:3"])
            cmd = rng.choice(["add-flow", "add-flow", "add-flow", "mod-flows", "strict-mod",
                              "del-flows", "strict-del", "del-out"])
            if cmd == "add-flow":
                args = ["add-flow", f"priority={prio},{m},actions={acts}"]
            elif cmd == "mod-flows":
                args = ["mod-flows", f"{m},actions={acts}"]
            elif cmd == "strict-mod":
                args = ["--strict", "mod-flows", f"priority={prio},{m},actions={acts}"]
            elif cmd == "del-flows":
                args = ["del-flows", m]
            elif cmd == "strict-del":
                args = ["--strict", "del-flows", f"priority={prio},{m}"]
            else:
                args = ["del-flows", f"out_port={rng.choice([1, 2, 3])}"]
            opts = [x for x in args if x.startswith("--")]
            rest = [x for x in args if not x.startswith("--")]
            ovs("ovs-ofctl", "-O", "OpenFlow10", *opts, rest[0], "bro", *rest[1:])
            a.ofctl(*args)
            if step % 5 == 4:
                want = normalized_dump(ovs("ovs-ofctl", "-O", "OpenFlow10", "dump-flows", "bro").stdout)
                got = normalized_dump(a.ofctl("dump-flows").stdout)
                assert got == want, f"after step {step} ({args})"
    finally:
        a.stop()


def test_packet_out_from_ovs_ofctl(tmp_path):
    a = Agent(tmp_path, "priority=5,udp,actions=output:3\n", rate=50)
    pkt = (Ether(src=A, dst=B) / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=7, dport=9) /
           Raw(b"out")).build().hex()
    try:
        a.ofctl("packet-out", f"in_port=1 packet={pkt} actions=mod_nw_dst:3.3.3.3,mod_vlan_vid:9,output:2")
        a.ofctl("packet-out", f"in_port=1 packet={pkt} actions=table")
        a.ofctl("packet-out", f"in_port=none packet={pkt} actions=flood")
        r = a.ofctl("packet-out", f"in_port=1 packet={pkt} actions=output:1,strip_vlan,output:2", ok=False)
        assert r.returncode != 0 and "OFPBRC_EPERM" in r.stderr, r.stderr
        time.sleep(0.5)
    finally:
        j = a.stop()
    assert j["originated"] == 1 + 1 + 3, j["originated"]


def test_an_os_ken_controller_drives_the_switch(tmp_path):
    import socket
    if not shutil.which("osken-manager"):
        pytest.skip("os-ken is not installed (scripts/setup.sh installs python3-os-ken)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = os.path.join(os.path.dirname(__file__), "data", "osken_switch_app.py")
    ctl = subprocess.Popen(["/usr/bin/python3", shutil.which("osken-manager"), "--ofp-listen-host",
                            "127.0.0.1", "--ofp-tcp-listen-port", str(port), app],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.5)
        a = Agent(tmp_path, rate=200, extra=("--openflow", f"tcp:127.0.0.1:{port}"))
        try:
            time.sleep(3)
            flows = a.flows()
        finally:
            j = a.stop()
    finally:
        ctl.terminate()
        log, _ = ctl.communicate(timeout=10)
    assert "PACKET_IN in_port=1" in log and "FLOW_MOD" in log, log[-3000:]
    installed = [f for n, f in flows if "dl_dst=" in f]
    assert installed and all(f.startswith("idle_timeout=30, priority=100,in_port=1,dl_dst=") for f in installed), flows
    assert sum(n for n, f in flows) > 0, "the controller's flows switch packets"
    assert j["originated"] > 0, "the controller's packet_outs were sent"
    assert j["ports"][1]["tx"] > 0


def test_sighup_reloads_the_flow_file_with_fresh_counters(tmp_path):
    a = Agent(tmp_path, "priority=1,actions=drop\n", rate=2000)
    try:
        time.sleep(0.6)
        before = a.flows()[0][0]
        assert before > 0
        (tmp_path / "flows.txt").write_text("priority=2,ip,actions=output:2\npriority=1,actions=drop\n")
        a.proc.send_signal(1)  # SIGHUP
        time.sleep(0.3)
        after = dict((f, n) for n, f in a.flows())
        assert set(after) == {"priority=2,ip actions=output:2", "priority=1 actions=drop"}, after
        assert after["priority=1 actions=drop"] < before, "the new table's counters start at 0"
        # A flow_mod after the reload reaches the data path (and the dump).
        a.ofctl("add-flow", "priority=3,udp,actions=output:3")
        time.sleep(0.3)
        n = dict((f, n) for n, f in a.flows())["priority=3,udp actions=output:3"]
        assert n > 0, "switched by the new flow"
    finally:
        j = a.stop()
    assert j["ports"][2]["tx"] > 0


def test_mod_port_no_flood_no_fwd_and_down(tmp_path):
    a = Agent(tmp_path, "actions=flood\n", rate=400)
    try:
        mon = subprocess.Popen(["ovs-ofctl", "-O", "OpenFlow10", "monitor", a.target, "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=a.env)
        time.sleep(0.5)
        a.ofctl("mod-port", "2", "no-flood")
        assert "config:     NO_FLOOD" in a.ofctl("show").stdout
        time.sleep(0.3)
        mon.terminate()
        out, _ = mon.communicate(timeout=10)
        assert "OFPT_PORT_STATUS" in out and "NO_FLOOD" in out, out[-1500:]
        time.sleep(0.5)

        def tx():
            out = a.ofctl("dump-ports").stdout
            return {int(m.group(1)): int(m.group(2))
                    for m in re.finditer(r"port\s+(\d+):.*?tx pkts=(\d+)", out, re.S)}
        t0 = tx()
        time.sleep(0.5)
        t1 = tx()
        assert t1[2] == t0[2] and t1[3] > t0[3], (t0, t1)  # flooded only out of port 3
        a.ofctl("mod-port", "3", "no-forward")
        time.sleep(0.3)
        t2 = tx()
        time.sleep(0.5)
        assert tx()[3] == t2[3], "nothing out of a no-forward port"
        a.ofctl("mod-port", "1", "down")
        r = a.ofctl("mod-port", "9", "up", ok=False)
        assert r.returncode != 0
        time.sleep(0.5)
    finally:
        j = a.stop()
    assert j["drops_by_reason"].get("port_no_recv", 0) > 0
    assert j["drops_by_reason"].get("no_output", 0) > 0
