"""`warpath lookup`, `warpath classify` and `warpath gen rules` from the command line.

Answers are checked against small tables whose longest-prefix matches and first matches are
computed here in Python; bad inputs must give "file:line: reason" and exit 1, usage errors
exit 2, and no run may crash.
"""

import ipaddress
import json
import random

import pytest
from warpath_cli import assert_no_crash, skip_without_binary
from warpath_cli import run as run_warpath


skip_without_binary()


def run(*args, timeout=120):
    r = run_warpath(*args, timeout=timeout)
    assert_no_crash(r)
    return r


def lpm(routes, addr):
    """Longest-prefix match by brute force: the next hop text, or "-1"."""
    best, best_len = "-1", -1
    for net, nh in routes:
        if addr.version == net.version and addr in net and net.prefixlen > best_len:
            best, best_len = nh, net.prefixlen
    return best


@pytest.fixture
def fib(tmp_path):
    rng = random.Random(7)
    routes = [(ipaddress.ip_network("0.0.0.0/0"), "gw0"), (ipaddress.ip_network("::/0"), "gw6")]
    for _ in range(300):
        length = rng.choice([8, 12, 16, 20, 24, 25, 28, 32])
        net = ipaddress.ip_network((rng.getrandbits(32) & 0x0AFFFFFF | 0x0A000000, length),
                                   strict=False)
        routes.append((net, f"veth{rng.randrange(8)}"))
    for _ in range(100):
        length = rng.choice([32, 40, 48, 56, 64, 128])
        net = ipaddress.ip_network(((0x20010DB8 << 96) | rng.getrandbits(96), length), strict=False)
        routes.append((net, f"veth{rng.randrange(8)}"))
    seen, unique = set(), []
    for net, nh in routes:
        if net not in seen:
            seen.add(net)
            unique.append((net, nh))
    path = tmp_path / "fib.txt"
    path.write_text("".join(f"{net} {nh}\n" for net, nh in unique))
    return path, unique


def test_lookup_answers_equal_brute_force(fib, tmp_path):
    path, routes = fib
    rng = random.Random(3)
    addrs = []
    for net, _ in routes[:200]:
        addrs.append(net.network_address + rng.randrange(net.num_addresses))
    addrs += [ipaddress.ip_address(rng.getrandbits(32)) for _ in range(100)]
    addrs += [ipaddress.ip_address("2001:db8::1"), ipaddress.ip_address("2002::1")]
    (tmp_path / "addrs.txt").write_text("".join(f"{a}\n" for a in addrs))
    for engine in ("ref", "cpu", "cpu.lpm.scalar", "validate:cpu"):
        out, stats = tmp_path / f"out-{engine}.txt", tmp_path / f"stats-{engine}.json"
        r = run("lookup", "--fib", path, "--addrs", tmp_path / "addrs.txt", "--engine", engine,
                "--out", out, "--stats", stats)
        assert r.returncode == 0, r.stderr
        got = out.read_text().split("\n")[:-1]
        assert got == [lpm(routes, a) for a in addrs], engine
        j = json.loads(stats.read_text())
        for key in ("routes", "lookups", "engine", "threads", "build_ms", "memory_bytes", "mlps"):
            assert key in j, key
        assert j["lookups"] == len(addrs) and j["routes"] == len(routes)


def test_lookup_updates_apply_while_reading(fib, tmp_path):
    path, _ = fib
    (tmp_path / "upd.txt").write_text("1 a 10.99.0.0/16 vethX\n2 w 0.0.0.0/0 0.0.0.0\n"
                                      "3 w 192.0.2.0/24 0.0.0.0\n")
    (tmp_path / "addrs.txt").write_text("10.99.1.1\n11.0.0.1\n")
    stats = tmp_path / "s.json"
    r = run("lookup", "--fib", path, "--addrs", tmp_path / "addrs.txt", "--updates",
            tmp_path / "upd.txt", "--engine", "validate:cpu", "--stats", stats)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["vethX", "-1"]
    j = json.loads(stats.read_text())
    assert j["updates"] == 3 and j["updates_absent"] == 1 and j["updates_per_s"] > 0


@pytest.mark.parametrize("text,where", [
    ("10.0.0.0/8 a\n10.0.0.0/33 b\n", "fib.txt:2:"),
    ("10.0.0.0/8 1\n10.1.0.0/16\n", "fib.txt:2:"),
    ("10.0.0.0/8 a\n10.0.0.0/8 b\n", "fib.txt:2: duplicate prefix"),
])
def test_lookup_bad_fib_names_file_and_line(tmp_path, text, where):
    (tmp_path / "fib.txt").write_text(text)
    (tmp_path / "a.txt").write_text("10.0.0.1\n")
    r = run("lookup", "--fib", tmp_path / "fib.txt", "--addrs", tmp_path / "a.txt")
    assert r.returncode == 1 and where in r.stderr, r.stderr
    assert r.stdout == ""


def test_lookup_bad_address_and_usage(fib, tmp_path):
    path, _ = fib
    (tmp_path / "a.txt").write_text("10.0.0.1\n10.0.0.256\n")
    r = run("lookup", "--fib", path, "--addrs", tmp_path / "a.txt", "--out", tmp_path / "o.txt")
    assert r.returncode == 1 and "a.txt:2: bad IPv4 address" in r.stderr
    assert not (tmp_path / "o.txt").exists() and not (tmp_path / "o.txt.partial").exists()
    (tmp_path / "good.txt").write_text("10.0.0.1\n")
    r = run("lookup", "--fib", path, "--addrs", tmp_path / "good.txt", "--engine", "nope")
    assert r.returncode == 2 and "unknown lookup engine" in r.stderr
    assert run("lookup", "--fib", path).returncode == 2


def first_match(rules, key):
    for i, (sip, slen, dip, dlen, sp, dp, proto) in enumerate(rules):
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


def random_rule(rng):
    slen, dlen = rng.choice([0, 8, 16, 24, 32]), rng.choice([0, 8, 16, 24, 32])
    lo = rng.randrange(65536)
    sp = rng.choice([(0, 65535), (lo, lo), (0, 1023), (1024, 65535)])
    dp = rng.choice([(0, 65535), (80, 80), (0, 0), (65535, 65535), (lo, min(65535, lo + 99))])
    proto = rng.choice([None, 6, 17])
    return (masked(rng.getrandbits(32) & 0x0A0AFFFF, slen), slen,
            masked(rng.getrandbits(32) & 0x0B0BFFFF, dlen), dlen, sp, dp, proto)


def rule_line(r):
    s, sl, d, dl, sp, dp, p = r
    return (f"@{ipaddress.ip_address(s)}/{sl} {ipaddress.ip_address(d)}/{dl} "
            f"{sp[0]} : {sp[1]} {dp[0]} : {dp[1]} "
            + ("0x00/0x00" if p is None else f"0x{p:02x}/0xFF"))


def keys_in(rng, rules, n):
    keys = []
    for _ in range(n):
        r = rng.choice(rules)
        s = r[0] | (rng.getrandbits(32) & ((1 << (32 - r[1])) - 1))
        d = r[2] | (rng.getrandbits(32) & ((1 << (32 - r[3])) - 1))
        if rng.random() < 0.3:
            s, d = rng.getrandbits(32), rng.getrandbits(32)
        keys.append((s, d, rng.choice([r[4][0], r[4][1], rng.randrange(65536)]),
                     rng.choice([r[5][0], r[5][1], rng.randrange(65536)]), rng.choice([6, 17, 1])))
    return keys


def write_trace(path, keys):
    path.write_text("".join(f"{k[0]}\t{k[1]}\t{k[2]}\t{k[3]}\t{k[4]}\n" for k in keys))


def test_classify_equals_first_match(tmp_path):
    rng = random.Random(11)
    rules = [random_rule(rng) for _ in range(120)]
    (tmp_path / "rules").write_text("\n".join(rule_line(r) for r in rules) + "\n")
    keys = keys_in(rng, rules, 400)
    write_trace(tmp_path / "trace", keys)
    want = [first_match(rules, k) for k in keys]
    for algo in ("linear", "tuple", "bloom", "rfc", "tic", "split", "tuplemerge", "overlay"):
        stats = tmp_path / f"{algo}.json"
        r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace", "--algo",
                algo, "--engine", "cpu", "--batch", "33", "--stats", stats)
        assert r.returncode == 0, r.stderr
        assert [int(x) for x in r.stdout.split()] == want, algo
        j = json.loads(stats.read_text())
        for key in ("rules", "packets", "algo", "engine", "threads", "build_ms", "memory_bytes",
                    "mpps"):
            assert key in j, key
        assert j["engine"] == f"cpu.{algo}" and j["packets"] == len(keys)
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace", "--engine",
            "ref")
    assert [int(x) for x in r.stdout.split()] == want


def test_classify_updates_give_the_final_rule_sets_answers(tmp_path):
    """--updates: inserts and deletes applied while the trace is classified; --out answers with
    the final rule set (priorities: lower wins, the file's rules are 0..n-1)."""
    rng = random.Random(5)
    rules = [random_rule(rng) for _ in range(100)]
    (tmp_path / "rules").write_text("\n".join(rule_line(r) for r in rules) + "\n")
    live = dict(enumerate(rules))
    lines = ["# churn", ""]
    for _ in range(600):
        if live and rng.random() < 0.45:
            p = rng.choice(sorted(live))
            del live[p]
            lines.append(f"- {p}")
        else:
            p, r = rng.randrange(250), random_rule(rng)
            live[p] = r  # a '+' of a live priority replaces its rule
            lines.append(f"+ {p} {rule_line(r)}")
    (tmp_path / "upd").write_text("\n".join(lines) + "\n")
    final = sorted(live.items())
    keys = keys_in(rng, rules + [r for _, r in final], 500)
    write_trace(tmp_path / "trace", keys)
    want = []
    for k in keys:
        i = first_match([r for _, r in final], k)
        want.append(final[i][0] if i >= 0 else -1)
    for engine in ("auto", "cpu.tuplemerge", "cpu.overlay", "cpu.tuple", "cpu.bloom",
                   "validate:cpu.tuplemerge", "validate:cpu.overlay"):
        stats = tmp_path / "s.json"
        r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace",
                "--updates", tmp_path / "upd", "--engine", engine, "--batch", "33", "--stats", stats)
        assert r.returncode == 0, (engine, r.stderr)
        assert [int(x) for x in r.stdout.split()] == want, engine
        j = json.loads(stats.read_text())
        assert j["updates"] == 600 and j["reader_passes"] >= 1
        for key in ("updates_per_s", "update_p99_us", "mpps_during_updates", "mpps_before_updates"):
            assert j[key] > 0, key
        if engine == "auto":
            assert j["engine"] == "cpu.overlay"


def test_classify_updates_bad_inputs(tmp_path):
    (tmp_path / "rules").write_text("@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n")
    write_trace(tmp_path / "trace", [(0x0A000001, 1, 2, 3, 6)])
    cases = [
        ("+ 3 @10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n* 4\n", "upd:2: expected"),
        ("- 7\n", "upd:1: no rule of priority 7 to delete"),
        ("- 0\n- 0\n", "upd:2: no rule of priority 0 to delete"),
        ("\n+ 5 @10.0.0.0/99 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n", "upd:2:"),
        ("+ x @10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n", "upd:1: bad priority"),
        ("+ 4\n", "upd:1: '+' needs a rule"),
    ]
    for text, where in cases:
        (tmp_path / "upd").write_text(text)
        r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace",
                "--updates", tmp_path / "upd", "--out", tmp_path / "o.txt")
        assert r.returncode == 1 and where in r.stderr, (text, r.stderr)
        assert not (tmp_path / "o.txt").exists()
    (tmp_path / "upd").write_text("- 0\n")
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace",
            "--updates", tmp_path / "upd", "--algo", "rfc", "--engine", "cpu")
    assert r.returncode == 1 and "cannot update rules in place" in r.stderr, r.stderr
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace",
            "--updates", tmp_path / "upd")
    assert r.returncode == 0 and r.stdout == "-1\n", r.stderr


def test_gen_rules_openflow_round_trip(tmp_path):
    r = run("gen", "rules", "--out", tmp_path / "of.txt", "--trace", tmp_path / "of.trace", "-N",
            "300", "-C", "30", "-F", "10", "--matching", "2", "-f", "12", "--tuples", "1000")
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "of.trace").read_text().splitlines()) == 1000
    outs = []
    for engine in ("ref", "validate:cpu.tuple", "validate:cpu.bloom", "validate:cpu.linear",
                   "validate:cpu.tuplemerge"):
        r = run("classify", "--rules", tmp_path / "of.txt", "--format", "openflow", "--trace",
                tmp_path / "of.trace", "--engine", engine)
        assert r.returncode == 0, (engine, r.stderr)
        outs.append(r.stdout)
    assert all(o == outs[0] for o in outs)
    assert "-1" not in outs[0].split()  # every generated tuple matches a rule
    r = run("classify", "--rules", tmp_path / "of.txt", "--format", "openflow", "--trace",
            tmp_path / "of.trace", "--algo", "rfc", "--engine", "cpu")
    assert r.returncode == 1 and "5-tuple rules only" in r.stderr


def test_classify_bad_inputs(tmp_path):
    (tmp_path / "rules").write_text("@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n"
                                    "@1.2.3.4/40 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n")
    (tmp_path / "trace").write_text("1 2 3 4 6\n")
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace")
    assert r.returncode == 1 and "rules:2:" in r.stderr
    (tmp_path / "rules").write_text("@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n")
    (tmp_path / "trace").write_text("1 2 3 4 6\n1 2 3\n")
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace")
    assert r.returncode == 1 and "trace:2:" in r.stderr
    (tmp_path / "of").write_text("priority=1,tp_dst=99999,actions=drop\n")
    r = run("classify", "--rules", tmp_path / "of", "--format", "openflow", "--trace",
            tmp_path / "trace")
    assert r.returncode == 1 and "of:1:" in r.stderr
    r = run("classify", "--rules", tmp_path / "rules", "--trace", tmp_path / "trace", "--algo", "x")
    assert r.returncode == 2
    r = run("gen", "rules", "--out", tmp_path / "x", "-N", "10", "-C", "20")
    assert r.returncode == 1 and "N >= C" in r.stderr
