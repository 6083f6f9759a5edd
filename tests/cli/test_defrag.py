"""`warpath defrag` against tshark's IP reassembly on real captures, and `--defrag` in
`warpath flows`.

tshark's `ip.reassembled.data` / `ipv6.reassembled.data` is the truth for the reassembled
payload. zeek/ipv4-fragmented-{1,2,3} are not compared: their fragments run past the end a
last fragment fixed, which Linux's ip_frag_queue answers by discarding the datagram (so does
warpath: nothing is reassembled) while tshark reassembles what fits."""

import json
import os
import shutil
import signal
import struct
import subprocess
import time

import pytest

from pcap_frames import read_pcap
from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()

CAPTURES = [
    ("pcap/zeek/ipv4-fragmented-4.pcap", "last"),  # an overlap with different bytes: tshark keeps the later
    ("pcap/zeek/ipv4-fragmented-syn.pcap", "bsd"),
    ("pcap/zeek/ipv6-fragmented-dns.pcap", "bsd"),
]


def tshark_reassembled(path):
    out = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "ip.reassembled.data",
                          "-e", "ipv6.reassembled.data"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    got = []
    for line in out.splitlines():
        for field in line.split("\t"):
            if field:
                got.append(bytes.fromhex(field))
    return got


def ip_payloads(frames):
    """The IP payload of each unfragmented IPv4/IPv6 frame (Ethernet, no VLAN tags)."""
    out = []
    for f in frames:
        etype = struct.unpack(">H", f[12:14])[0]
        if etype == 0x0800:
            ihl = (f[14] & 0xF) * 4
            total, frag = struct.unpack(">HH", f[16:18] + f[20:22])
            if frag & 0x3FFF == 0:
                out.append(f[14 + ihl:14 + total])
        elif etype == 0x86DD:
            plen = struct.unpack(">H", f[18:20])[0]
            if f[20] != 44:  # no fragment header left
                out.append(f[54:54 + plen])
    return out


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("capture,policy", CAPTURES)
def test_reassembled_payloads_match_tshark(capture, policy, tmp_path):
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    want = tshark_reassembled(path)
    assert want, "tshark reassembled nothing"
    out = tmp_path / "whole.pcap"
    r = assert_ok(run("defrag", "--in", path, "--out", out, "--policy", policy, "--engine",
                      "validate:cpu.defrag"))
    assert f"{len(want)} datagrams reassembled" in r.stdout
    got = ip_payloads(read_pcap(out))
    for w in want:
        assert w in got


def test_fragments_past_the_end_discard_the_datagram(tmp_path):
    path = DATA / "pcap/zeek/ipv4-fragmented-1.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    r = assert_ok(run("defrag", "--in", path, "--out", tmp_path / "o.pcap"))
    assert "0 datagrams reassembled" in r.stdout and "1 too large" in r.stdout


def test_flows_with_defrag_track_later_fragments(tmp_path):
    path = DATA / "pcap/zeek/ipv6-fragmented-dns.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    plain = json.loads(assert_ok(run("flows", "--in", path, "--format", "json")).stdout)
    whole = json.loads(assert_ok(run("flows", "--in", path, "--format", "json",
                                     "--defrag")).stdout)
    assert plain["counters"]["packets_by_track"]["fragment"] > 0
    assert whole["counters"]["packets_by_track"]["fragment"] == 0
    dns = [f for f in whole["flows"] if f["proto"] == 17 and 53 in (f["sport"], f["dport"])]
    assert dns and sum(f["resp_bytes"] for f in dns) > 3000


def test_errors(tmp_path):
    path = DATA / "pcap/zeek/ipv4-fragmented-4.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    r = run("defrag", "--in", path, "--out", path)
    assert_no_crash(r)
    assert r.returncode == 1 and "input" in r.stderr
    r = run("defrag", "--in", path, "--out", tmp_path / "o.pcap", "--policy", "vista")
    assert r.returncode == 1 and "vista" in r.stderr


@pytest.mark.parametrize("capture,policy", CAPTURES)
def test_defrag_module_in_a_chain_sends_what_warpath_defrag_writes(capture, policy, tmp_path):
    """`defrag -> wire` in `warpath run`: the datagrams go on whole, in place of their last
    fragment, as `warpath defrag` writes them; held fragments are accounted as defrag_held."""
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    whole = tmp_path / "whole.pcap"
    assert_ok(run("defrag", "--in", path, "--out", whole, "--policy", policy))
    out, report = tmp_path / "out.pcap", tmp_path / "run.json"
    assert_ok(run("run", "--chain", f"defrag(policy={policy}, engine=validate:cpu.defrag) -> wire",
                  "--port", f"in=pcap:{path}:{out}", "--no-progress", "--json", report))
    assert read_pcap(out) == read_pcap(whole)
    j = json.loads(report.read_text())
    t = j["totals"]
    assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"]
    m = j["modules"][0]
    assert m["stats"]["completed"] >= 1 and m["describe"].startswith("validate:cpu.defrag")
    assert m["drops_by_reason"] == {"defrag_held": t["rx"] - len(read_pcap(whole))}


def test_defrag_module_arguments_are_checked(tmp_path):
    path = DATA / "pcap/zeek/ipv4-fragmented-4.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    for args, message in [("policy=hpux", "hpux"), ("ipv6_overlap=keep", "ipv6_overlap=keep"),
                          ("timeout=0", "timeout"), ("engine=gpu.defrag", "gpu.defrag")]:
        r = run("run", "--chain", f"defrag({args}) -> wire", "--port", f"in=pcap:{path}:")
        assert_no_crash(r)
        assert r.returncode != 0 and "chain position 1 (defrag)" in r.stderr, r.stderr
        assert message in r.stderr, r.stderr


def _sh(*args, check=True):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=check, timeout=60)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("ping") is None,
                    reason="needs root, iproute2 and ping (network namespaces)")
def test_defrag_module_between_two_linux_hosts(tmp_path):
    """The Linux kernel as the peer: two namespaces on jumbo-capable veths whose routes say MTU
    1500, so the kernel fragments 4,000-byte pings; warpath runs `defrag -> wire` between them on
    AF_PACKET ports. Each side's kernel receives the reassembled datagrams (whole, on the 9000
    link) and answers them, IPv4 and IPv6: every fragment is held and every datagram completed."""
    p = f"wpdf{os.getpid()}"
    if _sh("ip", "netns", "add", p + "W", check=False).returncode != 0:
        pytest.skip("`ip netns add` fails here")
    proc = None
    try:
        for n in "AB":
            _sh("ip", "netns", "add", p + n)
        for host, dev, peer, v4, v6 in (("A", "a0", "a1", "10.9.0.1", "fd09::1"),
                                        ("B", "b0", "b1", "10.9.0.2", "fd09::2")):
            _sh("ip", "link", "add", dev, "netns", p + host, "type", "veth", "peer", "name", peer,
                "netns", p + "W")
            ns = ["ip", "-n", p + host]
            _sh(*ns, "link", "set", dev, "mtu", "9000", "up")
            _sh(*ns, "addr", "add", v4 + "/24", "dev", dev)
            _sh(*ns, "addr", "add", v6 + "/64", "dev", dev, "nodad")
            _sh(*ns, "route", "change", "10.9.0.0/24", "dev", dev, "mtu", "lock", "1500", "src", v4)
            _sh(*ns, "-6", "route", "change", "fd09::/64", "dev", dev, "mtu", "1500", "proto",
                "kernel", "metric", "256")
            _sh("ip", "-n", p + "W", "link", "set", peer, "mtu", "9000", "up")
        report = tmp_path / "run.json"
        proc = subprocess.Popen(["ip", "netns", "exec", p + "W", os.environ["WARPATH_BIN"], "run",
                                 "--chain", "defrag(engine=validate:cpu.defrag) -> wire",
                                 "--port", "a=afpacket:a1", "--port", "b=afpacket:b1",
                                 "--no-progress", "--json", str(report)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ping = ["ip", "netns", "exec", p + "A", "ping", "-c", "3", "-i", "0.2", "-W", "2", "-s", "4000"]
        for _ in range(20):  # until warpath's ports are up (small pings: nothing to reassemble)
            if _sh(*ping[:5], "-c", "1", "-W", "1", "10.9.0.2", check=False).returncode == 0:
                break
            time.sleep(0.2)
        v4 = _sh(*ping, "-M", "dont", "10.9.0.2", check=False)
        v6 = _sh(*ping, "-6", "fd09::2", check=False)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        proc = None
        assert " 0% packet loss" in v4.stdout, v4.stdout + v4.stderr + err
        assert " 0% packet loss" in v6.stdout, v6.stdout + v6.stderr + err
        j = json.loads(report.read_text())
        stats = j["modules"][0]["stats"]
        t = j["totals"]
        assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"], t
        assert stats["completed"] >= 12, stats  # 3 requests and 3 replies, both families
        assert j["modules"][0]["drops_by_reason"] == {"defrag_held": stats["fragments"] - stats["completed"]}
        assert stats["held_now"] == 0 and stats["overlaps"] == 0
    finally:
        if proc:
            proc.kill()
            proc.wait()
        for n in "ABW":
            _sh("ip", "netns", "del", p + n, check=False)
