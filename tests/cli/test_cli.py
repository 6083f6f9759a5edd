"""The `warpath` command line: help, usage errors, info, parse, gen traffic, selftest, demo.

Environment:
    WARPATH_BIN   the warpath binary (default <repo>/build/warpath); the module skips without it
    WARPATH_DATA  the shared data dir holding pcap/ (default <repo>/../shared/data); the tests
                  that need real captures skip without it

Exit codes checked: 0 success, 1 bad input (a message naming the file), 2 usage error (one
"warpath: ..." line, then at most the "Run 'warpath --help'" hint). Never a signal, an abort
("terminate called") or a traceback.
"""

import csv
import io
import json
import random
import struct
from pathlib import Path

import pytest
from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

DATA_DIR = DATA
PCAP_DIR = DATA_DIR / "pcap"

HEADER = "frame,status,vlan,ip_version,src,dst,proto,sport,dport,frag"

skip_without_binary()

needs_data = pytest.mark.skipif(not PCAP_DIR.is_dir(), reason=f"no captures in {PCAP_DIR}")


def assert_usage_error(r, *words):
    """Exit 2, one "warpath: ..." line naming `words`, optionally followed by the help hint."""
    assert_no_crash(r)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines and lines[0].startswith("warpath: "), r.stderr
    assert all(line.startswith("Run 'warpath") for line in lines[1:]), r.stderr
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"
    assert r.stdout == ""


def assert_input_error(r, path, *words):
    """Exit 1 with a message naming the file."""
    assert_no_crash(r)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert str(path) in r.stderr, r.stderr
    assert r.stderr.startswith("warpath: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# --- a small pcap reader and writer, independent of warpath ----------------------------------

def read_pcap(path):
    """(header dict, [(ts_sec, ts_frac, caplen, len, data)]) of a classic pcap."""
    b = Path(path).read_bytes()
    magic = b[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        raise ValueError(f"{path}: not a classic pcap")
    m, vmaj, vmin, zone, sigfigs, snaplen, linktype = struct.unpack(e + "IHHiIII", b[:24])
    hdr = dict(nano=m == 0xA1B23C4D, snaplen=snaplen, linktype=linktype)
    recs, at = [], 24
    while at < len(b):
        sec, frac, caplen, wire = struct.unpack(e + "IIII", b[at:at + 16])
        recs.append((sec, frac, caplen, wire, b[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    assert at == len(b), f"{path}: trailing bytes"
    return hdr, recs


def pcap_bytes(records, snaplen=65535, linktype=1):
    """A little-endian microsecond pcap; records are (caplen, len) pairs."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)
    for i, (caplen, wire) in enumerate(records):
        out += struct.pack("<IIII", 1000 + i, 10 * i, caplen, wire)
        out += bytes((k * 7 + i) % 256 for k in range(caplen))
    return out


def csv_rows(text):
    lines = text.splitlines()
    assert lines[0] == HEADER
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def gen_pcap(tmp_path_factory):
    """1000 generated packets (seed 7): a capture every machine has."""
    path = tmp_path_factory.mktemp("gen") / "seed7.pcap"
    assert_ok(run("gen", "traffic", "--out", path, "--count", 1000, "--seed", 7))
    return path


def data_captures():
    return sorted(PCAP_DIR.glob("*/*.pcap")) + sorted(PCAP_DIR.glob("*/*.pcapng"))


# --- help and usage errors ---------------------------------------------------------------------

@pytest.mark.parametrize("args", [["--help"], ["parse", "--help"], ["gen", "traffic", "--help"],
                                  ["gen", "--help"], ["info", "--help"], ["selftest", "--help"],
                                  ["demo", "--help"]])
def test_help_prints_usage(args):
    r = assert_ok(run(*args))
    assert "Usage: warpath" in r.stdout
    assert "--help" in r.stdout
    if args[0] == "parse":
        for opt in ("--in", "--format", "--engine", "--out"):
            assert opt in r.stdout


def test_version_matches_info():
    r = assert_ok(run("--version"))
    info = json.loads(assert_ok(run("info", "--json")).stdout)
    assert r.stdout.strip() == info["version"]


def test_info_says_which_vectorscan_entry_points_cpu_hs_calls():
    """Debian's Vectorscan 5.4.9 misses literal matches in its AVX-512 variant; cpu.hs checks at
    its first use and calls the AVX2 variants where it does (ADR 0010). `warpath info` says which,
    and cpu.hs is available exactly when some entry points find every match."""
    info = json.loads(assert_ok(run("info", "--json")).stdout)
    vs = info["vectorscan"]
    hs = [e for e in info["engines"] if e["id"] == "cpu.hs"]
    if not vs["version"]:
        assert not hs
        pytest.skip("built without Vectorscan")
    assert vs["entry_points"] in ("dispatched", "avx2", "none"), vs
    assert hs and hs[0]["available"] == (vs["entry_points"] != "none"), (vs, hs)
    assert "vectorscan " + vs["version"] in assert_ok(run("info")).stdout


def test_usage_error_no_subcommand():
    assert_usage_error(run(), "subcommand")


def test_usage_error_unknown_subcommand():
    assert_usage_error(run("frobnicate"), "frobnicate")


def test_usage_error_unknown_flag(gen_pcap):
    assert_usage_error(run("parse", "--in", gen_pcap, "--bogus-flag"), "--bogus-flag")
    assert_usage_error(run("info", "--bogus-flag"), "--bogus-flag")


def test_usage_error_missing_in():
    assert_usage_error(run("parse"), "--in")


def test_usage_error_bad_format(gen_pcap):
    assert_usage_error(run("parse", "--in", gen_pcap, "--format", "xml"), "--format", "xml")


def test_usage_error_count_zero(tmp_path):
    out = tmp_path / "x.pcap"
    assert_usage_error(run("gen", "traffic", "--out", out, "--count", 0), "--count")
    assert not out.exists()


# --- info ----------------------------------------------------------------------------------------

def test_info_text():
    r = assert_ok(run("info"))
    assert r.stdout.startswith("warpath ")
    for word in ("build", "cpu", "cuda", "ref.parse", "cpu.parse"):
        assert word in r.stdout


def test_info_json():
    j = json.loads(assert_ok(run("info", "--json")).stdout)
    for key in ("version", "build", "cpu", "cuda", "engines"):
        assert key in j
    engines = {e["id"]: e for e in j["engines"]}
    for e in ("ref.parse", "cpu.parse"):
        assert engines[e]["available"] is True
    assert isinstance(j["cuda"]["devices"], list)
    assert j["cpu"]["logical_cores"] >= 1
    # Every library registers its engine family from its registry file, listed in dependency
    # order (core/registry.hpp: WARPATH_REGISTER_ENGINE_FAMILY); the NIDS where it is built.
    families = list(dict.fromkeys(e["module"] for e in j["engines"]))
    want = ["packet", "lookup", "classify", "defrag", "flow", "stream", "flowstream", "pattern",
            "ipsec", "aes-ctr", "openflow", "nids", "runtime"]
    assert families == [f for f in want if f != "nids" or "nids" in families], families


# --- parse: bad input -----------------------------------------------------------------------------

def test_parse_missing_file(tmp_path):
    path = tmp_path / "missing.pcap"
    assert_input_error(run("parse", "--in", path), path)


@pytest.mark.parametrize("name,content,words", [
    ("empty.pcap", b"", ["empty"]),
    ("three.pcap", b"\xd4\xc3\xb2", []),
    ("garbage.pcap", bytes(random.Random(5).randrange(256) for _ in range(4096)), ["not a pcap"]),
    ("text.pcap", b"frame,status\n1,ok\n", ["not a pcap"]),
    ("caplen-over-snaplen.pcap", pcap_bytes([(60, 60), (100, 100)], snaplen=64),
     ["record 2", "snap length"]),
    ("caplen-over-len.pcap", pcap_bytes([(60, 50)]), ["record 1", "wire length"]),
    ("huge-caplen.pcap", pcap_bytes([(60, 60)])[:24 + 8] + struct.pack("<II", 300000, 300000),
     ["record 1"]),
])
def test_parse_bad_file(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    for fmt in ("csv", "json", "summary"):
        assert_input_error(run("parse", "--in", path, "--format", fmt), path, *words)


def test_parse_truncated_capture(tmp_path, gen_pcap):
    whole = Path(gen_pcap).read_bytes()
    _, recs = read_pcap(gen_pcap)
    header_cut = 24 + sum(16 + r[2] for r in recs[:500]) + 7     # inside record 501's header
    data_cut = 24 + sum(16 + r[2] for r in recs[:700]) + 16 + 20  # inside record 701's data
    for cut, record in ((header_cut, 501), (data_cut, 701)):
        path = tmp_path / f"cut{cut}.pcap"
        path.write_bytes(whole[:cut])
        assert_input_error(run("parse", "--in", path), path, f"record {record}")
        assert_input_error(run("parse", "--in", path, "--batch", 64), path, f"record {record}")


@needs_data
def test_parse_truncated_data_capture(tmp_path):
    whole = (PCAP_DIR / "tcpreplay" / "test.pcap").read_bytes()
    path = tmp_path / "test-cut.pcap"
    path.write_bytes(whole[:len(whole) // 2 + 3])
    assert_input_error(run("parse", "--in", path), path, "record ")


def test_parse_out_unwritable(tmp_path, gen_pcap):
    out = tmp_path / "no-such-dir" / "rows.csv"
    assert_input_error(run("parse", "--in", gen_pcap, "--out", out), out)


# --- gen traffic ----------------------------------------------------------------------------------

def test_gen_same_seed_same_bytes(tmp_path, gen_pcap):
    again = tmp_path / "again.pcap"
    other = tmp_path / "other.pcap"
    assert_ok(run("gen", "traffic", "--out", again, "--count", 1000, "--seed", 7))
    assert_ok(run("gen", "traffic", "--out", other, "--count", 1000, "--seed", 8))
    assert again.read_bytes() == Path(gen_pcap).read_bytes()
    assert other.read_bytes() != again.read_bytes()
    hdr, recs = read_pcap(again)
    assert len(recs) == 1000
    assert hdr["nano"] and hdr["linktype"] == 1
    assert all(r[2] <= r[3] and r[2] == len(r[4]) for r in recs)


def test_gen_pcapng_parses(tmp_path):
    ng = tmp_path / "g.pcapng"
    classic = tmp_path / "g.pcap"
    assert_ok(run("gen", "traffic", "--out", ng, "--count", 300, "--seed", 3, "--pcapng"))
    assert_ok(run("gen", "traffic", "--out", classic, "--count", 300, "--seed", 3))
    b = ng.read_bytes()
    assert struct.unpack("<II", b[:4] + b[8:12]) == (0x0A0D0D0A, 0x1A2B3C4D)
    rows = csv_rows(assert_ok(run("parse", "--in", ng)).stdout)
    assert len(rows) == 300
    assert assert_ok(run("parse", "--in", ng)).stdout == assert_ok(run("parse", "--in", classic)).stdout


def test_gen_micro(tmp_path):
    out = tmp_path / "m.pcap"
    assert_ok(run("gen", "traffic", "--out", out, "--count", 10, "--micro"))
    hdr, recs = read_pcap(out)
    assert not hdr["nano"] and len(recs) == 10
    assert all(r[1] < 1_000_000 for r in recs)


def test_gen_from_trace(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("3232235777 167772161 1024 80 6\n"
                     "3232235778 167772162 53 5353 17\n"
                     "167772161 3232235777 0 0 1\n")
    out = tmp_path / "t.pcap"
    assert_ok(run("gen", "traffic", "--out", out, "--trace", trace))
    _, recs = read_pcap(out)
    assert len(recs) == 3
    rows = csv_rows(assert_ok(run("parse", "--in", out)).stdout)
    got = [(r["src"], r["dst"], r["sport"], r["dport"], r["proto"], r["ip_version"]) for r in rows]
    assert got == [("192.168.1.1", "10.0.0.1", "1024", "80", "6", "4"),
                   ("192.168.1.2", "10.0.0.2", "53", "5353", "17", "4"),
                   ("10.0.0.1", "192.168.1.1", "", "", "1", "4")]
    assert all(r["status"] == "ok" for r in rows)


def test_gen_trace_missing_file(tmp_path):
    trace = tmp_path / "none.trace"
    assert_input_error(run("gen", "traffic", "--out", tmp_path / "x.pcap", "--trace", trace), trace)


def test_gen_fixed_size(tmp_path):
    out = tmp_path / "s.pcap"
    assert_ok(run("gen", "traffic", "--out", out, "--count", 200, "--size", 128))
    _, recs = read_pcap(out)
    assert len(recs) == 200
    assert {r[2] for r in recs} == {124} and {r[3] for r in recs} == {124}


def test_gen_unwritable_out(tmp_path):
    out = tmp_path / "no-such-dir" / "x.pcap"
    r = run("gen", "traffic", "--out", out, "--count", 3)
    assert_input_error(r, out)
    assert r.stderr.count(str(out)) == 1, r.stderr


# --- parse: formats and engines ------------------------------------------------------------------

def test_parse_csv(gen_pcap):
    r = assert_ok(run("parse", "--in", gen_pcap, "--format", "csv"))
    assert r.stdout.splitlines()[0] == HEADER
    rows = csv_rows(r.stdout)
    assert len(rows) == len(read_pcap(gen_pcap)[1])
    assert [int(x["frame"]) for x in rows] == list(range(1, len(rows) + 1))
    assert r.stdout == assert_ok(run("parse", "--in", gen_pcap)).stdout  # csv is the default


def _same_rows(csv_text, json_text):
    rows, objs = csv_rows(csv_text), json.loads(json_text)
    assert isinstance(objs, list) and len(objs) == len(rows)
    for row, obj in zip(rows, objs):
        assert set(obj) == set(HEADER.split(","))
        for key, text in row.items():
            want = None if text == "" else text
            got = obj[key] if obj[key] is None else str(obj[key])
            assert got == want, (row, obj)


def test_parse_json_matches_csv(gen_pcap):
    _same_rows(assert_ok(run("parse", "--in", gen_pcap)).stdout,
               assert_ok(run("parse", "--in", gen_pcap, "--format", "json")).stdout)


@needs_data
def test_parse_json_matches_csv_on_data():
    for path in (PCAP_DIR / "tcpreplay" / "test.pcap", PCAP_DIR / "zeek" / "ipv4-fragmented-4.pcap",
                 PCAP_DIR / "zeek" / "tcp-retransmit-timeout.pcapng"):
        _same_rows(assert_ok(run("parse", "--in", path)).stdout,
                   assert_ok(run("parse", "--in", path, "--format", "json")).stdout)


def test_parse_json_empty_capture(tmp_path):
    path = tmp_path / "empty-capture.pcap"
    path.write_bytes(pcap_bytes([]))
    assert json.loads(assert_ok(run("parse", "--in", path, "--format", "json")).stdout) == []
    assert assert_ok(run("parse", "--in", path)).stdout.splitlines() == [HEADER]


def test_parse_summary(gen_pcap):
    r = assert_ok(run("parse", "--in", gen_pcap, "--format", "summary"))
    assert f"{gen_pcap}: 1000 packets" in r.stdout
    totals = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1].endswith("%"):
            totals[" ".join(parts[:-2])] = int(parts[-2])
    assert totals["total"] == 1000
    assert totals["IPv4"] + totals["IPv6"] + totals["ARP"] + totals["other L3"] == 1000
    wire = sum(r[3] for r in read_pcap(gen_pcap)[1])
    assert "wire bytes" in r.stdout and str(wire) in r.stdout.splitlines()[-1]


def test_parse_engines_agree(gen_pcap):
    paths = [gen_pcap] + (data_captures() if PCAP_DIR.is_dir() else [])
    for path in paths:
        auto = assert_ok(run("parse", "--in", path)).stdout
        for engine in ("ref.parse", "cpu.parse", "validate:cpu.parse"):
            assert assert_ok(run("parse", "--in", path, "--engine", engine)).stdout == auto, \
                f"{path}: {engine} differs from auto"
    assert assert_ok(run("parse", "--in", gen_pcap, "--batch", 7, "--threads", 2)).stdout == \
        assert_ok(run("parse", "--in", gen_pcap)).stdout


def test_parse_unknown_engine(gen_pcap):
    r = run("parse", "--in", gen_pcap, "--engine", "nope")
    assert_no_crash(r)
    assert r.returncode != 0
    assert "nope" in r.stderr and "ref.parse" in r.stderr and "cpu.parse" in r.stderr


def test_parse_out_file(tmp_path, gen_pcap):
    for fmt in ("csv", "json"):
        out = tmp_path / f"rows.{fmt}"
        r = assert_ok(run("parse", "--in", gen_pcap, "--format", fmt, "--out", out))
        assert r.stdout == ""
        assert out.read_text() == assert_ok(run("parse", "--in", gen_pcap, "--format", fmt)).stdout


@needs_data
def test_parse_every_data_capture_counts(tmp_path):
    for path in sorted(PCAP_DIR.glob("*/*.pcap")):
        rows = csv_rows(assert_ok(run("parse", "--in", path)).stdout)
        assert len(rows) == len(read_pcap(path)[1]), path
        assert [int(x["frame"]) for x in rows] == list(range(1, len(rows) + 1))


# --- selftest and demo ----------------------------------------------------------------------------

def test_selftest_all(tmp_path):
    out = tmp_path / "selftest.json"
    r = assert_ok(run("selftest", "--all", "--items", 20000, "--seed", 11, "--json", out))
    j = json.loads(out.read_text())
    assert j["failed"] == 0
    results = {e["engine"]: e["result"] for e in j["engines"]}
    assert results.get("cpu.parse") == "passed"
    assert j["passed"] == sum(1 for v in results.values() if v == "passed")
    assert "seed 11" in r.stdout


def test_selftest_exact_engine(tmp_path):
    # --engine matches by substring (cpu.tuple is in cpu.tuplemerge's id); --exact checks the
    # one engine (scripts/gpu-check.sh runs each CUDA engine in its own process this way).
    out = tmp_path / "selftest.json"
    assert_ok(run("selftest", "--all", "--engine", "cpu.tuple", "--items", 2000, "--json", out))
    assert {e["engine"] for e in json.loads(out.read_text())["engines"]} >= {"cpu.tuple",
                                                                            "cpu.tuplemerge"}
    assert_ok(run("selftest", "--all", "--engine", "cpu.tuple", "--exact", "--items", 2000,
                  "--json", out))
    j = json.loads(out.read_text())
    assert [e["engine"] for e in j["engines"]] == ["cpu.tuple"] and j["passed"] == 1
    r = run("selftest", "--all", "--engine", "cpu.tupl", "--exact")
    assert r.returncode == 2 and "no engine matches" in r.stderr


def test_selftest_list_names_what_the_options_select():
    # --list (scripts/gpu-check.sh's job list from the full build): ids only, nothing checked.
    every = assert_ok(run("selftest", "--list", "--all")).stdout.split()
    cuda = assert_ok(run("selftest", "--list")).stdout.split()
    assert "cpu.parse" in every and "cuda.parse" in cuda
    assert set(cuda) == {e for e in every if e.startswith("cuda.")}
    assert assert_ok(run("selftest", "--list", "--all", "--engine", "cpu.tuple",
                         "--exact")).stdout.split() == ["cpu.tuple"]


def test_selftest_without_gpu(tmp_path):
    info = json.loads(assert_ok(run("info", "--json")).stdout)
    if info["cuda"]["devices"]:
        pytest.skip("a CUDA device is present")
    out = tmp_path / "selftest.json"
    assert_ok(run("selftest", "--items", 1000, "--json", out))
    j = json.loads(out.read_text())
    assert j["failed"] == 0 and j["passed"] == 0
    for e in j["engines"]:
        assert e["result"] == "skipped", e
    cuda_engines = [e["id"] for e in info["engines"] if e["id"].startswith("cuda.")]
    assert j["skipped"] == len(cuda_engines)


def test_demo(tmp_path):
    out_dir = tmp_path / "demo"
    js = tmp_path / "demo.json"
    r = assert_ok(run("demo", "--packets", 5000, "--out-dir", out_dir, "--json", js))
    assert "total" in r.stdout and "5000" in r.stdout
    assert "reference agrees" in r.stdout
    j = json.loads(js.read_text())
    assert j["packets"] == 5000
    assert j["validated"] is True
    assert j["summary"]["packets"] == 5000
    assert len(read_pcap(out_dir / "demo.pcap")[1]) == 5000
