"""The progress line of the commands that read a capture (tools/warpath/capture_progress.hpp):
with --progress (or on a terminal) `reassemble`, `flows` and `nids` rewrite one line on stderr
with the packets, bytes, time and rate read so far and their own counts, and blank it before
the summary or an error; without it (and without a terminal) stderr stays quiet."""

import re
import subprocess

import pytest

from warpath_cli import DATA, WARPATH_BIN, assert_ok, run, skip_without_binary

skip_without_binary()
CAPTURE = DATA / "pcap/zeek/http-bro.org.pcap"
# run() reads stderr as text, where each carriage return becomes a newline
LINE = re.compile(r"\n(\d+) packets, [\d.]+ MB in [\d.]+ s \([\d.]+ MB/s\)([^\n]*)\n")


@pytest.fixture
def capture():
    if not CAPTURE.exists():
        pytest.skip(f"{CAPTURE} is not there (../shared/data)")
    return CAPTURE


def progress_lines(stderr):
    """(packets, the command's counts) of each line shown, each blanked by the next write."""
    return [(int(m.group(1)), m.group(2)) for m in LINE.finditer(stderr)]


def test_reassemble_shows_and_clears_its_progress(tmp_path, capture):
    r = run("reassemble", "--progress", "--in", capture, "--out-dir", tmp_path / "out")
    assert_ok(r)
    lines = progress_lines(r.stderr)
    assert lines, repr(r.stderr)
    packets, tail = lines[0]
    assert packets > 0 and re.fullmatch(r", \d+ streams, [\d.]+ MB delivered\s*", tail), tail
    # Blanked before anything else is written: stderr ends on a line of spaces between carriage
    # returns, the summary went to stdout whole.
    assert re.search(r"\n +\n$", r.stderr) and "streams to" in r.stdout


def test_flows_shows_its_progress_and_the_records_are_whole(tmp_path, capture):
    out = tmp_path / "flows.json"
    r = run("flows", "--progress", "--format", "json", "--in", capture, "--out", out)
    assert_ok(r)
    lines = progress_lines(r.stderr)
    assert lines and re.fullmatch(r", \d+ flows, \d+ active\s*", lines[0][1]), repr(r.stderr)
    assert out.read_text().strip()


def test_nids_shows_its_progress(tmp_path, capture):
    rule = tmp_path / "t.rules"
    rule.write_text('alert tcp any any -> any any (msg:"GET"; content:"GET"; sid:1;)\n')
    r = run("nids", "--progress", "--rules", rule, "--in", capture, "--eve", tmp_path / "eve.json")
    assert_ok(r)
    lines = progress_lines(r.stderr)
    assert lines and re.fullmatch(r", \d+ alerts\s*", lines[0][1]), repr(r.stderr)


def test_no_progress_without_a_terminal_or_the_flag(tmp_path, capture):
    # run() gives the command pipes, not a terminal
    r = run("reassemble", "--in", capture, "--out-dir", tmp_path / "out")
    assert_ok(r)
    assert "packets," not in r.stderr and not re.search(r" {20}", r.stderr), repr(r.stderr)


def test_an_error_after_progress_starts_on_a_clean_line(tmp_path):
    bench = WARPATH_BIN.with_name("warpath-stream-bench")
    if not bench.exists():
        pytest.skip(f"{bench} is not built")
    pcap = tmp_path / "in.pcap"
    subprocess.run([str(bench), "--workload", "small", "--engine", "warpath", "--write-pcap",
                    str(pcap)], check=True, capture_output=True, timeout=120)
    data = pcap.read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 7])  # cut inside a record
    r = run("reassemble", "--progress", "--strict", "--in", cut, "--out-dir", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    assert progress_lines(r.stderr), repr(r.stderr[:300])
    # every message starts on a line of its own, after the blanked progress line
    for line in r.stderr.split("\n"):
        assert not line.strip() or LINE.match("\n" + line + "\n") or line.startswith("warpath:"), \
            repr(line)
    assert re.search(r"\n +\nwarpath: warning", r.stderr), repr(r.stderr[:300])
