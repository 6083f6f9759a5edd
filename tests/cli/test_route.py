"""`warpath route`: the router data path end to end.

Forwards generated and hand-made captures and checks, independently of warpath: the counters add
up (rx = tx + dropped + slow_path, by reason and by port) and match the packets in the output
captures; forwarded packets have TTL / hop limit one less, valid IPv4 checksums and rewritten
MACs and are otherwise unchanged; slow-path and dropped packets are written as received; the
ICMP / ICMPv6 Time Exceeded errors have valid checksums; bad FIB and neighbour files give
"file:line: reason" and exit 1. tshark, when installed, checks the checksums a second time.

Environment: WARPATH_BIN (default <repo>/build/warpath); the module skips without it.
"""

import json
import shutil
import struct
import subprocess

import pytest
from pcap_frames import csum, eth, ipv4, ipv6, mac, udp, write_pcap
from pcap_frames import l3 as l3_offset
from pcap_frames import read_records as read_pcap
from warpath_cli import assert_no_crash, assert_ok, run, skip_without_binary


skip_without_binary()

SLOW = ["to_router", "multicast", "ttl_expired", "hop_limit_expired", "ipv4_options",
        "ipv6_hop_by_hop", "arp", "link_local", "bad_ipv4_header", "bad_ipv4_checksum",
        "bad_ipv4_length", "bad_ipv6_header", "bad_ipv6_length"]
DROP = ["truncated", "not_ip", "no_route", "no_neighbor", "not_for_us", "l2_broadcast_unicast_ip",
        "martian_source", "martian_destination"]


# --- frames (pcap files and checksums: pcap_frames.py, independent of warpath) -----------------

V6_SRC = bytes.fromhex("20010db8000000000000000000000001")
V6_DST = bytes.fromhex("20010db8000100000000000000000002")  # 2001:db8:1::2, routed
V4_SRC = [10, 0, 0, 1]

FIB = """# test FIB
10.1.0.0/16 1
10.2.0.0/16 2
10.3.0.0/16 3
2001:db8:1::/48 2
"""
NEIGHBORS = """# next hop, port, MAC
1 0 00:00:5e:00:53:01
2 1 00:00:5e:00:53:02
port 0 00:1b:21:00:00:00 10.0.0.254
port 1 - 2001:db8::fe
router 10.9.9.9
"""


def route(tmp_path, pcap, fib=FIB, neighbors=NEIGHBORS, *extra):
    (tmp_path / "fib.txt").write_text(fib)
    args = ["route", "--fib", tmp_path / "fib.txt", "--in", pcap, "--out-dir", tmp_path / "out",
            "--json", tmp_path / "c.json", *extra]
    if neighbors is not None:
        (tmp_path / "n.txt").write_text(neighbors)
        args += ["--neighbors", tmp_path / "n.txt"]
    r = assert_ok(run(*args))
    return r, json.loads((tmp_path / "c.json").read_text())


def check_add_up(c):
    assert c["rx"] == c["tx"] + c["dropped"] + c["slow_path"]
    assert sum(c["slow_path_reasons"].values()) == c["slow_path"]
    assert sum(c["drop_reasons"].values()) == c["dropped"]
    assert sum(c["tx_by_port"].values()) == c["tx"]
    assert sorted(c["slow_path_reasons"]) == sorted(SLOW)
    assert sorted(c["drop_reasons"]) == sorted(DROP)
    expired = c["slow_path_reasons"]["ttl_expired"] + c["slow_path_reasons"]["hop_limit_expired"]
    assert c["icmp_sent"] + c["icmp_suppressed"] == expired


# --- generated traffic -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    d = tmp_path_factory.mktemp("route")
    pcap = d / "gen.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 3000, "--seed", 11,
                  "--ipv6-share", 0.3, "--vlan-share", 0.2))
    # The generator's addresses: IPv4 10.0.0.0/8, IPv6 fd00::/8. Three quarters routed; next hop
    # 5 has no neighbour.
    fib = "10.0.0.0/9 1\n10.128.0.0/10 2\n10.192.0.0/11 5\nfd00::/9 2\nfd80::/10 1\n"
    neighbors = "1 0 00:00:5e:00:53:01\n2 3 00:00:5e:00:53:02\n"
    r, c = route(d, pcap, fib, neighbors)
    return d, pcap, r, c


def test_generated_counters_add_up_and_match_files(generated):
    d, pcap, r, j = generated
    c = j["counters"]
    n_in = len(read_pcap(pcap))
    assert c["rx"] == n_in == 3000
    check_add_up(c)
    assert c["drop_reasons"]["no_route"] > 0 and c["drop_reasons"]["no_neighbor"] > 0
    assert c["tx"] > 1500
    out = d / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "drop.pcap", "icmp.pcap", "port0.pcap", "port3.pcap", "slowpath.pcap"]
    assert j["files"]["port3"] == str(out / "port3.pcap")
    for port, n in c["tx_by_port"].items():
        assert len(read_pcap(out / f"port{port}.pcap")) == n
    assert len(read_pcap(out / "drop.pcap")) == c["dropped"]
    assert len(read_pcap(out / "slowpath.pcap")) == c["slow_path"]
    assert len(read_pcap(out / "icmp.pcap")) == c["icmp_sent"]
    # The text summary says the same.
    lines = dict(line.split() for line in r.stdout.splitlines()[1:])
    assert int(lines["rx"]) == c["rx"] and int(lines["tx"]) == c["tx"]
    assert int(lines["dropped"]) == c["dropped"] and int(lines["slow_path"]) == c["slow_path"]


def test_generated_forwarded_packets_are_rewritten_correctly(generated):
    d, pcap, _, _ = generated
    original = {ts: data for ts, _, _, data in read_pcap(pcap)}
    neighbor = {0: mac("00:00:5e:00:53:01"), 3: mac("00:00:5e:00:53:02")}
    seen = 0
    for port in (0, 3):
        for ts, caplen, wire, f in read_pcap(d / "out" / f"port{port}.pcap"):
            o = original[ts]
            assert len(f) == len(o) == caplen
            assert f[0:6] == neighbor[port]
            assert f[6:12] == bytes([2, 0, 0, 0, 0, port]), "default port MAC"
            l3, et = l3_offset(f)
            assert f[12:l3] == o[12:l3], "VLAN tags and ethertype kept"
            if et == 0x0800:
                ihl = (f[l3] & 15) * 4
                assert f[l3 + 8] == o[l3 + 8] - 1
                assert csum(f[l3:l3 + ihl]) == 0, "IPv4 header checksum"
                changed = {l3 + 8, l3 + 10, l3 + 11}
            else:
                assert et == 0x86DD
                assert f[l3 + 7] == o[l3 + 7] - 1
                changed = {l3 + 7}
            assert all(f[i] == o[i] for i in range(12, len(f)) if i not in changed)
            seen += 1
    assert seen > 1500


def test_generated_drops_are_written_as_received(generated):
    d, pcap, _, _ = generated
    original = {ts: data for ts, _, _, data in read_pcap(pcap)}
    for ts, _, _, f in read_pcap(d / "out" / "drop.pcap"):
        assert f == original[ts]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_generated_tshark_agrees_checksums_are_valid(generated):
    d, _, _, _ = generated
    for port in (0, 3):
        r = subprocess.run(["tshark", "-r", str(d / "out" / f"port{port}.pcap"), "-o",
                            "ip.check_checksum:TRUE", "-T", "fields", "-e", "ip.checksum.status",
                            "-e", "ip.ttl", "-e", "ipv6.hlim"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        assert rows
        for status, ttl, hlim in rows:
            if ttl:
                assert status == "1", "tshark: IPv4 checksum good"  # 1 = good
                assert ttl == "63"
            else:
                assert hlim == "63"


# --- every verdict on hand-made frames ---------------------------------------------------------

def test_slow_path_drops_and_icmp(tmp_path):
    frames = {
        "forward4": eth(ipv4(V4_SRC, [10, 1, 2, 3], udp()), 0x0800),
        "forward6": eth(ipv6(V6_SRC, V6_DST, udp()), 0x86DD),
        "ttl_expired": eth(ipv4(V4_SRC, [10, 1, 2, 3], udp(data=b"y" * 600), ttl=1), 0x0800),
        "hop_limit_expired": eth(ipv6(V6_SRC, V6_DST, udp(data=b"z" * 1400), hlim=1), 0x86DD),
        "to_router": eth(ipv4(V4_SRC, [10, 9, 9, 9], udp()), 0x0800),
        "to_router_port": eth(ipv4(V4_SRC, [10, 0, 0, 254], udp()), 0x0800),
        "multicast": eth(ipv4(V4_SRC, [224, 0, 0, 5], udp()), 0x0800),
        "ipv4_options": eth(ipv4(V4_SRC, [10, 1, 2, 3], udp(), options=b"\x94\x04\0\0"), 0x0800),
        "ipv6_hop_by_hop": eth(ipv6(V6_SRC, V6_DST, b"\x11\0\x01\x04\0\0\0\0" + udp(), nxt=0),
                               0x86DD),
        "arp": eth(bytes(28), 0x0806),
        "bad_ipv4_checksum": eth(ipv4(V4_SRC, [10, 1, 2, 3], udp(), bad_checksum=True), 0x0800),
        "not_ip": eth(bytes(46), 0x88CC),
        "no_route": eth(ipv4(V4_SRC, [10, 7, 0, 1], udp()), 0x0800),
        "no_neighbor": eth(ipv4(V4_SRC, [10, 3, 0, 1], udp()), 0x0800),
        "truncated": eth(b"", 0x0800)[:13],
    }
    names = list(frames)
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, list(frames.values()))
    r, j = route(tmp_path, pcap)
    c = j["counters"]
    check_add_up(c)
    assert c["rx"] == len(frames)
    assert c["tx"] == 2 and c["tx_by_port"] == {"0": 1, "1": 1}
    for name in names:
        if name.startswith("forward"):
            continue
        reason = "to_router" if name == "to_router_port" else name
        group = "slow_path_reasons" if reason in SLOW else "drop_reasons"
        assert c[group][reason] >= 1, reason
    assert c["slow_path_reasons"]["to_router"] == 2
    assert c["slow_path"] == 9 and c["dropped"] == 4

    out = tmp_path / "out"
    slow = read_pcap(out / "slowpath.pcap")
    drop = read_pcap(out / "drop.pcap")
    slow_names = [n for n in names if not n.startswith("forward") and
                  (n == "to_router_port" or n in SLOW)]
    drop_names = [n for n in names if n in DROP]
    assert [f for _, _, _, f in slow] == [frames[n] for n in slow_names], "as received, in order"
    assert [f for _, _, _, f in drop] == [frames[n] for n in drop_names]

    # Forwarded: the port MAC from the neighbour file, TTL 63.
    (_, _, _, f0), = read_pcap(out / "port0.pcap")
    assert f0[:12] == mac("00:00:5e:00:53:01") + mac("00:1b:21:00:00:00")
    assert f0[14 + 8] == 63 and csum(f0[14:34]) == 0

    # ICMP errors: one per expired packet, valid checksums, quoting the original.
    icmp = [f for _, _, _, f in read_pcap(out / "icmp.pcap")]
    assert c["icmp_sent"] == 2 and len(icmp) == 2
    v4, v6 = icmp
    orig4, orig6 = frames["ttl_expired"], frames["hop_limit_expired"]
    assert v4[:6] == orig4[6:12] and v4[6:12] == mac("00:1b:21:00:00:00"), "to the previous hop"
    assert csum(v4[14:34]) == 0 and v4[14 + 9] == 1
    assert v4[26:30] == bytes([10, 0, 0, 254]), "the ingress port's address"
    assert v4[30:34] == bytes(V4_SRC)
    assert v4[34] == 11 and v4[35] == 0 and csum(v4[34:]) == 0
    assert len(v4) - 14 == 576 and v4[42:] == orig4[14:14 + 548]
    plen = struct.unpack("!H", v6[18:20])[0]
    assert v6[20] == 58 and len(v6) == 14 + 40 + plen == 14 + 1280
    assert v6[22:38] == bytes.fromhex("20010db80000000000000000000000fe"), "no IPv6 address on port 0: the first configured"
    assert v6[38:54] == V6_SRC
    assert v6[54] == 3 and v6[55] == 0
    pseudo = v6[22:54] + struct.pack("!I", plen) + b"\0\0\0\x3a"
    assert csum(pseudo + v6[54:]) == 0, "ICMPv6 checksum over the pseudo-header"
    assert v6[62:] == orig6[14:14 + 1232]


def test_default_neighbors_and_ports(tmp_path):
    frames = [eth(ipv4(V4_SRC, [10, k, 0, 1], udp()), 0x0800) for k in (1, 2, 3, 3)]
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, frames)
    r, j = route(tmp_path, pcap, FIB, None, "--ports", 2)
    c = j["counters"]
    check_add_up(c)
    assert j["neighbors"] is None
    # next hops 1, 2, 3 -> ports 1, 0, 1 with MACs 02:01:00:00:00:NN.
    assert c["tx_by_port"] == {"0": 1, "1": 3}
    out = tmp_path / "out"
    assert sorted(p.name for p in out.glob("port*.pcap")) == ["port0.pcap", "port1.pcap"]
    (_, _, _, f), = read_pcap(out / "port0.pcap")
    assert f[:12] == bytes([2, 1, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0])
    # The default router address is 192.0.2.1.
    write_pcap(pcap, [eth(ipv4(V4_SRC, [192, 0, 2, 1], udp()), 0x0800)])
    _, j = route(tmp_path, pcap, FIB, None)
    assert j["counters"]["slow_path_reasons"]["to_router"] == 1


def test_help_documents_defaults():
    r = assert_ok(run("route", "--help"))
    for word in ("--fib", "--neighbors", "--in", "--out-dir", "--engine", "--json", "--ports",
                 "N % --ports", "02:00:00:00:PP:PP", "192.0.2.1", "slowpath.pcap", "icmp.pcap"):
        assert word in r.stdout, word


# --- bad input ---------------------------------------------------------------------------------

def bad_run(tmp_path, fib=FIB, neighbors=NEIGHBORS, pcap=None):
    if pcap is None:
        pcap = tmp_path / "in.pcap"
        write_pcap(pcap, [eth(ipv4(V4_SRC, [10, 1, 2, 3], udp()), 0x0800)])
    (tmp_path / "fib.txt").write_text(fib)
    args = ["route", "--fib", tmp_path / "fib.txt", "--in", pcap, "--out-dir", tmp_path / "out"]
    if neighbors is not None:
        (tmp_path / "n.txt").write_text(neighbors)
        args += ["--neighbors", tmp_path / "n.txt"]
    r = run(*args)
    assert_no_crash(r)
    return r


@pytest.mark.parametrize("neighbors,where,why", [
    ("1 0 00:00:5e:00:53:01\n1 1 00:00:5e:00:53:02\n", "n.txt:2:", "listed twice"),
    ("1 0\n", "n.txt:1:", "expected"),
    ("# x\n\n1 0 00:00:5e:00:53\n", "n.txt:3:", "not a MAC address"),
    ("1 0 01:00:5e:00:00:01\n", "n.txt:1:", "multicast"),
    ("1 99999 00:00:5e:00:53:01\n", "n.txt:1:", "port"),
    ("veth0 0 00:00:5e:00:53:01\n", "n.txt:1:", "not a number"),
    ("router 300.1.1.1\n", "n.txt:1:", "not an IPv4 or IPv6 address"),
])
def test_bad_neighbor_file(tmp_path, neighbors, where, why):
    r = bad_run(tmp_path, neighbors=neighbors)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("warpath: ") and where in r.stderr and why in r.stderr, r.stderr
    assert not (tmp_path / "out").exists(), "nothing is written for bad input"


def test_named_fib_unknown_next_hop(tmp_path):
    r = bad_run(tmp_path, fib="10.0.0.0/8 veth1\n", neighbors="veth2 0 00:00:5e:00:53:01\n")
    assert r.returncode == 1 and "n.txt:1:" in r.stderr and "veth2" in r.stderr, r.stderr
    ok = bad_run(tmp_path, fib="10.0.0.0/8 veth1\n", neighbors="veth1 0 00:00:5e:00:53:01\n")
    assert ok.returncode == 0, ok.stderr


def test_bad_fib_file(tmp_path):
    r = bad_run(tmp_path, fib="10.0.0.0/8 1\n10.0.0.0/40 2\n")
    assert r.returncode == 1 and "fib.txt:2" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_missing_and_bad_inputs(tmp_path):
    r = bad_run(tmp_path, pcap=tmp_path / "missing.pcap")
    assert r.returncode == 1 and "missing.pcap" in r.stderr
    (tmp_path / "junk.pcap").write_bytes(b"not a capture at all")
    r = bad_run(tmp_path, pcap=tmp_path / "junk.pcap")
    assert r.returncode == 1 and "junk.pcap" in r.stderr
    r = run("route", "--fib", tmp_path / "nofib.txt", "--in", tmp_path / "junk.pcap",
            "--out-dir", tmp_path / "o")
    assert_no_crash(r)
    assert r.returncode == 1 and "nofib.txt" in r.stderr


def test_usage_errors(tmp_path):
    r = run("route", "--in", "x.pcap", "--out-dir", tmp_path)
    assert_no_crash(r)
    assert r.returncode == 2 and "--fib" in r.stderr
    (tmp_path / "n.txt").write_text("")
    r = run("route", "--fib", "f", "--in", "x", "--out-dir", tmp_path, "--neighbors",
            tmp_path / "n.txt", "--ports", 3)
    assert_no_crash(r)
    assert r.returncode == 2
