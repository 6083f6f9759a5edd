"""`warpath nids` on crafted traffic (scapy): EVE and fast.log as Suricata writes them, content
split across TCP segments, out of order, retransmitted and overlapping (per receiver policy),
IP fragments, tiny-segment evasion, flowbits across directions, IPS drops, the rule report,
bad rule files, and every engine combination and batch size giving the same alerts on the
shared captures with ET Open."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()
scapy = pytest.importorskip("scapy.all")
from scapy.all import IP, TCP, UDP, Ether, Raw, fragment, rdpcap, wrpcap  # noqa: E402

CLIENT, SERVER = "10.0.0.1", "192.0.2.80"
MAC = ("02:00:00:00:00:01", "02:00:00:00:00:02")  # given, so scapy never asks ARP


class Session:
    """A TCP connection written packet by packet, the receiver acknowledging each segment."""

    def __init__(self, sport=40000, dport=80, handshake=True):
        self.sport, self.dport = sport, dport
        self.seq = [1000, 5000]  # next sequence number of client (0) and server (1)
        self.frames = []
        if handshake:
            self.frames.append(self._pkt(0, "S", b"", seq=self.seq[0] - 1))
            self.frames.append(self._pkt(1, "SA", b"", seq=self.seq[1] - 1, ack=self.seq[0]))
            self.frames.append(self._pkt(0, "A", b""))

    def _pkt(self, d, flags, data, seq=None, ack=None):
        src, dst = (CLIENT, SERVER) if d == 0 else (SERVER, CLIENT)
        sp, dp = (self.sport, self.dport) if d == 0 else (self.dport, self.sport)
        seq = self.seq[d] if seq is None else seq
        ack = self.seq[1 - d] if ack is None else ack
        return Ether(src=MAC[d], dst=MAC[1 - d]) / IP(src=src, dst=dst) / TCP(sport=sp, dport=dp, flags=flags, seq=seq, ack=ack) / Raw(data)

    def send(self, d, data, at=None, ack=True):
        """`data` from side d at stream offset `at` (default: next), then the other side's ACK
        of everything sent so far in order."""
        base = self.seq[d]
        seq = base if at is None else self.start[d] + at
        self.frames.append(self._pkt(d, "PA", data, seq=seq))
        if at is None:
            self.seq[d] += len(data)
        if ack:
            self.frames.append(self._pkt(1 - d, "A", b"", ack=self.seq[d]))
        return self

    @property
    def start(self):
        return getattr(self, "_start", None) or self.__dict__.setdefault("_start", [1000, 5000])

    def ack(self, d, upto):
        self.frames.append(self._pkt(1 - d, "A", b"", ack=self.start[d] + upto))
        return self

    def close(self):
        self.frames.append(self._pkt(0, "FA", b""))
        self.frames.append(self._pkt(1, "FA", b"", ack=self.seq[0] + 1))
        self.frames.append(self._pkt(0, "A", b"", seq=self.seq[0] + 1, ack=self.seq[1] + 1))
        return self.frames


def write(tmp_path, frames, name="in.pcap"):
    path = tmp_path / name
    for i, f in enumerate(frames):
        f.time = 1_700_000_000 + i * 0.001
    wrpcap(str(path), frames)
    return path


def rules(tmp_path, text, name="t.rules"):
    path = tmp_path / name
    path.write_text(text)
    return path


def nids(tmp_path, rule_file, cap, *extra):
    eve = tmp_path / "eve.json"
    r = run("nids", "--rules", rule_file, "--in", cap, "--eve", eve, *extra)
    assert_ok(r)
    events = [json.loads(l) for l in eve.read_text().splitlines()]
    return [e for e in events if e["event_type"] == "alert"], [e for e in events if e["event_type"] == "flow"], r


def sids(alerts):
    return [a["alert"]["signature_id"] for a in alerts]


def test_eve_and_fast_log_as_suricata_writes_them(tmp_path):
    s = Session()
    s.send(0, b"GET / HTTP/1.0\r\n\r\n").send(1, b"HTTP/1.0 200 OK\r\n\r\nuid=0(root) gid=0(root)\n")
    cap = write(tmp_path, s.close())
    rf = rules(tmp_path, 'alert ip any any -> any any (msg:"GPL ATTACK_RESPONSE id check returned root"; '
                         'content:"uid=0|28|root|29|"; classtype:bad-unknown; sid:2100498; rev:7;)\n')
    fast = tmp_path / "fast.log"
    alerts, flows, r = nids(tmp_path, rf, cap, "--fast", fast)
    assert len(alerts) == 1
    a = alerts[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+0000", a["timestamp"])
    assert (a["src_ip"], a["src_port"], a["dest_ip"], a["dest_port"], a["proto"]) == (SERVER, 80, CLIENT, 40000, "TCP")
    assert a["direction"] == "to_client" and a["stream"] == 1
    assert a["alert"] == {"action": "allowed", "gid": 1, "signature_id": 2100498, "rev": 7,
                          "signature": "GPL ATTACK_RESPONSE id check returned root",
                          "category": "Potentially Bad Traffic", "severity": 2}
    assert len(flows) == 1 and flows[0]["flow"]["alerted"] is True and flows[0]["flow_id"] == a["flow_id"]
    line = fast.read_text().strip()
    assert re.fullmatch(r"\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\.\d{6}  \[\*\*\] \[1:2100498:7\] GPL ATTACK_RESPONSE id "
                        r"check returned root \[\*\*\] \[Classification: Potentially Bad Traffic\] \[Priority: 2\] "
                        r"\{TCP\} 192\.0\.2\.80:80 -> 10\.0\.0\.1:40000", line), line
    assert "1 alerts" in r.stdout and "2100498" in r.stdout


def split_rules(tmp_path):
    return rules(tmp_path, 'alert tcp any any -> any any (msg:"stream"; content:"EVILPAYLOAD"; sid:1;)\n'
                           'alert tcp-pkt any any -> any any (msg:"packet"; content:"EVILPAYLOAD"; sid:2;)\n'
                           'alert tcp any any -> any any (msg:"anchored"; content:"EVIL"; depth:4; sid:3;)\n')


def test_content_split_across_segments_alerts_once(tmp_path):
    s = Session()
    for part in (b"xxEVI", b"LPAY", b"LOADxx", b" and EVILPAYLOAD again"):
        s.send(0, part)
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()))
    # Two occurrences: one split over three segments, one whole; no packet holds the first.
    assert sorted(sids(alerts)) == [1, 1, 2]


def test_tiny_segments_still_alert(tmp_path):
    s = Session()
    for ch in b"EVILPAYLOAD":
        s.send(0, bytes([ch]))
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()))
    # "EVIL" at depth 4 counts from the stream's start, though no segment holds it.
    assert sids(alerts) == [3, 1]


def test_out_of_order_and_retransmitted_segments(tmp_path):
    s = Session()
    s.send(0, b"LOAD", at=7, ack=False).send(0, b"EVILPAY", at=0, ack=False)
    s.send(0, b"EVILPAY", at=0, ack=False)  # a retransmission
    s.seq[0] += 11
    s.ack(0, 11)
    alerts, _, r = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()))
    assert sids(alerts) == [1, 3], r.stdout  # once each, though the bytes came twice


def test_each_payload_is_scanned_once_while_the_stream_is_in_step(tmp_path):
    """cpu.nids scans a TCP payload once for the packet and the stream rules while the bytes
    delivered to its direction are those that arrived (src/nids/cpu/single_scan.hpp): the
    detection counters say how many payloads, and which directions left for two scans."""
    s = Session()
    for k in range(20):
        s.send(0, b"x" * 50 + (b"EVIL" if k == 7 else b"") + b"y" * 30)
        s.send(1, b"z" * 60)
    js = tmp_path / "in_step.json"
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()), "--json", js)
    detect = json.loads(js.read_text())["detect"]
    assert detect["single_scans"] == 40 and detect["single_scan_left"] == 0, detect
    # A retransmission among the arrivals: its direction leaves, and the alerts are the same.
    s = Session()
    s.send(0, b"xxEVILPAY", ack=False)
    s.frames.append(s.frames[-1].copy())  # the same segment again
    s.send(0, b"LOADxx")
    js = tmp_path / "retransmitted.json"
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()), "--json", js)
    assert sids(alerts) == [1], sids(alerts)  # no one packet holds the whole content
    assert json.loads(js.read_text())["detect"]["single_scan_left"] == 1


def test_a_literal_vectorscan_5_4_9_misses_still_alerts(tmp_path):
    """Debian's Vectorscan 5.4.9 misses some literal matches past a buffer's first 64 bytes in
    its AVX-512 variant (upstream issue 317); cpu.hs takes the AVX2 variant where it does
    (pattern/cpu/hs_matcher.cpp). A NOP-sled-like run before the content must not hide it."""
    text = "".join(
        f'alert tcp any any -> any any (content:"k{10 + k}{"-spanning-key" if k % 4 == 0 else ""}"; sid:{k + 1};)\n'
        for k in range(40))
    s = Session()
    s.send(0, b"d" * 70 + b"k33" + b"d" * 15)
    for engine in ("cpu.nids", "ref.nids"):
        alerts, _, _ = nids(tmp_path, rules(tmp_path, text), write(tmp_path, s.close()), "--engine", engine)
        assert sids(alerts) == [24], (engine, sids(alerts))


@pytest.mark.parametrize("policy,expect", [("first", [1]), ("last", [2]), ("bsd", [1]), ("linux", [2])])
def test_overlaps_follow_the_receivers_policy(tmp_path, policy, expect):
    """The same 4 bytes sent twice with different contents: which copy the receiver keeps
    decides what is inspected (first keeps the original; last and linux take the new one when it
    starts at the same place and ends later)."""
    s = Session()
    s.send(0, b"GOOD", at=0, ack=False).send(0, b"EVIL!", at=0, ack=False)
    s.seq[0] += 5
    s.ack(0, 5)
    rf = rules(tmp_path, 'alert tcp any any -> any any (msg:"good"; content:"GOOD"; sid:1;)\n'
                         'alert tcp any any -> any any (msg:"evil"; content:"EVIL"; sid:2;)\n')
    alerts, _, _ = nids(tmp_path, rf, write(tmp_path, s.close()), "--policy", policy)
    assert [a for a in sids(alerts) if a in (1, 2)] == expect


def test_ip_fragments_are_put_back_together(tmp_path):
    pkt = Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER, id=7) / UDP(sport=5000, dport=53) / Raw(b"A" * 40 + b"FRAGMENTED-EVIL" + b"B" * 40)
    frags = [Ether(src=MAC[0], dst=MAC[1]) / f for f in fragment(pkt[IP], fragsize=48)]
    assert len(frags) >= 2
    rf = rules(tmp_path, 'alert udp any any -> any 53 (msg:"frag"; content:"FRAGMENTED-EVIL"; sid:1;)\n')
    cap = write(tmp_path, frags)
    alerts, _, _ = nids(tmp_path, rf, cap)
    assert sids(alerts) == [1]
    alerts, _, _ = nids(tmp_path, rf, cap, "--no-defrag")
    assert sids(alerts) == []


def test_flowbits_across_directions(tmp_path):
    s = Session(dport=21)
    s.send(1, b"220 ready\r\n").send(0, b"USER root\r\n").send(1, b"331 ok\r\n").send(0, b"PASS x\r\n").send(1, b"230 in\r\n")
    rf = rules(tmp_path,
               'alert tcp any any -> any 21 (msg:"root login"; flow:established,to_server; content:"USER root"; '
               'flowbits:set,ftp.root; flowbits:noalert; sid:1;)\n'
               'alert tcp any 21 -> any any (msg:"root logged in"; flow:established,to_client; content:"230 "; '
               'flowbits:isset,ftp.root; sid:2;)\n'
               'alert tcp any 21 -> any any (msg:"ready before"; content:"220"; flowbits:isset,ftp.root; sid:3;)\n')
    alerts, _, _ = nids(tmp_path, rf, write(tmp_path, s.close()))
    assert sids(alerts) == [2]


def test_stream_size_and_ip_proto(tmp_path):
    # Each side's size is its next sequence number less its ISN: its SYN and its bytes.
    s = Session()
    s.send(0, b"GET x").send(1, b"HTTP/1.0 200")
    dns = Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER) / UDP(sport=5353, dport=53) / Raw(b"q")
    rf = rules(tmp_path,
               'alert tcp any any -> any any (flow:established,to_server; stream_size:server,<,2; content:"GET"; sid:1;)\n'
               'alert tcp any any -> any any (flow:to_client; stream_size:client,=,6; content:"HTTP"; sid:2;)\n'
               'alert tcp any any -> any any (stream_size:client,>,6; content:"HTTP"; sid:3;)\n'
               'alert tcp any any -> any any (stream_size:both,>=,6; content:"HTTP"; sid:4;)\n'
               'alert tcp any any -> any any (stream_size:either,<,2; content:"HTTP"; sid:5;)\n'
               'alert tcp any any -> any any (stream_size:server,=,13; content:"HTTP"; sid:8;)\n'
               'alert udp any any -> any any (stream_size:client,>=,0; sid:9;)\n'
               'alert ip any any -> any any (ip_proto:udp; sid:6;)\n'
               'alert ip any any -> any any (ip_proto:<6; sid:7;)\n'
               'alert ip any any -> any any (ip_proto:!6; prefilter; sid:10;)\n')
    alerts, _, _ = nids(tmp_path, rf, write(tmp_path, s.close() + [dns]))
    assert sorted(sids(alerts)) == [1, 2, 4, 6, 8, 10]
    # A segment past a hole moves its side's size (Suricata 7's next_seq: 1 + 100 + 2); a RST
    # far ahead does not.
    s = Session()
    s.send(0, b"GET x").send(0, b"zz", at=100, ack=False)
    s.frames.append(s._pkt(0, "R", b"", seq=s.start[0] + 100000))
    s.send(1, b"HTTP/1.0 200")
    rf = rules(tmp_path, 'alert tcp any any -> any any (flow:to_client; stream_size:client,=,103; content:"HTTP"; sid:1;)\n'
                         'alert tcp any any -> any any (flow:to_client; stream_size:client,>,1000; content:"HTTP"; sid:2;)\n')
    alerts, _, _ = nids(tmp_path, rf, write(tmp_path, s.close()))
    assert sids(alerts) == [1]


def test_ftp_smtp_ssh_rules_see_the_flows_found_to_speak_them(tmp_path):
    # Detected by content as Suricata detects them (not by port), then inspected as streams.
    ftp = Session(sport=40001, dport=2121).send(1, b"220 (vsFTPd)\r\n").send(0, b"USER evil\r\n")
    smtp = Session(sport=40002, dport=25).send(1, b"220 mx ESMTP\r\n").send(0, b"EHLO x\r\n").send(0, b"MAIL FROM:<evil>\r\n")
    ssh = Session(sport=40003, dport=22).send(1, b"SSH-2.0-OpenSSH_9\r\n").send(0, b"SSH-2.0-evil\r\n")
    other = Session(sport=40004, dport=21).send(1, b"+OK evil\r\n").send(0, b"evil\r\n")
    rf = rules(tmp_path,
               'alert ftp any any -> any any (flow:to_server; content:"evil"; sid:1;)\n'
               'alert smtp any any -> any any (flow:to_server; content:"MAIL FROM"; sid:2;)\n'
               'alert ssh any any -> any any (flow:to_server; content:"evil"; sid:3;)\n'
               'alert tcp any any -> any any (app-layer-protocol:ftp; content:"evil"; sid:4;)\n'
               'alert smb any any -> any any (content:"evil"; sid:5;)\n')
    alerts, flows, _ = nids(tmp_path, rf, write(tmp_path, ftp.close() + smtp.close() + ssh.close() + other.close()))
    assert sorted((a["alert"]["signature_id"], a["dest_port"]) for a in alerts) == [(1, 2121), (2, 25), (3, 22), (4, 2121)]
    assert sorted((f["dest_port"], f.get("app_proto")) for f in flows) == [(21, None), (22, "ssh"), (25, "smtp"), (2121, "ftp")]


def test_ips_drops_the_flow(tmp_path):
    s = Session()
    s.send(0, b"hello").send(0, b"attack now").send(0, b"more data")
    rf = rules(tmp_path, 'drop tcp any any -> any any (msg:"attack"; content:"attack"; sid:1;)\n')
    cap = write(tmp_path, s.close())
    alerts, flows, r = nids(tmp_path, rf, cap, "--ips")
    assert sids(alerts) == [1] and alerts[0]["alert"]["action"] == "blocked"
    assert flows[0]["flow"]["action"] == "drop"
    # The packet that completed the match and every later one of the flow: 1 data, its ACK
    # is dropped too, then the rest.
    m = re.search(r"(\d+) packets dropped", r.stdout)
    assert m and int(m.group(1)) >= 4, r.stdout
    alerts, _, r = nids(tmp_path, rf, cap)  # IDS: the same alert, allowed
    assert alerts[0]["alert"]["action"] == "allowed" and "dropped" not in r.stdout


def test_check_rules_reports_per_keyword(tmp_path):
    rf = rules(tmp_path,
               'alert tcp any any -> any any (msg:"ok"; content:"a"; sid:1;)\n'
               'alert dcerpc any any -> any any (msg:"app"; content:"a"; sid:2;)\n'
               'alert tcp any any -> any any (msg:"asn1"; content:"a"; asn1:oversize_length 10; sid:3;)\n'
               '# alert tcp any any -> any any (msg:"off"; sid:4;)\n')
    r = run("nids", "--rules", rf, "--check-rules")
    assert_ok(r)
    assert "1 of 3 rules load (33.3%), 1 commented out" in r.stdout
    assert "app-layer proto dcerpc" in r.stdout and "asn1" in r.stdout
    r = run("nids", "--rules", rf, "--check-rules", "--json", tmp_path / "c.json", "--verbose")
    assert_ok(r)
    doc = json.loads((tmp_path / "c.json").read_text())
    assert (doc["rules"], doc["loaded"], doc["syntax_errors"]) == (3, 1, 0)
    assert doc["skipped_by"] == {"app-layer proto dcerpc": 1, "asn1": 1}
    assert doc["files"][0]["problems"][1]["sid"] == 3


def test_bad_rule_files(tmp_path):
    cap = write(tmp_path, Session().close())
    bad = rules(tmp_path, 'alert tcp any any -> any any (msg:"a"; content:"|4|"; sid:1;)\n'
                          'alert tcp any any -> any any (msg:"b"; content:"x"; sid:2;)\n')
    r = run("nids", "--rules", bad, "--in", cap)
    assert_no_crash(r)
    assert r.returncode == 1 and f"{bad}:1: content: odd number of hex digits" in r.stderr
    assert "--skip-bad-rules" in r.stderr
    assert_ok(run("nids", "--rules", bad, "--in", cap, "--skip-bad-rules"))
    r = run("nids", "--rules", tmp_path / "missing.rules", "--in", cap)
    assert r.returncode == 1 and "missing.rules" in r.stderr
    r = run("nids", "--rules", bad, "--in", cap, "--set-var", "NOEQUALS")
    assert r.returncode == 1 and "NAME=VALUE" in r.stderr
    huge = rules(tmp_path, 'alert tcp any any -> any any (msg:"h"; content:"' + "a" * 70000 + '"; sid:1;)\n', "h.rules")
    r = run("nids", "--rules", huge, "--in", cap)
    assert r.returncode == 1 and "longer than 65535" in r.stderr
    r = run("nids", "--rules", rf_ok(tmp_path), "--in", tmp_path / "nope.pcap")
    assert r.returncode == 1 and "nope.pcap" in r.stderr


def rf_ok(tmp_path):
    return rules(tmp_path, 'alert tcp any any -> any any (msg:"ok"; content:"x"; sid:1;)\n', "ok.rules")


ET = DATA / "patterns" / "et-open" / "rules"
CAPTURES = sorted(p for p in (DATA / "pcap").rglob("*.pcap*")) if (DATA / "pcap").is_dir() else []


def et_run(tmp_path, extra, cap, engine, batch, *more):
    eve = tmp_path / "e.json"
    r = run("nids", "--rules", ET, "--rules", extra, "--in", cap, "--eve", eve, "--engine", engine,
            "--batch", batch, "--no-checksum", "--midstream", *more, timeout=300)
    if r.returncode != 0 and "link type" in r.stderr:
        return None
    assert_ok(r)
    return eve.read_text()


def anything_rules(tmp_path):
    """Rules that fire on much of any capture, so no comparison is empty."""
    return rules(tmp_path, 'alert tcp any any -> any any (msg:"any tcp payload"; content:"|00|"; sid:1;)\n'
                           'alert udp any any -> any any (msg:"any udp"; dsize:>0; sid:2;)\n', "x.rules")


@pytest.mark.skipif(not ET.is_dir() or not CAPTURES, reason="shared data not found")
def test_cpu_engine_matches_the_reference_on_every_shared_capture(tmp_path):
    """Every capture of the shared data with the whole loadable ET Open set: validate:cpu.nids
    runs ref.nids beside cpu.nids and fails on the first inspection whose matches differ."""
    extra, total = anything_rules(tmp_path), 0
    for cap in CAPTURES:
        out = et_run(tmp_path, extra, cap, "validate:cpu.nids", 64)
        total += 0 if out is None else out.count('"event_type":"alert"')
    assert total > 0


SOME = [p for p in CAPTURES if p.name in ("http-get.pcap", "ipv4-fragmented-3.pcap", "ftp-ipv6.pcap",
                                          "ipv4_tcp_http_xml.pcap", "q-in-q.pcap", "icmpv6.pcap")]


@pytest.mark.skipif(not ET.is_dir() or not SOME, reason="shared data not found")
@pytest.mark.parametrize("cap", SOME, ids=lambda p: p.name)
def test_alerts_do_not_depend_on_engine_or_batch_size(tmp_path, cap):
    extra = anything_rules(tmp_path)
    outputs = {et_run(tmp_path, extra, cap, e, b) for e, b in (("ref.nids", 1024), ("cpu.nids", 1), ("cpu.nids", 7), ("cpu.nids", 1024))}
    assert len(outputs) == 1


@pytest.mark.skipif(not ET.is_dir() or not SOME, reason="shared data not found")
def test_gathered_units_give_the_same_alerts(tmp_path):
    """--unit-batches on (cuda.nids's path: a batch's units gathered, their stream bytes
    copied, inspected in one call, alerts taken after) gives what unit-by-unit inspection gives,
    flowbits across packets included, at every batch size."""
    extra = rules(tmp_path, 'alert tcp any any -> any any (msg:"any tcp payload"; content:"|00|"; sid:1;)\n'
                            'alert udp any any -> any any (msg:"any udp"; dsize:>0; sid:2;)\n'
                            'alert tcp any any -> any any (msg:"get"; content:"GET"; flowbits:set,g; sid:3;)\n'
                            'alert tcp any any -> any any (msg:"after get"; content:"HTTP/1."; flowbits:isset,g; sid:4;)\n',
                  "x.rules")
    total = 0
    for cap in SOME:
        want = et_run(tmp_path, extra, cap, "cpu.nids", 64, "--unit-batches", "off")
        for b in (1, 7, 1024):
            assert et_run(tmp_path, extra, cap, "cpu.nids", b, "--unit-batches", "on") == want, (cap.name, b)
        total += 0 if want is None else want.count('"event_type":"alert"')
    assert total > 0
    # The summary names the mode; a pass rule (its verdict decides what is inspected next) or
    # IPS mode turns gathering off.
    ex = Path(__file__).resolve().parents[2] / "examples" / "nids"
    for extra_args, gathered in (((), True), (("--ips",), False)):
        r = run("nids", "--rules", ex / "demo.rules", "--in", ex / "demo.pcap", "--unit-batches", "on", *extra_args)
        assert_ok(r)
        assert ("cpu.nids (unit batches) +" in r.stdout) == gathered, r.stdout
    passing = rules(tmp_path, (ex / "demo.rules").read_text() + 'pass ip any any -> any any (msg:"p"; sid:1;)\n')
    r = run("nids", "--rules", passing, "--in", ex / "demo.pcap", "--unit-batches", "on")
    assert_ok(r)
    assert "(unit batches)" not in r.stdout


def test_demo_capture_alerts_on_every_attack_and_nothing_else(tmp_path):
    """examples/nids (what `make demo` runs): each crafted attack alerts once, the benign flow
    and the never-matching rule do not."""
    ex = Path(__file__).resolve().parents[2] / "examples" / "nids"
    alerts, flows, _ = nids(tmp_path, ex / "demo.rules", ex / "demo.pcap")
    assert sorted(sids(alerts)) == [9000001, 9000002, 9000003, 9000005, 9000006, 9000007, 9000008]
    assert len(flows) == 7 and sum(f["flow"]["alerted"] for f in flows) == 6  # the benign one not


def test_defrag_before_nids_in_a_run_alerts_on_the_fragmented_datagram(tmp_path):
    """`defrag -> nids -> wire` over the demo capture: the fragmented datagram's rule alerts too
    (the nids module sees it whole), so the alerts are `warpath nids`'s; the fragments held for
    it are accounted as defrag_held."""
    ex = Path(__file__).resolve().parents[2] / "examples" / "nids"
    eve, report = tmp_path / "eve.json", tmp_path / "run.json"
    assert_ok(run("run", "--chain", f"defrag -> nids(rules={ex / 'demo.rules'}, eve={eve}) -> wire",
                  "--port", f"in=pcap:{ex / 'demo.pcap'}:", "--port",
                  f"out=pcap::{tmp_path / 'out.pcap'}", "--json", report))
    alerts = [json.loads(l) for l in eve.read_text().splitlines() if '"event_type":"alert"' in l]
    assert sorted(sids(alerts)) == [9000001, 9000002, 9000003, 9000005, 9000006, 9000007, 9000008]
    doc = json.loads(report.read_text())
    held = doc["drops_by_reason"].get("defrag_held", 0)
    assert held >= 1 and doc["totals"]["rx"] == 57 and doc["totals"]["tx"] == 57 - held


def test_nids_module_in_a_run_ids_and_ips(tmp_path):
    """`warpath run` with the nids module over the demo capture: IDS passes everything and writes
    the same alerts as `warpath nids` (but the fragmented datagram's, without a defrag module
    before it); IPS with a drop rule drops that flow from the matching packet on, and the
    counters add up."""
    ex = Path(__file__).resolve().parents[2] / "examples" / "nids"
    eve, report = tmp_path / "eve.json", tmp_path / "run.json"
    r = run("run", "--chain", f"nids(rules={ex / 'demo.rules'}, eve={eve}) -> wire",
            "--port", f"in=pcap:{ex / 'demo.pcap'}:", "--port", f"out=pcap::{tmp_path / 'out.pcap'}",
            "--json", report)
    assert_ok(r)
    alerts = [json.loads(l) for l in eve.read_text().splitlines() if '"event_type":"alert"' in l]
    assert sorted(sids(alerts)) == [9000001, 9000002, 9000003, 9000005, 9000006, 9000007]
    doc = json.loads(report.read_text())
    assert doc["totals"]["rx"] == doc["totals"]["tx"] == 57
    drop_rules = rules(tmp_path, (ex / "demo.rules").read_text().replace(
        'alert tcp any any -> $HOME_NET 80 (msg:"DEMO SQL', 'drop tcp any any -> $HOME_NET 80 (msg:"DEMO SQL'))
    r = run("run", "--chain", f"nids(rules={drop_rules}, eve={eve}, mode=ips) -> wire",
            "--port", f"in=pcap:{ex / 'demo.pcap'}:", "--port", f"out=pcap::{tmp_path / 'out.pcap'}",
            "--json", report)
    assert_ok(r)
    doc = json.loads(report.read_text())
    assert doc["drops_by_reason"].get("nids_drop") == 7, doc["drops_by_reason"]
    assert doc["totals"]["rx"] == doc["totals"]["tx"] + 7
    blocked = [json.loads(l) for l in eve.read_text().splitlines() if '"blocked"' in l]
    assert [b["alert"]["signature_id"] for b in blocked] == [9000003]
    r = run("run", "--chain", "nids(rules=/nonexistent.rules)", "--port", f"in=pcap:{ex / 'demo.pcap'}:")
    assert r.returncode != 0 and "nonexistent.rules" in r.stderr


def test_threshold_and_detection_filter(tmp_path):
    """Five matching datagrams from one source within a second, then a sixth a minute later:
    limit 2 alerts on the first two of each window, threshold 2 on every second, both 2 once
    per window, detection_filter 2 on each after the second; by_dst tracks the other side."""
    frames = [Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER) / UDP(sport=4000 + i, dport=9) / Raw(b"ping")
              for i in range(6)]
    for i, f in enumerate(frames):
        f.time = 1_700_000_000 + (i * 0.1 if i < 5 else 120)
    cap = tmp_path / "t.pcap"
    wrpcap(str(cap), frames)
    rf = rules(tmp_path,
               'alert udp any any -> any 9 (msg:"limit"; content:"ping"; threshold: type limit, track by_src, count 2, seconds 60; sid:1;)\n'
               'alert udp any any -> any 9 (msg:"threshold"; content:"ping"; threshold: type threshold, track by_src, count 2, seconds 60; sid:2;)\n'
               'alert udp any any -> any 9 (msg:"both"; content:"ping"; threshold: type both, track by_dst, count 2, seconds 60; sid:3;)\n'
               'alert udp any any -> any 9 (msg:"filter"; content:"ping"; detection_filter: track by_src, count 2, seconds 60; sid:4;)\n')
    alerts, _, _ = nids(tmp_path, rf, cap)
    by = {}
    for a in alerts:
        by.setdefault(a["alert"]["signature_id"], []).append(a["pcap_cnt"])
    assert by == {1: [1, 2, 6], 2: [2, 4], 3: [2], 4: [3, 4, 5]}


L7 = DATA / "patterns" / "l7-filter"


@pytest.mark.skipif(not (L7 / "l7-patterns.tsv").is_file(), reason="l7-filter data not found")
def test_l7_labels_match_an_independent_oracle(tmp_path):
    """Every l7-filter sample payload (../shared/data/patterns/l7-filter/samples) sent as a TCP
    connection's first data: warpath's label (EVE app_proto) is the first pattern, in file order,
    that Python's re finds in the NUL-stripped bytes (caseless, . any byte); patterns Python
    cannot compile, overmatch ones and the catch-alls are left out of both."""
    import re as pyre
    rows = []
    for line in (L7 / "l7-patterns.tsv").read_text(errors="replace").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        d, name, attrs, regex = line.split("\t")
        if "overmatch" in attrs or name in ("unknown", "unset"):
            continue
        try:
            compiled = pyre.compile(regex.encode("latin-1"), pyre.I | pyre.S)
        except (pyre.error, UnicodeEncodeError):
            continue
        rows.append((line, name, compiled))
    table = tmp_path / "l7.tsv"
    table.write_text("\n".join(r[0] for r in rows) + "\n")
    samples = sorted((L7 / "samples").iterdir())
    frames, expect = [], {}
    for i, sample in enumerate(samples):
        data = sample.read_bytes()[:1400]
        stripped = data.replace(b"\0", b"")[:2048]
        expect[40000 + i] = next((n for _, n, c in rows if c.search(stripped)), "unknown")
        s = Session(sport=40000 + i, dport=9999)
        s.send(0, data)
        frames += s.close()
    cap = write(tmp_path, frames)
    rf = rules(tmp_path, 'alert tcp any any -> any any (msg:"x"; content:"never-there"; sid:1;)\n')
    _, flows, r = nids(tmp_path, rf, cap, "--l7", table)
    got = {f["src_port"]: f["app_proto"] for f in flows}
    assert got == expect
    # Half the samples get their own protocol's name first (60 of 122: others match an earlier
    # pattern, or need the server's reply): the comparison is not an empty one.
    named = sum(1 for i, s in enumerate(samples) if expect[40000 + i] == s.name.split("-")[0])
    assert named >= 50, (named, len(samples))


def test_app_layer_protocol_keyword(tmp_path):
    """Rules test the flow's label; while classification runs, neither a name nor its negation
    holds (the first flow's request is inspected before its reply names it)."""
    s = Session(dport=8080)
    s.send(0, b"GET / HTTP/1.1\r\n\r\n").send(1, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsecret")
    s2 = Session(sport=40001, dport=8081)
    s2.send(0, b"x" * 1400).send(0, b"y" * 700 + b" secret")  # 2,048 bytes: classified (unknown)
    table = tmp_path / "l7.tsv"
    table.write_text("protocols\thttp\tgreat\thttp/(0\\.9|1\\.0|1\\.1) [1-5][0-9][0-9] [\\x09-\\x0d -~]*(content-type:)\n")
    rf = rules(tmp_path, 'alert tcp any any -> any any (msg:"http"; app-layer-protocol:http; content:"secret"; sid:1;)\n'
                         'alert tcp any any -> any any (msg:"not http"; app-layer-protocol:!http; content:"secret"; sid:2;)\n')
    alerts, flows, _ = nids(tmp_path, rf, write(tmp_path, s.close() + s2.close()), "--l7", table)
    assert sorted((a["src_port"], a["alert"]["signature_id"]) for a in alerts) == [(8080, 1), (40001, 2)]
    assert sorted(f["app_proto"] for f in flows) == ["http", "unknown"]


def test_l7_module_tags_labelled_flows_for_an_acl(tmp_path):
    """`flow -> l7 -> acl(when=http) -> wire`: the HTTP flow's packets from the one that
    labels it (the reply) on carry the `http` context and meet the deny-all ACL; the handshake
    and request before the label, and the other flow (classified unknown at 2,048 bytes), pass.
    The counters add up; a chain without a flow module before l7 is refused."""
    s = Session(dport=8080)
    s.send(0, b"GET / HTTP/1.1\r\n\r\n").send(1, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhi")
    s2 = Session(sport=40001, dport=8081)
    s2.send(0, b"x" * 1400).send(0, b"y" * 700)
    frames = s.close() + s2.close()
    cap = write(tmp_path, frames)
    table = tmp_path / "l7.tsv"
    table.write_text("protocols\thttp\tgreat\thttp/(0\\.9|1\\.0|1\\.1) [1-5][0-9][0-9] [\\x09-\\x0d -~]*(content-type:)\n")
    acl = tmp_path / "deny.rules"
    acl.write_text("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 deny\n")
    report, out = tmp_path / "run.json", tmp_path / "out.pcap"
    for batch in (1, 4, 64):
        assert_ok(run("run", "--chain", f"flow -> l7(patterns={table}) -> acl(rules={acl}, when=http) -> wire",
                      "--port", f"in=pcap:{cap}:", "--port", f"out=pcap::{out}", "--batch", batch,
                      "--json", report))
        doc = json.loads(report.read_text())
        assert doc["totals"]["rx"] == 20 and doc["totals"]["tx"] == 15, doc["totals"]
        assert {k: v for k, v in doc["drops_by_reason"].items() if v} == {"acl_deny": 5}
        l7 = next(m for m in doc["modules"] if m["kind"] == "l7")
        assert l7["stats"] == {"flows_labelled": 1, "flows_unknown": 1, "packets_tagged": 5}, l7
        sent = [bytes(f) for f in frames[:5]] + [bytes(f) for f in frames[10:]]
        assert [bytes(p) for p in rdpcap(str(out))] == sent
    r = run("run", "--chain", f"l7(patterns={table}) -> wire", "--port", f"in=pcap:{cap}:")
    assert r.returncode != 0 and "needs a flow module before it" in r.stderr


def test_tunnelled_traffic_is_inspected_inside(tmp_path):
    """IP-in-IP, IPv6-in-IPv4, GRE and VXLAN: the alert names the inner addresses (IPv6 written
    as Suricata writes it) and the outer packet carries the verdict."""
    from scapy.all import GRE, IPv6
    from scapy.layers.vxlan import VXLAN
    outer = lambda: Ether(src=MAC[0], dst=MAC[1]) / IP(src="198.51.100.1", dst="198.51.100.2")
    inner4 = IP(src="10.9.0.1", dst="10.9.0.2") / UDP(sport=1111, dport=2222) / Raw(b"TUNNELLED-EVIL")
    inner6 = IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1111, dport=2222) / Raw(b"TUNNELLED-EVIL")
    frames = [outer() / inner4,
              outer() / inner6,
              outer() / GRE() / inner4,
              outer() / UDP(sport=5555, dport=4789) / VXLAN(vni=7) / Ether(src=MAC[0], dst=MAC[1]) / inner4]
    cap = write(tmp_path, frames)
    rf = rules(tmp_path, 'alert udp any any -> any 2222 (msg:"inner"; content:"TUNNELLED-EVIL"; sid:1;)\n')
    alerts, _, _ = nids(tmp_path, rf, cap)
    assert [(a["pcap_cnt"], a["src_ip"], a["dest_ip"]) for a in alerts] == [
        (1, "10.9.0.1", "10.9.0.2"),
        (2, "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:0db8:0000:0000:0000:0000:0000:0002"),
        (3, "10.9.0.1", "10.9.0.2"),
        (4, "10.9.0.1", "10.9.0.2")]


def test_hostile_traffic_is_bounded_and_counted(tmp_path):
    """A flood of half-open flows through a 64-flow table, and a payload built to make a rule's
    pcre and content search backtrack: the run ends, every bound reached is counted, and the
    counters say what was given up."""
    frames = [Ether(src=MAC[0], dst=MAC[1]) / IP(src=f"10.{i // 250}.{i % 250}.1", dst=SERVER) /
              TCP(sport=1024 + i, dport=80, flags="S") for i in range(3000)]
    frames.append(Ether(src=MAC[0], dst=MAC[1]) / IP(src=CLIENT, dst=SERVER) / UDP(sport=1, dport=2) /
                  Raw(b"a" * 1400))
    cap = write(tmp_path, frames)
    rf = rules(tmp_path,
               'alert udp any any -> any any (msg:"redos"; pcre:"/(a+)+b/"; sid:1;)\n'
               'alert udp any any -> any any (msg:"backtrack"; content:"a"; content:"a"; distance:0; '
               'content:"a"; distance:0; content:"b"; distance:0; sid:2;)\n'
               'alert tcp any any -> any 80 (msg:"syn"; flags:S; threshold: type limit, track by_rule, count 5, seconds 60; sid:3;)\n')
    js = tmp_path / "s.json"
    alerts, flows, r = nids(tmp_path, rf, cap, "--capacity", 64, "--json", js)
    doc = json.loads(js.read_text())
    assert sids(alerts) == [3] * 5  # the flood alerts five times, then the limit holds
    assert len(flows) == 3001 and doc["flows"] == 3001  # evicted flows are reported, none lost
    assert doc["detect"]["pcre_limit"] + doc["detect"]["backtrack_limit"] >= 1, doc["detect"]
    assert "bounds reached" in r.stdout
    r = run("nids", "--rules", rules(tmp_path, 'alert tcp any any -> any any (msg:"d"; content:"a"; depth:99999999; sid:1;)\n', "d.rules"),
            "--in", cap)
    assert r.returncode == 1 and "out of range" in r.stderr


def flow_sids(eve_text):
    """The (signature, flow) pairs of an EVE output: what matched where, not which packet."""
    out = set()
    for line in (eve_text or "").splitlines():
        e = json.loads(line)
        if e["event_type"] == "alert":
            out.add((e["alert"]["signature_id"], e.get("flow_id")))
    return out


# Chunks of exactly --stream-chunk bytes, where a test checks the packets that complete them
# (the default draws each chunk's size at random: test_stream_chunk_sizes_are_drawn_at_random).
EXACT = ("--stream-chunk-jitter", "0")


def test_stream_chunks_inspect_less_often_and_find_the_same(tmp_path):
    """--stream-chunk N (IDS; Suricata inspects raw streams in 2,560-byte chunks): a direction's
    stream is inspected once N new bytes wait, at its FIN, an RST, a gap or the flow's end. The
    same rules match in the same flows (once per inspection: occurrences within one chunk alert
    once); fewer stream inspections run; IPS ignores it. (Exact chunks: EXACT.)"""
    # Split and tiny segments: found at the FIN, not lost.
    s = Session()
    for part in (b"xxEVI", b"LPAY", b"LOADxx", b" and EVILPAYLOAD again"):
        s.send(0, part)
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, s.close()), "--stream-chunk", "2560", *EXACT)
    # Both occurrences are in one inspected chunk, and a rule alerts once per inspection (as in
    # Suricata): one stream alert where per-segment inspection gives two.
    assert sorted(sids(alerts)) == [1, 2]
    s = Session()
    for ch in b"EVILPAYLOAD":
        s.send(0, bytes([ch]))
    frames = s.close()
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, frames), "--stream-chunk", "2560", *EXACT)
    assert sorted(sids(alerts)) == [1, 3]
    # Inspected at the client's FIN (its bytes were all acknowledged by then), not at the end.
    fin = len(frames) - 2  # pcap_cnt counts from 1: the client's FIN is the third frame from the end
    assert {a["pcap_cnt"] for a in alerts} == {fin}, [a["pcap_cnt"] for a in alerts]
    # Bytes the server acknowledges only with its own FIN: inspected at that packet, the
    # client's FIN having been seen, not held until the flow ends.
    s = Session()
    s.send(0, b"xxEVILPAYLOADxx", ack=False)
    frames = s.close()
    alerts, _, _ = nids(tmp_path, split_rules(tmp_path), write(tmp_path, frames), "--stream-chunk", "2560", *EXACT)
    stream = [a for a in alerts if a["alert"]["signature_id"] == 1]
    assert [a["pcap_cnt"] for a in stream] == [len(frames) - 1]
    # A long stream of 100-byte segments: its chunks are inspected before the FIN, and the
    # count of stream inspections drops by about the chunk's share.
    s = Session()
    s.send(0, b"EVILPAYLOAD" + b"." * 89)
    for _ in range(60):
        s.send(0, b"." * 100)
    cap = write(tmp_path, s.close())
    units = {}
    for chunk in ("0", "1000"):
        js = tmp_path / f"s{chunk}.json"
        alerts, _, _ = nids(tmp_path, split_rules(tmp_path), cap, "--stream-chunk", chunk, *EXACT, "--json", js)
        assert sorted(sids(alerts)) == [1, 2, 3]
        units[chunk] = json.loads(js.read_text())["detect"]["stream_units"]
    assert units["1000"] * 5 < units["0"], units
    # A chunk past 1 MiB (bytes a direction holds while it waits) is refused, with the option named.
    r = run("nids", "--rules", split_rules(tmp_path), "--in", cap, "--stream-chunk", str(1 << 21))
    assert r.returncode != 0 and "--stream-chunk" in r.stderr, r.stderr
    # IPS inspects every segment whatever the chunk says.
    js = tmp_path / "ips.json"
    nids(tmp_path, split_rules(tmp_path), cap, "--stream-chunk", "1000", "--ips", "--json", js)
    assert json.loads(js.read_text())["detect"]["stream_units"] == units["0"]


def test_stream_chunk_sizes_are_drawn_at_random(tmp_path):
    """--stream-chunk-jitter P (10 by default, as Suricata documents its randomize-chunk-range):
    each chunk's size is drawn at random within P per cent of --stream-chunk either way, anew for
    every chunk, so that an attacker cannot predict where a stream is inspected; 0 gives exactly
    --stream-chunk."""
    s = Session()
    s.send(0, b"EVILPAYLOAD" + b"." * 89)
    for _ in range(30):
        s.send(0, b"." * 100)
    cap = write(tmp_path, s.close())

    def first_inspection(jitter):
        alerts, _, _ = nids(tmp_path, split_rules(tmp_path), cap, "--stream-chunk", "1000",
                            "--stream-chunk-jitter", jitter)
        assert sorted(sids(alerts)) == [1, 2, 3]
        return [a["pcap_cnt"] for a in alerts if a["alert"]["signature_id"] == 1][0]

    # Exactly 1,000 bytes: the tenth segment's acknowledgement completes the chunk, every time.
    exact = {first_inspection("0") for _ in range(3)}
    assert len(exact) == 1, exact
    tenth = exact.pop()
    # 500 to 1,500 bytes: the 5th to 15th segment's acknowledgement (two frames a segment), not
    # the same one every run (eight runs all alike would take a chance of about 1e-7).
    drawn = [first_inspection("50") for _ in range(8)]
    assert all(tenth - 10 <= p <= tenth + 10 and (p - tenth) % 2 == 0 for p in drawn), (tenth, drawn)
    assert len(set(drawn)) > 1, drawn
    r = run("nids", "--rules", split_rules(tmp_path), "--in", cap, "--stream-chunk", "1000",
            "--stream-chunk-jitter", "51")
    assert r.returncode != 0 and "--stream-chunk-jitter" in r.stderr, r.stderr
    # Drawn anew for every chunk: a rule matching every chunk's new bytes alerts at each
    # inspection. Over 120 segments (12,000 bytes) with exact chunks the inspections are ten
    # segments (20 frames) apart; drawn, the steps between them change within a run. Chunks of
    # at most 1,500 bytes give every run at least eight inspections, so at least six steps
    # (60 segments once drew three chunks of ~1,500 bytes and left one step to compare), each
    # one of eleven with a chance of at most 0.1 each: eight runs that all keep one step would
    # take a chance far below 1e-8.
    every = rules(tmp_path, 'alert tcp any any -> any any (msg:"every chunk"; content:"."; sid:9;)\n', "every.rules")
    s = Session()
    for _ in range(120):
        s.send(0, b"." * 100)
    cap = write(tmp_path, s.close(), "dots.pcap")

    def steps(jitter):
        alerts, _, _ = nids(tmp_path, every, cap, "--stream-chunk", "1000", "--stream-chunk-jitter", jitter)
        at = sorted(a["pcap_cnt"] for a in alerts if a["alert"]["signature_id"] == 9)
        assert len(at) >= 8, at
        return [b - a for a, b in zip(at, at[1:-1])]  # the last one may be the FIN's

    assert set(steps("0")) == {20}
    # All twelve chunks alert: a 4 KiB lookback full of the needle must not spend the
    # evaluation's step bound before the new bytes are reached (it did from the fifth chunk on).
    alerts, _, _ = nids(tmp_path, every, cap, "--stream-chunk", "1000", "--stream-chunk-jitter", "0")
    assert len([a for a in alerts if a["alert"]["signature_id"] == 9]) == 12, alerts
    assert any(len(set(steps("50"))) > 1 for _ in range(8))


@pytest.mark.skipif(not ET.is_dir() or not SOME, reason="shared data not found")
def test_stream_chunks_find_what_every_segment_finds_with_et_open(tmp_path):
    extra, total = anything_rules(tmp_path), 0
    for cap in SOME:
        want = et_run(tmp_path, extra, cap, "cpu.nids", 64)
        got = et_run(tmp_path, extra, cap, "cpu.nids", 64, "--stream-chunk", "2560", *EXACT)
        assert flow_sids(got) == flow_sids(want), cap.name
        total += len(flow_sids(want))
    assert total > 0


def test_long_streams_match_across_the_kept_lookback(tmp_path):
    """A direction far past the 4 KiB lookback (the inspector skips what falls out of it and
    moves its buffer down only now and then): content split across segments still matches
    there, a relative match reaches back into the lookback, and one that needs bytes older
    than the lookback does not."""
    fill = bytes(range(48, 58)) * 10  # 100 bytes without a pattern's letters
    stream = bytearray(fill * 300)  # 30,000 bytes
    for at in (5_000 - 4, 9_203, 17_998, 26_050):  # occurrences across segment boundaries
        stream[at:at + 11] = b"EVILPAYLOAD"
    stream[12_040:12_045] = b"MARKA"
    stream[14_540:14_545] = b"MARKB"  # 2,500 bytes after MARKA: in the lookback
    stream[20_010:20_015] = b"MARKC"
    stream[25_510:25_515] = b"MARKD"  # 5,500 bytes after MARKC: past it
    s = Session()
    for k in range(0, len(stream), 97):
        s.send(1, bytes(stream[k:k + 97]))
    r = rules(tmp_path, 'alert tcp any any -> any any (msg:"split"; content:"EVILPAYLOAD"; sid:1;)\n'
                        'alert tcp any any -> any any (msg:"near"; content:"MARKA"; content:"MARKB"; distance:0; within:3000; sid:2;)\n'
                        'alert tcp any any -> any any (msg:"far"; content:"MARKC"; content:"MARKD"; distance:0; sid:3;)\n')
    alerts, _, _ = nids(tmp_path, r, write(tmp_path, s.close()))
    assert sorted(sids(alerts)) == [1, 1, 1, 1, 2], sids(alerts)


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark's protocol hierarchy is the oracle")
@pytest.mark.parametrize("name,proto", [("geneve.pcap", "ssh"), ("ftp-ipv6.pcap", "ftp"), ("http-get.pcap", "http")])
def test_detected_protocols_agree_with_tshark(tmp_path, name, proto):
    # A shared capture's flow is found to speak what tshark's dissectors say it speaks (SSH
    # inside Geneve, FTP over IPv6): detection by content, as Suricata's, not by port.
    found = [p for p in CAPTURES if p.name == name]
    if not found:
        pytest.skip(f"{name} not in {DATA / 'pcap'} (set WARPATH_DATA)")
    phs = subprocess.run(["tshark", "-r", found[0], "-q", "-z", "io,phs"], capture_output=True, text=True, check=True)
    assert re.search(rf"^\s+{proto}\s+frames:", phs.stdout, re.M), phs.stdout
    rf = rules(tmp_path, 'alert tcp any any -> any any (msg:"x"; content:"zzzzzzzz"; sid:1;)\n')
    _, flows, _ = nids(tmp_path, rf, found[0])
    assert proto in {f.get("app_proto") for f in flows}


# Handshakes an attacker can choose (Suricata's test captures): TCP Fast Open, whose request rides
# on the SYN, and split handshakes (the server answers the SYN with its own SYN; Beardsley's
# evasion). Their connections are established for flow:established rules, and their bytes are
# a stream, so the stream and HTTP rules most of ET Open is written as see them.
@pytest.mark.parametrize("capture, needle", [
    ("suricata-verify/tcp-fastopen-01/tfo.pcap", "passwd"),
    ("suricata-verify/tcp-split-handshake-01-4whs/split-handshake-4whs.pcap", "EVIL"),
    ("suricata-verify/tcp-split-handshake-02-5whs/split-handshake-5whs.pcap", "EVIL"),
])
def test_chosen_handshakes_are_established_streams(tmp_path, capture, needle):
    cap = DATA / capture
    if not cap.is_file():
        pytest.skip(f"{cap} missing (set WARPATH_DATA)")
    rule_file = rules(tmp_path,
                      f'alert tcp any any -> any any (flow:established,to_server; content:"{needle}"; sid:1;)\n'
                      f'alert tcp-stream any any -> any any (flow:established; content:"{needle}"; sid:2;)\n'
                      f'alert http any any -> any any (flow:established,to_server; http.uri; content:"{needle}"; sid:3;)\n')
    alerts, _, _ = nids(tmp_path, rule_file, cap, "--no-flows")
    want = [1, 2, 3] if "fastopen" in capture else [1, 2]
    assert sorted(set(sids(alerts))) == want


def test_established_follows_the_handshake_the_reassembler_takes(tmp_path):
    """A responder's bare SYN before its ordinary SYN+ACK (the reassembler opens the connection
    the ordinary way, and the NIDS must not stay in the split handshake's half), and a SYN sent
    again after the SYN+ACK: flow:established rules see the request either way."""
    frames = []
    for sport, bogus_syn, resent_syn in ((40001, True, False), (40002, False, True)):
        s = Session(sport=sport, handshake=False)
        frames.append(s._pkt(0, "S", b"", seq=999))
        if bogus_syn:
            frames.append(s._pkt(1, "S", b"", seq=3000, ack=0))
        frames.append(s._pkt(1, "SA", b"", seq=4999, ack=1000))
        if resent_syn:
            frames.append(s._pkt(0, "S", b"", seq=999, ack=0))
        frames.append(s._pkt(0, "A", b""))
        s.frames = []
        s.send(0, b"GET /evil HTTP/1.0\r\n\r\n")
        frames += s.frames
    cap = write(tmp_path, frames)
    rule_file = rules(tmp_path,
                      'alert tcp any any -> any any (flow:established,to_server; content:"/evil"; sid:1;)\n'
                      'alert http any any -> any any (flow:established,to_server; http.uri; content:"/evil"; sid:2;)\n')
    alerts, _, _ = nids(tmp_path, rule_file, cap, "--no-flows")
    assert sorted((a["src_port"], a["alert"]["signature_id"]) for a in alerts) == \
        [(40001, 1), (40001, 2), (40002, 1), (40002, 2)]


def test_fast_open_request_is_established_inline(tmp_path):
    """In IPS mode a Fast Open SYN's request is inspected at the SYN (where the server acts on it)
    and meets flow:established stream and HTTP rules there."""
    s = Session(handshake=False)
    syn = s._pkt(0, "S", b"GET /evil HTTP/1.0\r\n\r\n", seq=999, ack=0)
    syn[TCP].options = [("TFO", b"")]
    frames = [syn, s._pkt(1, "SA", b"", seq=4999, ack=1000 + 22), s._pkt(0, "A", b"", seq=1022, ack=5000)]
    cap = write(tmp_path, frames)
    rule_file = rules(tmp_path,
                      'alert tcp any any -> any any (flow:established,to_server; content:"/evil"; sid:1;)\n'
                      'alert http any any -> any any (flow:established,to_server; http.uri; content:"/evil"; sid:2;)\n')
    for extra, at in (((), 2), (("--ips",), 1)):  # IDS: at the SYN+ACK that takes it
        alerts, _, _ = nids(tmp_path, rule_file, cap, "--no-flows", *extra)
        assert sorted(set(sids(alerts))) == [1, 2], extra
        assert {a["pcap_cnt"] for a in alerts} == {at}, extra


def test_established_ignores_answers_the_reassembler_refuses(tmp_path):
    """A SYN+ACK with a wrong acknowledgement between a split handshake's packets does not turn
    the NIDS's view back to an ordinary handshake: the connection is established when the
    split one completes, as the reassembler opens it, and the server's first data is seen so."""
    s = Session(handshake=False)
    frames = [s._pkt(0, "S", b"", seq=999),
              s._pkt(1, "S", b"", seq=4999, ack=0),
              s._pkt(1, "SA", b"", seq=4999, ack=777),  # a bogus answer: refused
              s._pkt(0, "SA", b"", seq=999, ack=5000),
              s._pkt(1, "A", b"", seq=5000, ack=1000)]
    s.frames = []
    s.send(1, b"HTTP/1.0 200 OK\r\n\r\nevil")
    cap = write(tmp_path, frames + s.frames)
    rule_file = rules(tmp_path, 'alert tcp any any -> any any (flow:established,to_client; content:"evil"; sid:1;)\n')
    alerts, _, _ = nids(tmp_path, rule_file, cap, "--no-flows")
    assert sids(alerts) == [1]


def test_midstream_and_inline_handshake_ends_are_established(tmp_path):
    """With --midstream, a connection whose SYN+ACK the capture lost is picked up by the
    reassembler at the client's next packet, and is established from there; in IPS mode, a
    request on the handshake's last ACK is delivered at once and inspected as established."""
    lost = Session(sport=40001, handshake=False)
    frames = [lost._pkt(0, "S", b"", seq=999)]  # the SYN+ACK lost
    lost.frames = []
    lost.send(0, b"GET /evil HTTP/1.0\r\n\r\n")
    frames += lost.frames
    rule_file = rules(tmp_path, 'alert tcp any any -> any any (flow:established,to_server; content:"/evil"; sid:1;)\n')
    alerts, _, _ = nids(tmp_path, rule_file, write(tmp_path, frames), "--no-flows", "--midstream")
    assert sids(alerts) == [1]

    on_ack = Session(sport=40002, handshake=False)
    frames = [on_ack._pkt(0, "S", b"", seq=999), on_ack._pkt(1, "SA", b"", seq=4999, ack=1000),
              on_ack._pkt(0, "PA", b"GET /evil HTTP/1.0\r\n\r\n", seq=1000, ack=5000)]
    alerts, _, _ = nids(tmp_path, rule_file, write(tmp_path, frames, "ack.pcap"), "--no-flows", "--ips")
    assert sids(alerts) == [1]


def test_forged_packets_cannot_split_or_turn_a_connection(tmp_path):
    """Packets forged by someone who does not know the sequence numbers: a RST far from its
    sender's numbers followed by a SYN in the middle of a connection, FINs from both sides and
    a SYN likewise, and a SYN+ACK from the client before its real SYN. Neither leaves the connection without its stream: the request
    after them meets stream, HTTP and flow:established rules, and `warpath flows` counts the
    RST and FINs ignored and the guess undone."""
    split = Session(sport=40001)
    split.send(0, b"GET /index")
    split.frames.append(split._pkt(0, "R", b"", seq=split.seq[0] + 0x40000000))
    split.frames.append(split._pkt(0, "S", b"", seq=123456, ack=0))
    split.send(0, b"/evil HTTP/1.0\r\n\r\n")
    closed = Session(sport=40003)
    closed.send(0, b"GET /index")
    closed.frames.append(closed._pkt(0, "FA", b"", seq=closed.seq[0] + 0x40000000))
    closed.frames.append(closed._pkt(1, "FA", b"", seq=closed.seq[1] + 0x40000000))
    closed.frames.append(closed._pkt(0, "S", b"", seq=123456, ack=0))
    closed.send(0, b"/evil HTTP/1.0\r\n\r\n")
    split.frames += closed.frames
    turned = Session(sport=40002, handshake=False)
    frames = [turned._pkt(0, "SA", b"", seq=777, ack=888)]
    turned.__init__(sport=40002)
    turned.send(0, b"GET /evil HTTP/1.0\r\n\r\n")
    cap = write(tmp_path, split.frames + frames + turned.frames)
    rule_file = rules(tmp_path,
                      'alert tcp-stream any any -> any any (flow:established,to_server; content:"/index/evil"; sid:1;)\n'
                      'alert http any any -> any any (flow:established,to_server; http.uri; content:"/evil"; sid:2;)\n'
                      'alert tcp any any -> any any (flow:established,to_server; content:"/evil"; sid:3;)\n')
    alerts, _, _ = nids(tmp_path, rule_file, cap, "--no-flows")
    got = sorted({(a["src_port"], a["alert"]["signature_id"]) for a in alerts})
    assert got == [(40001, 1), (40001, 2), (40001, 3), (40002, 2), (40002, 3),
                   (40003, 1), (40003, 2), (40003, 3)]
    c = json.loads(assert_ok(run("flows", "--in", str(cap), "--format", "json")).stdout)["counters"]
    assert c["ignored_rst"] == 1 and c["ignored_fin"] == 2 and c["reoriented"] == 1
