"""warpath.reassemble from Python: the same streams (bytes, gaps, endpoints, order) as the
files and index of `warpath reassemble` on real captures, the policies and modes, bad input."""

import json

import pytest
from pyutil import REPO, cli, data, need_package

warpath = need_package()


@pytest.mark.parametrize("name", ["zeek/http-get.pcap", "zeek/http-pipelined-requests.pcap",
                                  "zeek/http-bro.org.pcap", "nids/demo"])
def test_streams_equal_the_cli(tmp_path, name):
    path = (REPO / "examples" / "nids" / "demo.pcap" if name == "nids/demo"
            else data("pcap", *name.split("/")))
    out = tmp_path / "out"
    cli("reassemble", "--in", path, "--out-dir", out)
    index = json.loads((out / "index.json").read_text())
    for engine in ("auto", "ref.stream"):
        got = warpath.reassemble(path, engine=engine)
        assert len(got) == len(index["streams"]), (name, engine)
        for g, w in zip(got, index["streams"]):
            assert (g["flow"], g["dir"], g["src"], g["dst"], g["end"]) == \
                   (w["flow"], w["dir"], w["src"], w["dst"], w["end"])
            assert len(g["data"]) == w["bytes"]
            assert [list(x) for x in g["gaps"]] == [[x["offset"], x["length"]] for x in w["gaps"]]
            assert g["data"] == (out / w["file"]).read_bytes()
        assert got.counters["delivered_bytes"] == index["counters"]["delivered_bytes"]


def test_http_request_is_in_the_initiator_stream():
    s = warpath.reassemble(REPO / "examples" / "nids" / "demo.pcap")
    assert s.engine and s.counters["segments"] > 0
    assert any(x["dir"] == "initiator" and x["data"].startswith(b"GET ") for x in s)


def test_bad_arguments():
    cap = warpath.read_pcap(REPO / "examples" / "nids" / "demo.pcap")
    with pytest.raises(warpath.Error, match="sideways"):
        warpath.reassemble(cap, policy="sideways")
    with pytest.raises(warpath.InvalidArgumentError, match="mode 'x'"):
        warpath.reassemble(cap, mode="x")
    with pytest.raises(warpath.NotFoundError):
        warpath.reassemble(cap, engine="cpu.nothing")


def test_max_bytes_bounds_what_is_held():
    cap = warpath.read_pcap(REPO / "examples" / "nids" / "demo.pcap")
    total = sum(len(s["data"]) for s in warpath.reassemble(cap))
    assert total > 100
    assert sum(len(s["data"]) for s in warpath.reassemble(cap, max_bytes=total)) == total
    with pytest.raises(warpath.CapacityError, match="max_bytes"):
        warpath.reassemble(cap, max_bytes=total - 1)
