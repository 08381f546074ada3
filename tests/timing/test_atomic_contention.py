"""Contended global atomics in the timing model (gpusim.timing.memsys, ``l2.atomic_*``): the L1
splits a warp's lanes on one address into separate L2 requests; an address, a slice's atomic
unit and the GPU-wide request port each serialise the requests that need them; sampled timing
gives the slice's SMs their k / N share of them, so it agrees with the detailed engine; an
``atom`` whose result is never read counts as ``red`` (ptxas makes it RED)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import gpusim
import gpusim.sass
from gpusim.timing import Policy, memsys

#: The contended-atomics fields, all off; tests switch on the one they test.
OFF = {"l2.atomic_address_cycles": 0.0, "l2.atomic_address_cycles_float": 0.0, "l2.atomic_slice_cycles": 0.0,
       "l2.atomic_slice_cycles_float": 0.0, "l2.atomic_sector_cycles": 0.0, "l2.atomic_requests_per_cycle": 0.0,
       "l2.atomic_return_requests_per_cycle": 0.0, "l2.atomic_full_sector_cycles": 0.0}


WARM = 1 << 18


def _mem(**fields) -> memsys.MemorySystem:
    cfg = gpusim.config.load("h100").with_overrides({**OFF, **{f"l2.{k}": v for k, v in fields.items()}})
    mem = memsys.MemorySystem(cfg, 1 << 16)
    mem.warm(np.arange(WARM // 32, dtype=np.int64))  # the first 256 KB in L2: every update hits
    return mem


def _slot(mem: memsys.MemorySystem) -> float:
    """Cycles a sector holds the L2's bandwidth server."""
    return mem.l2.sector / mem.l2.read_bytes_per_cycle


def _atomic(mem: memsys.MemorySystem, sm: int, addrs: list[int], red: bool = True, fp: bool = False) -> float:
    a = np.array(addrs, np.uint64)
    sectors = np.unique(a >> np.uint64(5)).astype(np.int64)
    serial = int(np.unique(a, return_counts=True)[1].max())
    return mem.atomic(sm, 0, sectors, serial, red, a, fp)


def test_the_l1_splits_lanes_on_one_address_and_joins_words_of_one_line():
    one = memsys.atomic_requests(np.full(32, 4096, np.uint64))
    assert one == [(32, 0b0001, [4096])] * 32
    line = memsys.atomic_requests(np.arange(32, dtype=np.uint64) * 4 + 4096)
    assert line == [(32, 0b1111, list(range(4096, 4224, 4)))]
    # two lanes on 4096, one on 4100 (same line), one on 8192 (another line): the second lane on
    # 4096 is the only one in the second round
    mixed = memsys.atomic_requests(np.array([4096, 4100, 4096, 8192], np.uint64))
    assert mixed == [(32, 0b0001, [4096, 4100]), (64, 0b0001, [8192]), (32, 0b0001, [4096])]


def test_one_address_updated_from_several_sms_is_serialised_gpu_wide():
    mem = _mem(atomic_address_cycles=3.0)
    done = [_atomic(mem, sm, [4096]) for sm in range(4)]
    # each also takes its sector's slot on the L2's bandwidth server, at the same cycle
    assert np.diff(done) == pytest.approx([3.0 + _slot(mem)] * 3, abs=1e-9)
    assert mem.metrics()["lts__t_requests_srcunit_tex_op_red.sum"] == 4
    # 32 lanes of one warp on it: 32 requests, each 3 cycles after the one before
    mem = _mem(atomic_address_cycles=3.0)
    alone = _atomic(_mem(atomic_address_cycles=3.0), 0, [4096])
    assert _atomic(mem, 0, [4096] * 32) == alone + 31 * 3.0
    assert mem.metrics()["lts__t_requests_srcunit_tex_op_red.sum"] == 32


def test_an_atomics_sectors_of_a_far_line_are_counted_at_both_partitions():
    # The H100 counts a red or atom on a line homed in the other partition than the SM's at both
    # (validation/reports/h100/atomic_contention: 1,081,344 requests from every SM, 1,622,016
    # lts__t_sectors_op_red), its requests once. Line 32 (address 4096) is homed far from SM 0.
    for red, op in ((True, "red"), (False, "atom")):
        for serial in (True, False):   # the contended-atomics model on, and off (one request a line)
            mem = _mem(atomic_address_cycles=3.0) if serial else _mem()
            near = next(sm for sm in range(8) if not mem.l2.far(32, mem.l2.side(sm)))
            assert mem.l2.far(32, mem.l2.side(0))
            _atomic(mem, 0, [4096 + 4 * i for i in range(32)], red)      # far: one request of 4 sectors
            _atomic(mem, near, [4096 + 4 * i for i in range(32)], red)   # near
            m = mem.metrics()
            assert m[f"lts__t_requests_srcunit_tex_op_{op}.sum"] == 2, (op, serial)
            assert m[f"lts__t_sectors_op_{op}.sum"] == 4 * 2 + 4, (op, serial)


def test_float_updates_take_the_float_address_cycles():
    mem = _mem(atomic_address_cycles=1.0, atomic_address_cycles_float=5.0)
    t = [_atomic(mem, sm, [4096], fp=True) for sm in range(3)]
    assert np.diff(t) == pytest.approx([5.0 + _slot(mem)] * 2, abs=1e-9)


def test_addresses_of_one_slice_share_its_unit_and_other_slices_do_not():
    mem = _mem(atomic_slice_cycles=2.0, atomic_sector_cycles=1.5)
    l2 = mem.l2
    granule = 512
    same = [4096 + 4 * k for k in range(3)]  # one granule: one slice
    t = [_atomic(mem, sm, [a]) for sm, a in enumerate(same)]
    assert np.diff(t) == pytest.approx([2.0 + _slot(mem)] * 2, abs=1e-9)
    # one granule on each of four distinct slices: none waits for another
    others = []
    g = 100
    while len(others) < 4:
        line = g * granule // 128
        assert line * 128 < WARM
        if l2.atomic_slice(line) not in {l2.atomic_slice(4096 // 128)} | {l2.atomic_slice(a // 128) for a in others}:
            others.append(line * 128)
        g += 1
    fresh = _mem(atomic_slice_cycles=2.0, atomic_sector_cycles=1.5)
    t = [_atomic(fresh, sm, [a]) for sm, a in enumerate(others)]
    assert np.diff(t) == pytest.approx([_slot(mem)] * 3, abs=1e-9)
    # a request of 4 sectors holds its slice 2 + 3 x 1.5 cycles
    mem = _mem(atomic_slice_cycles=2.0, atomic_sector_cycles=1.5)
    first = _atomic(mem, 0, [4096 + 32 * k for k in range(4)])
    assert _atomic(mem, 1, [4096]) - first == pytest.approx(6.5 + 4 * _slot(mem), abs=1e-9)


def test_a_request_holds_its_slice_per_sector_less_for_a_sector_it_updates_whole():
    # validation/probes/atomic_lanes.py: on the H100 a request holds its slice 1.45 cycles for each
    # sector it updates in part and 1.19 for each whose 8 words it all updates, float adds alike
    def hold(addrs, fp=False):
        mem = _mem(atomic_slice_cycles=2.0, atomic_full_sector_cycles=1.25, atomic_slice_cycles_float=9.0)
        first = _atomic(mem, 0, addrs, fp=fp)
        return _atomic(mem, 1, [4096 + 100], fp=fp) - first - _slot(mem) * _popcount_sectors(addrs)

    assert hold([4096]) == pytest.approx(2.0, abs=1e-9)                                  # one word
    assert hold([4096 + 32 * k for k in range(4)]) == pytest.approx(8.0, abs=1e-9)       # 4 sectors in part
    assert hold([4096 + 4 * k for k in range(8)]) == pytest.approx(1.25, abs=1e-9)       # one whole sector
    assert hold([4096 + 4 * k for k in range(8)] + [4096 + 32]) == pytest.approx(3.25, abs=1e-9)
    assert hold([4096 + 32 * k for k in range(4)], fp=True) == pytest.approx(8.0, abs=1e-9)


def _popcount_sectors(addrs: list[int]) -> int:
    return len({a >> 5 for a in addrs})


def _other_slice_line(l2: memsys.L2, line: int) -> int:
    """A warm line homed in another slice than ``line``."""
    other = line + 4
    while l2.atomic_slice(other) == l2.atomic_slice(line):
        other += 4
    assert other * 128 < WARM
    return other


def test_reads_take_turns_with_atomics_at_their_slice():
    # 10 updates of 4096 book its slice's atomic unit for 20 cycles; a read of another line of that
    # slice (4224: the same 512 B granule) waits behind them and then holds the unit 1 cycle; a read
    # of a line of another slice does not wait. With slice_read_cycles 0 (and no sector cycles) neither waits.
    def reads(cycles: float) -> tuple[float, float, float]:
        mem = _mem(atomic_slice_cycles=2.0, slice_read_cycles=cycles, slice_read_sector_cycles=0.0)
        l2 = mem.l2
        for sm in range(10):
            _atomic(mem, sm, [4096])
        other = _other_slice_line(l2, 4096 // 128)
        # read from SMs near the lines' homes (a far home's latency would hide the wait)
        sm_same = next(sm for sm in range(20, 132) if l2.side(sm) == l2.home(4224 // 128))
        sm_other = next(sm for sm in range(20, 132) if l2.side(sm) == l2.home(other) and sm != sm_same)
        same = mem.load(sm_same, 0, np.array([4224 // 32]))
        elsewhere = mem.load(sm_other, 0, np.array([other * 4]))
        return same, elsewhere, _atomic(mem, 10, [4096])

    same_on, elsewhere_on, next_on = reads(1.0)
    same_off, elsewhere_off, next_off = reads(0.0)
    mem = _mem(atomic_slice_cycles=2.0)
    start = 10 * _slot(mem)  # the read's place on the bandwidth server, behind the 10 updates' sectors
    assert same_on - same_off == pytest.approx(20.0 - start, abs=1e-9)
    assert elsewhere_on == elsewhere_off
    assert next_on - next_off == pytest.approx(1.0, abs=1e-9)  # the read held the unit a cycle


def test_a_read_of_more_sectors_holds_its_slice_longer_where_its_sectors_take_longer():
    # 0.75 cycles a sector: one sector holds the slice 1 cycle (slice_read_cycles), 4 sectors 3
    for sectors, held in ((1, 1.0), (4, 3.0)):
        mem = _mem(atomic_slice_cycles=2.0, slice_read_cycles=1.0, slice_read_sector_cycles=0.75)
        _atomic(mem, 0, [4096])
        t = _atomic(mem, 1, [4096])
        mem = _mem(atomic_slice_cycles=2.0, slice_read_cycles=1.0, slice_read_sector_cycles=0.75)
        _atomic(mem, 0, [4096])
        mem.load(2, 0, np.arange(4224 // 32, 4224 // 32 + sectors))
        # the second update waits for the first and then the read (it came first): the hold, and
        # the read's sectors ahead of it on the bandwidth server
        assert _atomic(mem, 1, [4096]) - t == pytest.approx(held + sectors * _slot(mem), abs=1e-9)


def test_an_sm_holds_its_l1_once_its_atomics_queue_past_the_limit():
    # one address, 2 cycles an update; SM 0 sends 6 requests (its lanes on the one word: 6 cycles
    # in its stage, starting at 0, 2, ..., 10), then 6 more (stage at 6, starting at 12, ..., 22).
    # At 6, 8 are left waiting: with a queue of 4 the stage holds until the 4th of them starts (14)
    for queue, free in ((4, 14.0), (8, 12.0)):
        mem = _mem(atomic_address_cycles=2.0, atomic_queue_requests=queue)
        _atomic(mem, 0, [4096] * 6)
        _atomic(mem, 0, [4096] * 6)
        assert mem.l1(0).free == pytest.approx(free, abs=1e-9)


def test_the_request_port_takes_red_and_atom_at_their_rates():
    mem = _mem(atomic_requests_per_cycle=4.0, atomic_return_requests_per_cycle=2.0)
    spread = [4096 * k for k in range(8)]  # 8 lines: 8 requests
    red = _atomic(mem, 0, spread)
    mem2 = _mem(atomic_requests_per_cycle=4.0, atomic_return_requests_per_cycle=2.0)
    atom = _atomic(mem2, 0, spread, red=False)
    alone = _atomic(_mem(atomic_requests_per_cycle=4.0), 0, [0])
    # one read of 8 sectors: they start on the bandwidth server at once
    assert (red - alone, atom - alone) == (7 * 0.25, 7 * 0.5)


def test_the_model_off_keeps_the_serial_rule():
    mem = _mem()
    assert not mem.l2.contended
    one, many = _atomic(mem, 0, [4096]), _atomic(_mem(), 0, [4096] * 32)
    assert many - one == 31 * gpusim.config.load("h100").l2.atomic_serial_cycles


#: Every thread adds 1 to word (tid % A) of buf, twice; with ``atom`` (result unused: ptxas's RED).
PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry hot(.param .u64 buf, .param .u32 A)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [A];
    mov.u32 %r2, %tid.x;
    rem.u32 %r3, %r2, %r1;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    atom.global.add.u32 %r4, [%rd3], 1;
    red.global.add.u32 [%rd3], 1;
    ret;
}
"""
THREADS = 64


def _hot(a: int, sampling, overrides: dict | None = None, ctas: int = 512):
    with gpusim.Device("h100", mode="timing", overrides={"sm_count": 4, **(overrides or {})}, sampling=sampling):
        buf = gpusim.zeros(64, np.uint32)
        res = gpusim.RawModule(code=PTX).get_function("hot")((ctas,), (THREADS,), (buf, np.uint32(a)))
        out = buf.get()
    assert out.sum() == 2 * ctas * THREADS and out[0] == 2 * ctas * THREADS // a
    return res


@pytest.mark.parametrize("a,ctas,method", [(1, 512, "sm_slice"), (32, 1024, "sm_slice+waves")])
def test_sampled_timing_gives_the_slice_its_share_of_a_hot_address(a, ctas, method):
    # a 4-SM H100 timed from a 2-SM slice (a slice tells an address all SMs update from one SM's
    # own by its two SMs both updating it): the whole slice, or 3 of its waves extrapolated; the
    # back-pressure on the L1 keeps the waves at the L2's pace
    detailed = _hot(a, False, ctas=ctas)
    sampled = _hot(a, Policy(sms=2, min_waves=3, max_waves=3), ctas=ctas)
    assert sampled.sampling.method == method and detailed.sampling.method == "detailed"
    cfg = gpusim.config.load("h100")
    n = 2 * ctas * THREADS
    if a == 1:  # every update on one address: the slice's unit, 1.48 cycles each, sets the pace
        assert detailed.cycles == pytest.approx(n * cfg.l2.atomic_slice_cycles, rel=0.4)
        assert detailed.cycles > n * cfg.l2.atomic_slice_cycles
    assert sampled.cycles == pytest.approx(detailed.cycles, rel=0.05)  # 32 addresses, waves: -3.7 %
    # the result-less atom counts as red, as on the H100; one address: a request a lane; 32 words
    # of one line: a request a warp
    m = detailed.metrics
    req, sec = "lts__t_requests_srcunit_tex_op_red.sum", "lts__t_sectors_op_red.sum"
    assert m[req] == (n if a == 1 else n // 32)
    assert m["lts__t_requests_srcunit_tex_op_atom.sum"] == 0
    # half the 4 SMs are near the address's partition, and so are half the slice's 2 (sampling.slice_sides;
    # the GPU's first two are on one side): a far request's sectors count twice in both (as many
    # CTAs on each side as the dispatcher's timing gives: within 0.5 %)
    assert m[sec] == pytest.approx(m[req] * (1.5 if a == 1 else 6), rel=0.005)
    assert sampled.metrics[sec] / sampled.metrics[req] == pytest.approx(m[sec] / m[req], rel=0.01)


def test_contention_makes_a_hot_address_slower_than_the_serial_rule():
    on, off = _hot(1, False, ctas=128), _hot(1, False, OFF, ctas=128)
    assert on.cycles > 2 * off.cycles


#: atomicAdd(count, 1) on a uniform address: ptxas warp-aggregates it (VOTEU.ANY, POPC, one ATOMG).
AGGREGATED = r"""
extern "C" __global__ void count(unsigned* out, unsigned* count)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(count, 1u);
}
"""


def test_an_atomic_ptxas_aggregates_reaches_the_l2_once_a_warp():
    ctas = 8
    with gpusim.Device("h100", mode="timing", overrides={"sm_count": 4}, sampling=False):
        out, cnt = gpusim.zeros(ctas * 128, np.uint32), gpusim.zeros(1, np.uint32)
        res = gpusim.RawModule(code=AGGREGATED).get_function("count")((ctas,), (128,), (out, cnt))
        assert cnt.get()[0] == ctas * 128 and sorted(out.get().tolist()) == list(range(ctas * 128))
    if gpusim.sass.find_nvdisasm() is None or shutil.which("ptxas") is None:
        pytest.skip("no ptxas listing: aggregation is not seen")
    assert res.metrics["lts__t_requests_srcunit_tex_op_atom.sum"] == ctas * 128 // 32
