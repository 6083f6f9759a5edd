#!/usr/bin/env python3
"""Random rule updates for `warpath classify --updates`: insert/delete pairs.

    make_rule_updates.py --rules acl1_10K [--pool acl1_100K.gz | --reinsert] --pairs 200000
                         --out U [--seed S]

Churn (the default): each pair inserts a rule drawn from --pool (ClassBench lines; default:
--rules itself) at a free random priority in [0, 2n) (n: the rule file's rules) and deletes a
random live rule, so the set keeps its size while its rules change. --reinsert: each pair
deletes a random rule of the file and inserts it back at its priority, so the set is the
file's after every pair (what `warpath bench classify --updates` times), and a reader's rate
during the updates compares with its rate before them. Priorities 0..n-1 are the file's rules.
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
    ap.add_argument("--reinsert", action="store_true")
    ap.add_argument("--pairs", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    own = read_lines(a.rules)
    n = len(own)
    pool = read_lines(a.pool or a.rules)
    if not pool:
        sys.exit("make_rule_updates: the pool has no rules")
    rng = random.Random(a.seed)
    live = list(range(n))
    where = {p: i for i, p in enumerate(live)}
    if a.reinsert:
        if not own:
            sys.exit("make_rule_updates: the rule file has no rules")
        with open(a.out, "w") as out:
            out.write(f"# {a.pairs} delete/re-insert pairs over {a.rules}, seed {a.seed}\n")
            for _ in range(a.pairs):
                p = rng.randrange(n)
                out.write(f"- {p}\n+ {p} {own[p]}\n")
        return
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
