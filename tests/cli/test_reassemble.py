"""`warpath reassemble` against tshark's `follow,tcp,raw` on real captures.

Every direction of every TCP stream must hold exactly the bytes tshark follows, where tshark's
"[N bytes missing in capture file]" markers are gaps in warpath's index.json of the same size.
Excluded: zeek/tcp-reassembly.pcap, whose data packets claim IP lengths longer than their
frames: the receiving host drops such packets (Linux ip_rcv), and so does warpath, while tshark
follows the bytes that are there."""

import json
import re
import shutil
import subprocess
from collections import defaultdict

import pytest

from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()

CAPTURES = [
    "pcap/zeek/http-get.pcap",
    "pcap/zeek/http-pipelined-requests.pcap",
    "pcap/zeek/tcp-handshake-reorder.pcap",
    "pcap/zeek/tcp-missing-syn.pcap",
    "pcap/zeek/ftp-ipv6.pcap",
    "pcap/zeek/http-bro.org.pcap",
    "pcap/zeek/tcp-ssh-dups.pcap",
    "pcap/zeek/tcp-retransmit-timeout.pcapng",
    "pcap/zeek/http-vlan-0.pcap",
    "pcap/zeek/http-qinq-0.pcap",
    "pcap/tcpreplay/test.pcap",
    "pcap/tcpdump/ipv4_tcp_http_xml.pcap",
    # TCP Fast Open: requests on the SYN, and a SYN+ACK with data (Suricata's test captures).
    "suricata-verify/tcp-fastopen-01/tfo.pcap",
    "suricata-verify/tcp-fastopen-03/tfo.pcap",
    "suricata-verify/tcp-fastopen-07/tcp_fastopen_segmentation.pcap",
]

# tshark's raw dump ends the marker with its C string's NUL.
MISSING = re.compile(rb"\[(\d+) bytes missing in capture file\]\x00?")


def endpoint(node):
    addr, port = node.strip().rsplit(":", 1)
    return f"{addr.strip('[]')}.{port}"


def tshark_follow(path):
    """{(src, dst): (bytes, missing byte count)} for every TCP stream tshark follows."""
    ids = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "tcp.stream"],
                         capture_output=True, text=True, check=True, timeout=60).stdout.split()
    out = {}
    for n in sorted({int(x) for x in ids if x.isdigit()}):
        text = subprocess.run(["tshark", "-r", str(path), "-q", "-z", f"follow,tcp,raw,{n}"],
                              capture_output=True, text=True, check=True, timeout=60).stdout
        nodes, data = {}, {0: "", 1: ""}
        for line in text.splitlines():
            if line.startswith("Node 0:") or line.startswith("Node 1:"):
                nodes[int(line[5])] = endpoint(line.split(":", 1)[1])
            elif line.startswith("\t"):
                data[1] += line.strip()
            elif re.fullmatch(r"[0-9a-f]+", line.strip() or "-"):
                data[0] += line.strip()
        for side in (0, 1):
            if data[side]:
                raw = bytes.fromhex(data[side])
                missing = sum(int(m) for m in MISSING.findall(raw))
                out[(nodes[side], nodes[1 - side])] = (MISSING.sub(b"", raw), missing)
    return out


def warpath_streams(path, out_dir, *extra):
    r = assert_ok(run("reassemble", "--in", path, "--out-dir", out_dir, "--midstream", *extra))
    index = json.loads((out_dir / "index.json").read_text())
    streams = defaultdict(lambda: [b"", 0])
    for s in index["streams"]:
        k = (s["src"], s["dst"])
        streams[k][0] += (out_dir / s["file"]).read_bytes()
        streams[k][1] += sum(g["length"] for g in s["gaps"])
    return {k: tuple(v) for k, v in streams.items()}, index, r


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
@pytest.mark.parametrize("capture", CAPTURES)
@pytest.mark.parametrize("engine", ["validate:cpu.stream", "validate:emu.stream"])
def test_streams_match_tshark_follow(capture, engine, tmp_path):
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    want = tshark_follow(path)
    got, index, _ = warpath_streams(path, tmp_path / "out", "--engine", engine)
    assert {k: v for k, v in got.items() if v[0] or v[1]} == want
    c = index["counters"]
    assert c["delivered_bytes"] == sum(len(v[0]) for v in got.values())


def test_policies_and_depth(tmp_path):
    path = DATA / "pcap/zeek/http-get.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    whole, _, r = warpath_streams(path, tmp_path / "a")
    assert "2 streams" in r.stdout
    cut, index, _ = warpath_streams(path, tmp_path / "b", "--depth", "100")
    for k, (data, _) in cut.items():
        assert data == whole[k][0][:100]
    assert index["counters"]["depth_reached"] == 2
    for policy in ("first", "last", "linux", "old-linux", "solaris", "vista", "windows"):
        same, _, _ = warpath_streams(path, tmp_path / policy, "--policy", policy, "--mode",
                                     "inline")
        assert same == whole


def test_without_midstream_only_handshaken_flows(tmp_path):
    path = DATA / "pcap/zeek/tcp-missing-syn.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    r = assert_ok(run("reassemble", "--in", path, "--out-dir", tmp_path))
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["streams"] == []
    assert index["counters"]["before_handshake"] > 0


def test_errors(tmp_path):
    path = DATA / "pcap/zeek/http-get.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    r = run("reassemble", "--in", path, "--out-dir", tmp_path, "--policy", "hpux")
    assert_no_crash(r)
    assert r.returncode == 1 and "hpux" in r.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run("reassemble", "--in", path, "--out-dir", blocker / "sub")
    assert_no_crash(r)
    assert r.returncode == 1 and "sub" in r.stderr
    r = run("reassemble", "--in", tmp_path / "none.pcap", "--out-dir", tmp_path / "o")
    assert r.returncode == 1 and "none.pcap" in r.stderr


def test_stream_module_in_a_run_counts_what_reassemble_does(tmp_path):
    path = DATA / "pcap/zeek/http-bro.org.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    report = tmp_path / "run.json"
    assert_ok(run("run", "--chain", "flow -> stream(midstream=on, depth=0) -> wire",
                  "--port", f"in=pcap:{path}:{tmp_path / 'out.pcap'}", "--json", report))
    stats = json.loads(report.read_text())["modules"][1]["stats"]
    _, index, _ = warpath_streams(path, tmp_path / "ra")
    c = index["counters"]
    for key in ("streams", "delivered_bytes", "gaps", "gap_bytes", "overlaps", "after_close"):
        assert stats[key] == c[key], key
    r = run("run", "--chain", "stream -> wire", "--port", f"in=pcap:{path}:")
    assert r.returncode != 0 and "needs a flow module before it" in r.stderr


def test_host_policies(tmp_path):
    path = DATA / "pcap/zeek/http-get.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    whole, _, _ = warpath_streams(path, tmp_path / "a")
    same, _, _ = warpath_streams(path, tmp_path / "b", "--host-policy", "141.142.0.0/16=linux",
                                 "--host-policy", "2001:db8::/32=last")
    assert same == whole  # no overlaps in this capture: every policy gives the same bytes
    r = run("reassemble", "--in", path, "--out-dir", tmp_path / "c", "--host-policy",
            "10.0.0.0/40=linux")
    assert r.returncode == 1 and "prefix length '40'" in r.stderr
    report = tmp_path / "run.json"
    assert_ok(run("run", "--chain", "flow -> stream(hosts=10.0.0.0/8=linux|141.142.0.0/16=windows)"
                  " -> wire", "--port", f"in=pcap:{path}:{tmp_path / 'o.pcap'}", "--json", report))
    assert "2 host prefixes" in json.loads(report.read_text())["modules"][1]["describe"]
    r = run("run", "--chain", "flow -> stream(hosts=10.0.0.0/8=hpux) -> wire", "--port",
            f"in=pcap:{path}:")
    assert r.returncode != 0 and "chain position 2 (stream): overlap policy 'hpux'" in r.stderr


@pytest.mark.parametrize("capture", ["pcap/zeek/http-bro.org.pcap", "pcap/zeek/ftp-ipv6.pcap",
                                     "pcap/tcpreplay/test.pcap"])
def test_files_closed_and_reopened_to_append_keep_every_byte(capture, tmp_path):
    # --max-open 1: every other chunk (the other direction, another flow) closes the open file
    # and the next reopens its own to append (3: CLOCK picks one not written for a while); the
    # files and the index must not change.
    path = DATA / capture
    if not path.is_file():
        pytest.skip(f"{path} missing")
    whole, index, _ = warpath_streams(path, tmp_path / "all")
    assert sum(1 for s in index["streams"] if (tmp_path / "all" / s["file"]).stat().st_size) > 1
    for cap in ("1", "3"):  # 3: one of several open files, not written for a while, goes first
        few, index_few, _ = warpath_streams(path, tmp_path / cap, "--max-open", cap)
        assert few == whole
        assert index_few == index
        for s in index["streams"]:
            assert (tmp_path / cap / s["file"]).read_bytes() == (tmp_path / "all" / s["file"]).read_bytes()
    r = run("reassemble", "--in", path, "--out-dir", tmp_path / "bad", "--max-open", "0")
    assert r.returncode != 0 and "--max-open" in r.stderr
