"""warpath.Patterns from Python: the same matches as `warpath patterns scan` and as Python's
re on literals, every engine, clones, scans of many threads without the GIL, bad patterns."""

import re
import threading
import time

import numpy as np
import pytest
from pyutil import REPO, cli, need_package

warpath = need_package()

LINES = ["1:/GET/", "2:/http\\/1\\.[01]/i", "3:/ab+c/", "4:/x{3,}/", "5:/\\d{4}-\\d{2}/"]


def test_matches_equal_the_cli(tmp_path):
    text = (REPO / "README.md").read_bytes()
    blob = tmp_path / "blob"
    blob.write_bytes(text + b" GET abbbc xxxx 2026-11 HTTP/1.1 ")
    args = [a for line in LINES for a in ("-e", line)]
    want = [tuple(map(int, line.split())) for line in
            cli("patterns", "scan", *args, "--in", blob).splitlines()]
    for engine in ("ref", "cpu.hs", "auto", "validate:cpu.hs"):
        p = warpath.Patterns(LINES, engine=engine)
        got = p.scan(blob.read_bytes())
        assert got.dtype == warpath.MATCH_DTYPE
        assert [(int(m["id"]), int(m["end"])) for m in got] == want, engine
        # the same through a uint8 array and a memoryview, read in place
        arr = np.frombuffer(blob.read_bytes(), dtype=np.uint8)
        assert np.array_equal(p.scan(arr), got)
        assert np.array_equal(p.scan(memoryview(blob.read_bytes())), got)


def test_literals_against_python_re():
    rng = np.random.default_rng(1)
    buf = rng.choice(np.frombuffer(b"abcd", dtype=np.uint8), 20000)
    words = ["abc", "dab", "cc", "abcdabcd"]
    p = warpath.Patterns([f"{i}:/{w}/" for i, w in enumerate(words)])
    got = sorted((int(m["id"]), int(m["end"])) for m in p.scan(buf))
    s = buf.tobytes().decode()
    want = sorted((i, m.start() + len(w)) for i, w in enumerate(words)
                  for m in re.finditer(f"(?={w})", s))
    assert got == want
    assert len(p) == 4 and p.database_bytes > 0 and p.engine == "cpu.hs"


def test_empty_and_one_byte_inputs():
    p = warpath.Patterns(["1:/a/"])
    assert len(p.scan(b"")) == 0
    assert [(int(m["id"]), int(m["end"])) for m in p.scan(b"a")] == [(1, 1)]
    assert len(p.scan(np.zeros(0, dtype=np.uint8))) == 0


def test_pattern_file_and_bad_patterns(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("1:/abc/\n2:/de(f/\n")
    with pytest.raises(warpath.Error, match=rf"{f}:2\).*[Mm]issing close parenthesis"):
        warpath.Patterns(f)
    f.write_text("1:/abc/\n")
    assert len(warpath.Patterns(f)) == 1
    with pytest.raises(warpath.ParseError, match="<patterns>:2"):
        warpath.Patterns(["1:/ok/", "not a pattern"])
    with pytest.raises(OSError, match="missing.txt"):
        warpath.Patterns(tmp_path / "missing.txt")
    with pytest.raises(warpath.InvalidArgumentError, match="uint8"):
        warpath.Patterns(["1:/a/"]).scan(np.zeros(4, dtype=np.int32))


def _scan_many(p, buf, times):
    for _ in range(times):
        p.scan(buf)


def test_two_threads_scan_at_once_without_the_gil():
    """Two threads scanning (each its own clone) finish in about the time of one: the GIL is
    released around the scan. On one core the check cannot hold, so it is skipped there."""
    import os
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    p = warpath.Patterns([f"{i}:/{w}[0-9]+x/" for i, w in enumerate(["ab", "cd", "ef", "gh"])])
    rng = np.random.default_rng(2)
    buf = rng.integers(0, 256, 4 << 20, dtype=np.uint8)
    t0 = time.perf_counter()
    _scan_many(p, buf, 1)
    one = time.perf_counter() - t0
    times = max(1, int(0.4 / max(one, 1e-4)))
    best = None
    for _ in range(5):  # a noisy machine's worst rounds left out: the best of five counts
        t0 = time.perf_counter()
        _scan_many(p, buf, times)
        single = time.perf_counter() - t0
        clones = [p.clone(), p.clone()]
        threads = [threading.Thread(target=_scan_many, args=(c, buf, times)) for c in clones]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both = time.perf_counter() - t0
        ratio = both / single
        best = ratio if best is None else min(best, ratio)
        if best < 1.6:
            break
    # twice the work: about 1x with the GIL released, 2x with it held
    assert best < 1.6, f"two threads took {best:.2f}x one thread's time"


def test_one_object_from_two_threads_is_safe():
    p = warpath.Patterns(["1:/ab/"])
    buf = b"ab" * 100000
    want = len(p.scan(buf))
    results = []
    threads = [threading.Thread(target=lambda: results.append(len(p.scan(buf)))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_a_python_thread_runs_during_a_long_scan():
    """The GIL is released around a scan: a pure-Python loop in this thread keeps counting
    while another thread scans (with the GIL held it could not run at all)."""
    p = warpath.Patterns(["1:/ab[0-9]+x/"])
    buf = np.random.default_rng(4).integers(0, 256, 64 << 20, dtype=np.uint8)
    done = threading.Event()
    during = []

    def scan():
        p.scan(buf)
        done.set()

    t = threading.Thread(target=scan)
    count = 0
    t.start()
    while not done.is_set():
        count += 1
    t.join()
    during.append(count)
    assert count > 1000, f"only {count} iterations ran beside the scan"


def test_concurrent_updates_and_writes_do_not_deadlock(tmp_path):
    """Updaters and writers from several threads at once (the locks taken without the GIL)."""
    fib = warpath.Fib.from_text("10.0.0.0/8 1\n", engine="cpu")
    upd = tmp_path / "upd"
    upd.write_text("".join(f"0 a 10.{i}.0.0/16 {i}\n" for i in range(200)))

    def adds():
        for i in range(200):
            fib.add(f"172.16.{i}.0/24", str(i))

    threads = [threading.Thread(target=adds), threading.Thread(target=fib.apply_updates,
                                                               args=(str(upd),))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert fib.lookup(warpath.ipv4(["10.7.0.1", "172.16.9.1"])).tolist() == [7, 9]
    cap = warpath.read_pcap(REPO / "examples" / "nids" / "demo.pcap")
    w = warpath._warpath._PcapWriter(str(tmp_path / "w.pcap"))
    writers = [threading.Thread(target=w.write_capture, args=(cap._impl,)) for _ in range(3)]
    for t in writers:
        t.start()
    for _ in range(10):
        w.write(cap[0])
    for t in writers:
        t.join(timeout=60)
    w.close()
    w.close()  # a second close does nothing
    assert len(warpath.read_pcap(tmp_path / "w.pcap")) == 3 * len(cap) + 10
    with pytest.raises(warpath.InvalidArgumentError, match="closed"):
        w.write(cap[0])
