"""warpath.flows from Python: the same records as `warpath flows --format json` on real
captures, every engine, the counters adding up, the frame, and bad arguments."""

import json

import pytest
from pyutil import REPO, cli, data, need_package

warpath = need_package()


@pytest.mark.parametrize("name", ["zeek/http-get.pcap", "zeek/http-pipelined-requests.pcap",
                                  "tcpdump/dns_udp.pcap", "tcpdump/icmpv6.pcap"])
def test_records_equal_the_cli(name):
    path = data("pcap", *name.split("/"))
    want = json.loads(cli("flows", "--in", path, "--format", "json"))
    want_flows = want["flows"] if isinstance(want, dict) else want
    for engine in ("auto", "ref.flow", "validate:cpu.flow"):
        got = warpath.flows(path, engine=engine)
        assert list(got) == want_flows, (name, engine)
    c = got.counters
    assert c["packets"] == sum(c["packets_by_track"].values())
    assert c["flows"] == sum(c["ended"].values()) == len(got)


def test_demo_capture_frame_and_capacity():
    cap = warpath.read_pcap(REPO / "examples" / "nids" / "demo.pcap")
    f = warpath.flows(cap)
    assert f.engine == "cpu.flow" and len(f) >= 1
    frame = f.to_pandas()
    assert len(frame) == len(f) and {"src", "dst", "orig_bytes", "history"} <= set(frame)
    # one flow at a time: the packets of every other flow are refused, and still counted
    small = warpath.flows(cap, capacity=1, on_full="drop")
    by = small.counters["packets_by_track"]
    assert by["full_dropped"] > 0 and len(small) < len(f)
    assert small.counters["packets"] == f.counters["packets"] == sum(by.values())
    assert [e["id"] for e in warpath.engines("flow")][:2] == ["ref.flow", "cpu.flow"]


def test_bad_arguments():
    cap = warpath.read_pcap(REPO / "examples" / "nids" / "demo.pcap")
    with pytest.raises(warpath.Error, match="keep"):
        warpath.flows(cap, on_full="keep")
    with pytest.raises(warpath.NotFoundError):
        warpath.flows(cap, engine="gpu.nothing")
    with pytest.raises(warpath.Error):
        warpath.flows(cap, capacity=0)


def test_defrag_as_the_cli(tmp_path):
    """--defrag: the demo's fragmented datagram counts with its flow."""
    demo = REPO / "examples" / "nids" / "demo.pcap"
    want = json.loads(cli("flows", "--in", demo, "--format", "json", "--defrag"))
    got = warpath.flows(demo, defrag=True)
    assert list(got) == want["flows"]
    assert got.counters["packets_by_track"]["fragment"] < \
        warpath.flows(demo).counters["packets_by_track"]["fragment"]
