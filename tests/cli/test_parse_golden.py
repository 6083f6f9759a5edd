"""`warpath parse --format csv` against the tshark-derived goldens.

Goldens: tests/golden/pcap/<folder>__<name>.csv (made by scripts/tshark_golden.py,
see tests/golden/pcap/README.md). Rows listed in tests/golden/pcap/disputed.txt
are compared on the frame number only.

Environment:
    WARPATH_BIN   the warpath binary (default <repo>/build/warpath)
    WARPATH_DATA  the shared data dir holding pcap/ (default <repo>/../shared/data)

The warpath tests skip when the binary or the captures are missing; the
script guard (test_golden_script_reproduces) skips when tshark or the captures
are missing.
"""

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "golden" / "pcap"
DISPUTED = GOLDEN_DIR / "disputed.txt"
SCRIPT = REPO / "scripts" / "tshark_golden.py"

WARPATH_BIN = Path(os.environ.get("WARPATH_BIN", str(REPO / "build" / "warpath")))
DATA_DIR = Path(os.environ.get("WARPATH_DATA", str(REPO.parent / "shared" / "data")))
PCAP_DIR = DATA_DIR / "pcap"

HEADER = "frame,status,vlan,ip_version,src,dst,proto,sport,dport,frag"
GOLDEN_HEADER = "frame,vlan,ip_version,src,dst,proto,sport,dport,frag"
COLUMNS = GOLDEN_HEADER.split(",")

# tshark version the committed goldens were made with (README.md).
GOLDEN_TSHARK = "4.0.17"

# Captures the script guard regenerates: one per tricky path of the walker.
GUARD_CAPTURES = [
    "tcpdump/vxlan.pcap",                         # tunnel: outer UDP only
    "tcpdump/various_gre.pcap",                   # GRE, 802.1Q + LLC, loopback
    "tcpreplay/test_vlan802.1ad.pcap",            # S-tag; MPLS PW with inner tags
    "zeek/ipv6-http-atomic-frag.pcap",            # ext headers, atomic fragments
    "zeek/ipv4-fragmented-4.pcap",                # first / non-first fragments
    "zeek/icmp-timeexceeded.pcap",                # ICMP error quote must not leak
    "tcpdump/ip6_frag_asan.pcap",                 # truncated fragment header
    "tcpdump/bad-ipv4-version-pgm-heapoverflow.pcap",  # disputed (auto + manual)
    "tcpdump/ipv4_invalid_total_length_2.pcap",   # disputed (manual)
    "zeek/tcp-retransmit-timeout.pcapng",         # pcapng
]


def _golden_files():
    return sorted(GOLDEN_DIR.glob("*__*.csv"))


def _capture_name(golden):
    """tests/golden/pcap/zeek__tcp-reassembly.pcap.csv -> zeek/tcp-reassembly.pcap"""
    folder, name = golden.name[:-len(".csv")].split("__", 1)
    return "%s/%s" % (folder, name)


def _golden_name(capture):
    return capture.replace("/", "__", 1) + ".csv"


def _load_disputed():
    out = {}
    if not DISPUTED.exists():
        return out
    for line in DISPUTED.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, frame, reason = line.split(",", 2)
        out[(name, int(frame))] = reason
    return out


def _read_csv(text):
    return [row for row in csv.reader(io.StringIO(text)) if row]


def _first_diff(exp, got):
    cols = [c for c, e, g in zip(COLUMNS, exp, got) if e != g]
    return cols or ["<column count %d vs %d>" % (len(exp), len(got))]


def test_golden_files_present():
    goldens = _golden_files()
    assert len(goldens) == 70, "expected 70 golden files in %s, found %d" % (GOLDEN_DIR, len(goldens))
    for g in goldens:
        first = g.read_text().split("\n", 1)[0]
        assert first == GOLDEN_HEADER, "%s: bad header %r" % (g.name, first)
    for (name, frame) in _load_disputed():
        assert (GOLDEN_DIR / _golden_name(name)).exists(), "disputed.txt names unknown capture %s" % name


@pytest.fixture(scope="module")
def warpath():
    if not WARPATH_BIN.is_file() or not os.access(str(WARPATH_BIN), os.X_OK):
        pytest.skip("warpath binary not found at %s (set WARPATH_BIN)" % WARPATH_BIN)
    if not PCAP_DIR.is_dir():
        pytest.skip("capture dir %s not found (set WARPATH_DATA)" % PCAP_DIR)
    return WARPATH_BIN


@pytest.fixture(scope="module")
def disputed():
    return _load_disputed()


@pytest.mark.parametrize("golden", _golden_files(), ids=lambda p: p.name[:-len(".csv")])
def test_parse_matches_golden(warpath, disputed, golden):
    capture = _capture_name(golden)
    path = PCAP_DIR / capture
    if not path.exists():
        pytest.skip("capture %s not found" % path)
    cmd = [str(warpath), "parse", "--in", str(path), "--format", "csv"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    stderr = proc.stderr.decode(errors="replace")[-2000:]
    assert proc.returncode == 0, "%s exited %d\nstderr:\n%s" % (" ".join(cmd), proc.returncode, stderr)
    text = proc.stdout.decode("utf-8", errors="replace")

    lines = text.splitlines()
    assert lines, "%s: no output\nstderr:\n%s" % (capture, stderr)
    assert lines[0] == HEADER, "%s: header is %r, expected %r" % (capture, lines[0], HEADER)

    rows = _read_csv(text)[1:]
    got = []
    for i, row in enumerate(rows, 1):
        assert len(row) == 10, "%s: output row %d has %d columns: %r" % (capture, i, len(row), row)
        assert row[1] != "", "%s: output row %d has an empty status: %r" % (capture, i, row)
        got.append(row[:1] + row[2:])
    expected = _read_csv(golden.read_text())[1:]

    mismatches = []
    for exp, g in zip(expected, got):
        if (capture, int(exp[0])) in disputed:
            same = exp[0] == g[0]
        else:
            same = exp == g
        if not same:
            mismatches.append((exp, g))
    msg = []
    if mismatches:
        exp, g = mismatches[0]
        reason = disputed.get((capture, int(exp[0])))
        msg.append("%s: %d row(s) differ; first at frame %s (columns %s)%s\n"
                   "  columns:  %s\n  expected: %s\n  got:      %s"
                   % (capture, len(mismatches), exp[0], ",".join(_first_diff(exp, g)),
                      " [disputed: frame only]" if reason else "",
                      GOLDEN_HEADER, ",".join(exp), ",".join(g)))
    if len(expected) != len(got):
        msg.append("%s: %d rows expected, %d printed" % (capture, len(expected), len(got)))
        if len(got) > len(expected):
            msg.append("  first extra row: %s" % ",".join(got[len(expected)]))
        else:
            msg.append("  first missing row: %s" % ",".join(expected[len(got)]))
    assert not msg, "\n".join(msg)


def _tshark_version(tshark):
    try:
        out = subprocess.run([tshark, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=60).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError):
        return "?"
    first = out.splitlines()[0] if out else "?"
    return first


@pytest.mark.parametrize("capture", GUARD_CAPTURES)
def test_golden_script_reproduces(capture):
    """Regenerate a few goldens with scripts/tshark_golden.py; they must equal the committed ones."""
    tshark = shutil.which(os.environ.get("TSHARK", "tshark"))
    if not tshark:
        pytest.skip("tshark not installed")
    path = PCAP_DIR / capture
    if not path.exists():
        pytest.skip("capture %s not found (set WARPATH_DATA)" % path)
    cmd = [sys.executable, str(SCRIPT), "--tshark", tshark, "--name", capture, "--disputed", str(path)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    version = _tshark_version(tshark)
    note = "(committed goldens: tshark %s; this one: %s)" % (GOLDEN_TSHARK, version)

    golden = GOLDEN_DIR / _golden_name(capture)
    expected = golden.read_text().splitlines()
    got = proc.stdout.decode().splitlines()
    for i, (e, g) in enumerate(zip(expected, got)):
        assert e == g, "%s line %d differs %s\n  committed:   %s\n  regenerated: %s" % (
            golden.name, i + 1, note, e, g)
    assert len(expected) == len(got), "%s: %d lines committed, %d regenerated %s" % (
        golden.name, len(expected), len(got), note)

    want = sorted("%s,%d,%s" % (n, f, r) for (n, f), r in _load_disputed().items() if n == capture)
    have = sorted(l for l in proc.stderr.decode().splitlines() if l.startswith(capture + ","))
    assert have == want, "disputed rows for %s differ %s\n  committed:   %s\n  regenerated: %s" % (
        capture, note, want, have)
