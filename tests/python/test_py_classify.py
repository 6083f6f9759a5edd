"""warpath.Classifier from Python: the same rule indices as a first-match scan in Python and
as `warpath classify` (ClassBench and OpenFlow rules), every engine and batch size, keys read
in place in Fortran order and copied once otherwise (counted), updates, and bad input."""

import random

import numpy as np
import pytest
from pyutil import BATCH_SIZES, cli, data, need_package

warpath = need_package()


def ip(a):
    return ".".join(str(a >> s & 255) for s in (24, 16, 8, 0))


@pytest.fixture(scope="module")
def ruleset(tmp_path_factory):
    """A generated ClassBench set, its keys, and the first-match answers computed here."""
    rng = random.Random(21)
    rules = []
    for _ in range(300):
        sl, dl = rng.choice([0, 8, 16, 24, 32]), rng.choice([0, 8, 16, 24, 32])
        s = rng.getrandbits(32) >> (32 - sl) << (32 - sl) if sl else 0
        d = rng.getrandbits(32) >> (32 - dl) << (32 - dl) if dl else 0
        sp = rng.choice([(0, 65535), (1024, 65535), (80, 80)])
        dp = rng.choice([(0, 65535), (0, 1023), (443, 443), (53, 53)])
        pr = rng.choice([(0, 0), (6, 0xFF), (17, 0xFF)])
        rules.append((s, sl, d, dl, sp, dp, pr))
    text = "".join(f"@{ip(s)}/{sl} {ip(d)}/{dl} {sp[0]} : {sp[1]} {dp[0]} : {dp[1]} "
                   f"0x{pr[0]:02x}/0x{pr[1]:02X}\n" for s, sl, d, dl, sp, dp, pr in rules)
    path = tmp_path_factory.mktemp("rules") / "gen.rules"
    path.write_text(text)
    keys = []
    for _ in range(5000):
        r = rules[rng.randrange(len(rules))] if rng.random() < 0.7 else None
        src = rng.getrandbits(32)
        dst = rng.getrandbits(32)
        if r:
            s, sl, d, dl, sp, dp, pr = r
            src = s | (src & ((1 << (32 - sl)) - 1)) if sl < 32 else s
            dst = d | (dst & ((1 << (32 - dl)) - 1)) if dl < 32 else d
        keys.append((src, dst, rng.choice([80, 1234, 40000]), rng.choice([53, 80, 443, 8080]),
                     rng.choice([6, 17, 1])))

    def first_match(k):
        src, dst, sport, dport, proto = k
        for i, (s, sl, d, dl, sp, dp, pr) in enumerate(rules):
            m_s = (0xFFFFFFFF << (32 - sl)) & 0xFFFFFFFF if sl else 0
            m_d = (0xFFFFFFFF << (32 - dl)) & 0xFFFFFFFF if dl else 0
            if ((src & m_s) == s and (dst & m_d) == d and sp[0] <= sport <= sp[1]
                    and dp[0] <= dport <= dp[1] and (proto & pr[1]) == (pr[0] & pr[1])):
                return i
        return warpath.NO_MATCH

    cols = list(zip(*keys))
    kf = warpath.five_tuple_keys(*cols)
    return path, kf, [first_match(k) for k in keys], keys


ENGINES = ["ref", "cpu.linear", "cpu.tuple", "cpu.bloom", "cpu.rfc", "cpu.tic", "cpu.split",
           "cpu.tuplemerge", "auto"]


@pytest.mark.parametrize("engine", ENGINES)
def test_classify_equals_first_match(ruleset, engine):
    path, keys, want, _ = ruleset
    c = warpath.Classifier(str(path), engine=engine)
    got = c.classify(keys)
    assert got.dtype == np.uint32
    assert got.tolist() == want
    assert c.keys_copied == 0  # Fortran order: read in place


def test_c_order_keys_are_copied_once_and_answer_alike(ruleset):
    path, keys, want, _ = ruleset
    c = warpath.Classifier(str(path), engine="cpu")
    c_order = np.ascontiguousarray(keys)
    assert c_order.flags.c_contiguous and not c_order.flags.f_contiguous
    assert c.classify(c_order).tolist() == want
    assert c.keys_copied == len(keys)
    # a column-major slice of a larger array keeps its stride and is read in place
    big = np.asfortranarray(np.concatenate([keys, keys]))
    assert c.classify(big[: len(keys)]).tolist() == want
    assert c.keys_copied == len(keys)


def test_every_batch_size_and_engine_batch(ruleset):
    path, keys, want, _ = ruleset
    c = warpath.Classifier(str(path), algo="tuple", engine="cpu")
    assert c.engine == "cpu.tuple"
    pool = np.asfortranarray(np.concatenate([keys] * 15))
    want_pool = want * 15
    for n in BATCH_SIZES:
        got = c.classify(np.asfortranarray(pool[:n]))
        assert got.shape == (n,) and got.tolist() == want_pool[:n], n
    for batch in (1, 31, 32, 33, 1000):
        assert c.classify(keys, batch=batch).tolist() == want


def test_out_filled_in_place(ruleset):
    path, keys, want, _ = ruleset
    c = warpath.Classifier(str(path))
    out = np.empty(len(keys), dtype=np.uint32)
    assert c.classify(keys, out=out) is out
    assert out.tolist() == want


def test_same_answers_as_the_cli_on_classbench(tmp_path):
    rules = data("classbench", "wustl_5tuple", "acl1_1K")
    trace = data("classbench", "wustl_5tuple", "acl1_1K_trace")
    want = [int(x) for x in cli("classify", "--rules", rules, "--trace", trace).split()]
    keys = warpath.load_keys(str(trace))
    assert keys.shape == (len(want), 4) and keys.flags.f_contiguous
    for engine in ("auto", "cpu.rfc", "cpu.split"):
        got = warpath.Classifier(str(rules), engine=engine).classify(keys)
        assert [int(x) if x != warpath.NO_MATCH else -1 for x in got] == want, engine


def test_openflow_rules_against_the_cli(tmp_path):
    cli("gen", "rules", "--out", tmp_path / "of.txt", "--trace", tmp_path / "of.trace", "-N",
        "200", "-C", "20", "-F", "10", "--matching", "2", "-f", "12", "--tuples", "2000")
    want = [int(x) for x in cli("classify", "--rules", tmp_path / "of.txt", "--format",
                                "openflow", "--trace", tmp_path / "of.trace").split()]
    keys = warpath.load_keys(str(tmp_path / "of.trace"), format="openflow")
    assert keys.shape == (2000, 9)
    for engine in ("ref", "cpu.tuple", "cpu.tuplemerge"):
        c = warpath.Classifier(str(tmp_path / "of.txt"), format="openflow", engine=engine)
        assert c.layout == "openflow" and c.key_words == 9
        got = c.classify(keys)
        assert [int(x) if x != warpath.NO_MATCH else -1 for x in got] == want, engine
    with pytest.raises(warpath.NotSupportedError, match="5-tuple rules only"):
        warpath.Classifier(str(tmp_path / "of.txt"), format="openflow", engine="cpu.rfc")


def test_updates_insert_and_erase(tmp_path):
    rules = tmp_path / "r"
    rules.write_text("@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n"
                     "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n")
    c = warpath.Classifier(str(rules), updates=True)
    k = warpath.five_tuple_keys([0x0A000001, 0x0B000001], [1, 1], [1, 1], [80, 80], [6, 6])
    assert c.classify(k).tolist() == [0, 1]
    c.erase(0)
    assert c.classify(k).tolist() == [1, 1]
    c.insert(0, "@11.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF")
    assert c.classify(k).tolist() == [1, 0]
    with pytest.raises(warpath.NotFoundError):
        c.erase(7)
    fixed = warpath.Classifier(str(rules), engine="cpu.rfc")
    with pytest.raises(warpath.NotSupportedError, match="cannot update"):
        fixed.erase(0)


def test_bad_input(tmp_path, ruleset):
    bad = tmp_path / "bad.rules"
    bad.write_text("@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n@10.0.0.0/8 oops\n")
    with pytest.raises(warpath.ParseError, match=rf"{bad}:2"):
        warpath.Classifier(str(bad))
    with pytest.raises(OSError, match="missing.rules"):
        warpath.Classifier(str(tmp_path / "missing.rules"))
    path, keys, _, _ = ruleset
    c = warpath.Classifier(str(path))
    with pytest.raises(warpath.InvalidArgumentError, match="keys have 3 columns; 5-tuple rules take 4"):
        c.classify(np.zeros((5, 3), dtype=np.uint32))
    with pytest.raises(TypeError):
        c.classify(np.zeros((5, 4), dtype=np.int64))
    with pytest.raises(TypeError):
        c.classify(np.zeros(8, dtype=np.uint32))
    with pytest.raises(warpath.NotFoundError, match="unknown engine 'tpu'"):
        warpath.Classifier(str(path), engine="tpu")
    with pytest.raises(warpath.InvalidArgumentError):
        c.classify(keys, batch=0)


def test_validate_with_a_device_word(ruleset):
    path, keys, want, _ = ruleset
    c = warpath.Classifier(str(path), engine="cpu", validate=True)
    assert c.engine.startswith("validate:")
    assert c.classify(keys).tolist() == want
