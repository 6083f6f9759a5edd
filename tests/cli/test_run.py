"""`warpath run`: the pipeline's command line, config file and report.

Checks, independently of warpath where it can: usage errors exit 2; bad configs exit 1 with
"file:line: key: reason"; `--engine gpu` without a GPU is a clear error; the built-in default
runs and its counters add up (rx = tx + dropped + slow_path, nothing in flight); a pcap-to-pcap
router run writes, per output port, exactly the packets `warpath route` writes for the same
capture and FIB (byte for byte, in order with one worker); an ACL run on frames built from a
ClassBench trace passes exactly the packets whose first matching rule (per `warpath classify`)
permits; SIGINT / SIGTERM drain, report counters that add up and exit 130 / 143.

Environment: WARPATH_BIN (default <repo>/build/warpath); the module skips without it.
"""

import ipaddress
import json
import random
import re
import signal
import subprocess
import time

import pytest
from pcap_frames import eth, ipv4, read_pcap, udp, write_pcap
from warpath_cli import WARPATH_BIN, assert_no_crash, assert_ok, run, skip_without_binary


skip_without_binary()


def has_gpu():
    r = assert_ok(run("info", "--json"))
    return bool(json.loads(r.stdout)["cuda"]["devices"])


def check_report(j):
    """The identities every final report satisfies."""
    t = j["totals"]
    # Where the workers' time went, per packet finished: every stage measured, none negative.
    s = j["stages_ns_per_packet"]
    assert set(s) == {"rx", "parse", "modules", "tx", "other"}, s
    assert all(v >= 0 for v in s.values()), s
    if j["batches"]["cpu_packets"] + j["batches"]["gpu_packets"] > 0:
        assert s["rx"] > 0 and s["tx"] > 0, s
        # A chain whose modules read no header (wire) is not parsed (Chain::parses).
        assert (s["parse"] > 0) == j["parsed"], (s, j["parsed"])
    assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"], t
    assert t["in_flight"] == 0
    assert sum(j["drops_by_reason"].values()) == t["dropped"]
    assert sum(j["slow_path_by_reason"].values()) == t["slow_path"]
    assert j["check"]["ok"] is True, j["check"]
    for key in ("p50", "p99", "p999", "max", "mean", "count"):
        assert key in j["latency_us"], key
    lat = j["latency_us"]
    if t["tx"]:
        assert 0 <= lat["p50"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    for key in ("chunks", "fill", "cpu", "gpu", "launches"):
        assert key in j["batches"], key
    assert j["batches"]["cpu"] + j["batches"]["gpu"] == j["batches"]["chunks"]
    # The workers' frames (frame_window.hpp): never more than the cap; a need only once a round
    # trip was measured, which only offloaded frames give.
    f = j["frames"]
    assert set(f) == {"cap", "most", "needed", "round_trip_us", "interval_us", "waits"}, f
    assert 2 <= f["most"] <= f["cap"], f
    assert (f["needed"] > 0) == (f["round_trip_us"] > 0), f
    if j["batches"]["gpu"] == 0:
        assert f["needed"] == 0, f
    for p in j["ports"]:
        for key in ("name", "spec", "description", "rx", "rx_dropped", "tx", "tx_errors",
                    "rx_bytes", "tx_bytes"):
            assert key in p, key
    # Ports also count the ICMP errors the slow path originates (outside rx = tx + ...).
    assert sum(p["tx"] for p in j["ports"]) == (t["tx"] + j["icmp"]["sent"] + j["copies"] +
                                                j["originated"] + j["fragmented"]["fragments"] -
                                                j["fragmented"]["packets"])
    assert sum(p["rx"] + p["rx_dropped"] for p in j["ports"]) == t["rx"]
    for key in ("tool", "version", "command", "machine", "app", "engine", "workers", "batch",
                "delay_us", "seconds", "mpps"):
        assert key in j, key


def run_json(tmp_path, *args, **kw):
    out = tmp_path / "run.json"
    r = assert_ok(run("run", *args, "--json", out, **kw))
    j = json.loads(out.read_text())
    check_report(j)
    return r, j


# --- usage and config errors -------------------------------------------------------------------

def test_help_documents_flags_and_default():
    r = assert_ok(run("run", "--help"))
    for word in ("--app", "--rules", "--format", "--algo", "--fib", "--neighbors", "--port",
                 "--engine", "--offload-device", "--workers", "--batch", "--delay-us",
                 "--duration", "--seed", "--json", "--slow-path", "--no-pin", "--no-progress",
                 "--match-action", "--default-action", "NAME=SPEC", "pcap:IN.pcap:OUT.pcap",
                 "afpacket:IFACE", "afxdp:IFACE", "gen:RATE", "null", "sink=null",
                 "rx = tx + dropped + slow_path", "SIGINT"):
        assert word in r.stdout, word
    assert "warpath run" in run("--help").stdout or "run" in run("--help").stdout


@pytest.mark.parametrize("args", [
    ["--batch", "0"], ["--batch", "65537"], ["--workers", "0"], ["--workers", "300"],
    ["--delay-us", "2000000"], ["--duration", "-1"], ["--app", "hub"], ["--engine", "fast"],
    ["--format", "snort"], ["--algo", "hicuts"], ["--offload-device", "tpu"],
    ["--port", "noequals"], ["--port", "=null"], ["--bogus"], ["a.toml", "b.toml"],
    ["--batch", "many"],
])
def test_usage_errors_exit_2(args):
    r = run("run", *args)
    assert_no_crash(r)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert r.stderr.startswith("warpath: "), r.stderr
    assert r.stdout == ""


CONFIG_OK = """# test config
app = "router"
workers = 1
batch = 256
[ports]
gen = "gen:max:1000"
sink = "null"
"""


@pytest.mark.parametrize("text,where,why", [
    ('app = "router"\n\nbatch = 0\n', "cfg.toml:3: batch:", "must be 1..65536, got 0"),
    ('workers = 999\n', "cfg.toml:1: workers:", "must be 1..256"),
    ('batch = "big"\n', "cfg.toml:1: batch:", "expected an integer"),
    ('app = "router"\nthreads = 2\n', "cfg.toml:2: threads:", "unknown key"),
    ('[acl]\nrules = "r"\nformat = "snort"\n', "cfg.toml:3: acl.format:", "classbench"),
    ('[acl]\nmatch = "allow"\n', "cfg.toml:2: acl.match:", "permit, deny, drop or output:N"),
    ('[router]\nfibfile = "x"\n', "cfg.toml:2: router.fibfile:", "unknown key"),
    ('[ports]\na = "gen:max"\nb = "teleport:x"\n', "cfg.toml:3: ports.b:", "teleport"),
    ('[ports]\na = "gen:max"\n"b c" = "null"\n', "cfg.toml:3: ports.b c:", "A-Z"),
    ('[ports]\na = "null"\n', "cfg.toml:1: ports:", "no port receives packets"),
    ('engine = "gpu\n', "cfg.toml:1:", ""),  # TOML syntax error
    ('duration = -2.5\n', "cfg.toml:1: duration:", ">= 0"),
    ('engine = "turbo"\n', "cfg.toml:1: engine:", "cpu, gpu, auto"),
])
def test_bad_config_names_file_line_and_key(tmp_path, text, where, why):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(text)
    r = run("run", cfg, "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("warpath: ") and str(tmp_path / where) in r.stderr, r.stderr
    assert why in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_missing_config_and_table_files(tmp_path):
    r = run("run", tmp_path / "nope.toml")
    assert r.returncode == 1 and "nope.toml" in r.stderr, r.stderr
    r = run("run", "--fib", tmp_path / "nofib.txt", "--app", "router")
    assert r.returncode == 1 and "nofib.txt" in r.stderr, r.stderr
    (tmp_path / "fib.txt").write_text("10.0.0.0/8 1\n10.0.0.0/40 2\n")
    r = run("run", "--fib", tmp_path / "fib.txt", "--app", "router")
    assert r.returncode == 1 and "fib.txt:2" in r.stderr, r.stderr
    (tmp_path / "n.txt").write_text("1 0\n")
    (tmp_path / "fib.txt").write_text("10.0.0.0/8 1\n")
    r = run("run", "--fib", tmp_path / "fib.txt", "--neighbors", tmp_path / "n.txt")
    assert r.returncode == 1 and "n.txt:1:" in r.stderr, r.stderr
    (tmp_path / "rules").write_text("@1.2.3.4/40 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n")
    r = run("run", "--app", "acl", "--rules", tmp_path / "rules")
    assert r.returncode == 1 and "rules:1:" in r.stderr, r.stderr
    r = run("run", "--port", f"in=pcap:{tmp_path / 'none.pcap'}:", "--port", "out=null")
    assert r.returncode == 1 and "none.pcap" in r.stderr and "in" in r.stderr, r.stderr
    r = run("run", "--port", "a=gen:max:10", "--port", "a=null")
    assert r.returncode == 1 and "ports.a:" in r.stderr, r.stderr
    r = run("run", "--port", "a=null", "--port", "b=null")
    assert r.returncode == 1 and "no port receives packets" in r.stderr, r.stderr
    r = run("run", "--match-action", "allow")
    assert r.returncode == 1 and "acl.match:" in r.stderr, r.stderr


def test_engine_gpu_without_gpu_is_a_clear_error(tmp_path):
    if has_gpu():
        pytest.skip("this machine has a GPU")
    r = run("run", "--engine", "gpu", "--port", "g=gen:max:1000", "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert "--engine gpu" in r.stderr and "CUDA device" in r.stderr, r.stderr
    assert r.stdout == ""
    (tmp_path / "c.toml").write_text('engine = "gpu"\n')
    r = run("run", tmp_path / "c.toml")
    assert r.returncode == 1 and "CUDA device" in r.stderr, r.stderr
    # auto without a GPU runs everything on CPU engines.
    _, j = run_json(tmp_path, "--engine", "auto", "--port", "g=gen:max:5000", "--port", "s=null")
    assert j["batches"]["gpu"] == 0 and j["totals"]["rx"] == 5000


# --- end to end --------------------------------------------------------------------------------

def test_builtin_default(tmp_path):
    r, j = run_json(tmp_path, "--no-progress")
    assert r.stderr == "", "no progress line when stderr is not a terminal"
    assert j["app"] == "router+acl"
    assert [p["name"] for p in j["ports"]] == ["gen", "sink"]
    assert j["ports"][0]["spec"].startswith("gen:max:") and j["ports"][1]["spec"] == "null"
    t = j["totals"]
    assert t["rx"] > 0 and t["rx"] == j["ports"][0]["rx"]
    # Every next hop of the built-in FIB leaves through the sink.
    assert j["ports"][0]["tx"] == 0 and j["ports"][1]["tx"] == t["tx"] > 0
    assert j["latency_us"]["count"] == t["tx"]
    assert j["mpps"] > 0 and j["seconds"] > 0
    lines = dict(line.split() for line in r.stdout.splitlines() if len(line.split()) == 2)
    for key in ("rx", "tx", "dropped", "slow_path"):
        assert int(lines[key]) == t[key], key


def test_default_run_prints_summary_without_json():
    r = assert_ok(run("run", "--port", "gen=gen:max:20000", "--port", "sink=null"))
    assert r.stderr == ""
    for word in ("rx", "tx", "dropped", "slow_path", "latency", "p99.9", "Mpps", "Gbps",
                 "batch fill", "rx = tx + dropped + slow_path", "(ok)", "gen", "sink"):
        assert word in r.stdout, word


FIB = "10.0.0.0/9 1\n10.128.0.0/10 2\n10.192.0.0/11 5\nfd00::/9 2\nfd80::/10 1\n"
NEIGHBORS = "1 0 00:00:5e:00:53:01\n2 3 00:00:5e:00:53:02\n"


def route_reference(d, pcap, fib=FIB, neighbors=NEIGHBORS):
    (d / "fib.txt").write_text(fib)
    (d / "n.txt").write_text(neighbors)
    assert_ok(run("route", "--fib", d / "fib.txt", "--neighbors", d / "n.txt", "--in", pcap,
                  "--out-dir", d / "route", "--json", d / "route.json"))
    return json.loads((d / "route.json").read_text())["counters"]


def run_router(d, pcap, *extra):
    ports = ["--port", f"p0=pcap:{pcap}:{d / 'o0.pcap'}"]
    for p in (1, 2, 3):
        ports += ["--port", f"p{p}=pcap::{d / f'o{p}.pcap'}"]
    return run_json(d, "--app", "router", "--fib", d / "fib.txt", "--neighbors", d / "n.txt",
                    "--workers", 1, "--slow-path", d / "slow.pcap", "--no-progress", *ports,
                    *extra)


def nonzero(m):
    return {k: v for k, v in m.items() if v}


@pytest.mark.parametrize("batch", [1024, 7])
def test_router_equals_warpath_route(tmp_path, batch):
    pcap = tmp_path / "gen.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 3000, "--seed", 11,
                  "--ipv6-share", 0.3, "--vlan-share", 0.2))
    c = route_reference(tmp_path, pcap)
    _, j = run_router(tmp_path, pcap, "--batch", batch)
    t = j["totals"]
    assert t["rx"] == c["rx"] == 3000
    assert (t["tx"], t["dropped"], t["slow_path"]) == (c["tx"], c["dropped"], c["slow_path"])
    assert nonzero(j["drops_by_reason"]) == nonzero(c["drop_reasons"])
    assert nonzero(j["slow_path_by_reason"]) == nonzero(c["slow_path_reasons"])
    for port in range(4):
        ref = tmp_path / "route" / f"port{port}.pcap"
        want = read_pcap(ref) if ref.exists() else []
        got = read_pcap(tmp_path / f"o{port}.pcap")
        assert got == want, f"port {port}: {len(got)} packets, route wrote {len(want)}"
        assert j["ports"][port]["tx"] == len(want)
    assert c["tx"] > 1500


def test_router_slow_path_and_drops_equal_warpath_route(tmp_path):
    src = [10, 0, 0, 1]
    frames = [
        eth(ipv4(src, [10, 1, 2, 3], udp())),                        # forwarded to port 0
        eth(ipv4(src, [10, 1, 2, 3], udp(data=b"y" * 300), ttl=1)),  # ttl_expired
        eth(ipv4(src, [10, 9, 9, 9], udp())),                        # to_router
        eth(ipv4(src, [224, 0, 0, 5], udp())),                       # multicast
        eth(ipv4(src, [10, 1, 2, 3], udp(), options=b"\x94\x04\0\0")),  # ipv4_options
        eth(bytes(28), 0x0806),                                      # arp
        eth(bytes(46), 0x88CC),                                      # not_ip
        eth(ipv4(src, [10, 7, 0, 1], udp())),                        # no_route
        eth(ipv4(src, [10, 3, 0, 1], udp())),                        # no_neighbor
        eth(ipv4(src, [10, 2, 0, 1], udp())),                        # forwarded to port 1
        eth(b"", 0x0800)[:13],                                       # truncated
    ] * 3
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, frames)
    fib = "10.1.0.0/16 1\n10.2.0.0/16 2\n10.3.0.0/16 3\n"
    neighbors = "1 0 00:00:5e:00:53:01\n2 1 00:00:5e:00:53:02\nrouter 10.9.9.9\n"
    c = route_reference(tmp_path, pcap, fib, neighbors)
    _, j = run_router(tmp_path, pcap)
    t = j["totals"]
    assert (t["rx"], t["tx"], t["dropped"], t["slow_path"]) == (
        c["rx"], c["tx"], c["dropped"], c["slow_path"]) == (33, 6, 12, 15)
    assert nonzero(j["drops_by_reason"]) == nonzero(c["drop_reasons"])
    assert nonzero(j["slow_path_by_reason"]) == nonzero(c["slow_path_reasons"])
    assert read_pcap(tmp_path / "slow.pcap") == read_pcap(tmp_path / "route" / "slowpath.pcap")
    assert read_pcap(tmp_path / "o1.pcap") == read_pcap(tmp_path / "route" / "port1.pcap")
    # Port 0 (the ingress port) also carries the slow path's ICMP Time Exceeded errors: the
    # same frames `warpath route` writes to icmp.pcap, after the chunk's forwarded frames.
    forwarded = read_pcap(tmp_path / "route" / "port0.pcap")
    icmp = read_pcap(tmp_path / "route" / "icmp.pcap")
    out0 = read_pcap(tmp_path / "o0.pcap")
    assert len(icmp) == 3
    assert [f for f in out0 if f in forwarded] == forwarded
    assert [f for f in out0 if f not in forwarded] == icmp
    assert j["icmp"] == {"sent": 3, "suppressed": 0}


def first_match(rules, key):
    for i, (sip, slen, dip, dlen, sp, dp, proto, _) in enumerate(rules):
        if slen and (key[0] >> (32 - slen)) != (sip >> (32 - slen)):
            continue
        if dlen and (key[1] >> (32 - dlen)) != (dip >> (32 - dlen)):
            continue
        if not (sp[0] <= key[2] <= sp[1] and dp[0] <= key[3] <= dp[1]):
            continue
        if proto is not None and proto != key[4]:
            continue
        return i
    return -1


def masked(a, n):
    return (a >> (32 - n) << (32 - n)) if n else 0


@pytest.mark.parametrize("default", ["permit", "deny"])
def test_acl_equals_warpath_classify(tmp_path, default):
    rng = random.Random(5)
    rules = []
    for _ in range(150):
        slen, dlen = rng.choice([0, 8, 16, 24, 32]), rng.choice([0, 8, 16, 24, 32])
        lo = rng.randrange(65536)
        sp = rng.choice([(0, 65535), (lo, lo), (0, 1023), (1024, 65535)])
        dp = rng.choice([(0, 65535), (80, 80), (lo, min(65535, lo + 99))])
        rules.append((masked(rng.getrandbits(32) & 0x0A0AFFFF, slen), slen,
                      masked(rng.getrandbits(32) & 0x0B0BFFFF, dlen), dlen, sp, dp,
                      rng.choice([None, 6, 17]), rng.choice(["permit", "deny"])))
    lines = [f"@{ipaddress.ip_address(s)}/{sl} {ipaddress.ip_address(d)}/{dl} "
             f"{sp[0]} : {sp[1]} {dp[0]} : {dp[1]} "
             + ("0x00/0x00" if p is None else f"0x{p:02x}/0xFF") + f" {a}"
             for s, sl, d, dl, sp, dp, p, a in rules]
    (tmp_path / "rules").write_text("\n".join(lines) + "\n")
    keys = []
    for _ in range(2000):
        r = rng.choice(rules)
        s = r[0] | (rng.getrandbits(32) & ((1 << (32 - r[1])) - 1))
        d = r[2] | (rng.getrandbits(32) & ((1 << (32 - r[3])) - 1))
        if rng.random() < 0.3:
            s, d = rng.getrandbits(32), rng.getrandbits(32)
        keys.append((s, d, rng.choice([r[4][0], r[4][1], rng.randrange(65536)]),
                     rng.choice([r[5][0], r[5][1], rng.randrange(65536)]), rng.choice([6, 17])))
    (tmp_path / "trace").write_text("".join(f"{k[0]}\t{k[1]}\t{k[2]}\t{k[3]}\t{k[4]}\n"
                                            for k in keys))
    want = [first_match(rules, k) for k in keys]
    r = assert_ok(run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace"))
    matches = [int(x) for x in r.stdout.split()]
    assert matches == want, "warpath classify agrees with first-match (sanity)"
    permitted = [i for i, m in enumerate(matches)
                 if (rules[m][7] if m >= 0 else default) == "permit"]
    assert 0 < len(permitted) < len(keys)

    pcap = tmp_path / "trace.pcap"
    assert_ok(run("gen", "traffic", "--trace", tmp_path / "trace", "--out", pcap))
    frames = read_pcap(pcap)
    assert len(frames) == len(keys)
    _, j = run_json(tmp_path, "--app", "acl", "--rules", tmp_path / "rules", "--workers", 1,
                    "--default-action", default, "--no-progress",
                    "--port", f"in=pcap:{pcap}:{tmp_path / 'back.pcap'}",
                    "--port", f"out=pcap::{tmp_path / 'out.pcap'}")
    t = j["totals"]
    assert t["rx"] == len(keys)
    assert t["tx"] == len(permitted) and t["slow_path"] == 0
    assert j["drops_by_reason"].get("acl_deny", 0) == len(keys) - len(permitted)
    # Permitted packets leave through the paired port, unchanged and in order.
    assert read_pcap(tmp_path / "out.pcap") == [frames[i] for i in permitted]
    assert read_pcap(tmp_path / "back.pcap") == []


def test_config_file_relative_paths_and_flag_overrides(tmp_path):
    d = tmp_path / "conf"
    d.mkdir()
    frames = [eth(ipv4([10, 0, 0, 1], [10, 1, 0, k], udp())) for k in range(50)]
    write_pcap(d / "in.pcap", frames)
    (d / "fib.txt").write_text("10.1.0.0/16 1\n")
    (d / "n.txt").write_text("1 1 00:00:5e:00:53:01\n")
    (d / "run.toml").write_text(
        'app = "router"\nworkers = 1\nbatch = 8\ndelay_us = 100\njson = "out/run.json"\n'
        '[ports]\n# file order is port order, whatever the names\n'
        'zz = "pcap:in.pcap:"\naa = "pcap::fwd.pcap"\n'
        '[router]\nfib = "fib.txt"\nneighbors = "n.txt"\n')
    (d / "out").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_ok(run("run", d / "run.toml", "--batch", 16, "--no-progress", cwd=elsewhere))
    j = json.loads((d / "out" / "run.json").read_text())
    check_report(j)
    assert j["batch"] == 16, "the flag overrides the file"
    assert j["delay_us"] == 100 and j["app"] == "router"
    assert [p["name"] for p in j["ports"]] == ["zz", "aa"]
    assert j["totals"]["rx"] == 50 and j["ports"][1]["tx"] == 50
    assert len(read_pcap(d / "fwd.pcap")) == 50

    # --port replaces the file's ports; --json overrides the file's.
    _, j = run_json(tmp_path, d / "run.toml", "--port", "g=gen:max:3000", "--port", "s=null",
                    "--app", "acl", "--no-progress")
    assert [p["name"] for p in j["ports"]] == ["g", "s"] and j["app"] == "acl"
    assert j["totals"]["rx"] == 3000


@pytest.mark.parametrize("workers", [1, 2])
def test_generator_with_workers_and_duration(tmp_path, workers):
    _, j = run_json(tmp_path, "--port", "g=gen:max", "--port", "s=null", "--workers", workers,
                    "--duration", 0.5, "--no-pin", "--no-progress", "--fib", fib_file(tmp_path))
    assert j["workers"] == workers and j["totals"]["rx"] > 0
    assert 0.4 < j["seconds"] < 10


def fib_file(d):
    (d / "small_fib.txt").write_text("0.0.0.0/0 1\n::/0 1\n10.0.0.0/8 2\n")
    return d / "small_fib.txt"


def test_offload_path_on_cpu_engines(tmp_path):
    """--offload-device cpu: the master/offload path runs on CPU engines (a test aid)."""
    _, j = run_json(tmp_path, "--engine", "gpu", "--offload-device", "cpu", "--port",
                    "g=gen:max:50000", "--port", "s=null", "--no-progress")
    assert j["totals"]["rx"] == 50000
    assert j["batches"]["gpu"] == j["batches"]["chunks"] > 0
    assert j["batches"]["launches"] > 0
    # CPU engines take host memory (nothing resident); router+acl has no packet job, so no
    # launch moves packet bytes either way.
    assert j["batches"]["resident_launches"] == j["batches"]["direct_launches"] == 0
    # Nothing resident is queued on a device: no launch waits in flight.
    assert j["batches"]["max_launches_in_flight"] == 0
    assert j["offload_depth"] == 4


def test_auto_reports_each_paths_worker_cost(tmp_path):
    """auto under overload (the generator at full speed) offloads a share and measures what a
    packet costs the worker on each path (offload_policy.hpp); cpu measures nothing."""
    r, j = run_json(tmp_path, "--engine", "auto", "--offload-device", "cpu", "--no-pin",
                    "--duration", "1.5", "--port", "g=gen", "--port", "s=null", "--no-progress")
    a = j["batches"]["auto"]
    assert set(a) == {"cpu_path_ns_per_packet", "offload_path_ns_per_packet", "declined_workers"}
    assert a["cpu_path_ns_per_packet"] > 0
    assert j["batches"]["gpu"] > 0, "the generator at full speed overloads the worker"
    assert a["offload_path_ns_per_packet"] > 0
    assert a["declined_workers"] in (0, 1)
    assert re.search(r"^auto +worker ns a packet: cpu path [0-9.]+, offload path [0-9.]+",
                     r.stdout, re.M), r.stdout
    r, j = run_json(tmp_path, "--engine", "cpu", "--port", "g=gen:max:5000", "--port", "s=null",
                    "--no-progress")
    assert j["batches"]["auto"] == {"cpu_path_ns_per_packet": 0, "offload_path_ns_per_packet": 0,
                                    "declined_workers": 0}
    assert not re.search(r"^auto ", r.stdout, re.M)


@pytest.mark.parametrize("depth", [1, 3])
def test_offload_depth_is_taken_and_reported(tmp_path, depth):
    _, j = run_json(tmp_path, "--engine", "gpu", "--offload-device", "cpu", "--workers", 2,
                    "--no-pin", "--offload-depth", depth, "--port", "g=gen:max:20000",
                    "--port", "s=null", "--no-progress")
    assert j["offload_depth"] == depth
    assert j["totals"]["rx"] == 20000 == j["totals"]["tx"] + j["totals"]["dropped"] + \
        j["totals"]["slow_path"]


def test_offload_delay_grows_the_workers_frames_and_is_reported(tmp_path):
    """--offload-delay-us (a test aid with --offload-device cpu) holds each launch that long, as
    a device's round trip: the worker, which starts with 5 frames, adds frames until they cover
    its rate times the round trip (ADR 0005), and the report's `frames` say so."""
    r, j = run_json(tmp_path, "--engine", "gpu", "--offload-device", "cpu", "--offload-delay-us",
                    1000, "--batch", 32, "--no-pin", "--port", "g=gen:max:30000", "--port",
                    "s=null")
    assert j["offload_delay_us"] == 1000
    f = j["frames"]
    assert f["cap"] == 65, f  # 4,096 packets' worth of 32-packet frames, at most 64, + 1
    assert 5 < f["most"] <= 65, f
    assert f["round_trip_us"] >= 1000, f
    assert f["needed"] > 5 and f["waits"] > 0, f
    assert j["batches"]["max_launches_in_flight"] >= 1, "held launches count as in flight"
    assert re.search(r"^frames +up to \d+ a worker of 65 \(needs \d+(, more than the cap)?: "
                     r"round trip [0-9.]+ us, "
                     r"a frame every [0-9.]+ us\), \d+ waits for a free frame$", r.stdout, re.M), \
        r.stdout


@pytest.mark.parametrize("args,why", [
    (["--offload-delay-us", "10"], "offload_device"),  # the cuda device has a round trip of its own
    (["--offload-device", "cpu", "--offload-delay-us", "1000001"], "--offload-delay-us"),
])
def test_offload_delay_is_refused_where_it_emulates_nothing(tmp_path, args, why):
    r = subprocess.run([str(WARPATH_BIN), "run", *args, "--port", "g=gen:max:10", "--port",
                        "s=null", "--no-progress"], capture_output=True, text=True)
    assert r.returncode != 0 and why in r.stderr, r.stderr
    assert_no_crash(r)


@pytest.mark.parametrize("depth", ["0", "65"])
def test_offload_depth_out_of_range_is_refused(tmp_path, depth):
    r = subprocess.run([str(WARPATH_BIN), "run", "--offload-depth", depth, "--port", "g=gen:max:10",
                        "--port", "s=null", "--no-progress"], capture_output=True, text=True)
    assert r.returncode != 0 and "--offload-depth" in r.stderr, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_drains_reports_and_exits_128_plus_signal(tmp_path, sig):
    out = tmp_path / "run.json"
    p = subprocess.Popen([str(WARPATH_BIN), "run", "--port", "g=gen:max", "--port", "s=null",
                          "--fib", str(fib_file(tmp_path)), "--no-progress", "--json", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)
        assert p.poll() is None, "an unbounded generator runs until stopped"
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + sig, (p.returncode, stderr)  # 130 / 143, after the report
    assert "internal error" not in stderr
    j = json.loads(out.read_text())
    check_report(j)
    assert j["totals"]["rx"] > 0
    assert j["stopped_by"] == {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}[sig]
    assert "stopped by" in stdout


def test_cpus_pins_workers_and_rejects_bad_lists(tmp_path):
    """--cpus lists the cores (DPDK's -l): two workers on cores 1 and 0 run and add up; a
    malformed list is a usage error."""
    _, j = run_json(tmp_path, "--port", "g=gen:max:50000", "--port", "s=null", "--workers", "2",
                 "--cpus", "1,0")
    assert j["totals"]["rx"] == 50000
    assert j["totals"]["rx"] == j["totals"]["tx"] + j["totals"]["dropped"] + j["totals"]["slow_path"]
    r = run("run", "--cpus", "1,x", "--no-progress")
    assert r.returncode == 2, r.stderr


def test_gen_profile_sets_the_generator_traffic(tmp_path):
    """--gen-profile reaches gen: ports (64-byte frames are 60 captured bytes); a bad profile is
    an error naming the port; the JSON says where the workers ran."""
    _, j = run_json(tmp_path, "--port", "g=gen:max:20000", "--port", "s=null",
                    "--gen-profile", "ipv4+udp+min")
    assert j["ports"][0]["rx_bytes"] == 20000 * 60
    assert "profile ipv4+udp+min" in j["ports"][0]["description"]
    assert len(j["machine"]["worker_cpus"]) == 1
    r = run("run", "--port", "g=gen:max:10", "--port", "s=null", "--gen-profile", "bogus",
            "--no-progress")
    assert r.returncode == 1 and "port g" in r.stderr and "bogus" in r.stderr, r.stderr
