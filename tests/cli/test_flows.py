"""`warpath flows`: its TCP and UDP conversations against tshark's on real captures, the
counters adding up, and its errors.

tshark is the independent truth for which packets belong together: its per-packet fields
(addresses, ports, frame length) aggregated by conversation must give the same packets and
bytes per direction as warpath's flow records (the captures here are short: no timeouts or
port reuse split a conversation)."""

import json
import shutil
import subprocess
from collections import defaultdict

import pytest

from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()

CAPTURES = [
    "pcap/tcpreplay/test.pcap",
    "pcap/zeek/http-get.pcap",
    "pcap/zeek/tcp-reassembly.pcap",
    "pcap/zeek/ftp-ipv6.pcap",
    "pcap/zeek/http-vlan-0.pcap",
    "pcap/zeek/http-pipelined-requests.pcap",
    "pcap/zeek/tcp-handshake-reorder.pcap",
    "pcap/zeek/tcp-missing-syn.pcap",
    "pcap/tcpdump/dns_udp.pcap",
]


def endpoint(addr, port):
    return (addr, int(port))


def tshark_conversations(path):
    """{(proto, frozenset of endpoints): {endpoint: [packets, bytes] sent}} from tshark."""
    fields = ["ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport",
              "udp.srcport", "udp.dstport", "frame.len", "icmp.type", "icmpv6.type", "ip.len", "ipv6.plen"]
    cmd = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=\t",
           "-o", "ip.defragment:FALSE"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60).stdout
    convs = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for line in out.splitlines():
        v = dict(zip(fields, line.split("\t")))
        # Tunnelled packets list several addresses; warpath keys the outer header alone.
        src = (v["ip.src"] or v["ipv6.src"]).split(",")[0]
        dst = (v["ip.dst"] or v["ipv6.dst"]).split(",")[0]
        if not src or v["icmp.type"] or v["icmpv6.type"]:
            continue  # ICMP errors quote a TCP/UDP header: not that conversation
        ip_bytes = int(v["ip.len"].split(",")[0]) if v["ip.len"] else \
            40 + int(v["ipv6.plen"].split(",")[0] or 0)
        if ip_bytes + 14 > int(v["frame.len"]):
            continue  # a datagram longer than its frame is malformed: Zeek and Suricata skip it
        for proto, a, b in (("tcp", "tcp.srcport", "tcp.dstport"),
                            ("udp", "udp.srcport", "udp.dstport")):
            if v[a]:
                s, d = endpoint(src, v[a].split(",")[0]), endpoint(dst, v[b].split(",")[0])
                rec = convs[(proto, frozenset((s, d)))][s]
                rec[0] += 1
                rec[1] += int(v["frame.len"])
    return convs


def warpath_conversations(records):
    convs = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        proto = {6: "tcp", 17: "udp"}.get(r["proto"])
        if proto is None:
            continue
        s, d = endpoint(r["src"], r["sport"]), endpoint(r["dst"], r["dport"])
        c = convs[(proto, frozenset((s, d)))]
        c[s][0] += r["orig_packets"]
        c[s][1] += r["orig_bytes"]
        c[d][0] += r["resp_packets"]
        c[d][1] += r["resp_bytes"]
    return convs


def flows_json(path, *extra):
    r = assert_ok(run("flows", "--in", path, "--format", "json", *extra))
    return json.loads(r.stdout)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("capture", CAPTURES)
def test_conversations_match_tshark(capture):
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    want = tshark_conversations(path)
    got = warpath_conversations(flows_json(path)["flows"])
    assert want, "tshark found no TCP/UDP conversation"
    normal = lambda c: {k: {e: tuple(x) for e, x in v.items()} for k, v in c.items()}
    assert normal(got) == normal(want)


@pytest.mark.parametrize("capture", CAPTURES[:3])
def test_counters_add_up_and_engines_agree(capture):
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    doc = flows_json(path, "--engine", "validate:cpu.flow")
    c = doc["counters"]
    assert c["packets"] == sum(c["packets_by_track"].values())
    assert c["flows"] == sum(c["ended"].values()) == len(doc["flows"])
    tracked = sum(f["orig_packets"] + f["resp_packets"] for f in doc["flows"])
    assert tracked == c["packets_by_track"]["tracked"]
    ref = flows_json(path, "--engine", "ref.flow")
    assert ref["flows"] == doc["flows"]


def test_small_table_evicts_and_counts(tmp_path):
    path = DATA / "pcap/tcpreplay/test.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    doc = flows_json(path, "--capacity", "4", "--engine", "validate:cpu.flow")
    c = doc["counters"]
    assert c["max_active"] <= 4
    assert c["ended"]["evicted"] > 0 and c["emergency_entered"] >= 1
    dropped = flows_json(path, "--capacity", "4", "--on-full", "drop")["counters"]
    assert dropped["packets_by_track"]["full_dropped"] > 0
    assert dropped["ended"]["evicted"] == 0
    text = assert_ok(run("flows", "--in", path, "--capacity", "4")).stdout
    assert "evicted" in text and "emergency mode entered" in text
    csv = assert_ok(run("flows", "--in", path, "--format", "csv")).stdout.splitlines()
    assert csv[0].startswith("flow,ts,duration,proto,src,sport")
    assert len(csv) == 1 + len(flows_json(path)["flows"])


def test_errors(tmp_path):
    r = run("flows", "--in", tmp_path / "missing.pcap")
    assert_no_crash(r)
    assert r.returncode == 1 and "missing.pcap" in r.stderr
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    r = run("flows", "--in", bad)
    assert_no_crash(r)
    assert r.returncode == 1 and "bad.pcap" in r.stderr
    r = run("flows", "--in", bad, "--on-full", "keep")
    assert r.returncode == 2
    r = run("flows", "--in", bad, "--engine", "cpu.nope")
    assert r.returncode == 2 and "unknown flow engine 'cpu.nope'" in r.stderr


def test_flow_module_in_a_chain_logs_what_flows_reports(tmp_path):
    """`warpath run` with the flow module: its log holds exactly the records `warpath flows`
    prints for the same capture, and the report shows the module's counters."""
    path = DATA / "pcap/tcpreplay/test.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    log = tmp_path / "flows.jsonl"
    report = tmp_path / "run.json"
    r = run("run", "--chain", f"flow(log={log}) -> wire",
            "--port", f"in=pcap:{path}:{tmp_path / 'out.pcap'}", "--json", report)
    assert_ok(r)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    want = flows_json(path)
    assert logged == want["flows"]
    doc = json.loads(report.read_text())
    stats = doc["modules"][0]["stats"]
    assert stats["flows"] == want["counters"]["flows"] == len(logged)
    assert stats["ended_end"] == len(logged) and stats["active"] == 0
    assert stats["untracked_not_ip"] == want["counters"]["packets_by_track"]["not_ip"]
    assert "flows " in r.stdout  # the summary's stats line


def test_flow_module_full_table_drops_with_a_reason(tmp_path):
    path = DATA / "pcap/tcpreplay/test.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    report = tmp_path / "run.json"
    assert_ok(run("run", "--chain", "flow(capacity=2, on_full=drop) -> wire",
                  "--port", f"in=pcap:{path}:{tmp_path / 'out.pcap'}", "--json", report))
    doc = json.loads(report.read_text())
    want = flows_json(path, "--capacity", "2", "--on-full", "drop")["counters"]
    refused = want["packets_by_track"]["full_dropped"]
    assert refused > 0
    assert doc["modules"][0]["drops_by_reason"] == {"flow_table_full": refused}
    t = doc["totals"]
    assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"] and t["dropped"] == refused
    r = run("run", "--chain", "flow(capacity=0) -> wire", "--port", f"in=pcap:{path}:")
    assert r.returncode != 0 and "capacity=0" in r.stderr
    r = run("run", "--chain", "flow(on_full=keep) -> wire", "--port", f"in=pcap:{path}:")
    assert r.returncode != 0 and "chain position 1 (flow)" in r.stderr and "keep" in r.stderr
