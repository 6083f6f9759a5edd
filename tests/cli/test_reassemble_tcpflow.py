"""`warpath reassemble` beside tcpflow (Debian's tcpflow, the tool people reach for): the same
bytes in every direction where both tools define them the same way.

tcpflow writes each segment at its sequence offset and picks connections up mid-stream, so
warpath runs with --midstream; a 4-tuple used by more than one connection, a direction whose
warpath stream has gaps (tcpflow leaves holes as zeros), tcpflow's Ethernet padding taken for
payload and IPv6 (named differently) are left out of the comparison, which
bench/stream/tcpflow_compare.py does (it also times both tools); the VLAN captures are not in
the list (tcpflow does not decode 802.1Q). Generated captures: the stream
bench's 2,000 connections of 100-byte segments with 10% reordered, and 200 in-order bulk
connections; shared captures: real ones from ../shared/data/pcap.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from warpath_cli import DATA, WARPATH_BIN, assert_ok, run, skip_without_binary

skip_without_binary()
if not shutil.which("tcpflow"):
    pytest.skip("tcpflow is not installed (scripts/setup.sh installs it as root: "
                "apt-get install tcpflow)", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "stream"))
import tcpflow_compare  # noqa: E402


def both(pcap, tmp_path):
    w, t = tmp_path / "warpath", tmp_path / "tcpflow"
    w.mkdir()
    t.mkdir()
    assert_ok(run("reassemble", "--midstream", "--in", pcap, "--out-dir", w))
    subprocess.run(["tcpflow", "-r", str(pcap), "-o", str(t)], check=True,
                   capture_output=True, timeout=120)
    return tcpflow_compare.compare(w, t)


@pytest.mark.parametrize("workload,directions", [("reorder", 2000), ("inorder", 200)])
def test_generated_connections_have_the_same_bytes(tmp_path, workload, directions):
    bench = WARPATH_BIN.with_name("warpath-stream-bench")
    if not bench.exists():
        pytest.skip(f"{bench} is not built")
    pcap = tmp_path / f"{workload}.pcap"
    subprocess.run([str(bench), "--workload", workload, "--engine", "warpath", "--write-pcap",
                    str(pcap)], check=True, capture_output=True, timeout=120)
    r = both(pcap, tmp_path)
    assert r["differ"] == [] and r["only_tcpflow"] == [] and r["only_warpath"] == [], r
    assert r["equal"] == directions and r["reused"] == 0 and r["gapped"] == 0
    assert r["bytes"] > 10_000_000


# (capture, directions compared at least): every one of them must be equal.
CAPTURES = [
    ("pcap/zeek/http-get.pcap", 2),
    ("pcap/zeek/http-pipelined-requests.pcap", 1),
    ("pcap/zeek/tcp-handshake-reorder.pcap", 2),
    ("pcap/zeek/tcp-missing-syn.pcap", 2),
    ("pcap/zeek/http-bro.org.pcap", 9),
    ("pcap/zeek/tcp-ssh-dups.pcap", 2),
    ("pcap/zeek/tcp-retransmit-timeout.pcapng", 1),
    ("pcap/tcpreplay/test.pcap", 11),
]


@pytest.mark.parametrize("capture,directions", CAPTURES, ids=[Path(c).name for c, _ in CAPTURES])
def test_shared_captures_have_the_same_bytes(tmp_path, capture, directions):
    path = DATA / capture
    if not path.exists():
        pytest.skip(f"{path} is not there (../shared/data)")
    r = both(path, tmp_path)
    assert r["differ"] == [], r
    assert r["equal"] >= directions, r
    assert r["only_tcpflow"] == [], r  # warpath (--midstream) writes every direction tcpflow does
