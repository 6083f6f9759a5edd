"""scripts/gpu-data.sh gathers every file warpath-gpu-bench reads from the data directory (each
`data + "..."` path of bench/gpu/gpu_bench*.cu) into a folder small enough to carry to a GPU
machine, and names each missing input with a non-zero exit."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("WARPATH_DATA", ROOT.parent / "shared" / "data"))
SCRIPT = ROOT / "scripts" / "gpu-data.sh"


def bench_paths():
    """The data files the GPU benchmark opens, as written in its source."""
    src = "".join(f.read_text() for f in sorted((ROOT / "bench/gpu").glob("gpu_bench*.cu")))
    paths = set(re.findall(r'data \+ "/([^"]+)"', src))
    sets = re.findall(r'"((?:acl1|fw1|ipc1)_10K)"', src)
    for base in [p for p in paths if p.endswith("/")]:
        paths.discard(base)
        for s in sets:
            paths.update({base + s, base + s + "_trace"})
    return sorted(paths)


def test_gathers_what_the_gpu_bench_reads(tmp_path):
    if not (DATA / "classbench").is_dir():
        pytest.skip(f"no data directory at {DATA}")
    out = tmp_path / "gpu-data"
    r = subprocess.run([str(SCRIPT), str(out)], capture_output=True, text=True,
                       env={**os.environ, "WARPATH_DATA": str(DATA)})
    assert r.returncode == 0, r.stderr
    wanted = bench_paths()
    assert len(wanted) >= 10, wanted
    for rel in wanted:
        if (DATA / rel).is_dir():  # a folder (ET Open's rules): every file of it
            names = sorted(f.name for f in (DATA / rel).iterdir())
            assert sorted(f.name for f in (out / rel).iterdir()) == names, rel
            for name in names:
                assert (out / rel / name).read_bytes() == (DATA / rel / name).read_bytes(), rel + "/" + name
        else:
            assert (out / rel).read_bytes() == (DATA / rel).read_bytes(), rel
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    assert total < 64 << 20  # the device tool carries at most 64 MiB


def test_a_missing_input_is_named(tmp_path):
    r = subprocess.run([str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True,
                       env={**os.environ, "WARPATH_DATA": str(tmp_path / "nothing")})
    assert r.returncode == 1
    assert "acl1_10K is missing" in r.stderr
    assert not (tmp_path / "out").exists()
