#!/usr/bin/env python3
"""Random rule updates for `warpath classify --updates`: insert/delete pairs.

    make_rule_updates.py --rules acl1_10K --pool acl1_100K.gz --pairs 200000 --out U [--seed S]

Each pair inserts a rule drawn from --pool (ClassBench lines; default: --rules itself) at a
free random priority in [0, 2n) (n: the rule file's rules) and deletes a random live rule, so
the set keeps its size while it churns. Priorities 0..n-1 are the rule file's own rules.
"""
import argparse
import gzip
import lzma
import random
import sys


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", required=True)
    ap.add_argument("--pool")
    ap.add_argument("--pairs", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    n = len(read_lines(a.rules))
    pool = read_lines(a.pool or a.rules)
    if not pool:
        sys.exit("make_rule_updates: the pool has no rules")
    rng = random.Random(a.seed)
    live = list(range(n))
    where = {p: i for i, p in enumerate(live)}
    with open(a.out, "w") as out:
        out.write(f"# {a.pairs} insert/delete pairs over {a.rules} (pool {a.pool or a.rules}), seed {a.seed}\n")
        for _ in range(a.pairs):
            while True:
                p = rng.randrange(2 * max(n, 1))
                if p not in where:
                    break
            out.write(f"+ {p} {rng.choice(pool)}\n")
            where[p] = len(live)
            live.append(p)
            victim = live[rng.randrange(len(live))]
            i = where.pop(victim)
            last = live.pop()
            if last != victim:
                live[i] = last
                where[last] = i
            out.write(f"- {victim}\n")


if __name__ == "__main__":
    main()
