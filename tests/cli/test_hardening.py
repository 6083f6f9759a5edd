"""Regression tests of defects found by a hostile tester at commit 458cac5: each test
failed there and passes now. Netns cases live in test_run_netns.py."""

import json
import os
import stat
import threading

import pytest
from test_run import check_report, run_json
from warpath_cli import assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    d = tmp_path_factory.mktemp("cap")
    pcap = d / "in.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 3000, "--seed", 16))
    return pcap


# --- outputs that are not regular files are written in place, links through ----------------------

def test_out_through_a_symlink_keeps_the_link(tmp_path, capture):
    target = tmp_path / "rows.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert_ok(run("parse", "--in", capture, "--out", link))
    assert link.is_symlink(), "the link was replaced by a file"
    assert target.read_text().count("\n") > 3000 and "old" not in target.read_text()
    assert not (tmp_path / "link.csv.partial").exists()
    assert not (tmp_path / "rows.csv.partial").exists()


def test_out_to_a_device_writes_in_place(tmp_path, capture):
    # A link to /dev/null: before, the link was renamed over (as root, `--out /dev/null` itself
    # replaced the device with a regular file).
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    assert_ok(run("parse", "--in", capture, "--out", link))
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert_ok(run("parse", "--in", capture, "--out", "/dev/null"))
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is no longer a device"


def test_out_to_a_fifo_writes_in_place(tmp_path, capture):
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    assert_ok(run("parse", "--in", capture, "--out", fifo, "--format", "summary"))
    reader.join(timeout=30)
    assert got and b"packets" in got[0]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a file"


def test_json_to_dev_stdout(tmp_path, capture):
    r = assert_ok(run("run", "--port", f"p=pcap:{capture}:", "--no-progress", "--json",
                      "/dev/stdout"))
    start = r.stdout.index("{\n")
    check_report(json.loads(r.stdout[start:]))


# --- a full disk is an error, and failed writes are tx_errors ------------------------------------

def test_gen_traffic_to_a_full_disk_fails(tmp_path):
    r = run("gen", "traffic", "--out", "/dev/full", "--count", 20000)
    assert_no_crash(r)
    assert r.returncode == 1 and "/dev/full: write failed: No space left on device" in r.stderr, \
        r.stderr


def test_run_to_a_full_disk_counts_tx_errors_and_fails(tmp_path, capture):
    out = tmp_path / "run.json"
    r = run("run", "--app", "router", "--port", f"a=pcap:{capture}:/dev/full", "--no-progress",
            "--json", out)
    assert_no_crash(r)
    assert r.returncode == 1, r.stderr
    assert "No space left on device" in r.stderr, r.stderr
    j = json.loads(out.read_text())
    assert j["ports"][0]["tx_errors"] > 0, j["ports"][0]
    check_report(j)


@pytest.mark.parametrize("cmd", ["parse", "classify", "lookup"])
def test_text_outputs_to_a_full_disk_fail(tmp_path, capture, cmd):
    if cmd == "parse":
        args = ["parse", "--in", capture]
    elif cmd == "classify":
        rules = tmp_path / "r.rules"
        rules.write_text("@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\n")
        trace = tmp_path / "t.trace"
        trace.write_text("167772161\t167772162\t1000\t80\t6\n" * 5000)
        args = ["classify", "--rules", rules, "--trace", trace]
    else:
        (tmp_path / "fib").write_text("0.0.0.0/0 1\n")
        (tmp_path / "addrs").write_text("10.0.0.1\n" * 5000)
        args = ["lookup", "--fib", tmp_path / "fib", "--addrs", tmp_path / "addrs"]
    r = run(*args, "--out", "/dev/full")
    assert_no_crash(r)
    assert r.returncode == 1 and "/dev/full" in r.stderr and "write failed" in r.stderr, r.stderr


# --- an output that is an input, under any spelling, is refused ----------------------------------

def test_parse_refuses_to_overwrite_its_input(tmp_path, capture):
    pcap = tmp_path / "x.pcap"
    pcap.write_bytes(capture.read_bytes())
    link = tmp_path / "y.pcap"
    link.symlink_to(pcap)
    for out in (pcap, link, tmp_path / "." / "x.pcap"):
        r = run("parse", "--in", pcap, "--out", out)
        assert_no_crash(r)
        assert r.returncode == 1 and "refusing to write over it" in r.stderr, r.stderr
    assert pcap.read_bytes() == capture.read_bytes()


def test_run_refuses_an_output_that_is_an_input(tmp_path, capture):
    pcap = tmp_path / "x.pcap"
    pcap.write_bytes(capture.read_bytes())
    link = tmp_path / "link.pcap"
    link.symlink_to(pcap)
    cases = [
        ["--port", "a=pcap:x.pcap:./x.pcap"],
        ["--port", f"a=pcap:x.pcap:{link}"],
        ["--port", "a=pcap:x.pcap:", "--port", "b=pcap::x.pcap"],
        ["--port", "a=pcap:x.pcap:", "--json", "x.pcap"],
        ["--port", "a=pcap:x.pcap:", "--slow-path", link],
        ["--port", "a=pcap:x.pcap:o.pcap", "--port", "b=pcap::./o.pcap"],
    ]
    for args in cases:
        r = run("run", *args, "--no-progress", cwd=tmp_path)
        assert_no_crash(r)
        assert r.returncode == 1 and "same file" in r.stderr, (args, r.stderr)
    assert pcap.read_bytes() == capture.read_bytes()


# --- a damaged record ends the input; what came before is processed and reported -----------------

def damaged(capture, tmp_path, how):
    """The capture cut mid-record, or with record 101's caplen above its len."""
    data = bytearray(capture.read_bytes())
    out = tmp_path / f"{how}.pcap"
    if how == "cut":
        out.write_bytes(bytes(data[:-10]))
        return out, 2999, "record 3000"
    import struct
    off = 24
    for _ in range(100):
        off += 16 + struct.unpack_from("<I", data, off + 8)[0]
    caplen = struct.unpack_from("<I", data, off + 8)[0]
    struct.pack_into("<I", data, off + 12, caplen - 1)  # len < caplen
    out.write_bytes(bytes(data))
    return out, 100, "record 101"


@pytest.mark.parametrize("how", ["cut", "caplen"])
def test_run_processes_a_damaged_capture_up_to_the_damage(tmp_path, capture, how):
    pcap, good, record = damaged(capture, tmp_path, how)
    out = tmp_path / "run.json"
    args = ["run", "--app", "router", "--port", f"a=pcap:{pcap}:{tmp_path / 'o.pcap'}",
            "--no-progress", "--json", out]
    r = run(*args)
    assert_ok(r)
    assert f"warning: port a: pcap: {pcap}: {record}" in r.stderr, r.stderr
    j = json.loads(out.read_text())
    check_report(j)
    assert j["totals"]["rx"] == good and len(j["warnings"]) == 1 and j["errors"] == []
    strict = run(*args, "--strict")
    assert_no_crash(strict)
    assert strict.returncode == 1 and "--strict: 1 warning(s)" in strict.stderr, strict.stderr


@pytest.mark.parametrize("how", ["cut", "caplen"])
def test_route_processes_a_damaged_capture_up_to_the_damage(tmp_path, capture, how):
    pcap, good, record = damaged(capture, tmp_path, how)
    (tmp_path / "fib").write_text("0.0.0.0/0 1\n::/0 1\n")
    args = ["route", "--in", pcap, "--fib", tmp_path / "fib", "--out-dir", tmp_path / "o",
            "--json", tmp_path / "r.json"]
    r = run(*args)
    assert_ok(r)
    assert f"warning: {pcap}: {record}" in r.stderr, r.stderr
    j = json.loads((tmp_path / "r.json").read_text())
    assert j["counters"]["rx"] == good and len(j["warnings"]) == 1
    strict = run(*args, "--strict")
    assert_no_crash(strict)
    assert strict.returncode == 1 and "--strict" in strict.stderr, strict.stderr


# --- the firewall fails closed on typos ----------------------------------------------------------

CB = "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x06/0xFF\t{}\n"


@pytest.mark.parametrize("fmt,text,why", [
    ("classbench", CB.format("dney"), "r:1: unknown action 'dney'"),
    ("classbench", CB.format("DENY"), "r:1: unknown action 'DENY'"),
    ("openflow", "priority=5,tcp,actions=dorp\n", "r:1: unknown OpenFlow action 'dorp'"),
    ("openflow", "priority=5,tcp,actions=outptu:1\n", "r:1: unknown OpenFlow action 'outptu:1'"),
])
def test_unknown_rule_actions_are_errors(tmp_path, fmt, text, why):
    (tmp_path / "r").write_text(text)
    r = run("run", "--app", "acl", "--rules", tmp_path / "r", "--format", fmt, "--no-progress",
            "--port", "g=gen:max:10", "--port", "s=null")
    assert_no_crash(r)
    assert r.returncode == 1 and why in r.stderr, r.stderr


@pytest.mark.parametrize("actions", ["", "actions=", "actions=drop"])
def test_openflow_empty_actions_drop(tmp_path, actions):
    # ovs-ofctl: an empty action list drops. Before, "actions=" and no actions permitted.
    (tmp_path / "r").write_text(f"priority=5,ip,{actions}\n" if actions else "priority=5,ip\n")
    r, j = run_json(tmp_path, "--app", "acl", "--rules", tmp_path / "r", "--format", "openflow",
                    "--default-action", "permit", "--no-progress", "--port",
                    "g=gen:max:2000", "--gen-profile", "ipv4", "--port", "s=null")
    assert j["totals"]["tx"] == 0 and j["drops_by_reason"]["acl_deny"] == 2000, j["totals"]


# --- the acl app applies an action to non-IP frames, with a counter ------------------------------

def non_ip_capture(tmp_path):
    from pcap_frames import eth, ipv4, udp, write_pcap
    inner = ipv4([10, 0, 0, 1], [10, 0, 0, 2], udp(dport=22))
    frames = [
        eth(bytes(28), ethertype=0x0806),                                 # ARP
        eth(b"\x00\x01\x01\x40" + inner, ethertype=0x8847),               # MPLS, one label
        eth(b"\x11\x00\x00\x01\x00\x16\x00\x21" + inner, ethertype=0x8864),  # PPPoE session
        eth(b"\x00\x05\x88\x47\x00\x01\x01\x40" + inner, ethertype=0x8100),  # VLAN + MPLS
        eth(inner),                                                       # plain IPv4
    ]
    pcap = tmp_path / "nonip.pcap"
    write_pcap(pcap, frames)
    return pcap


@pytest.mark.parametrize("extra,tx,non_ip", [
    ([], 1, 4),                                      # default action deny: non-IP is denied
    (["--default-action", "permit"], 5, 0),          # follows the default action
    (["--non-ip-action", "permit"], 1 + 4, 0),
    (["--default-action", "permit", "--non-ip-action", "deny"], 1, 4),
])
def test_acl_app_applies_an_action_to_non_ip(tmp_path, extra, tx, non_ip):
    pcap = non_ip_capture(tmp_path)
    rules = tmp_path / "r"
    rules.write_text("@10.0.0.0/8\t10.0.0.0/8\t0 : 65535\t22 : 22\t0x11/0xFF\tpermit\n")
    _, j = run_json(tmp_path, "--app", "acl", "--rules", rules, *extra, "--no-progress",
                    "--port", f"a=pcap:{pcap}:", "--port", f"b=pcap::{tmp_path / 'b.pcap'}")
    assert j["totals"]["tx"] == tx, j["totals"]
    assert j["drops_by_reason"].get("acl_non_ip", 0) == non_ip, j["drops_by_reason"]


def test_router_acl_passes_arp_to_the_router(tmp_path):
    # Before the router the ACL lets non-IP continue: ARP reaches the slow path as before.
    pcap = non_ip_capture(tmp_path)
    _, j = run_json(tmp_path, "--app", "router+acl", "--no-progress", "--port",
                    f"a=pcap:{pcap}:", "--port", f"b=pcap::{tmp_path / 'b.pcap'}")
    assert j["slow_path_by_reason"].get("arp", 0) == 1, j["slow_path_by_reason"]
    assert "acl_non_ip" not in j["drops_by_reason"]


# --- batches, tables, captures, memory and messages ----------------------------------------------

@pytest.mark.parametrize("batch", [1, 4, 7, 8])
def test_small_batches_take_jumbo_frames(tmp_path, batch):
    pcap = tmp_path / "jumbo.pcap"
    assert_ok(run("gen", "traffic", "--out", pcap, "--count", 20, "--size", 9018))
    _, j = run_json(tmp_path, "--app", "router", "--port", f"a=pcap:{pcap}:", "--batch", batch,
                    "--no-progress")
    assert j["totals"]["rx"] == 20


def test_neighbours_on_missing_ports_and_empty_tables(tmp_path, capture):
    (tmp_path / "f.fib").write_text("10.0.0.0/8 1\n")
    (tmp_path / "n.txt").write_text("1 5 00:00:5e:00:53:01\n")
    r = run("run", "--app", "router", "--fib", tmp_path / "f.fib", "--neighbors",
            tmp_path / "n.txt", "--port", f"a=pcap:{capture}:", "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1 and "leaves on port 5, but only 1 port(s)" in r.stderr, r.stderr
    (tmp_path / "empty.fib").write_text("# no routes\n")
    (tmp_path / "empty.rules").write_text("")
    r, j = run_json(tmp_path, "--app", "router+acl", "--fib", tmp_path / "empty.fib", "--rules",
                    tmp_path / "empty.rules", "--port", f"a=pcap:{capture}:", "--no-progress")
    assert "warning: app router+acl: chain position 1 (acl): the rule set is empty" in r.stderr
    assert "chain position 2 (router): the FIB has no routes" in r.stderr, r.stderr
    assert len(j["warnings"]) == 2


def one_record_pcap(path, linktype, record):
    import struct
    path.write_bytes(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype) +
                     struct.pack("<IIII", 0, 0, len(record), len(record)) + record)
    return path


def test_unsupported_link_type_is_refused(tmp_path):
    pcap = one_record_pcap(tmp_path / "wifi.pcap", 105, bytes(40))  # 802.11
    r = run("run", "--port", f"a=pcap:{pcap}:", "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1 and "is not supported (Ethernet captures only)" in r.stderr, r.stderr
    r = run("parse", "--in", pcap)
    assert r.returncode == 1 and "link type 105 is not supported" in r.stderr, r.stderr


def test_configurations_beyond_memory_are_refused_up_front():
    r = run("run", "--workers", 256, "--batch", 65536, "--no-progress", timeout=30)
    assert_no_crash(r)
    assert r.returncode == 1 and "of frame memory" in r.stderr and "lower workers or batch" \
        in r.stderr, r.stderr


def test_decompression_bomb_is_capped(tmp_path):
    import lzma
    bomb = tmp_path / "bomb.fib.xz"
    with lzma.open(bomb, "wb", preset=1) as f:
        chunk = b"\0" * (1 << 24)
        for _ in range(65):  # 1040 MiB of zeros in ~200 KB
            f.write(chunk)
    (tmp_path / "a.txt").write_text("10.0.0.1\n")
    r = run("lookup", "--fib", bomb, "--addrs", tmp_path / "a.txt", timeout=120)
    assert_no_crash(r)
    assert r.returncode == 1 and "more than 1024 MiB of text" in r.stderr, r.stderr


def test_next_hop_named_minus_one_is_refused(tmp_path):
    (tmp_path / "f.fib").write_text("10.0.0.0/8 gw\n11.0.0.0/8 -1\n")
    (tmp_path / "a.txt").write_text("11.0.0.1\n")
    r = run("lookup", "--fib", tmp_path / "f.fib", "--addrs", tmp_path / "a.txt")
    assert r.returncode == 1 and "f.fib:2: next hop '-1' would read as 'no route'" in r.stderr


def test_captures_from_a_pipe(capture):
    import subprocess
    from warpath_cli import WARPATH_BIN
    r = subprocess.run([str(WARPATH_BIN), "parse", "--in", "-", "--format", "summary"],
                       input=capture.read_bytes(), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"3000 packets" in r.stdout


@pytest.mark.parametrize("args,want,unwanted", [
    (["run", "--duration", "-1"], "--duration: must be a number of seconds from 0 to 1e9",
     "179769"),
    (["gen", "traffic", "--out", "/dev/null", "--min-size", "9000"],
     "--min-size (9000) must be <= --max-size (1518)", "TrafficParams"),
    (["gen", "traffic", "--out", "/dev/null", "--tcp", "0", "--udp", "0", "--icmp", "0"],
     "--tcp + --udp + --icmp must be > 0", "TrafficParams"),
    (["run", "--engine", "gpu", "--no-progress"], "--engine gpu: ", "device (no usable"),
])
def test_messages_speak_the_users_words(args, want, unwanted):
    r = run(*args)
    assert_no_crash(r)
    if args[1] == "--engine" and r.returncode == 0:
        pytest.skip("a GPU is here")
    assert r.returncode != 0 and want in r.stderr and unwanted not in r.stderr, r.stderr


def test_binary_in_errors_is_escaped(tmp_path):
    (tmp_path / "bin.rules").write_bytes(bytes(range(256)) * 4)
    r = run("classify", "--rules", tmp_path / "bin.rules", "--trace", "/dev/null")
    assert r.returncode == 1
    line = r.stderr.strip()
    assert "\\x" in line and all(ch.isprintable() for ch in line), repr(line)
    assert len(line.splitlines()) == 1


def test_info_and_summary_tables_are_aligned(capture):
    rows = [ln for ln in assert_ok(run("info")).stdout.splitlines()
            if ln.split()[:1] and ln.split()[0] in ("module", "packet", "lookup", "classify",
                                                     "runtime")]
    cols = {ln.index(ln.split()[2]) + len(ln.split()[2]) for ln in rows}
    assert len(cols) == 1, "priority column ends in one place: " + str(cols)
    out = assert_ok(run("parse", "--in", capture, "--format", "summary")).stdout.splitlines()[1:]
    ends = {len(ln.split("%")[0]) for ln in out if ln.endswith("%")}
    assert len(ends) == 1, ends


# --- what users reach for first ------------------------------------------------------------------

def test_lookup_single_queries_like_ip_route_get(tmp_path):
    fib = tmp_path / "q.fib"
    fib.write_text("0.0.0.0/0 gw0\n8.0.0.0/8 gw8\n8.8.8.0/24 gw888\n2001:db8::/32 v6gw\n")
    r = assert_ok(run("lookup", "--fib", fib, "8.8.8.8", "8.9.1.1", "1.1.1.1", "2001:db8::1",
                      "::1"))
    assert r.stdout.splitlines() == ["8.8.8.8 via gw888 (8.8.8.0/24)", "8.9.1.1 via gw8 (8.0.0.0/8)",
                                     "1.1.1.1 via gw0 (0.0.0.0/0)",
                                     "2001:db8::1 via v6gw (2001:db8::/32)", "::1 no route"]
    bad = run("lookup", "--fib", fib, "8.8.8.8", "bogus")
    assert bad.returncode == 1 and "bad IPv4 address 'bogus'" in bad.stderr
    none = run("lookup", "--fib", fib)
    assert none.returncode == 2 and "--addrs FILE or addresses" in none.stderr


def test_classify_shows_the_matching_rule_and_action(tmp_path):
    rules = tmp_path / "sr.rules"
    rules.write_text("@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x06/0xFF\tdeny\n"
                     "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\n")
    trace = tmp_path / "sr.trace"
    trace.write_text("167772161\t167772162\t1000\t80\t6\n"    # 10.0.0.1 tcp: rule 0
                     "167772161\t167772162\t1000\t80\t17\n"   # udp: rule 1
                     "3232235777\t167772162\t1000\t80\t6\n")  # 192.168.1.1 tcp: rule 1
    r = assert_ok(run("classify", "--rules", rules, "--trace", trace, "--show-rule"))
    lines = [ln.split("\t") for ln in r.stdout.splitlines()]
    assert [ln[0] for ln in lines] == ["0", "1", "1"]
    assert lines[0][1] == f"{rules}:1" and lines[0][-1] == "deny"
    assert lines[1][1] == f"{rules}:2" and lines[1][-1] == "(match action)"


def test_stats_interval_from_the_config(tmp_path):
    cfg = tmp_path / "si.toml"
    cfg.write_text('stats_interval = 0.3\n[ports]\ng = "gen:100k:100000"\ns = "null"\n')
    r = assert_ok(run("run", cfg, "--no-progress", timeout=60))
    assert sum(1 for ln in r.stdout.splitlines() if ln.startswith("{")) >= 2
    cfg.write_text("stats_interval = -1\n")
    bad = run("run", cfg, "--no-progress")
    assert bad.returncode == 1 and "si.toml:1: stats_interval: must be 0 (none)" in bad.stderr


def test_out_keeps_hard_links(tmp_path, capture):
    target = tmp_path / "rows.csv"
    target.write_text("old\n")
    other = tmp_path / "other-name.csv"
    os.link(target, other)
    assert_ok(run("parse", "--in", capture, "--out", other))
    assert os.stat(target).st_ino == os.stat(other).st_ino, "the hard link was broken"
    assert target.read_text().startswith("frame,")


def test_stats_interval_writes_json_lines_without_a_tty():
    r = assert_ok(run("run", "--engine", "cpu", "--port", "g=gen:100k:150000", "--port", "s=null",
                      "--no-progress", "--stats-interval", "0.3", timeout=60))
    lines = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) >= 3, r.stdout[:500]
    rx = [ln["totals"]["rx"] for ln in lines]
    assert rx == sorted(rx) and rx[-1] <= 150000
    for ln in lines:
        t = ln["totals"]
        assert t["rx"] == t["tx"] + t["dropped"] + t["slow_path"] + t["in_flight"]
        assert {"rates", "ports", "modules", "drops_by_reason", "stages_ns_per_packet",
                "frames"} <= set(ln)
        # The cpu policy's worker: its 4 + 1 frames, no round trip to size them by.
        assert ln["frames"]["most"] == ln["frames"]["cap"] == 5 and ln["frames"]["needed"] == 0
    # Where the worker's time goes, live (issue 60's "see it"): once packets were finished,
    # every stage that touches them has been timed.
    stages = lines[-1]["stages_ns_per_packet"]
    assert set(stages) == {"rx", "parse", "modules", "tx", "other"}, stages
    assert stages["rx"] > 0 and stages["parse"] > 0 and stages["modules"] > 0, stages
    assert 50_000 < lines[-1]["rates"]["rx_pps"] < 150_000
    assert "check: rx = tx + dropped + slow_path" in r.stdout  # the summary still follows


def test_parse_count_times_and_filter(capture):
    r = assert_ok(run("parse", "--in", capture, "-c", 3, "--times"))
    lines = r.stdout.splitlines()
    assert lines[0] == "frame,time,caplen,len,status,vlan,ip_version,src,dst,proto,sport,dport,frag"
    assert len(lines) == 4
    frame, t, caplen, length = lines[1].split(",")[:4]
    assert frame == "1" and "." in t and int(caplen) <= int(length)
    # BPF as tcpdump applies it: "udp" matches untagged UDP only.
    rows = [ln.split(",") for ln in assert_ok(run("parse", "--in", capture)).stdout.splitlines()[1:]]
    want = sum(1 for c in rows if c[6] == "17" and c[2] == "")
    got = assert_ok(run("parse", "--in", capture, "--filter", "udp", "--format", "summary")).stdout
    assert f"{want} packets" in got.splitlines()[0], (want, got.splitlines()[0])
    bad = run("parse", "--in", capture, "--filter", "udpx")
    assert bad.returncode == 1 and "filter 'udpx'" in bad.stderr


def test_linux_cooked_and_raw_ip_captures_are_read_as_ethernet(tmp_path):
    import struct
    from pcap_frames import ipv4, ipv6, udp
    v4 = ipv4([10, 0, 0, 1], [10, 0, 0, 2], udp(sport=1111, dport=53))
    v6 = ipv6(bytes(15) + b"\x01", bytes(15) + b"\x02", udp(sport=2222, dport=53))
    sll = struct.pack("!HHH8sH", 0, 1, 6, bytes([2, 0, 0, 0, 0, 9, 0, 0]), 0x0800) + v4
    sll2 = struct.pack("!HHIHBB8s", 0x86DD, 0, 2, 1, 0, 6, bytes([2, 0, 0, 0, 0, 9, 0, 0])) + v6
    cases = [(113, sll, "4", "10.0.0.1", "1111"), (276, sll2, "6", "::1", "2222"),
             (101, v4, "4", "10.0.0.1", "1111"), (229, v6, "6", "::1", "2222")]
    for linktype, record, version, src, sport in cases:
        pcap = one_record_pcap(tmp_path / f"lt{linktype}.pcap", linktype, record)
        rows = assert_ok(run("parse", "--in", pcap)).stdout.splitlines()
        c = rows[1].split(",")
        assert (c[1], c[3], c[4], c[7]) == ("ok", version, src, sport), (linktype, rows[1])
        r, j = run_json(tmp_path, "--app", "router", "--port", f"a=pcap:{pcap}:", "--no-progress")
        assert j["totals"]["rx"] == 1


def test_man_pages_and_completion_come_from_the_cli(tmp_path):
    import shutil
    import subprocess
    r = assert_ok(run("docs", "--man", tmp_path / "man"))
    pages = sorted(p.name for p in (tmp_path / "man").iterdir())
    for name in ("warpath.1", "warpath-run.1", "warpath-lookup.1", "warpath-gen-traffic.1",
                 "warpath-docs.1"):
        assert name in pages, pages
    assert f"wrote {len(pages)} man pages" in r.stdout
    run_page = (tmp_path / "man" / "warpath-run.1").read_text()
    assert run_page.startswith(".TH") and "\\-\\-stats\\-interval" in run_page
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", tmp_path / "man" / "warpath-run.1"],
                           capture_output=True, text=True)
        assert g.returncode == 0 and g.stderr == "", g.stderr
    script = assert_ok(run("docs", "--completion", "bash")).stdout
    if shutil.which("bash"):
        probe = script + ('COMP_WORDS=(warpath run --sta); COMP_CWORD=2; _warpath; '
                          'echo "${COMPREPLY[*]}"; COMP_WORDS=(warpath gen tr); COMP_CWORD=2; '
                          '_warpath; echo "${COMPREPLY[*]}"\n')
        out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout
        assert out.splitlines() == ["--stats-interval", "traffic"], out
    bad = run("docs")
    assert bad.returncode == 1 and "--man DIR or --completion bash" in bad.stderr


# --- filters, outputs over inputs, descriptors, fragments ----------------------------------------

def test_filter_skips_records_without_false_damage(tmp_path):
    # A small snap length and long stretches of records the filter drops: libpcap's own
    # filtering made those stretches look like one oversized record.
    import struct
    from pcap_frames import eth, ipv4, udp
    recs = []
    for k in range(400):
        f = eth(ipv4([10, 0, 0, 1], [10, 0, 0, 2], udp(dport=53 if k % 100 == 0 else 80)))[:90]
        recs.append(struct.pack("<IIII", k, 0, len(f), len(f) + 10) + f)
    pcap = tmp_path / "snap96.pcap"
    pcap.write_bytes(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 96, 1) + b"".join(recs))
    r = assert_ok(run("parse", "--in", pcap, "--filter", "udp port 53", "--format", "summary"))
    assert "4 packets" in r.stdout.splitlines()[0] and "warning" not in r.stderr, r.stderr


def test_route_never_truncates_its_input(tmp_path, capture):
    out = tmp_path / "o"
    out.mkdir()
    (out / "drop.pcap").write_bytes(capture.read_bytes())
    (tmp_path / "f.fib").write_text("10.0.0.0/8 1\n")
    r = run("route", "--in", out / "drop.pcap", "--fib", tmp_path / "f.fib", "--out-dir", out)
    assert r.returncode == 1 and "refusing to write over it" in r.stderr, r.stderr
    assert (out / "drop.pcap").read_bytes() == capture.read_bytes()


def test_run_json_over_a_table_is_refused(tmp_path):
    (tmp_path / "f.fib").write_text("10.0.0.0/8 1\n")
    r = run("run", "--app", "router", "--fib", tmp_path / "f.fib", "--json", tmp_path / "f.fib",
            "--port", "g=gen:max:10", "--port", "s=null", "--no-progress")
    assert r.returncode == 1 and "same file as the input of router.fib" in r.stderr, r.stderr
    assert (tmp_path / "f.fib").read_text() == "10.0.0.0/8 1\n"
    # Every preset setting that names a file is an input: the SA file too.
    (tmp_path / "sa.toml").write_text("# SAs\n")
    r = run("run", "--app", "ipsec", "--sa", tmp_path / "sa.toml", "--json", tmp_path / "sa.toml",
            "--port", "g=gen:max:10", "--port", "s=null", "--no-progress")
    assert r.returncode == 1 and "same file as the input of sa" in r.stderr, r.stderr
    assert (tmp_path / "sa.toml").read_text() == "# SAs\n"


@pytest.mark.parametrize("chain,victim,says", [
    # A module's file arguments (ArgInfo::file), whatever the module: an input under --json...
    ("esp-in(sa={f})", "json", "the input of esp-in.sa"),
    ("switch(flows={f})", "json", "the input of switch.flows"),
    # ...and an output argument over another module's input or over another output.
    ("acl(rules={f}) -> flow(log={f})", None, "flow.log"),
    ("flow(log={f}) -> match(patterns=x.pat, log={f})", None, "the output of flow.log"),
])
def test_chain_file_arguments_are_never_overwritten(tmp_path, chain, victim, says):
    f = tmp_path / "table.txt"
    f.write_text("# a table\n")
    args = ["run", "--chain", chain.format(f=f), "--port", "g=gen:max:10", "--port", "s=null",
            "--no-progress"]
    if victim:
        args += ["--" + victim, f]
    r = run(*args)
    assert r.returncode == 1 and "same file as" in r.stderr and says in r.stderr, r.stderr
    assert f.read_text() == "# a table\n"


def test_dev_null_takes_every_output(tmp_path):
    # Outputs to /dev/null lose nothing: a chain's logs and the report may all go there.
    (tmp_path / "p.txt").write_text("abc\n")
    r = run("run", "--chain", f"flow(log=/dev/null) -> match(patterns={tmp_path / 'p.txt'}, "
            "log=/dev/null)", "--json", "/dev/null", "--port", "g=gen:max:10", "--port",
            "s=null", "--no-progress")
    assert r.returncode == 0 and "same file" not in r.stderr, r.stderr


def test_json_to_dev_stdout_redirected_to_a_file_keeps_the_summary(tmp_path):
    import subprocess
    from warpath_cli import WARPATH_BIN
    rep = tmp_path / "rep.txt"
    with open(rep, "w") as f:
        p = subprocess.run([str(WARPATH_BIN), "run", "--port", "g=gen:max:1000", "--port",
                            "s=null", "--no-progress", "--json", "/dev/stdout"], stdout=f,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    text = rep.read_text()
    assert "check: rx = tx + dropped + slow_path" in text and '"totals"' in text


def test_raw_ip_copy_reads_back(tmp_path):
    from pcap_frames import ipv4, udp
    pkt = ipv4([10, 0, 0, 1], [10, 0, 0, 2], udp(data=b"x" * 60))
    import struct
    pcap = tmp_path / "raw.pcap"
    pcap.write_bytes(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, len(pkt), 101) +
                     struct.pack("<IIII", 0, 0, len(pkt), len(pkt)) + pkt)
    copy = tmp_path / "copy.pcap"
    r, _ = run_json(tmp_path, "--app", "acl", "--default-action", "permit", "--port",
                    f"a=pcap:{pcap}:{copy}", "--no-progress")
    back = assert_ok(run("parse", "--in", copy))
    assert back.stdout.count("\n") == 2 and "warning" not in back.stderr, back.stderr


def test_lookup_arguments_are_one_address_each(tmp_path):
    fib = tmp_path / "q.fib"
    fib.write_text("8.0.0.0/8 gw8\n")
    for bad in ("", "1.1.1.1\n2.2.2.2", "#8.8.8.8"):
        r = run("lookup", "--fib", fib, bad, "8.8.8.8")
        assert_no_crash(r)
        assert r.returncode == 1 and "expected one IPv4 or IPv6 address" in r.stderr, r.stderr


def test_acl_default_applies_to_ipv4_it_cannot_key(tmp_path):
    # RFC 1858: a first fragment too short to hold the TCP ports; no rule can match it.
    import struct
    from pcap_frames import eth, ipv4, write_pcap
    hdr = bytearray(ipv4([10, 0, 0, 1], [10, 0, 0, 2], b"\x00\x16", proto=6))
    hdr[6:8] = struct.pack("!H", 0x2000)  # MF, offset 0
    hdr[10:12] = b"\0\0"
    from pcap_frames import csum
    hdr[10:12] = struct.pack("!H", csum(bytes(hdr[:20])))
    pcap = tmp_path / "tiny.pcap"
    write_pcap(pcap, [eth(bytes(hdr))])
    rules = tmp_path / "r"
    rules.write_text("@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\tpermit\n")
    _, j = run_json(tmp_path, "--app", "router+acl", "--rules", rules, "--port",
                    f"a=pcap:{pcap}:", "--no-progress")
    assert j["drops_by_reason"].get("acl_deny") == 1, j["drops_by_reason"]


@pytest.mark.parametrize("word", ['"deny"', "!deny", "deny,", "-"])
def test_classbench_action_typos_with_symbols_are_errors(tmp_path, word):
    (tmp_path / "r").write_text(CB.format(word))
    r = run("classify", "--rules", tmp_path / "r", "--trace", "/dev/null")
    assert r.returncode == 1 and "unknown action" in r.stderr, r.stderr
