"""`warpath patterns check` and `warpath patterns scan` as a user runs them: counts per engine
with reasons, the `ID END_OFFSET` output that any two engines can be compared by (block and
stream mode), and clear errors for bad input."""

import json

import pytest

from warpath_cli import DATA, assert_no_crash, assert_ok, run, skip_without_binary

skip_without_binary()

PATTERNS = DATA / "patterns"


def engines():
    info = json.loads(assert_ok(run("info", "--json")).stdout)
    return [e["id"] for e in info["engines"] if e["id"] in ("ref.pattern", "cpu.ac", "cpu.hs")]


def test_check_counts_and_reasons(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("1:/abc/i\n2:/(a)\\1/\n3:/foo(?=bar)/\n4:/x{2,}y/s\n5:/a?/\n")
    out = tmp_path / "check.json"
    r = assert_ok(run("patterns", "check", f, "--engine", "ref", "--engine", "cpu.ac", "--json", out))
    assert "2 of 5 compile" in r.stdout  # ref: 1 and 4
    assert "a back-reference" in r.stdout and "look-ahead" in r.stdout
    assert "matches the empty string" in r.stdout
    assert "1 of 5 compile" in r.stdout  # cpu.ac: the literal only
    j = json.loads(out.read_text())
    assert [x["compile"] for x in j] == [2, 1]
    assert j[0]["reasons"]["a back-reference"] == 1


def test_check_lists_rejected_patterns(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("7:/(a)\\1/\n")
    r = assert_ok(run("patterns", "check", f, "--engine", "ref", "--list"))
    assert "pattern 7 (" in r.stdout and ":1)" in r.stdout


@pytest.mark.skipif(not (PATTERNS / "l7-filter").is_dir(), reason="needs the shared pattern data")
def test_check_shared_sets():
    r = assert_ok(run("patterns", "check", PATTERNS / "l7-filter" / "l7-patterns.tsv",
                      PATTERNS / "et-open" / "derived" / "et-open.mpm-literals.tsv", "--engine", "ref"))
    assert "146 of 146 compile" in r.stdout
    assert "23609 of 23609 compile" in r.stdout


def test_scan_every_engine_writes_the_same_lines(tmp_path):
    data = tmp_path / "d.bin"
    data.write_bytes(b"GET /aaa HTTP/1.1\r\nHost: AbC\r\n\r\nabcabc\x00\xff" * 50)
    pats = tmp_path / "p.txt"
    pats.write_text("1:/abc/i\n2:/aa/\n3:/\\x00\\xff/\n4:/HTTP/\n")
    outs = {}
    for e in engines():
        for stream in ("0", "7"):
            out = tmp_path / f"{e}-{stream}.txt"
            assert_ok(run("patterns", "scan", "--patterns", pats, "--in", data, "--engine", e,
                          "--stream", stream, "--out", out))
            outs[(e, stream)] = out.read_text()
    want = outs[("ref.pattern", "0")]
    lines = want.splitlines()
    assert len(lines) == 50 * (3 + 2 + 1 + 1)
    assert lines[:3] == ["2 7", "2 8", "4 13"]  # overlapping "aa" at 7 and 8, sorted by offset
    for k, v in outs.items():
        assert v == want, k


def test_scan_regex_and_expressions(tmp_path):
    data = tmp_path / "d.txt"
    data.write_bytes(b"user=alice\nuser=bob\n")
    r = assert_ok(run("patterns", "scan", "-e", "1:/^user=\\w+$/m", "-e", "2:/b.b/", "--in", data,
                      "--engine", "ref"))
    assert r.stdout.splitlines() == ["1 10", "2 19", "1 19"] or r.stdout.splitlines() == ["1 10", "1 19", "2 19"]


def test_scan_errors_are_clear(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("x")
    bad = tmp_path / "bad.txt"
    bad.write_text("1:/a/\nnope:/b/\n")
    r = run("patterns", "scan", "--patterns", bad, "--in", data)
    assert_no_crash(r)
    assert r.returncode == 1 and "bad.txt:2:" in r.stderr
    r = run("patterns", "scan", "-e", "1:/(a)\\1/", "--in", data, "--engine", "ref")
    assert r.returncode == 1 and "back-reference" in r.stderr
    r = run("patterns", "scan", "-e", "1:/a.*b/", "--in", data, "--engine", "cpu.ac")
    assert r.returncode == 1 and "not a literal" in r.stderr
    r = run("patterns", "scan", "-e", "1:/a/", "--in", tmp_path / "missing", "--engine", "ref")
    assert r.returncode == 1 and "missing" in r.stderr
    r = run("patterns", "scan", "-e", "1:/a/", "--in", data, "--engine", "nope")
    assert r.returncode == 2 and "nope" in r.stderr
    r = run("patterns", "scan", "--in", data)
    assert r.returncode == 1 and "no patterns" in r.stderr


# --- the match module in a chain ------------------------------------------------------------------

HTTP_PATTERNS = "1:/GET /\n2:/HTTP\\/1\\.[01] 200/\n3:/Content-Type: text\\/html/i\n4:/<html/i\n5:/\\r\\n\\r\\n/\n"


@pytest.mark.parametrize("engine", ["cpu.hs", "ref.pattern", "cpu.dfa"])
def test_match_module_finds_in_streams_what_scan_finds_in_reassembled_files(tmp_path, engine):
    """flow -> stream -> match over a capture: every stream match is the match `patterns scan`
    finds in that stream's file from `warpath reassemble` (same flow serial, direction, offset),
    so matches spanning segments are found once, where they end."""
    path = DATA / "pcap/zeek/http-bro.org.pcap"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    pats = tmp_path / "http.pat"
    pats.write_text(HTTP_PATTERNS)
    log = tmp_path / "m.log"
    report = tmp_path / "run.json"
    assert_ok(run("run", "--chain", f"flow -> stream(midstream=on, depth=0) -> match(patterns={pats}, "
                  f"engine={engine}, log={log}) -> wire",
                  "--port", f"in=pcap:{path}:{tmp_path / 'out.pcap'}", "--json", report))
    got = sorted((m["flow"], m["dir"], m["id"], m["end"])
                 for m in map(json.loads, log.read_text().splitlines()))
    ra = tmp_path / "ra"
    assert_ok(run("reassemble", "--in", path, "--out-dir", ra, "--midstream", "--depth", "0"))
    index = json.loads((ra / "index.json").read_text())
    want, parts_seen, gaps = [], 0, 0
    for s in index["streams"]:
        # The file holds the stream's bytes without its gaps; the module starts a new stream
        # after a gap (no match across it), so each part between gaps is scanned alone.
        data = (ra / s["file"]).read_bytes()
        parts, at, pos = [], 0, 0  # (stream offset, bytes)
        for g in sorted(s["gaps"], key=lambda g: g["offset"]):
            parts.append((at, data[pos:pos + g["offset"] - at]))
            pos += g["offset"] - at
            at = g["offset"] + g["length"]
            gaps += 1
        parts.append((at, data[pos:]))
        d = 0 if s["dir"] == "initiator" else 1
        for base, part in parts:
            if not part:
                continue
            parts_seen += 1
            f = tmp_path / "part.bin"
            f.write_bytes(part)
            out = assert_ok(run("patterns", "scan", "--patterns", pats, "--in", f)).stdout
            want += [(s["flow"], d, int(i), base + int(e)) for i, e in (l.split() for l in out.splitlines())]
    assert len(want) > 40 and gaps == 1
    assert got == sorted(want)
    stats = json.loads(report.read_text())["modules"][2]["stats"]
    assert stats["matches"] == len(want)
    assert stats["streams"] == parts_seen and stats["gap_resets"] == gaps
    assert stats["stream_bytes"] == sum(s["bytes"] for s in index["streams"])


def test_match_module_scans_udp_payloads_and_says_what_is_wrong(tmp_path):
    path = DATA / "pcap/zeek/ipv6-fragmented-dns.pcap"
    dns = DATA / "pcap/tcpdump/dns_udp.pcap"
    if not dns.is_file():
        pytest.skip(f"{dns} missing")
    pats = tmp_path / "p.txt"
    pats.write_text("1:/\\x00\\x01\\x00\\x01/\n")  # type A, class IN
    log = tmp_path / "m.log"
    report = tmp_path / "run.json"
    assert_ok(run("run", "--chain", f"match(patterns={pats}, log={log}) -> wire",
                  "--port", f"in=pcap:{dns}:{tmp_path / 'o.pcap'}", "--json", report))
    stats = json.loads(report.read_text())["modules"][0]["stats"]
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    assert stats["blocks"] >= 1 and stats["matches"] == len(lines) >= 1
    assert all("packet" in m and m["id"] == 1 for m in lines)
    for chain, why in ((f"match -> wire", "needs patterns=FILE"),
                       (f"match(patterns={tmp_path / 'none.txt'}) -> wire", "none.txt"),
                       (f"match(patterns={pats}, engine=nope) -> wire", "nope")):
        r = run("run", "--chain", chain, "--port", f"in=pcap:{dns}:")
        assert_no_crash(r)
        assert r.returncode != 0 and why in r.stderr, (chain, r.stderr)
