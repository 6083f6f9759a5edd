"""warpath-reassemble-floor, `warpath reassemble`'s I/O floor (bench/stream/tcpflow_compare.py):
a yardstick is only a floor if it does the same job, so on an in-order capture it must write
the same files with the same bytes as `warpath reassemble`, whatever its buffer size; input it
cannot read is an error, not an empty result."""

import re
import subprocess

import pytest

from warpath_cli import DATA, WARPATH_BIN, assert_ok, run, skip_without_binary

skip_without_binary()
FLOOR = WARPATH_BIN.with_name("warpath-reassemble-floor")
BENCH = WARPATH_BIN.with_name("warpath-stream-bench")
# FLOW-SRC.PORT-DST.PORT: the flow numbers differ (the floor counts directions), the rest not
NAME = re.compile(r"^\d+-(.+)$")


def by_endpoints(directory):
    out = {}
    for p in directory.iterdir():
        m = NAME.match(p.name)
        if m and p.name != "index.json":
            assert m.group(1) not in out, p
            out[m.group(1)] = p.read_bytes()
    return out


def floor(pcap, out, buffer=None):
    out.mkdir()
    args = [str(FLOOR)] + (["--buffer", str(buffer)] if buffer else []) + [str(pcap), str(out)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("buffer", [None, 64, 4096])
def test_the_floor_writes_what_reassemble_writes_on_an_in_order_capture(tmp_path, buffer):
    if not FLOOR.exists() or not BENCH.exists():
        pytest.skip(f"{FLOOR} or {BENCH} is not built")
    pcap = tmp_path / "inorder.pcap"
    subprocess.run([str(BENCH), "--workload", "inorder", "--engine", "warpath", "--write-pcap",
                    str(pcap)], check=True, capture_output=True, timeout=120)
    r = floor(pcap, tmp_path / "floor", buffer)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("200 files"), r.stdout
    assert_ok(run("reassemble", "--in", pcap, "--out-dir", tmp_path / "warpath"))
    f, w = by_endpoints(tmp_path / "floor"), by_endpoints(tmp_path / "warpath")
    assert len(f) == 200 and f.keys() == w.keys()
    assert all(f[k] == w[k] for k in f)
    assert sum(len(v) for v in f.values()) > 10_000_000


def test_a_capture_the_floor_cannot_read_is_an_error(tmp_path):
    if not FLOOR.exists():
        pytest.skip(f"{FLOOR} is not built")
    ng = DATA / "pcap/zeek/tcp-retransmit-timeout.pcapng"
    def header(link=1):
        return (0xa1b2c3d4).to_bytes(4, "little") + b"\0" * 16 + link.to_bytes(4, "little")
    record = b"\0" * 8 + (100).to_bytes(4, "little") * 2 + b"x" * 60  # 100 bytes said, 60 there
    cases = [(tmp_path / "missing.pcap", "No such file")]
    bad = [(header() + record[:12], "ends inside a record"),
           (header() + record, "ends inside a record"),
           (b"\0" * 10, "no pcap header"),
           (header(113) + record, "not an Ethernet capture (link type 113)")]
    for i, (data, why) in enumerate(bad):
        (tmp_path / f"bad{i}.pcap").write_bytes(data)
        cases.append((tmp_path / f"bad{i}.pcap", why))
    if ng.exists():
        cases.append((ng, "not a classic pcap file"))
    for i, (pcap, why) in enumerate(cases):
        r = floor(pcap, tmp_path / f"out{i}")
        assert r.returncode == 1 and why in r.stderr, (pcap, r.stderr)
