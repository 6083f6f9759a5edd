"""`warpath defrag` against tshark's IP reassembly on real captures, and `--defrag` in
`warpath flows`.

tshark's `ip.reassembled.data` / `ipv6.reassembled.data` is the truth for the reassembled
payload. zeek/ipv4-fragmented-{1,2,3} are not compared: their fragments run past the end a
last fragment fixed, which Linux's ip_frag_queue answers by discarding the datagram (so does
warpath: nothing is reassembled) while tshark reassembles what fits."""

import json
import shutil
import struct
import subprocess

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
