"""Captures and the parser from Python: read_pcap over pcap, pcapng, .gz/.xz, a FIFO and a file
object; the same packets as tshark-checked `warpath parse` gives; parse records as a
structured array (and a pandas frame); write_pcap back byte for byte; views without copies;
bad files raised with their name."""

import gzip
import json
import lzma
import os
import shutil
import threading

import numpy as np
import pytest
from pyutil import REPO, cli, data, need_package

warpath = need_package()

DEMO = REPO / "examples" / "nids" / "demo.pcap"


def test_read_demo_capture():
    c = warpath.read_pcap(DEMO)
    assert len(c) == 57 and repr(c).startswith("<warpath.Capture")
    assert c.info["linktype"] == 1 and c.info["format"] == "pcap"
    m = c.meta
    assert m.dtype == warpath.META_DTYPE and m.shape == (57,)
    for i, pkt in enumerate(c):
        assert len(pkt) == m["caplen"][i]
        off = int(m["offset"][i])
        assert bytes(c.buffer[off: off + len(pkt)]) == pkt
    assert c[-1] == c[56]
    with pytest.raises(IndexError):
        c[57]
    assert (np.diff(c.timestamps.astype(np.int64)) >= 0).all()


def test_views_are_not_copies():
    c = warpath.read_pcap(DEMO)
    assert not c.buffer.flags.owndata and not c.meta.flags.owndata
    # two views of the batch share its memory; the capture outlives its Python handle
    assert np.shares_memory(c._impl.buffer(), c._impl.buffer())
    meta = c.meta
    del c
    assert int(meta["caplen"][0]) == 54
    # read-only: the offsets and lengths are what later calls trust
    with pytest.raises(ValueError):
        meta["caplen"][0] = 9999
    c = warpath.read_pcap(DEMO)
    with pytest.raises(ValueError):
        c.buffer[0] = 1
    assert len(c.buffer) == int((c.meta["offset"] + c.meta["caplen"]).max())


def test_parse_matches_the_cli():
    for name in ("zeek/http-get.pcap", "tcpdump/802.1ad_QinQ.pcap", "tcpdump/icmpv6.pcap",
                 "tcpdump/ip6_frag_asan.pcap"):
        path = data("pcap", *name.split("/"))
        rows = json.loads(cli("parse", "--in", path, "--format", "json"))
        info = warpath.parse(warpath.read_pcap(path))
        assert info.dtype == warpath.PACKET_INFO_DTYPE and len(info) == len(rows), name
        frame = info.to_pandas()
        for i, row in enumerate(rows):
            assert frame["status"][i] == row["status"], (name, i)
            for col in ("ip_version", "proto", "sport", "dport"):
                if row[col] is not None:
                    assert int(info[col][i]) == row[col], (name, i, col)
            for col in ("src", "dst"):
                if row[col] is not None:
                    assert frame[col][i] == row[col], (name, i, col)


def test_parser_engines_agree():
    c = warpath.read_pcap(data("pcap", "zeek", "http-pipelined-requests.pcap"))
    ref = c.parse("ref")
    assert np.array_equal(ref.view(np.uint8), c.parse("cpu.parse").view(np.uint8))
    assert np.array_equal(ref.view(np.uint8), c.parse("validate:cpu.parse").view(np.uint8))
    assert [e["id"] for e in warpath.engines("parse")][:2] == ["ref.parse", "cpu.parse"]


def test_compressed_fifo_and_file_objects(tmp_path):
    raw = DEMO.read_bytes()
    want = list(warpath.read_pcap(DEMO))
    (tmp_path / "d.pcap.gz").write_bytes(gzip.compress(raw))
    (tmp_path / "d.pcap.xz").write_bytes(lzma.compress(raw))
    assert list(warpath.read_pcap(tmp_path / "d.pcap.gz")) == want
    assert list(warpath.read_pcap(str(tmp_path / "d.pcap.xz"))) == want
    with open(DEMO, "rb") as f:
        assert list(warpath.read_pcap(f)) == want
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as w:
            w.write(raw)

    t = threading.Thread(target=feed)
    t.start()
    got = list(warpath.read_pcap(fifo))
    t.join()
    assert got == want


def test_bpf_filter():
    c = warpath.read_pcap(DEMO, filter="tcp dst port 80")
    info = c.parse()
    assert 0 < len(c) < 57
    assert (info["dport"] == 80).all()
    with pytest.raises(warpath.InvalidArgumentError, match="filter 'tcp port nope'"):
        warpath.read_pcap(DEMO, filter="tcp port nope")


def test_write_back_is_byte_identical(tmp_path):
    src = data("pcap", "zeek", "http-get.pcap")
    c = warpath.read_pcap(src)
    out = tmp_path / "copy.pcap"
    assert warpath.write_pcap(out, c, nano=c.info["precision"] == "ns",
                              snaplen=c.info["snaplen"]) == len(c)
    assert out.read_bytes() == src.read_bytes()
    # packets from bytes and (time, bytes) pairs, and pcapng
    pairs = [(int(t), p) for t, p in zip(c.timestamps, c)]
    ng = tmp_path / "x.pcapng"
    assert warpath.write_pcap(ng, pairs, format="pcapng") == len(c)
    back = warpath.read_pcap(ng)
    assert back.info["format"] == "pcapng" and list(back) == list(c)
    assert np.array_equal(back.timestamps, c.timestamps)
    assert warpath.write_pcap(tmp_path / "y.pcap", list(c)[:3]) == 3
    with pytest.raises(warpath.InvalidArgumentError, match="format 'pcapx'"):
        warpath.write_pcap(tmp_path / "z", [], format="pcapx")


def test_bad_captures_raise_with_their_name(tmp_path):
    with pytest.raises(OSError, match="absent.pcap"):
        warpath.read_pcap(tmp_path / "absent.pcap")
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"this is not a capture at all, just text\n" * 4)
    with pytest.raises(warpath.Error, match="junk.pcap"):
        warpath.read_pcap(junk)
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(DEMO.read_bytes()[:-10])
    with pytest.raises(warpath.Error, match="cut.pcap"):
        warpath.read_pcap(cut)
    gz = tmp_path / "bad.pcap.gz"
    gz.write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(OSError, match="bad.pcap.gz"):
        warpath.read_pcap(gz)
    empty_gz = tmp_path / "e.pcap.gz"
    empty_gz.write_bytes(gzip.compress(b"not a capture"))
    with pytest.raises(warpath.Error, match="e.pcap.gz"):
        warpath.read_pcap(empty_gz)


def test_empty_capture(tmp_path):
    p = tmp_path / "empty.pcap"
    warpath.write_pcap(p, [])
    c = warpath.read_pcap(p)
    assert len(c) == 0 and c.meta.shape == (0,) and len(c.parse()) == 0
    assert len(c.parse().to_pandas()) == 0


def test_pattern_scan_over_a_capture_matches_per_packet_scans():
    c = warpath.read_pcap(DEMO)
    pat = warpath.Patterns(["1:/GET/", "2:/host:/i"])
    matches, which = pat.scan_capture(c)
    per = [pat.scan(p) for p in c]
    assert len(matches) == sum(len(x) for x in per)
    assert [int(w) for w in which] == [i for i, x in enumerate(per) for _ in x]
    payload, _ = pat.scan_capture(c, payload_only=True)
    assert 0 < len(payload) <= len(matches)
