"""warpath run --metrics: Prometheus text over HTTP while a run goes on, read by the Prometheus
project's own parser (prometheus_client), with counters that add up and grow."""
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from warpath_cli import WARPATH_BIN, assert_no_crash, run, skip_without_binary

skip_without_binary()
parser = pytest.importorskip("prometheus_client.parser")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        assert "version=0.0.4" in r.headers["Content-Type"]
        return r.read().decode()


def samples(text):
    out = {}
    for family in parser.text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(m, name, **labels):
    return m[(name, tuple(sorted(labels.items())))]


def test_live_metrics_parse_and_add_up(tmp_path):
    port = free_port()
    p = subprocess.Popen(
        [WARPATH_BIN, "run", "--metrics", f"127.0.0.1:{port}", "--port", "g=gen:200000",
         "--port", "s=null", "--chain",
         "flow(capacity=4096) -> ttl-filter(min=2) -> acl(default=permit) -> router",
         "--engine", "cpu", "--duration", "4", "--no-progress", "--no-pin"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        texts = []
        deadline = time.time() + 60  # a Debug ASan build takes ~17 s to publish the first
        while len(texts) < 2 and time.time() < deadline:
            time.sleep(1.0)
            try:
                t = scrape(port)
            except (urllib.error.URLError, ConnectionError):
                continue
            if "warpath_packets_total" in t:
                texts.append(t)
        assert len(texts) == 2, "two scrapes while running"
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
    finally:
        out, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    assert f"metrics at http://127.0.0.1:{port}/metrics" in err

    first, second = samples(texts[0]), samples(texts[1])
    for m in (first, second):
        rx = value(m, "warpath_packets_total", what="rx")
        done = sum(value(m, "warpath_packets_total", what=w) for w in ("tx", "dropped",
                                                                        "slow_path"))
        assert rx == done + value(m, "warpath_in_flight_packets")
        # Frames beyond one per forwarded packet, by kind: this chain originates none but the
        # router's ICMP errors (the generator's packets fit every link: nothing fragmented).
        extra = {dict(k[1])["what"]: v for k, v in m.items() if k[0] == "warpath_extra_frames_total"}
        assert set(extra) == {"icmp", "copies", "originated", "fragments"}
        assert extra["copies"] == extra["originated"] == extra["fragments"] == 0 <= extra["icmp"]
        assert value(m, "warpath_fragmented_packets_total") == 0
        mods = {(dict(k[1])["module"], dict(k[1])["what"]): v for k, v in m.items()
                if k[0] == "warpath_module_packets_total"}
        # A live snapshot reads the modules one after the other while the worker counts a
        # frame into them one after the other, so a module's "in" may be a frame ahead of what
        # the one before it passed on (read before that one counted the frame) or a frame
        # behind (read before the worker reached it): at most a frame either way.
        assert abs(mods[("ttl-filter", "in")] - mods[("flow", "out")]) <= 4096
        assert abs(mods[("acl", "in")] - mods[("ttl-filter", "out")]) <= 4096
        assert abs(mods[("router", "in")] - mods[("acl", "out")]) <= 4096
        assert 0 < mods[("ttl-filter", "in")] <= rx
        info = [dict(k[1]) for k, v in m.items() if k[0] == "warpath_info" and v == 1]
        assert len(info) == 1 and info[0]["app"] == "chain"
        assert info[0]["chain"] == "flow -> ttl-filter -> acl -> router"
        # The stateful module's own counters: its per-worker flow tables.
        stats = {dict(k[1])["stat"]: v for k, v in m.items() if k[0] == "warpath_module_stat"}
        assert 0 < stats["flows"] <= rx and 0 < stats["active"] <= 4096
        # The cpu policy's worker keeps its 4 + 1 frames and measures no round trip.
        assert value(m, "warpath_worker_frames", of="cap") == value(m, "warpath_worker_frames",
                                                                    of="most") == 5
        assert value(m, "warpath_worker_frames", of="needed") == 0
        assert value(m, "warpath_offload_round_trip_microseconds") == 0
        assert value(m, "warpath_frame_waits_total") == 0  # a frame is free again at once
    assert value(second, "warpath_packets_total", what="rx") > \
        value(first, "warpath_packets_total", what="rx") > 0
    assert value(second, "warpath_up_seconds") > value(first, "warpath_up_seconds")
    flows = lambda m: value(m, "warpath_module_stat", position="1", module="flow", stat="flows")
    assert flows(second) >= flows(first) > 0


def test_bad_metrics_address_is_an_error():
    r = run("run", "--metrics", "localhost", "--port", "g=gen:max:10", "--port", "s=null",
            "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1 and "--metrics localhost: expected ADDR:PORT" in r.stderr, r.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        taken = s.getsockname()[1]
        r = run("run", "--metrics", f"127.0.0.1:{taken}", "--port", "g=gen:max:10",
                "--port", "s=null", "--no-progress")
        assert r.returncode == 1 and re.search("cannot listen", r.stderr), r.stderr
