"""Divergence and warp-primitive family: ``cuda/divergence.cu`` -> ``ptx/divergence.ptx``.

Owns the branch/loop divergence cases and the warp vote and scan cases (group ``warp``). Imports
numpy, the standard library and the suite's own core (:mod:`.case`, :mod:`.launch`) only: never
gpusim's engines, never cupy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .case import Case, SizeError
from .launch import Launcher, cdiv, u32

_ROUNDS = 16
_K_A = np.uint32(0x9E3779B1)
_K_B = np.uint32(0x9E3779B9)


def _step_a(x: np.ndarray) -> np.ndarray:
    return (x * _K_A) ^ (x >> np.uint32(15))


def _step_b(x: np.ndarray) -> np.ndarray:
    return (x ^ (x >> np.uint32(7))) + _K_B


def _path(x: np.ndarray, step) -> np.ndarray:
    for _ in range(_ROUNDS):
        x = step(x)
    return x


def _branch_run(kernel: str, take_a: Callable[[np.ndarray], np.ndarray]):
    def run(xp, n, rng):
        v = u32(rng, n)
        L = Launcher(xp, "divergence.ptx")
        d_in = L.upload("in", v)
        d_out = xp.zeros(n, np.uint32)
        L(kernel, (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
        tid = np.arange(n) % 256
        with np.errstate(over="ignore"):
            exp = np.where(take_a(tid), _path(v, _step_a), _path(v, _step_b)).astype(np.uint32)
        return L.result({"out": d_out.get()}, {"out": exp})
    return run


def _run_divergent_loop(xp, n, rng):
    v = u32(rng, n)
    L = Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_out = xp.zeros(n, np.uint32)
    L("divergent_loop", (cdiv(n, 256),), (256,), (d_in, d_out, np.uint32(n)))
    trips = (np.arange(n) % 256) % 32
    exp = v.copy()
    with np.errstate(over="ignore"):
        for r in range(31):
            exp = np.where(trips > r, _step_a(exp), exp).astype(np.uint32)
    return L.result({"out": d_out.get()}, {"out": exp})


def _whole_warps(name: str, n: int) -> None:
    if n % 32:
        raise SizeError(f"{name}: n={n} must be a multiple of 32 (whole warps)")


def _run_warp_vote(xp, n, rng):
    _whole_warps("warp_vote", n)
    v = rng.integers(-104, 100, size=n).astype(np.int32)
    w = n // 32
    L = Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_ballot, d_all, d_any = xp.zeros(w, np.uint32), xp.zeros(w, np.int32), xp.zeros(w, np.int32)
    L("warp_vote", (cdiv(n, 256),), (256,), (d_in, d_ballot, d_all, d_any, np.uint32(n)))
    lanes = v.reshape(w, 32)
    ballot = ((lanes > 0).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    exp = {"ballot": ballot, "all": (lanes > -100).all(axis=1).astype(np.int32),
           "any": (lanes > 90).any(axis=1).astype(np.int32)}
    return L.result({"ballot": d_ballot.get(), "all": d_all.get(), "any": d_any.get()}, exp)


def _run_warp_scan(xp, n, rng):
    _whole_warps("warp_scan", n)
    v = rng.integers(-1000, 1001, size=n).astype(np.int32)
    L = Launcher(xp, "divergence.ptx")
    d_in = L.upload("in", v)
    d_scan, d_total = xp.zeros(n, np.int32), xp.zeros(n, np.int32)
    L("warp_scan", (cdiv(n, 256),), (256,), (d_in, d_scan, d_total, np.uint32(n)))
    lanes = v.reshape(-1, 32).astype(np.int64)
    scan = np.cumsum(lanes, axis=1)
    total = np.repeat(scan[:, -1:], 32, axis=1)
    return L.result({"scan": d_scan.get(), "total": d_total.get()},
                    {"scan": scan.reshape(-1).astype(np.int32), "total": total.reshape(-1).astype(np.int32)})


_M = 2**20


#: this family's cases, in suite order (all launch ``divergence.ptx``)
CASE_LIST: list[Case] = [
    Case("divergent_branch", "divergence", "divergence.ptx", "divergent_branch", _M, 3000,
         _branch_run("divergent_branch", lambda t: t % 2 == 0),
         "warp divergence: even/odd lanes take different 16-round paths, every warp runs both"),
    Case("uniform_branch", "divergence", "divergence.ptx", "uniform_branch", _M, 3000,
         _branch_run("uniform_branch", lambda t: (t // 32) % 2 == 0),
         "warp-uniform branch on threadIdx.x / 32: the same work, no divergence"),
    Case("divergent_loop", "divergence", "divergence.ptx", "divergent_loop", _M, 3000, _run_divergent_loop,
         "per-lane loop trip count (tid % 32): the warp runs as long as its slowest lane"),
    Case("warp_vote", "warp", "divergence.ptx", "warp_vote", _M, 2048, _run_warp_vote,
         "warp vote: __ballot_sync / __all_sync / __any_sync", n_means="elements (multiple of 32)"),
    Case("warp_scan", "warp", "divergence.ptx", "warp_scan", _M, 2048, _run_warp_scan,
         "warp inclusive scan with __shfl_up_sync, total broadcast with __shfl_sync",
         n_means="elements (multiple of 32)"),
]
