#!/usr/bin/env python3
"""Seed corpus of one reader of fuzz/readers_fuzz.cpp: small slices of the shared data
(WARPATH_DATA, default ../shared/data: never copied into the repository) and the hand-made
seeds of fuzz/seeds/. Usage: make_seeds.py READER OUT_DIR."""

import lzma
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("WARPATH_DATA", HERE.parent.parent / "shared" / "data"))
MAX = 4096  # bytes per seed: the fuzzer mutates small inputs fastest


def head(path, lines=40):
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rb") as f:
        out = b"".join(f.readline() for _ in range(lines))
    return out[:MAX]


def seeds(reader):
    cb = DATA / "classbench"
    rt = DATA / "routing"
    pc = DATA / "pcap"
    if reader == "classbench":
        files = sorted((cb / "wustl_5tuple").glob("*_1K"))
        return [head(f) for f in files[:6]]
    if reader == "trace":
        return [head(f) for f in sorted((cb / "wustl_5tuple").glob("*_1K_trace"))[:4]]
    if reader == "routes":
        return [head(f) for f in sorted(rt.glob("*.txt.xz")) if "updates" not in f.name
                and "linx" not in f.name]
    if reader == "updates":
        return [head(f) for f in sorted(rt.glob("*linx*.txt.xz"))]
    if reader == "nidsrules":
        et = DATA / "patterns" / "et-open" / "rules"
        sv = DATA / "suricata-verify"
        return [head(f, 12) for f in sorted(et.glob("*.rules"))[:12]] + \
               [f.read_bytes()[:MAX] for f in sorted(sv.glob("*/*.rules"))[:12]]
    if reader == "pcap":
        return [f.read_bytes()[:MAX] for f in sorted(pc.glob("*/*.pcap*"))
                if f.stat().st_size <= 64 * MAX][:24]
    return []


def main():
    reader, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for i, data in enumerate(seeds(reader)):
        (out / f"data_{i}").write_bytes(data)
        n += 1
    for f in sorted((HERE / "seeds").glob(f"{reader}*.txt")):
        (out / f.name).write_bytes(f.read_bytes())
        n += 1
    # Without the shared data (a bare clone), the fuzzer starts from an empty corpus.
    where = "" if DATA.is_dir() else f" (no shared data at {DATA}: an empty corpus)"
    print(f"{reader}: {n} seeds in {out}{where}")


if __name__ == "__main__":
    main()
