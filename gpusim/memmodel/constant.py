"""Constant-cache transactions of an indexed ``ld.const`` (ptxas's ``LDC``).

Owns: how many transactions one warp's constant load takes: one per distinct address
among its active lanes. A warp-uniform address is broadcast to every lane in one
transaction; divergent addresses are serialised (CUDA C++ Programming Guide, "Constant
Memory": "accesses to different addresses by threads within a warp are serialized, so
cost scales linearly with the number of unique addresses read by all threads within a
warp"). Imports only numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["constant_transactions"]


def constant_transactions(rows: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
    """Transactions per warp.

    Args:
        rows: (W, 32) byte addresses (any integer dtype), one row per warp; a (32,) array is one warp.
        active: (W, 32) bool, the lanes that access (``None``: all).

    Returns:
        int64 array of shape (W,): distinct addresses among the active lanes of each warp
        (0 for a warp without active lanes).
    """
    rows = np.atleast_2d(np.asarray(rows)).astype(np.uint64)
    if active is None:
        s = np.sort(rows, axis=1)
        return 1 + np.count_nonzero(s[:, 1:] != s[:, :-1], axis=1).astype(np.int64)
    active = np.atleast_2d(active)
    big = np.uint64(np.iinfo(np.uint64).max)
    s = np.sort(np.where(active, rows, big), axis=1)
    new = np.ones_like(s, dtype=np.bool_)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return np.count_nonzero(new & (s != big), axis=1).astype(np.int64)
