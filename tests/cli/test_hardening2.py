"""Regression tests of the second hostile-tester round (issue 67, at commit 5ca9650): each test
failed there and passes now. The router's own addresses on live ports are in
test_run_netns.py; the metrics server's slow clients also in tests/runtime/metrics_test.cpp."""

import json
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest
from pcap_frames import eth, l3, read_pcap, udp, write_pcap
from test_hardening import capture  # noqa: F401 (the issue's capture: 3,000 packets, seed 16)
from test_run import check_report, run_json
from warpath_cli import REPO, WARPATH_BIN, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()

DEMO_PCAP = REPO / "examples" / "nids" / "demo.pcap"
DEMO_RULES = REPO / "examples" / "nids" / "demo.rules"


def ethertypes(pcap):
    return [l3(f)[1] for f in read_pcap(pcap)]


# --- 1. the firewall fails closed on IPv6 -------------------------------------------------------

SSH_ONLY = "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t22 : 22\t0x06/0xFF\tpermit\n"


@pytest.mark.parametrize("app", ["acl", "router+acl"])
def test_ipv4_rules_with_default_deny_drop_ipv6(tmp_path, capture, app):
    rules = tmp_path / "r.rules"
    rules.write_text(SSH_ONLY)
    v6 = ethertypes(capture).count(0x86DD)
    assert v6 > 500  # the capture has IPv6 to let through
    out = tmp_path / "o.pcap"
    _, j = run_json(tmp_path, "--app", app, "--rules", rules, "--default-action", "deny",
                    "--no-progress", "--port", f"a=pcap:{capture}:{out}")
    assert j["drops_by_reason"].get("acl_ipv6") == v6, j["drops_by_reason"]
    assert 0x86DD not in ethertypes(out)
    # Asked for, IPv6 passes (the firewall then has no say over it).
    _, j = run_json(tmp_path, "--app", "acl", "--rules", rules, "--default-action", "deny",
                    "--ipv6-action", "permit", "--no-progress", "--port",
                    f"a=pcap:{capture}:{out}")
    assert "acl_ipv6" not in j["drops_by_reason"] and ethertypes(out).count(0x86DD) == v6


def test_ipv6_follows_a_permit_default_and_the_help_says_so(tmp_path, capture):
    rules = tmp_path / "r.rules"
    rules.write_text(SSH_ONLY)
    out = tmp_path / "o.pcap"
    run_json(tmp_path, "--app", "acl", "--rules", rules, "--default-action", "permit",
             "--no-progress", "--port", f"a=pcap:{capture}:{out}")
    assert ethertypes(out).count(0x86DD) == ethertypes(capture).count(0x86DD)
    assert "fails closed" in " ".join(assert_ok(run("run", "--help")).stdout.split())


# --- 2. idle OpenFlow peers cannot lock the agent ------------------------------------------------

def hello():
    return struct.pack("!BBHI", 1, 0, 8, 1)


def test_silent_connections_do_not_lock_out_ovs_ofctl(tmp_path):
    from test_switch import Agent
    a = Agent(tmp_path, "priority=1,actions=drop\n")
    held = []
    try:
        host, port = a.target[4:].rsplit(":", 1)
        peer = socket.create_connection((host, int(port)), timeout=5)  # handshaken, then quiet
        peer.sendall(hello())
        assert peer.recv(8)[1] == 0  # the switch's HELLO
        time.sleep(0.2)
        for _ in range(100):  # more than the 64 served at once, all silent
            held.append(socket.create_connection((host, int(port)), timeout=5))
        time.sleep(0.3)
        show = a.ofctl("show", timeout=10).stdout
        assert "OFPT_FEATURES_REPLY" in show, show
        # Those without a handshake made room, never the peer that had one.
        peer.sendall(struct.pack("!BBHI", 1, 2, 8, 77))  # ECHO_REQUEST
        assert peer.recv(8) == struct.pack("!BBHI", 1, 3, 8, 77)
        peer.close()
    finally:
        for s in held:
            s.close()
        a.stop()


def read_until_closed(s, limit_s):
    """Bytes read until the peer closes (returns (bytes, True)) or limit_s passes (False)."""
    s.settimeout(0.2)
    data, end = b"", time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def test_inactivity_probe_closes_silent_peers_and_keeps_live_ones(tmp_path):
    from test_switch import Agent
    a = Agent(tmp_path, "", extra=("--openflow-probe", "0.5"))
    try:
        host, port = a.target[4:].rsplit(":", 1)
        mute = socket.create_connection((host, int(port)))  # no HELLO at all
        deaf = socket.create_connection((host, int(port)))  # HELLO, then never answers an echo
        deaf.sendall(hello())
        live = socket.create_connection((host, int(port)))  # answers each echo request
        live.sendall(hello())
        got = {"echoes": 0, "closed": False}

        def answer():  # the live peer, from the start, for 4 s
            live.settimeout(0.1)
            buf, end = b"", time.monotonic() + 4
            while time.monotonic() < end:
                try:
                    chunk = live.recv(4096)
                except socket.timeout:
                    continue
                if not chunk:
                    got["closed"] = True
                    return
                buf += chunk
                while len(buf) >= 8:
                    v, t, n, xid = struct.unpack("!BBHI", buf[:8])
                    if t == 2:  # ECHO_REQUEST -> ECHO_REPLY
                        live.sendall(struct.pack("!BBHI", 1, 3, 8, xid))
                        got["echoes"] += 1
                    buf = buf[n:]
        import threading
        t = threading.Thread(target=answer)
        t.start()
        _, closed = read_until_closed(mute, 3)
        assert closed, "a peer silent through the handshake must be closed"
        data, closed = read_until_closed(deaf, 3)
        assert closed and struct.pack("!BB", 1, 2) in data, data  # probed, then closed
        t.join()
        assert not got["closed"], "a peer that answers the probe must stay connected"
        assert got["echoes"] >= 3, got
        for s in (mute, deaf, live):
            s.close()
    finally:
        a.stop()


def test_listening_beyond_loopback_is_warned_about(tmp_path):
    (tmp_path / "flows.txt").write_text("")
    r = run("run", "--app", "switch", "--flows", tmp_path / "flows.txt", "--port", "p0=gen:max:10",
            "--port", "p1=null", "--openflow", "ptcp:0.0.0.0:0", "--no-progress")
    assert_ok(r)
    assert "warning: --openflow ptcp:0.0.0.0:0: listening beyond loopback without TLS" in r.stderr, \
        r.stderr


# --- 3. reassemble never destroys its input nor follows links out of --out-dir -----------------

def test_reassemble_refuses_its_input_as_an_output(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(DEMO_PCAP, d / "index.json")
    before = (d / "index.json").read_bytes()
    r = run("reassemble", "--in", d / "index.json", "--out-dir", d)
    assert_no_crash(r)
    assert r.returncode == 1 and "is the input capture" in r.stderr, r.stderr
    assert (d / "index.json").read_bytes() == before
    # A hard link under the index's name is the input too.
    e = tmp_path / "e"
    e.mkdir()
    os.link(d / "index.json", e / "index.json")
    r = run("reassemble", "--in", d / "index.json", "--out-dir", e)
    assert r.returncode == 1 and "is the input capture" in r.stderr, r.stderr
    assert (d / "index.json").read_bytes() == before


def test_reassemble_never_follows_links_planted_in_the_output(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    d = tmp_path / "d2"
    d.mkdir()
    (d / "index.json").symlink_to(victim)
    r = assert_ok(run("reassemble", "--in", DEMO_PCAP, "--out-dir", d))
    assert victim.read_text() == "keep me\n"
    assert not (d / "index.json").is_symlink() and json.loads((d / "index.json").read_text())
    # Planted under a stream's name (a symbolic link and a hard link): replaced, not written.
    names = [s["file"] for s in json.loads((d / "index.json").read_text())["streams"]]
    assert names, r.stdout
    e = tmp_path / "e2"
    e.mkdir()
    other = tmp_path / "other"
    other.write_text("mine\n")
    (e / names[0]).symlink_to(victim)
    os.link(other, e / names[-1])
    assert_ok(run("reassemble", "--in", DEMO_PCAP, "--out-dir", e))
    assert victim.read_text() == "keep me\n" and other.read_text() == "mine\n"
    assert (e / names[0]).read_bytes() == (d / names[0]).read_bytes()
    assert not (e / names[0]).is_symlink()


# --- 4. a cut final record keeps every output of flows, nids, reassemble and defrag -------------

def cut(src, tmp_path):
    """(the capture cut 10 bytes short, the capture of its whole records, its record count)."""
    out, whole = tmp_path / "cut.pcap", tmp_path / "whole.pcap"
    data = src.read_bytes()
    out.write_bytes(data[:-10])
    frames = read_pcap(src)
    last = 16 + len(frames[-1])
    whole.write_bytes(data[:-last])
    return out, whole, len(frames)


def check_damage_warning(r, pcap, record):
    assert_ok(r)
    assert f"warning: {pcap}: record {record}" in r.stderr, r.stderr


def test_flows_of_a_cut_capture(tmp_path, capture):
    pcap, whole, n = cut(capture, tmp_path)
    r = run("flows", "--in", pcap, "--format", "json")
    check_damage_warning(r, pcap, n)
    doc = json.loads(r.stdout)
    want = json.loads(assert_ok(run("flows", "--in", whole, "--format", "json")).stdout)
    assert doc["counters"]["packets"] == n - 1 and len(doc["flows"]) > 100
    assert doc["flows"] == want["flows"] and len(doc["warnings"]) == 1
    strict = run("flows", "--in", pcap, "--strict")
    assert strict.returncode == 1 and "--strict: 1 warning(s)" in strict.stderr, strict.stderr


def test_nids_of_a_cut_capture_writes_its_alerts(tmp_path):
    pcap, whole, n = cut(DEMO_PCAP, tmp_path)
    eve, js = tmp_path / "e.json", tmp_path / "n.json"
    r = run("nids", "--rules", DEMO_RULES, "--in", pcap, "--eve", eve, "--json", js)
    check_damage_warning(r, pcap, n)
    assert_ok(run("nids", "--rules", DEMO_RULES, "--in", whole, "--eve", tmp_path / "w.json"))
    events = [json.loads(x) for x in eve.read_text().splitlines()]
    want = [json.loads(x) for x in (tmp_path / "w.json").read_text().splitlines()]
    alerts = lambda ev: [(e["alert"]["signature_id"], e["src_ip"], e["dest_ip"]) for e in ev
                         if e["event_type"] == "alert"]
    assert alerts(events) and alerts(events) == alerts(want)
    doc = json.loads(js.read_text())
    assert len(doc["warnings"]) == 1
    assert run("nids", "--rules", DEMO_RULES, "--in", pcap, "--strict").returncode == 1


def test_reassemble_and_defrag_of_a_cut_capture(tmp_path):
    pcap, whole, n = cut(DEMO_PCAP, tmp_path)
    r = run("reassemble", "--in", pcap, "--out-dir", tmp_path / "s")
    check_damage_warning(r, pcap, n)
    assert_ok(run("reassemble", "--in", whole, "--out-dir", tmp_path / "w"))
    index = json.loads((tmp_path / "s" / "index.json").read_text())
    want = json.loads((tmp_path / "w" / "index.json").read_text())
    assert index["streams"] and index["streams"] == want["streams"]
    assert len(index["warnings"]) == 1
    for s in index["streams"]:
        assert (tmp_path / "s" / s["file"]).read_bytes() == (tmp_path / "w" / s["file"]).read_bytes()
    r = run("defrag", "--in", pcap, "--out", tmp_path / "d.pcap")
    check_damage_warning(r, pcap, n)
    assert_ok(run("defrag", "--in", whole, "--out", tmp_path / "dw.pcap"))
    assert read_pcap(tmp_path / "d.pcap") == read_pcap(tmp_path / "dw.pcap")
    for cmd in (["reassemble", "--out-dir", tmp_path / "t"], ["defrag", "--out", tmp_path / "e.pcap"]):
        assert run(cmd[0], "--in", pcap, *cmd[1:], "--strict").returncode == 1


# --- 5. a PCRE that does not compile is a rule error, found by --check-rules -------------------

def test_a_pcre_that_does_not_compile_is_a_syntax_error(tmp_path):
    rules = tmp_path / "r.rules"
    rules.write_text('alert tcp any any -> any any (msg:"bad"; pcre:"/(/"; sid:1;)\n'
                     'alert tcp any any -> any any (msg:"good"; content:"GET"; sid:2;)\n')
    r = run("nids", "--rules", rules, "--check-rules")
    assert_no_crash(r)
    assert "1 syntax errors" in r.stdout, r.stdout
    r = run("nids", "--rules", rules, "--in", DEMO_PCAP)
    assert_no_crash(r)
    assert r.returncode == 1 and "does not compile" in r.stderr and "r.rules:1" in r.stderr, r.stderr
    r = run("nids", "--rules", rules, "--in", DEMO_PCAP, "--skip-bad-rules")
    assert_ok(r)
    assert "1 rules" in r.stdout, r.stdout


# --- 6. slow clients do not block a scrape ------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_slowloris_does_not_block_metrics(tmp_path):
    import urllib.request
    port = free_port()
    p = subprocess.Popen([str(WARPATH_BIN), "run", "--metrics", f"127.0.0.1:{port}", "--port",
                          "g=gen:1000", "--port", "s=null", "--no-progress", "--duration", "120"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    slow = []
    try:
        for _ in range(1200):  # until the first counters are published (up to 60 s: ASan builds)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as r:
                    if b"warpath_packets_total" in r.read():
                        break
            except OSError:
                pass
            time.sleep(0.05)
        for _ in range(16):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        for _ in range(3):
            for s in slow:
                try:
                    s.sendall(b"X-a: b\r\n")
                except OSError:
                    pass
            t0 = time.monotonic()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                assert b"warpath_packets_total" in r.read()
            assert time.monotonic() - t0 < 1.0
            time.sleep(1)
    finally:
        for s in slow:
            s.close()
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)


# --- 8. the smaller ones ---------------------------------------------------------------------

def test_reassemble_on_a_full_disk_says_why_and_leaves_no_torn_output(tmp_path):
    def limit():  # writes past 64 KiB fail with EFBIG (SIGXFSZ ignored), as a full disk would
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    out = tmp_path / "s"
    r = subprocess.run([str(WARPATH_BIN), "reassemble", "--in", str(stream_capture(tmp_path)),
                        "--out-dir", str(out)], capture_output=True, text=True, preexec_fn=limit,
                       timeout=120)
    assert_no_crash(r)
    assert r.returncode == 1 and "write failed: File too large" in r.stderr, r.stderr
    assert "were removed" in r.stderr, r.stderr
    assert list(out.iterdir()) == [], list(out.iterdir())


def stream_capture(tmp_path):
    """One TCP connection carrying 200 KB each way, with its handshake and ACKs."""
    import random
    rng = random.Random(5)
    frames = []
    a, b = "10.0.0.1", "10.0.0.2"

    def seg(src, dst, sport, dport, seq, ack, flags, data=b""):
        from pcap_frames import ipv4
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
        return eth(ipv4(socket.inet_aton(src), socket.inet_aton(dst), tcp, proto=6))
    ca, cb = 1000, 5000
    frames.append(seg(a, b, 1234, 80, ca, 0, 0x02))
    frames.append(seg(b, a, 80, 1234, cb, ca + 1, 0x12))
    frames.append(seg(a, b, 1234, 80, ca + 1, cb + 1, 0x10))
    sa, sb = ca + 1, cb + 1
    for _ in range(150):
        d = bytes(rng.getrandbits(8) for _ in range(1400))
        frames.append(seg(a, b, 1234, 80, sa, sb, 0x18, d))
        sa += len(d)
        frames.append(seg(b, a, 80, 1234, sb, sa, 0x18, d))
        sb += len(d)
        frames.append(seg(a, b, 1234, 80, sa, sb, 0x10))
    frames.append(seg(a, b, 1234, 80, sa, sb, 0x11))
    frames.append(seg(b, a, 80, 1234, sb, sa + 1, 0x11))
    frames.append(seg(a, b, 1234, 80, sa + 1, sb + 1, 0x10))
    p = tmp_path / "stream.pcap"
    write_pcap(p, frames)
    return p


def test_reassemble_summary_counts_every_gap_the_index_lists(tmp_path):
    out = tmp_path / "s"
    r = assert_ok(run("reassemble", "--in", DEMO_PCAP, "--out-dir", out))
    index = json.loads((out / "index.json").read_text())
    listed = sum(len(s["gaps"]) for s in index["streams"])
    c = index["counters"]
    assert listed == c["gaps"] + c["unacked_holes"]
    assert f" {listed} gaps (" in r.stdout, r.stdout


def test_cpus_beyond_the_machine_are_refused():
    r = run("run", "--cpus", "999", "--port", "g=gen:max:10", "--port", "s=null", "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1 and "--cpus: CPU 999 is not one this process may run on" in r.stderr, \
        r.stderr


def ipv6_frame(src, dst):
    import ipaddress
    from pcap_frames import ipv6
    return eth(ipv6(ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed,
                    udp()), ethertype=0x86DD)


def test_ipv4_mapped_ipv6_addresses_are_martians(tmp_path):
    frames = [ipv6_frame("::ffff:127.0.0.1", "2001:db8:1::5"),
              ipv6_frame("2001:db8:2::1", "::ffff:10.0.0.1"),
              ipv6_frame("2001:db8:2::1", "2001:db8:1::5")]
    pcap = tmp_path / "m.pcap"
    write_pcap(pcap, frames)
    (tmp_path / "fib").write_text("::/0 1\n0.0.0.0/0 1\n")
    assert_ok(run("route", "--in", pcap, "--fib", tmp_path / "fib", "--out-dir", tmp_path / "o",
                  "--json", tmp_path / "r.json"))
    j = json.loads((tmp_path / "r.json").read_text())
    c = j["counters"]
    assert c["drop_reasons"]["martian_source"] == 1, c
    assert c["drop_reasons"]["martian_destination"] == 1 and c["tx"] == 1, c


def test_demo_leaves_nothing_in_the_current_directory(tmp_path):
    r = assert_ok(run("demo", "--packets", 2000, cwd=tmp_path, timeout=300))
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
    assert "temporary directory" in r.stdout


# --- 2 (continued). TLS: pssl: and ssl: as ovs-vswitchd takes them ------------------------------

def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, the switch's and a controller's key and certificate signed by it, and a stranger's
    self-signed pair (openssl req/x509, as ovs-pki would make them)."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.crt", "-days", "2", "-subj", "/CN=warpath test CA", cwd=d)
    for name in ("switch", "ctl"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", cwd=d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out",
            "other.crt", "-days", "2", "-subj", "/CN=stranger", cwd=d)
    return d


def tls_flags(pki):
    return ("--openflow-private-key", pki / "switch.key", "--openflow-certificate",
            pki / "switch.crt", "--openflow-ca-cert", pki / "ca.crt")


def test_pssl_serves_ovs_ofctl_with_certificates_and_refuses_strangers(tmp_path, pki):
    import ssl
    from test_switch import Agent
    a = Agent(tmp_path, "priority=1,actions=drop\n",
              extra=("--openflow", "pssl:127.0.0.1:0", *tls_flags(pki)))
    try:
        # Agent listens on ptcp: first (its own --openflow), then on the pssl: target.
        import re
        line = a.proc.stderr.readline()
        m = re.search(r"openflow: listening on (\S+)", line)
        assert m, line
        a.target = "tcp:" + m.group(1)
        target = "ssl:" + m.group(1)
        r = subprocess.run(["ovs-ofctl", "-O", "OpenFlow10", "-p", pki / "ctl.key", "-c",
                            pki / "ctl.crt", "-C", pki / "ca.crt", "dump-flows", target],
                           capture_output=True, text=True, env=a.env, timeout=20)
        assert r.returncode == 0 and "actions=drop" in r.stdout, r.stderr
        host, port = a.target[4:].rsplit(":", 1)
        for cert in (None, "other"):  # no client certificate; one from another CA
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(pki / "ca.crt")
            ctx.check_hostname = False
            if cert:
                ctx.load_cert_chain(pki / f"{cert}.crt", pki / f"{cert}.key")
            with socket.create_connection((host, int(port)), timeout=5) as raw:
                with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                    with ctx.wrap_socket(raw) as s:
                        s.sendall(hello())
                        assert s.recv(8) == b"", "a peer without a trusted certificate is refused"
                        raise ConnectionError("closed")
        # Plain TCP to the TLS port gets no OpenFlow.
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            raw.sendall(hello())
            raw.settimeout(3)
            try:
                data = raw.recv(64)
            except (socket.timeout, ConnectionError):
                data = b""
            assert not data.startswith(b"\x01\x00"), data
    finally:
        a.stop()


def test_ssl_controller_is_reached_over_tls(tmp_path, pki):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "ctl.crt", pki / "ctl.key")
    ctx.load_verify_locations(pki / "ca.crt")
    ctx.verify_mode = ssl.CERT_REQUIRED
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        srv.settimeout(20)
        port = srv.getsockname()[1]
        (tmp_path / "flows.txt").write_text("")
        p = subprocess.Popen([str(WARPATH_BIN), "run", "--app", "switch", "--flows",
                              str(tmp_path / "flows.txt"), "--port", "p0=gen:100", "--port",
                              "p1=null", "--openflow", f"ssl:127.0.0.1:{port}",
                              *map(str, tls_flags(pki)), "--no-progress", "--duration", "30"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            conn, _ = srv.accept()
            with ctx.wrap_socket(conn, server_side=True) as s:
                assert s.getpeercert()["subject"] == ((("commonName", "switch"),),)
                s.settimeout(10)
                assert s.recv(8)[:2] == b"\x01\x00"  # the switch's HELLO
                s.sendall(hello() + struct.pack("!BBHI", 1, 5, 8, 9))  # FEATURES_REQUEST
                reply = b""
                while len(reply) < 16:
                    reply += s.recv(4096)
                assert reply[1] == 6 and struct.unpack("!I", reply[4:8])[0] == 9  # FEATURES_REPLY
        finally:
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=30)


def test_pssl_without_certificates_is_an_error(tmp_path):
    (tmp_path / "flows.txt").write_text("")
    r = run("run", "--app", "switch", "--flows", tmp_path / "flows.txt", "--port", "p0=gen:max:10",
            "--port", "p1=null", "--openflow", "pssl:127.0.0.1:0", "--no-progress")
    assert_no_crash(r)
    assert r.returncode == 1 and "need --openflow-private-key" in r.stderr, r.stderr
