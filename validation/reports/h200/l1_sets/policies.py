"""Offline study (session 52): which L1 replacement policy gives both H200 probes' shapes?

``python3 validation/reports/h200/l1_sets/policies.py`` (pure Python, about a minute) prints, for a
1,792-line cache under each policy, the share of lines kept

* by a cyclic walk of n = 1,664 / 1,792 / 1,920 / 2,048 / 2,560 lines (``l1_sets.py``'s ``seq`` launches;
  the H200: 1.00, 0.79, 0.46, 0.18, 0), and
* by a line re-used after D = 300 / 740 / 1,250 / 1,800 / 2,500 fills of fresh lines (``l1_reprobe.py``'s
  ``dist 1`` launches, D about what gpusim's LRU sweeps imply for c = 1 to 8; the H200: 0.90, 0.72, 0.53,
  0.19, 0.08).

Policies: LRU (gpusim's), random, random among the least recent half or quarter, and LRU sets of 4 to 64
ways with a hashed set index. None fits both: the cyclic walk wants full use of the capacity with a
gradual loss past it; a hashed set index loses lines well below it (0.5-0.6 kept at 1,664). Output:
``policies_out.txt``. Imports nothing but the standard library.
"""

from __future__ import annotations

import collections
import random

C = 1792                                 #: lines: 256 KB less the 32 KB carveout, in 128 B lines
WALKS = (1664, 1792, 1920, 2048, 2560)
DISTANCES = (300, 740, 1250, 1800, 2500)


class Whole:
    """A fully associative cache of C lines: 'lru', 'random', or 'older' (random among the least
    recent ``share``)."""

    def __init__(self, policy: str, share: float = 1.0, seed: int = 1):
        self.policy, self.share, self.rng = policy, share, random.Random(seed)
        self.lines: collections.OrderedDict[int, None] = collections.OrderedDict()

    def access(self, line: int) -> bool:
        lines = self.lines
        if line in lines:
            if self.policy != "random":
                lines.move_to_end(line)
            return True
        if len(lines) >= C:
            k = 0 if self.policy == "lru" else self.rng.randrange(int(len(lines) * self.share))
            it = iter(lines)
            for _ in range(k):
                next(it)
            del lines[next(it)]
        lines[line] = None
        return False


class Sets:
    """C lines in LRU sets of ``ways``, the set a hash of the line."""

    def __init__(self, ways: int):
        self.ways, self.sets = ways, [collections.OrderedDict() for _ in range(C // ways)]

    def access(self, line: int) -> bool:
        h = line * 2654435761 & 0xFFFFFFFF
        h ^= h >> 15
        h = h * 0x2C1B3C6D & 0xFFFFFFFF
        s = self.sets[(h ^ h >> 12) % len(self.sets)]
        if line in s:
            s.move_to_end(line)
            return True
        if len(s) >= self.ways:
            s.popitem(last=False)
        s[line] = None
        return False


def cyclic(make, n: int, rounds: int = 5) -> float:
    """Share of hits after the first of ``rounds`` walks over lines 0..n-1."""
    cache, hits = make(), 0
    for r in range(rounds):
        for i in range(n):
            hit = cache.access(i)
            hits += hit if r else 0
    return hits / (n * (rounds - 1))


def reuse(make, distance: int, trials: int = 3000) -> float:
    """Share of fresh lines still present when re-used after ``distance`` more fresh lines (full cache)."""
    cache, fresh = make(), 1 << 40
    for _ in range(3 * C):
        cache.access(fresh)
        fresh += 1
    kept, waiting = 0, collections.deque()
    for _ in range(trials + distance):
        cache.access(fresh)
        waiting.append(fresh)
        fresh += 1
        if len(waiting) > distance:
            kept += cache.access(waiting.popleft())
    return kept / trials


def main() -> None:
    print("H200 (measured)     walks [1.0, 0.79, 0.46, 0.18, 0.0]  re-use [0.9, 0.72, 0.53, 0.19, 0.08]")
    makes = {"lru": lambda: Whole("lru"), "random": lambda: Whole("random"),
             "older half": lambda: Whole("older", 0.5), "older quarter": lambda: Whole("older", 0.25)}
    makes |= {f"sets of {w}": (lambda w=w: Sets(w)) for w in (4, 8, 16, 32, 64)}
    for name, make in makes.items():
        print(f"{name:19s} walks {[round(cyclic(make, n), 2) for n in WALKS]}  "
              f"re-use {[round(reuse(make, d), 2) for d in DISTANCES]}", flush=True)


if __name__ == "__main__":
    main()
