"""warpath.Fib from Python: the same next hops as a brute-force longest-prefix match and as
`warpath lookup`, at every batch size, both families, updates, arrays read and written in
place, and bad input raised as warpath's errors."""

import ipaddress
import random
import threading

import numpy as np
import pytest
from pyutil import BATCH_SIZES, cli, data, need_package

warpath = need_package()


def brute_force(routes, addr):
    best, best_len = warpath.NO_ROUTE, -1
    for net, nh in routes:
        if addr.version == net.version and addr in net and net.prefixlen > best_len:
            best, best_len = nh, net.prefixlen
    return best


@pytest.fixture(scope="module")
def table():
    rng = random.Random(11)
    routes = {}
    for _ in range(400):
        length = rng.choice([0, 1, 8, 12, 16, 20, 23, 24, 25, 28, 31, 32])
        net = ipaddress.ip_network((rng.getrandbits(32) >> (32 - length) << (32 - length)
                                    if length else 0, length))
        routes[net] = rng.randrange(0, 5000)
    for _ in range(200):
        length = rng.choice([16, 32, 48, 56, 64, 96, 127, 128])
        net = ipaddress.ip_network((rng.getrandbits(128) >> (128 - length) << (128 - length),
                                    length))
        routes[net] = rng.randrange(0, 5000)
    text = "".join(f"{n} {nh}\n" for n, nh in routes.items())
    addrs4 = [ipaddress.ip_address(rng.getrandbits(32)) for _ in range(3000)]
    # addresses inside routes too, so most lookups hit
    for n in list(routes)[:400]:
        if n.version == 4:
            addrs4.append(n.network_address + rng.randrange(n.num_addresses))
    addrs6 = [next(iter(n.hosts()), n.network_address) if n.version == 6 else None
              for n in routes]
    addrs6 = [a for a in addrs6 if a] + [ipaddress.ip_address(rng.getrandbits(128))
                                          for _ in range(200)]
    return list(routes.items()), text, addrs4, addrs6


@pytest.mark.parametrize("engine", ["ref", "cpu.lpm.scalar", "cpu.lpm", "cpu.lpm.compressed",
                                    "auto"])
def test_lookup_equals_brute_force(table, engine):
    routes, text, addrs4, addrs6 = table
    fib = warpath.Fib.from_text(text, engine=engine)
    a4 = warpath.ipv4([str(a) for a in addrs4])
    got = fib.lookup(a4)
    assert got.dtype == np.uint32 and got.shape == (len(addrs4),)
    assert got.tolist() == [brute_force(routes, a) for a in addrs4]
    a6 = warpath.ipv6([str(a) for a in addrs6])
    assert a6.shape == (len(addrs6), 2) and a6.dtype == np.uint64
    assert fib.lookup6(a6).tolist() == [brute_force(routes, a) for a in addrs6]
    assert len(fib) == len(routes)


def test_every_batch_size_matches_the_reference(table):
    _, text, addrs4, _ = table
    fast = warpath.Fib.from_text(text, engine="cpu")
    ref = warpath.Fib.from_text(text, engine="ref")
    rng = np.random.default_rng(3)
    pool = np.concatenate([warpath.ipv4([str(a) for a in addrs4]),
                           rng.integers(0, 2**32, 70000, dtype=np.uint32)])
    for n in BATCH_SIZES:
        a = np.ascontiguousarray(pool[:n])
        assert np.array_equal(fast.lookup(a), ref.lookup(a)), n
        assert fast.lookup(a).shape == (n,)


def test_validate_runs_beside_the_reference(table):
    _, text, addrs4, _ = table
    fib = warpath.Fib.from_text(text, engine="cpu", validate=True)
    assert fib.engine.startswith("validate:")
    fib.lookup(warpath.ipv4([str(a) for a in addrs4]))


def test_out_is_filled_in_place_and_returned(table):
    _, text, addrs4, _ = table
    fib = warpath.Fib.from_text(text)
    a = warpath.ipv4([str(x) for x in addrs4])
    out = np.zeros(len(a) + 5, dtype=np.uint32)
    r = fib.lookup(a, out=out)
    assert r is out
    assert np.array_equal(out[: len(a)], fib.lookup(a))
    assert (out[len(a):] == 0).all()
    with pytest.raises(warpath.InvalidArgumentError, match="out has 3 elements for"):
        fib.lookup(a, out=np.zeros(3, dtype=np.uint32))


def test_the_answers_own_their_memory_and_views_are_read_in_place(table):
    _, text, addrs4, _ = table
    fib = warpath.Fib.from_text(text)
    a = warpath.ipv4([str(x) for x in addrs4])
    r = fib.lookup(a)
    assert not np.shares_memory(r, a)
    # a slice with unit stride is read where it is: the same answers as the whole
    assert np.array_equal(fib.lookup(a[10:20]), r[10:20])


def test_updates_while_another_thread_looks_up(table):
    _, text, addrs4, _ = table
    fib = warpath.Fib.from_text("10.0.0.0/8 1\n", engine="cpu")
    a = warpath.ipv4(["10.1.2.3", "10.200.0.1", "192.0.2.1"])
    stop = threading.Event()
    seen = set()

    def reader():
        while not stop.is_set():
            seen.add(tuple(fib.lookup(a).tolist()))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(200):
            fib.add("10.1.0.0/16", "2")
            fib.remove("10.1.0.0/16")
        fib.add("192.0.2.0/24", "3")
    finally:
        stop.set()
        t.join()
    assert fib.lookup(a).tolist() == [1, 1, 3]
    assert seen <= {(1, 1, warpath.NO_ROUTE), (2, 1, warpath.NO_ROUTE), (1, 1, 3)}
    with pytest.raises(warpath.NotFoundError):
        fib.remove("172.16.0.0/12")


def test_named_next_hops_and_their_text():
    fib = warpath.Fib.from_text("10.0.0.0/8 eth0\n2001:db8::/32 eth1\n")
    nh = fib.lookup(warpath.ipv4(["10.0.0.1", "11.0.0.1"]))
    assert fib.nexthop_text(int(nh[0])) == "eth0"
    assert fib.nexthop_text(int(nh[1])) == "-1"
    assert fib.nexthop_text(int(fib.lookup6(warpath.ipv6(["2001:db8::1"]))[0])) == "eth1"
    assert warpath.format_ipv4(warpath.ipv4(["10.0.0.1"])) == ["10.0.0.1"]
    assert warpath.format_ipv6(warpath.ipv6(["2001:db8::1"])) == ["2001:db8::1"]


def test_bad_input_raises_warpath_errors(tmp_path):
    bad = tmp_path / "bad.routes"
    bad.write_text("10.0.0.0/8 1\n10.0.0.0/33 2\n")
    with pytest.raises(warpath.ParseError, match=rf"{bad}:2:") as e:
        warpath.Fib(str(bad))
    assert isinstance(e.value, ValueError) and e.value.code == "parse_error"
    with pytest.raises(OSError, match="nope.routes"):
        warpath.Fib(str(tmp_path / "nope.routes"))
    with pytest.raises(warpath.NotFoundError, match="no-such-engine"):
        warpath.Fib.from_text("10.0.0.0/8 1\n", engine="no-such-engine")
    fib = warpath.Fib.from_text("10.0.0.0/8 1\n")
    with pytest.raises(TypeError):
        fib.lookup(np.zeros(4, dtype=np.float64))
    with pytest.raises(TypeError):
        fib.lookup(np.zeros((2, 2), dtype=np.uint32))
    with pytest.raises(TypeError):
        fib.lookup6(np.zeros((4, 3), dtype=np.uint64))
    with pytest.raises(warpath.ParseError, match="'300.1.1.1'"):
        warpath.ipv4(["10.0.0.1", "300.1.1.1"])


def test_same_answers_as_the_cli_on_a_real_table(tmp_path):
    routes = data("routing", "ipv4_routeviews_2019-08_as23367_partial_nh.txt.xz")
    rng = np.random.default_rng(5)
    addrs = rng.integers(0, 2**32, 20000, dtype=np.uint32)
    texts = warpath.format_ipv4(addrs)
    path = tmp_path / "addrs.txt"
    path.write_text("\n".join(texts) + "\n")
    cli_out = cli("lookup", "--fib", routes, "--addrs", path).split("\n")
    fib = warpath.Fib(str(routes))
    got = fib.lookup(addrs)
    # the CLI prints "<address> <nexthop text>" per line (or the next hop alone)
    cli_hops = [line.split()[-1] for line in cli_out if line.strip()]
    assert cli_hops == [fib.nexthop_text(int(n)) for n in got]


def test_an_out_array_of_another_dtype_is_refused_not_converted():
    fib = warpath.Fib.from_text("10.0.0.0/8 1\n")
    a = warpath.ipv4(["10.0.0.1"])
    with pytest.raises(warpath.InvalidArgumentError, match="writable, contiguous 1-D uint32"):
        fib.lookup(a, out=np.zeros(1, dtype=np.int64))
    with pytest.raises(warpath.InvalidArgumentError):
        fib.lookup(a, out=np.zeros(4, dtype=np.uint32)[::2])
