"""The timing model's components behind their small interfaces: scheduler policies by
registered name (a user policy runs a launch; an unknown name is a clear error naming
``sm.scheduler.policy``), and the config fields that replaced constants marked ASSUMED
(``sm.const_transaction_cycles``, ``l2.atomic_serial_cycles``) doing what they say."""

from __future__ import annotations

import collections
import pathlib

import numpy as np
import pytest

import gpusim
from gpusim.errors import ConfigError
from gpusim.memmodel import partial_sectors
from gpusim.suite import CASES, check, run_case
from gpusim.timing import memsys, policies
from tests.timing.test_timing_engine import _launch


class OldestFirst(policies.SchedulerPolicy):
    """Always the oldest warp that can issue (no greed, no rotation)."""

    def order(self, warps, last):
        return warps


@pytest.fixture
def oldest():
    policies.register_policy("oldest_test", OldestFirst)
    yield "oldest_test"
    del policies._POLICIES["oldest_test"]


def test_a_registered_policy_orders_the_issues_as_reasoned(oldest):
    # 5 warps of 'independent' (two movs, eight independent adds, ret); slots 0 and 4 share
    # scheduler 0. One issue cycle per PTX instruction. Oldest first: warp 0's movs at 0 and 2
    # (ALU pipe, interval 2); at 4 warp 0 waits for its movs (latency 4) so warp 4 takes the
    # ALU; from 6 warp 0 is ready every cycle (FMA pipe, interval 1) and, being oldest, issues
    # its adds and ret back to back, 6..14, although warp 4 is ready at 6 too (gto would pick
    # warp 4 there: it issued last). Then warp 4: its second mov at 15, its adds at 19..27.
    r = _launch("independent", 1, 160, record_events=True, overrides={"sm.scheduler.policy": oldest}, sass=False)
    log = [(e.cycle, e.slot, e.pc) for e in r.events if e.slot % 4 == 0]
    assert log == [(0, 0, 0), (2, 0, 1), (4, 4, 0)] + [(6 + i, 0, 2 + i) for i in range(9)] \
        + [(15, 4, 1)] + [(19 + i, 4, 2 + i) for i in range(9)]
    gto = _launch("independent", 1, 160, overrides={"sm.scheduler.policy": "gto"}, sass=False)
    # The launch ends in the cycle the last ret issues (no launch overhead here): 27, where gto's
    # interleaving (test_timing_engine.test_gto_keeps_issuing_the_same_warp) ends at 24.
    assert (r.cycles, gto.cycles) == (27, 24)


def test_a_registered_policy_runs_a_suite_case_with_exact_outputs(oldest):
    case = CASES["reduce_v1"]
    with gpusim.Device("h100", mode="timing", overrides={"sm.scheduler.policy": oldest}, sampling=False):
        run = run_case(case, gpusim, 4096, seed=0)
    ok, why = check(run)
    assert ok, why
    with gpusim.Device("h100", mode="timing", sampling=False):
        ref = run_case(case, gpusim, 4096, seed=0)
    for key in ref.outputs:
        np.testing.assert_array_equal(run.outputs[key], ref.outputs[key])
    assert [r.metrics["smsp__inst_executed.sum"] for r in run.launches] == \
        [r.metrics["smsp__inst_executed.sum"] for r in ref.launches]


def test_an_unknown_policy_names_the_field_and_the_known_policies():
    with pytest.raises(ConfigError) as e:
        _launch("independent", 1, 32, overrides={"sm.scheduler.policy": "fifo"})
    msg = str(e.value)
    assert "sm.scheduler.policy = 'fifo' is not a registered scheduler policy" in msg
    assert "gto, lrr, oldest_cta, two_level" in msg


def test_register_policy_rejects_what_cannot_be_a_policy():
    with pytest.raises(ValueError):
        policies.register_policy("", OldestFirst)
    with pytest.raises(TypeError):
        policies.register_policy("x", 3)


CONST_PTX = pathlib.Path(__file__).parents[1] / "corpus" / "ptx" / "const_stencil.ptx"


def _permute_cycles(per_transaction: int) -> int:
    # One warp of permute_lanes: lane i loads c_perm[i] (32 distinct constant addresses, so 32
    # serialised transactions), and its global load's address depends on that value.
    with gpusim.Device("h100", mode="timing", overrides={"sm.const_transaction_cycles": per_transaction}):
        x = gpusim.asarray(np.arange(32, dtype=np.int32))
        out = gpusim.zeros(32, np.int32)
        r = gpusim.RawModule(path=str(CONST_PTX)).get_function("permute_lanes")(1, 32, (x, out, np.int32(32)))
        assert (out.get() == 0).all()  # c_perm is all zeros here: every lane reads x[0]
        return r.cycles


def test_const_transaction_cycles_cost_each_serialised_transaction():
    # The constant load is on the warp's critical path: each of the 31 transactions after the
    # first adds sm.const_transaction_cycles.
    c0, c1, c3 = _permute_cycles(0), _permute_cycles(1), _permute_cycles(3)
    assert (c1 - c0, c3 - c1) == (31, 62)


def test_l2_atomics_on_one_address_serialise_by_the_configured_cycles():
    cfg = gpusim.config.load("h100")
    for per_update in (1, 4):
        c = cfg.with_overrides({"l2.atomic_serial_cycles": per_update})
        one = memsys.MemorySystem(c, 1 << 16).l2.atomic(100.0, [7], [0b0001], 1, False)
        many = memsys.MemorySystem(c, 1 << 16).l2.atomic(100.0, [7], [0b0001], 32, False)
        assert many - one == 31 * per_update
    # A cold sector: the read misses L2, so DRAM's latency bounds it (after L2's bandwidth slot), plus
    # the far partition's share and the loaded-latency curve's wait for the 64 B it is the first to read.
    u = 64 / (cfg.dram.latency_cycles * cfg.dram.bandwidth_bytes_per_s / cfg.clock_hz)
    far_share = (cfg.l2.far_latency_cycles - cfg.l2.latency_cycles) / 2  # an atomic has no reading SM: the average
    assert one == pytest.approx(100.0 + cfg.dram.latency_cycles + far_share + 100 * u / (1 - u), abs=1e-9)


def _steady_read_latency(cfg, nbytes: int, every: float, span: float = 30.0) -> float:
    # Reads of nbytes every `every` cycles for `span` DRAM latencies; the latency of the last one.
    dram = memsys.DRAM(cfg, memsys.collections.Counter())
    t = 0.0
    for _ in range(int(span * cfg.dram.latency_cycles / every)):
        done = dram.read(t, nbytes)
        last, t = t, t + every
    return done - last


def test_dram_latency_follows_the_loaded_latency_curve():
    cfg = gpusim.config.load("h100")
    L, q = cfg.dram.latency_cycles, cfg.dram.queue_cycles
    peak = cfg.dram.bandwidth_bytes_per_s / cfg.clock_hz
    lat = {}
    for every in (2.0, 1.0, 0.5):  # 512 B every `every` cycles: 15 %, 30 % and 61 % of the peak
        # the exponential average of the bytes served, once steady: 512 / (1 - exp(-every / L))
        u = 512 / (1 - np.exp(-every / L)) / (L * peak)
        lat[every] = _steady_read_latency(cfg, 512, every)
        assert lat[every] == pytest.approx(L + q * u / (1 - u), rel=1e-6)
    assert lat[2.0] < lat[1.0] < lat[0.5]
    # Without the curve the latency is fixed, however busy DRAM is (below its sustained rate).
    flat = cfg.with_overrides({"dram.queue_cycles": 0})
    assert _steady_read_latency(flat, 512, 0.5) == L
    # Demand beyond the sustained rate queues at the server on top: latency keeps growing.
    assert _steady_read_latency(cfg, 512, 0.25, 2.0) > _steady_read_latency(cfg, 512, 0.25, 1.0) > lat[0.5]


def test_a_clock_what_if_keeps_drams_latency_in_nanoseconds():
    # dram.latency_clock_hz: the latency and the loaded-latency curve were counted at 1.98 GHz; at
    # 1.32 GHz an idle DRAM read takes two thirds of the cycles, the same nanoseconds. Unset, the
    # cycles stay. (The bandwidths are per second already: at a third fewer cycles a second, a byte
    # takes a third fewer cycles too.)
    cfg = gpusim.config.load("h100")
    assert cfg.dram.latency_clock_hz == cfg.clock_hz == 1.98e9
    slow = cfg.with_overrides({"clock_hz": 1.32e9})
    held = cfg.with_overrides({"clock_hz": 1.32e9, "dram.latency_clock_hz": None})
    cfgs = {"base": cfg, "slow": slow, "held": held}
    lat = {k: memsys.DRAM(c, memsys.collections.Counter()).read(0.0, 64) for k, c in cfgs.items()}
    ns = {k: lat[k] / c.clock_hz * 1e9 for k, c in cfgs.items()}
    assert ns["slow"] == pytest.approx(ns["base"], rel=1e-3) and lat["slow"] < lat["base"]
    assert lat["held"] == pytest.approx(lat["base"], rel=1e-3)
    for c in (slow, held):  # the curve's slope with it
        d = memsys.DRAM(c, memsys.collections.Counter())
        assert d.queue / d.latency == pytest.approx(cfg.dram.queue_cycles / cfg.dram.latency_cycles)


def test_a_read_served_at_a_far_home_pays_the_far_extra_hit_or_miss():
    # far_hit.py on the H100: a line homed in the other partition costs ~185 cycles more, whether the
    # L2 holds it (465 against 283) or DRAM does (760 against 577); a copy near the reader does not.
    cfg = gpusim.config.load("h100")
    near_lat, extra = cfg.l2.latency_cycles, cfg.l2.far_latency_cycles - cfg.l2.latency_cycles
    l2 = _l2(cfg)
    near, far = ([x for x in range(0, 64 * 32, 32) if l2.home(x) == p][:1] for p in (0, 1))
    l2.write(0.0, near + far, [0b1111] * 2, 8, side=1)                 # both present, dirty at home
    t = 10_000.0
    assert l2.read(t, near, [0b1111], side=0) == t + near_lat           # an idle L2: its latency alone
    assert l2.read(2 * t, far, [0b1111], side=0) == 2 * t + near_lat + extra   # its home is across
    assert l2.read(3 * t, far, [0b1111], side=0) == 3 * t + near_lat    # the copy that read left near
    # DRAM misses, each line alone on an idle GPU: the far-homed one later by the same extra.
    cold = _l2(cfg)
    a = cold.read(0.0, near, [0b1111], side=0)
    b = _l2(cfg).read(0.0, far, [0b1111], side=0)
    assert b - a == pytest.approx(extra)
    # One L2 cache (no partitions): no far homes, no extra.
    one = _l2(cfg.with_overrides({"l2.partitions": 1}))
    assert one.read(0.0, far, [0b1111], side=0) == pytest.approx(a)


def test_a_partition_homes_whole_granules():
    # far_hit.py on the H100: the lines homed far from an SM come in runs of 32 and 64 (4 KiB granules);
    # an option (the h100 config keeps one line a granule: configs/h100.toml says why).
    cfg = gpusim.config.load("h100").with_overrides({"l2.partition_granule_bytes": 4096})
    l2 = _l2(cfg)
    homes = [l2.home(x) for x in range(32 * 64)]
    granules = [set(homes[32 * g:32 * (g + 1)]) for g in range(64)]
    assert all(len(h) == 1 for h in granules)                    # a granule's 32 lines share a home
    assert 24 <= sum(h == {1} for h in granules) <= 40           # about half the granules each way
    by_line = _l2(cfg.with_overrides({"l2.partition_granule_bytes": 128}))
    assert len({by_line.home(x) for x in range(32)}) == 2         # each line on its own
    for bad in (96, 3 * 128):
        with pytest.raises(ConfigError, match="l2.partition_granule_bytes .* must be a power of two"):
            cfg.with_overrides({"l2.partition_granule_bytes": bad})


def test_the_sides_of_sms_come_from_the_config_else_alternate():
    cfg = gpusim.config.load("h100")
    sides = cfg.l2.sm_partitions
    assert len(sides) == cfg.sm_count and sides.count(0) == sides.count(1) == 66
    assert all(sides[2 * k] == sides[2 * k + 1] for k in range(66))   # the two SMs of a TPC together
    l2 = _l2(cfg)
    assert [l2.side(s) for s in range(cfg.sm_count)] == list(sides)
    alt = _l2(cfg.with_overrides({"l2.sm_partitions": None}))
    assert [alt.side(s) for s in range(6)] == [0, 1, 0, 1, 0, 1]
    with pytest.raises(gpusim.ConfigError, match="l2.sm_partitions must give each of the sm_count"):
        cfg.with_overrides({"l2.sm_partitions": [0, 2] * 66})


def test_a_kernel_ends_when_its_last_store_is_performed():
    # fma_chain8's one warp stores its result and exits: the launch lasts until L2 has the store.
    r = _launch("fma_chain8", 1, 32, record_events=True)
    store = next(e for e in r.events if e.space == "global")
    assert r.cycles == store.ready > max(e.cycle for e in r.events)


def test_the_sm_does_not_import_the_launch_driver():
    # gpu -> sm -> context: the SM sees its launch through LaunchContext (no import circle).
    import ast
    import inspect

    from gpusim.timing import context, dispatch, sm

    for mod in (sm, context, dispatch, policies, memsys):
        tree = ast.parse(inspect.getsource(mod))
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
            {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "gpusim.timing.gpu" not in names, mod.__name__
    assert not {"gpusim.timing.sm", "gpusim.timing.gpu"} & \
        {n.module for n in ast.walk(ast.parse(inspect.getsource(context))) if isinstance(n, ast.ImportFrom)}


def _warp_store(mem, sm, now, addrs, width=4):
    sectors = np.unique(addrs >> np.uint64(5)).astype(np.int64)
    return mem.store(sm, now, sectors, partial_sectors(addrs, width, len(sectors)))


def test_partial_sectors_are_the_sectors_a_store_writes_in_part():
    lanes = np.arange(32, dtype=np.uint64)
    assert partial_sectors(lanes * 4, 4, 4) == []                       # coalesced: 4 whole sectors
    assert partial_sectors(lanes * 16, 16, 16) == []                    # float4: 16 whole sectors
    # stride 2 words: words 0, 2, 4, 6 of each sector (bytes 0-3, 8-11, 16-19, 24-27)
    assert partial_sectors(lanes * 8, 4, 8) == [(s, 0x0F0F0F0F) for s in range(8)]
    # all lanes on one word: one sector, 4 of its bytes
    assert partial_sectors(np.full(32, 64, np.uint64), 4, 1) == [(2, 0xF)]


def test_scattered_stores_send_a_request_a_line_and_the_l2_takes_30_a_cycle():
    cfg = gpusim.config.load("h100")
    assert (cfg.l1.write_combine_lines, cfg.l2.write_requests_per_cycle) == (16, 30)
    lanes = np.arange(32, dtype=np.uint64)
    for lines, joins in ((8, True), (32, False)):
        mem = memsys.MemorySystem(cfg, 1 << 16)
        # the naive transpose's pattern: lane l writes word w of line (l % lines)
        first = (lanes % lines) * 128 + (lanes // lines) * 4
        _warp_store(mem, 0, 0, first)
        assert mem.count["l2_write_requests"] == lines
        _warp_store(mem, 0, 1, first + 32 // lines * 4)  # the next warp: the same lines, the next words
        # 8 lines fit the 16 most recent stored lines and join their requests; 32 do not
        assert mem.count["l2_write_requests"] == (lines if joins else 2 * lines)
    # The L1 stays busy until the L2 has taken the store's last request, less the L2's write queue:
    # at half a request a cycle, two stores of 32 requests hold it 126 cycles with no queue, 106
    # with a queue of 20 cycles (its tag stage alone: 64).
    for queue, free in ((0, 126), (20, 106)):
        slow = memsys.MemorySystem(cfg.with_overrides({"l2.write_requests_per_cycle": 0.5, "l2.write_queue_cycles": queue,
                                                       "l2.write_data_bytes_per_s": None}), 1 << 16)
        _warp_store(slow, 0, 0, first)
        _warp_store(slow, 0, 1, first + 4)
        assert slow.l1(0).free == free
    # Without the limits (the defaults), every line is a request and nothing waits for the port.
    free = memsys.MemorySystem(cfg.with_overrides({"l1.write_combine_lines": 0, "l2.write_requests_per_cycle": 0,
                                                   "l2.write_data_bytes_per_s": None}), 1 << 16)
    _warp_store(free, 0, 0, lanes * 128)
    assert free.count["l2_write_requests"] == 32 and free.l1(0).free == 32


def test_a_warps_adjacent_narrow_stores_merge_the_sectors_they_write_in_part():
    # validation/reports/h200/store_merge: out[2t], out[2t + 1] (4 bytes each, 8 bytes apart) fill each
    # sector between two stores; back to back they reach L2 as one write a sector, 8-byte stores or
    # stores 30 instructions apart as one a store.
    cfg = gpusim.config.load("h100")
    assert (cfg.l1.store_merge_lines, cfg.l1.store_merge_instructions, cfg.l1.store_merge_lane_bytes) == (4, 8, 4)
    lanes = np.arange(32, dtype=np.uint64)

    def sectors_written(width, stride, second_after, warps=("w",), load_between=False):
        mem = memsys.MemorySystem(cfg.with_overrides({"l1.write_combine_lines": 0}), 1 << 16)
        prev = {}  # warp -> its instruction count at its last memory instruction
        for k, seq in ((0, 1), (1, 1 + second_after)):
            for w in warps:
                a = lanes * stride + k * width
                sectors = np.unique(a >> np.uint64(5)).astype(np.int64)
                mem.store(0, seq, sectors, partial_sectors(a, width, len(sectors)), width, w, seq, prev.get(w, 0))
                prev[w] = seq if k == 0 and not load_between else prev.get(w, 0)
        return mem.count["l2_write_sectors"], mem.count["l2_write_requests"]

    assert sectors_written(4, 8, 1) == (8, 2)         # 8 sectors of 2 lines: the second store merges
    assert sectors_written(4, 8, 8) == (8, 2)
    assert sectors_written(4, 8, 30) == (16, 4)       # too far apart: two writes a sector
    assert sectors_written(8, 16, 1) == (32, 8)       # 8-byte stores never merge
    assert sectors_written(4, 32, 1) == (64, 16)      # 4-byte stores over 8 lines neither
    # the record is the warp's own: another warp's store between does not break it
    assert sectors_written(4, 8, 1, warps=("a", "b")) == (16, 4)
    assert sectors_written(4, 8, 2, load_between=True) == (16, 4)  # a load between them: no merge


def test_a_dropped_line_frees_its_places():
    cache = memsys.SectorCache(3, dirty_places=2)
    assert cache.fill(1, 0b1111) == [] and cache.fill(2, 0b0001, dirty=True) == [] and cache.full
    cache.drop(2)
    cache.drop(7)                                                       # not held: nothing happens
    assert cache.used == 1 and list(cache.lines) == [1]
    assert cache.fill(3, 0b0001) == [] and cache.fill(4, 0b0001) == [] and cache.used == 3


def test_written_lines_take_dirty_places_and_a_line_written_grows_to_them():
    # validation/reports/h100/store_cleaning/sequential: the H100's L2 holds half its capacity of
    # written data (l2.dirty_places = 2)
    cache = memsys.SectorCache(4, dirty_places=2)
    assert cache.fill(1, 0b1111, dirty=True) == [] and cache.fill(2, 0b1111, dirty=True) == [] and cache.full
    assert cache.fill(3, 0b0011, dirty=True) == [(1, 0b1111)] and cache.used == 4   # the oldest goes, dirty
    grow = memsys.SectorCache(3, dirty_places=2)
    for line in (1, 2, 3):
        grow.fill(line, 0b0001)
    assert grow.fill(1, 0b0001, dirty=True) == [(2, 0)] and grow.used == 3         # line 1 now takes two
    assert list(grow.lines) == [3, 1]


def _l2(cfg):
    count = memsys.collections.Counter()
    return memsys.L2(cfg, memsys.DRAM(cfg, count), count)


def test_a_far_read_leaves_a_copy_near_and_a_write_goes_home_and_drops_it():
    cfg = gpusim.config.load("h100").with_overrides({"l2.size_bytes": 1024 * 128,  # 2 partitions of 512 lines
                                                     "l2.partition_granule_bytes": 128})  # each line homed alone
    l2 = _l2(cfg)
    assert len(l2.caches) == 2 and all(c.capacity == 512 for c in l2.caches)
    lines = list(range(1024))
    homes = [memsys.home_partition(x, 2) for x in lines]
    assert 460 < sum(homes) < 564                                      # the hash homes half the lines in each
    for line in lines:                                                 # read by SMs near partition 0
        l2.read(0, [line], [0b1111], side=0)
    near, far = l2.caches
    assert all(homes[x] == 1 for x in far.lines)                       # partition 1 holds only its home lines
    assert len(near.lines) == 512 and len(far.lines) == min(512, sum(homes))   # 0: its own lines and the copies
    x = next(x for x in reversed(lines) if homes[x] == 1 and x in near.lines)
    l2.write(0, [x], [0b0001], 1, side=0)
    assert x not in near.lines and far.lines[x][1] == 0b0001           # written at home, the copy dropped
    one = _l2(cfg.with_overrides({"l2.localizes_far_reads": False}))
    for line in lines:
        one.read(0, [line], [0b1111], side=0)
    assert len(one.caches) == 1 and len(one.caches[0].lines) == 1024


def test_warmed_loads_fill_the_partition_of_the_shadows_sm_and_their_home():
    # sampled timing: a shadow CTA's loads go into the L2 as that CTA's SM would read them
    cfg = gpusim.config.load("h100").with_overrides({"l2.partition_granule_bytes": 128})
    mem = memsys.MemorySystem(cfg, 1 << 16)
    homes = {x: memsys.home_partition(x, 2) for x in range(64)}
    far_of_1 = [x for x, h in homes.items() if h == 0][:2]     # homed at 0: far from side 1
    near_of_1 = [x for x, h in homes.items() if h == 1][:2]
    sectors = np.array(sorted(4 * x for x in far_of_1 + near_of_1), dtype=np.int64)
    mem.warm(sectors, side=1)
    p0, p1 = mem.l2.caches
    assert set(p0.lines) == set(far_of_1)                       # the far lines' homes
    assert set(p1.lines) == set(far_of_1 + near_of_1)           # side 1's own lines and its copies
    assert mem.count["shadow_dram_read_bytes"] == 4 * 64         # each line's missed sector, one granule
    mem.warm(sectors, stored=True)                              # a shadow's stores: home, copies dropped
    assert set(p1.lines) == set(near_of_1) and all(p0.lines[x][1] == 1 for x in far_of_1)


def test_random_reads_from_both_sides_miss_beyond_one_partition():
    # validation/reports/h100/random_access (rd_mod): random loads by all SMs fit the H100's L2 up
    # to 24 MiB and miss from 28 MiB on, as if each 25 MB partition held its home lines and copies
    # of the far lines its own SMs read. Here: a footprint of 768 lines, read at random from both
    # sides, misses again and again in two partitions of 512 lines; one cache of 1,024 holds it.
    cfg = gpusim.config.load("h100").with_overrides({"l2.size_bytes": 1024 * 128})
    rng = np.random.default_rng(0)
    reads = rng.integers(0, 768, 20000).tolist()
    fetched = {}
    for localize in (True, False):
        l2 = _l2(cfg.with_overrides({"l2.localizes_far_reads": localize}))
        for k, line in enumerate(reads):
            l2.read(0, [line], [0b0001], side=k % 2)
        fetched[localize] = l2.count["dram_read_bytes"] // 64           # a missed sector's 64-byte granule
    assert fetched[False] == 768 and fetched[True] > 2 * 768


def test_a_partly_written_sector_is_completed_from_dram_when_evicted():
    cfg = gpusim.config.load("h100").with_overrides({"l2.size_bytes": 2 * 128,   # an L2 of two lines,
                                                     "l2.dirty_places": 1,      # each holding one written line,
                                                     "l2.localizes_far_reads": False})  # in one LRU
    lanes = np.arange(8, dtype=np.uint64)
    mem = memsys.MemorySystem(cfg, 1 << 16)
    _warp_store(mem, 0, 0, lanes * 8)              # line 0: every other word of 2 sectors (64 B)
    _warp_store(mem, 0, 10, 1024 + lanes * 8 + 4)   # line 8: the odd words...
    _warp_store(mem, 0, 20, 1024 + lanes * 8)       # ...then the even ones: its sectors are whole
    assert sorted(mem.l2.partial_bytes) == [0, 1]
    _warp_store(mem, 0, 30, 2048 + lanes * 4 * 4)  # line 16 evicts line 0
    # line 0's two half-written sectors: the rest read (one 64 B granule), the sectors written back
    assert (mem.count["dram_read_bytes"], mem.count["dram_write_bytes"]) == (64, 64)
    _warp_store(mem, 0, 40, 3072 + lanes * 16)     # line 24 evicts line 8: whole sectors, nothing read
    assert (mem.count["dram_read_bytes"], mem.count["dram_write_bytes"]) == (64, 128)
    # A load of a partly written sector reads its rest from DRAM (a miss, not a hit).
    mem2 = memsys.MemorySystem(cfg, 1 << 16)
    _warp_store(mem2, 0, 0, lanes * 8)
    mem2.load(1, 100, np.array([0], np.int64), cache_l1=False)
    assert mem2.count["l2_read_hits"] == 0 and mem2.count["dram_read_bytes"] == 64 and not mem2.l2.partial_bytes


def test_sampled_slices_pay_their_share_of_every_eviction():
    # Sampled timing: whichever fill evicts a dirty line, the slice's DRAM server carries its share
    # (k / N) of the write-back, and the counters keep the whole bytes.
    cfg = gpusim.config.load("h100").with_overrides({"l2.size_bytes": 128, "l2.dirty_places": 1,  # an L2 of one line
                                                     "l2.localizes_far_reads": False})
    mem = memsys.MemorySystem(cfg, 1 << 16)
    mem.l2.eviction_share = 0.25
    mem.warm(np.arange(4, dtype=np.int64), stored=True, now=10.0)          # a shadow dirties line 0
    mem.warm(np.arange(4, 8, dtype=np.int64), stored=True, now=10.0)       # ... and evicts it: 128 B
    assert mem.count["shadow_dram_write_bytes"] == 128
    # a quarter of the write-back and of its row's activation
    d = mem.dram
    assert d.free == pytest.approx(10.0 + 0.25 * (128 / d.write_bytes_per_cycle + d.activate_write))
    mem.load(0, 1000, np.arange(8, 12, dtype=np.int64))                    # the slice's fill evicts line 1
    assert mem.count["dram_write_bytes"] == 128 and mem.count["dram_read_bytes"] == 128
    # a quarter of the write-back, then its own read (128 B), hold the server; lines 1 and 2 are in
    # row 0 (1 KiB rows), open for write-backs since line 0's (no activation), which reads do not
    # share: the read activates it, and its page is the first a read touched (a translation miss)
    assert d.free == pytest.approx(1000 + 0.25 * 128 / d.write_bytes_per_cycle + 128 / d.read_bytes_per_cycle
                                   + d.activate + d.translate)


def test_dram_rows_cost_an_activation_unless_open():
    # validation/probes/random_access.py: random 64 B reads pay a row activation each (9.8 ps on
    # the H100), a stream one per 1 KiB row, already inside its measured rate.
    cfg = gpusim.config.load("h100").with_overrides({"dram.queue_cycles": 0})
    d = memsys.DRAM(cfg, collections.Counter())
    assert d.activations([0, 1, 7]) == pytest.approx(d.activate)           # one row (8 lines of 128 B)
    assert d.activations([8, 0]) == pytest.approx(d.activate)              # row 1 opens, row 0 still open
    assert d.activations([16], write=True) == pytest.approx(d.activate_write)
    # write-backs keep their own open rows: a row a read opened costs a write its activation
    assert d.activations([0], write=True) == pytest.approx(d.activate_write)
    assert d.activations([1], write=True) == 0.0 and d.activations([17]) == pytest.approx(d.activate)
    # a stream of whole rows moves read_efficiency of the peak, activations included
    rows = 64
    d2 = memsys.DRAM(cfg, collections.Counter())
    for r in range(rows):
        d2.read(0, 1024, list(range(8 * r, 8 * r + 8)))
    peak = cfg.dram.bandwidth_bytes_per_s / cfg.clock_hz
    assert d2.free == pytest.approx(rows * 1024 / (peak * cfg.dram.read_efficiency) + d2.translate)  # 1 page
    # the least recently opened row closes once open_rows others opened
    with pytest.raises(ConfigError, match="dram.row_bytes .1000. must be a multiple of l2.line_bytes"):
        cfg.with_overrides({"dram.row_bytes": 1000})
    d3 = memsys.DRAM(cfg.with_overrides({"dram.open_rows": 2}), collections.Counter())
    d3.activations([0, 8, 16])
    assert d3.activations([0]) == pytest.approx(d3.activate) and d3.activations([16]) == 0


def test_dram_reads_outside_the_translation_reach_cost_a_miss_each():
    # validation/probes/footprint_cost.py: a random 64 B DRAM read costs more beyond a reach of
    # translation_pages pages (LRU, by the pages DRAM reads touched); the L2's own reads of evicted
    # lines (merge) pay none.
    cfg = gpusim.config.load("h100").with_overrides({"dram.queue_cycles": 0, "dram.translation_pages": 2,
                                                     "dram.translation_page_bytes": 4096})
    d = memsys.DRAM(cfg, collections.Counter())
    assert d.page_lines == 32 and d.translate == pytest.approx(cfg.clock_hz / cfg.dram.translation_misses_per_s)
    assert d.translations([0, 31, 32]) == pytest.approx(2 * d.translate)   # pages 0 and 1
    assert d.translations([5, 40]) == 0.0                                  # both still in reach
    assert d.translations([64]) == pytest.approx(d.translate)              # page 2 evicts page 0 (LRU)
    assert d.translations([33, 0]) == pytest.approx(d.translate)           # page 1 kept, page 0 back
    start = d.free
    d.read(start, 64, [96])                                                # page 3: a miss and a row
    assert d.free == pytest.approx(start + 64 / d.read_bytes_per_cycle + d.activate + d.translate)
    d.read(d.free, 64, [128], merge=True)                                  # page 4, the L2's own read
    assert d.pages.get(4, "absent") == "absent"
    off = memsys.DRAM(cfg.with_overrides({"dram.translation_pages": 0}), collections.Counter())
    assert off.translations([0, 1000, 2000]) == 0.0
    with pytest.raises(ConfigError, match="dram.translation_page_bytes .5000. must be a multiple of l2.line_bytes"):
        cfg.with_overrides({"dram.translation_page_bytes": 5000})


def test_l2_read_request_port_and_l1_miss_path_bound_scattered_loads():
    # A warp load of 32 distinct lines: 32 requests through the SM's miss path (1 a cycle) and the
    # GPU-wide read port (64 a cycle); the 32nd leaves the SM 31 cycles after the first.
    cfg = gpusim.config.load("h100")
    mem = memsys.MemorySystem(cfg, 1 << 16)
    lanes = np.arange(32, dtype=np.int64)
    done = mem.load(0, 0, lanes * 4, cache_l1=True)  # sectors 4 apart: one per 128 B line
    assert mem.l1(0).miss_free == 32.0                # the last request left at cycle 31
    assert mem.l2.port_free["read"][0] == pytest.approx(31 + 32 / 64)
    assert done >= 31 + cfg.l2.latency_cycles
    # without the limits the same load completes earlier
    free = gpusim.config.load("h100").with_overrides({"l1.miss_requests_per_cycle": 0, "l2.read_requests_per_cycle": 0})
    mem2 = memsys.MemorySystem(free, 1 << 16)
    assert mem2.load(0, 0, lanes * 4, cache_l1=True) < done


def test_stores_wait_for_a_full_write_back_queue():
    # l2.writeback_queue_cycles: a store holds its SM's L1 until DRAM's server is no more than that
    # far booked ahead.
    cfg = gpusim.config.load("h100")
    mem = memsys.MemorySystem(cfg, 1 << 16)
    mem.dram.free = 10_000.0
    _warp_store(mem, 0, 0, np.arange(32, dtype=np.uint64) * 4)
    assert mem.l1(0).free >= 10_000.0 - cfg.l2.writeback_queue_cycles


def test_dram_reads_alone_outrun_a_copy():
    # Reads move read_efficiency of the peak a cycle; writes the share that leaves a copy (as many
    # bytes written as read) at efficiency (validation/probes/dram_mix.py, the seeds' reductions).
    cfg = gpusim.config.load("h100").with_overrides({"dram.queue_cycles": 0, "dram.translation_pages": 0})
    peak = cfg.dram.bandwidth_bytes_per_s / cfg.clock_hz
    dram = memsys.DRAM(cfg, memsys.collections.Counter())
    for i in range(1024):  # streams: 64 B granules of consecutive lines (a row opened every 1 KiB)
        dram.read(0.0, 64, [i // 2])
    assert dram.free == pytest.approx(65_536 / (peak * cfg.dram.read_efficiency))
    for i in range(1024):
        dram.write(0.0, 64, [1 << 20 | i // 2])
    assert 131_072 / dram.free == pytest.approx(peak * cfg.dram.efficiency)   # the copy's rate
    assert cfg.dram.read_efficiency > cfg.dram.efficiency
    same = memsys.DRAM(cfg.with_overrides({"dram.read_efficiency": None, "dram.row_activations_per_s": 0}),
                       memsys.collections.Counter())
    assert same.read_bytes_per_cycle == same.write_bytes_per_cycle == pytest.approx(peak * cfg.dram.efficiency)
    with pytest.raises(gpusim.errors.ConfigError, match="read_efficiency"):
        cfg.with_overrides({"dram.read_efficiency": 0.4})


@pytest.mark.parametrize("extra", [1, 2])
def test_each_conflict_wavefront_adds_conflict_latency_cycles(extra):
    # validation/probes/smem_conflict.py's chain_K: one warp, dependent loads in which lane t reads
    # word t * K (K wavefronts). On the H100 a step takes 31.6 + 2 K cycles: each wavefront a
    # conflict adds costs shared.conflict_latency_cycles (2) of latency, the data stage one cycle.
    ptx = pathlib.Path(__file__).parents[2] / "validation" / "probes" / "smem_conflict.ptx"

    def step(k: int) -> float:
        with gpusim.Device("h100", mode="timing", overrides={"shared.conflict_latency_cycles": extra}):
            f = gpusim.RawModule(path=str(ptx)).get_function(f"chain_{k}")
            out, t = gpusim.zeros(32, np.uint32), gpusim.zeros(1, np.int64)
            spans = []
            for n in (4, 8):
                f((1,), (32,), (out, np.uint32(7), np.int32(n), t))
                spans.append(int(t.get()[0]))
        return (spans[1] - spans[0]) / (4 * 8)

    assert step(8) - step(1) == pytest.approx(7 * extra)


def test_l2_reads_and_writes_share_the_slices_and_writes_have_a_data_path_of_their_own():
    """validation/probes/l2_bandwidth.py on the H100: reads alone 107 sectors a cycle, stores alone 62,
    a copy about 46 of each: the h100 configuration's three rates give those back (the request
    port apart: a port per kind here)."""
    cfg = gpusim.config.load("h100").with_overrides({"l2.shared_request_port": False})
    per_read, per_write = (32 * cfg.clock_hz / bw for bw in (cfg.l2.bandwidth_bytes_per_s,
                                                              cfg.l2.write_bandwidth_bytes_per_s))
    per_data = 32 * cfg.clock_hz / cfg.l2.write_data_bytes_per_s
    assert round(1 / per_read) == 107 and round(1 / per_data) == 62 and round(1 / (per_read + per_write)) == 46
    l2 = memsys.MemorySystem(cfg, 1 << 16).l2
    l2.read(0.0, [1], [0b1111])                       # the slices: 4 read sectors
    assert l2.free == pytest.approx(4 * per_read)
    l2.write(0.0, [2], [0b1111], 4)                   # then 4 written ones, queued behind them
    assert l2.free == pytest.approx(4 * per_read + 4 * per_write)
    # The write-data path takes a store's sectors one after the other, apart from the slices.
    assert l2.take_writes(0.0, 1, 4) == pytest.approx((0.0, 3 * per_data))
    # (the request port took the second request 1/30 cycle after the first; its data waits)
    assert l2.take_writes(0.0, 1, 4) == pytest.approx((1 / 30, 7 * per_data))
    assert l2.count["l2_write_requests"] == 2


def test_l2_reads_of_sectors_in_flight_join_them_within_the_coalescer_window():
    cfg = gpusim.config.load("h100").with_overrides({"l2.coalesce_window_cycles": 100.0})
    mem = memsys.MemorySystem(cfg, 1 << 16)
    l2, count = mem.l2, mem.count
    first = l2.read(0.0, [7, 8], [0b1111, 0b0011], source=0)
    # 50 cycles later, in flight: the two sectors of line 8 join (no lookup, ready with the first),
    # the other two of line 8 are looked up.
    l2.read(50.0, [8], [0b1111], source=1)
    assert count["l2_read_coalesced_sectors"] == 2 and count["l2_read_sectors"] == 6 + 2
    # The same SM's repeat is looked up again (its L1's business, not the coalescer's).
    l2.read(55.0, [8], [0b0001], source=0)
    assert count["l2_read_coalesced_sectors"] == 2 and count["l2_read_sectors"] == 9
    # A read all of whose sectors join holds no bandwidth and returns with the first request's
    # data, which came from DRAM: later than an L2 hit would.
    assert l2.read(60.0, [7], [0b0001], source=2) == first > 60.0 + cfg.l2.latency_cycles
    assert count["l2_read_coalesced_sectors"] == 3 and count["l2_read_sectors"] == 9
    # Past the window (but still in flight) a read is looked up again.
    l2.read(150.0, [7], [0b0001], source=2)
    assert count["l2_read_coalesced_sectors"] == 3 and count["l2_read_sectors"] == 10
    # Atomics are never joined; with the window 0 nothing is.
    l2.atomic(10.0, [7], [0b0010], 1, False)
    assert count["l2_read_coalesced_sectors"] == 3
    off = memsys.MemorySystem(cfg.with_overrides({"l2.coalesce_window_cycles": 0.0}), 1 << 16)
    off.l2.read(0.0, [7], [0b1111], source=0)
    off.l2.read(1.0, [7], [0b1111], source=1)
    assert off.count["l2_read_sectors"] == 8 and off.count["l2_read_coalesced_sectors"] == 0


def test_reads_writes_and_atomics_share_one_l2_request_port():
    # validation/probes/random_access.py: random loads and stores of 4 MiB interleaved take longer
    # than either alone; one port, each request holding it 1 / its kind's rate.
    cfg = gpusim.config.load("h100")
    per_data = 32 * cfg.clock_hz / cfg.l2.write_data_bytes_per_s
    w = 1 / cfg.l2.write_requests_per_cycle
    l2 = memsys.MemorySystem(cfg, 1 << 16).l2
    l2.read(0.0, [1, 2], [1, 1])                                  # 2 read requests: 2/64 cycle
    hold, taken = l2.take_writes(0.0, 3, 3)                       # 3 write requests queue behind them
    assert taken == pytest.approx(2 / 64 + 2 * w + 2 * per_data)  # (then their data, one sector after another)
    # ... but the storing SM's L1 waits only behind the writes: the reads other SMs queued there hold
    # no store (a chain of dependent gathers over 16 waves, whose CTAs end in a store, ran 1.6x the
    # H100's time while each CTA's store held its L1 behind the whole GPU's reads: hot_atomic.py's
    # "chain", validation/reports/h100/hot_atomic)
    assert hold == pytest.approx(2 * w)
    apart = memsys.MemorySystem(cfg.with_overrides({"l2.shared_request_port": False}), 1 << 16).l2
    apart.read(0.0, [1, 2], [1, 1])
    assert apart.take_writes(0.0, 3, 3) == pytest.approx((2 * w, 2 * w + 2 * per_data))


def test_global_loads_wavefronts_wait_behind_shared_ones_on_one_data_stage():
    # The L1TEX's data stage serves shared accesses and global loads' bank wavefronts one a cycle
    # (validation/probes/data_stage.py); the tag lookups have their own stage.
    cfg = gpusim.config.load("h100")
    l1 = memsys.MemorySystem(cfg, 1 << 16).l1(0)
    lines, masks = [0], [0b1111]
    l1.load(0, lines, masks, True, 1)                   # fill the line: later loads hit
    base = l1.load(1000, lines, masks, True, 32)        # a 32-wavefront hit on an idle data stage
    assert base == 1000 + cfg.l1.latency_cycles and l1.data_free == 1032
    l1.data_free = 2100                                 # shared accesses booked until cycle 2,100
    late = l1.load(2000, lines, masks, True, 32)        # its tag stage is free: it waits for the data stage
    assert late == 2100 + cfg.l1.latency_cycles and l1.data_free == 2132 and l1.free == 2032


def test_sectors_of_far_lines_are_counted_at_both_l2_partitions():
    # Nsight Compute counts a sector of a line homed in the other partition at both partitions'
    # slices: a read that misses the near place, a write not joined to the SM's recent request.
    cfg = gpusim.config.load("h100")
    mem = memsys.MemorySystem(cfg, 1 << 16)
    l2 = mem.l2
    far = [ln for ln in range(64) if l2.far(ln)]
    near = [ln for ln in range(64) if not l2.far(ln)]
    assert far and near and not l2.far(memsys.LOCAL_BASE >> 7)   # local memory stays near
    l2.read(0.0, far[:2] + near[:2], [0b1111] * 4, side=0)       # 16 sectors, 8 of them far misses
    assert mem.metrics()["lts__t_sectors_op_read.sum"] == 16 + 8
    l2.read(1000.0, far[:2], [0b1111] * 2, side=0)               # hits in the near copy: once each
    assert mem.metrics()["lts__t_sectors_op_read.sum"] == 24 + 8
    l2.write(2000.0, [far[2], near[2]], [0b0011, 0b0011], 4, (), fresh=[far[2], near[2]])
    l2.write(3000.0, [far[2]], [0b0011], 2, (), fresh=[])        # joined to the last request
    assert mem.metrics()["lts__t_sectors_op_write.sum"] == 4 + 2 + 2
    one = memsys.MemorySystem(cfg.with_overrides({"l2.partitions": 1}), 1 << 16)
    one.l2.read(0.0, far[:2], [0b1111] * 2)
    assert one.metrics()["lts__t_sectors_op_read.sum"] == 8


def test_a_dram_read_waits_for_its_channels_write_drain_and_no_other():
    cfg = gpusim.config.load("h100").with_overrides({"dram.channels": 4, "dram.write_drain_bytes": 65536,
                                                     "dram.queue_cycles": 0, "dram.row_bytes": None})
    on = memsys.DRAM(cfg, collections.Counter())
    off = memsys.DRAM(cfg.with_overrides({"dram.write_drain_bytes": 0}), collections.Counter())
    by = collections.defaultdict(list)
    for line in range(64):
        by[on.channel(line)].append(line)
    assert sorted(by) == [0, 1, 2, 3]                  # every channel gets lines
    a, b = by[0], by[1]
    for d in (on, off):
        d.write(0.0, 32768, a[:4])                      # half a drain: gathered, nothing drained yet
    assert on.read(10.0, 64, [a[4]]) == off.read(10.0, 64, [a[4]])
    for d in (on, off):
        d.write(20.0, 32768, a[:4])                     # the drain: 64 KiB at the channel's quarter of the rate
    end = 20.0 + 65536 / (on.write_bytes_per_cycle / 4)
    assert on.draining[0] == pytest.approx(end) and on.gathered[0] == 0
    assert on.read(30.0, 64, [a[5]]) == pytest.approx(end + cfg.dram.latency_cycles)   # waits for it
    assert off.read(30.0, 64, [a[5]]) < end + cfg.dram.latency_cycles
    assert on.read(40.0, 64, [b[0]]) == off.read(40.0, 64, [b[0]]) < end + cfg.dram.latency_cycles  # another channel


def test_write_drains_in_step_or_staggered_and_the_channels_range():
    # every channel gathers the same write-backs: in step, all 80 drain at once (every read waits, or
    # none); staggered (dram.staggered_drains), channel c starts c / 80 of a drain full, so the same
    # write-backs start only the channels that were most of the way there
    cfg = gpusim.config.load("h100")
    batch = cfg.dram.write_drain_bytes
    lines = {}
    probe = memsys.DRAM(cfg, collections.Counter())
    for line in range(4096):
        lines.setdefault(probe.channel(line), line)
    assert len(lines) == 80
    for staggered, first, second in ((False, 0, 80), (True, 20, 20)):
        dram = memsys.DRAM(cfg.with_overrides({"dram.staggered_drains": staggered}), collections.Counter())
        for line in lines.values():                     # a quarter of a drain's bytes to each channel
            dram.write(0.0, batch // 4, [line])
        assert sum(d > 0 for d in dram.draining) == first
        started = [d > 0 for d in dram.draining]
        for line in lines.values():                     # a quarter more, a cycle later
            dram.write(1.0, batch // 4, [line])
        assert sum(d > 0 and not s for d, s in zip(dram.draining, started)) == (0 if not staggered else second)
        if not staggered:
            for line in lines.values():                 # the rest: all 80 drain together
                dram.write(2.0, batch // 2, [line])
            assert sum(d > 0 for d in dram.draining) == 80
    # dram.channel_bytes: a warp's coalesced 512 bytes (4 lines) on one channel, not on four
    per_line = memsys.DRAM(cfg.with_overrides({"dram.channel_bytes": 128}), collections.Counter())
    per_512 = memsys.DRAM(cfg.with_overrides({"dram.channel_bytes": 512}), collections.Counter())
    assert len({per_line.channel(line) for line in range(4)}) == 4
    assert all(len({per_512.channel(4 * w + k) for k in range(4)}) == 1 for w in range(64))
    assert len({per_512.channel(4 * w) for w in range(64)}) > 40
    with pytest.raises(ConfigError, match=r"dram.channel_bytes \(100\) must be a multiple of l2.line_bytes"):
        cfg.with_overrides({"dram.channel_bytes": 100})


@pytest.mark.parametrize("level", ["l1", "l2"])
def test_a_hit_on_a_fill_in_flight_gets_the_data_with_the_fill(level):
    # validation/reports/h100/fill_in_flight: the H100 answers a second load of a line still being
    # filled when the fill arrives (657 cycles at once, falling with the delay), not a hit's latency
    # after the lookup
    base = gpusim.config.load("h100")
    got = {}
    for wait in (False, True):
        cfg = base.with_overrides({f"{level}.hits_wait_for_fills": wait})
        mem = memsys.MemorySystem(cfg, 1 << 18)
        cached = level == "l1"
        first = mem.load_lines(0, 0, [7], [0b0001], 1, 28, cached)       # a miss to DRAM
        second = mem.load_lines(0, 100, [7], [0b0001], 1, 28, cached)    # the same sector, 100 cycles later
        later = mem.load_lines(0, int(first) + 10, [7], [0b0001], 1, 28, cached)   # after the fill arrived
        got[wait] = first, second, later
    (first, second, later), (wfirst, wsecond, wlater) = got[False], got[True]
    hit = base.l1.latency_cycles if level == "l1" else base.l2.latency_cycles
    assert first == wfirst > 100 + hit
    assert second < first and wsecond == pytest.approx(first)
    assert later == wlater


def test_reads_of_one_channel_range_come_back_one_after_another():
    # latency_spread.py: a CTA's eight warps' loads of one 4 KiB range come back spread over ~200 cycles on the
    # H100 (its slowest warp ~100 over the CTA's mean); one device-wide server returned them together.
    cfg = gpusim.config.load("h100").with_overrides({"dram.read_channel_bytes": 4096})
    assert cfg.dram.channels == 80
    dram = memsys.DRAM(cfg, collections.Counter())
    per_line = 128 * cfg.dram.channels / dram.read_bytes_per_cycle     # cycles a channel takes a line
    done = [dram.read(0.0, 512, list(range(4 * w, 4 * w + 4))) for w in range(8)]   # one range, 8 warps
    steps = np.diff(done)
    assert steps == pytest.approx([4 * per_line] * 7, rel=0.05)
    other = dram.read(0.0, 512, [64 * 32 + k for k in range(4)])         # another range: its own channel
    assert other < done[1]
    one = memsys.DRAM(cfg.with_overrides({"dram.read_channel_bytes": None}), collections.Counter())
    together = [one.read(0.0, 512, list(range(4 * w, 4 * w + 4))) for w in range(8)]
    assert together[-1] - together[0] < done[-1] - done[0] - 6 * 4 * per_line
    with pytest.raises(ConfigError, match="dram.read_channel_bytes .* must be a multiple of l2.line_bytes"):
        cfg.with_overrides({"dram.read_channel_bytes": 100})


def test_read_channels_spread_consecutive_ranges_over_every_channel():
    # each aligned group of 80 consecutive 4 KiB ranges takes each of the 80 channels once: 80 warps, one a
    # range, all finish one line's channel time after the device-wide server lets them go; any 80
    # consecutive ranges load no channel more than twice
    cfg = gpusim.config.load("h100").with_overrides({"dram.read_channel_bytes": 4096})
    for first, most in ((0, 1), (80 * 1000, 1), (37, 2), (80 * 1000 + 11, 2)):
        dram = memsys.DRAM(cfg, collections.Counter())
        per_line = 128 * dram.read_byte_cycles                     # cycles a channel takes a line
        served = [dram._queue(0.0, 128, [32 * r]) for r in range(first, first + 80)]
        assert max(served) == pytest.approx(most * per_line)
        assert min(served) == pytest.approx(per_line)


def test_read_channels_set_the_count_and_each_serves_its_share():
    # sampling.run_sampled gives a slice of k of n SMs round(80 k / n) read channels and k / n of the
    # bandwidth, so that each channel serves about as fast as on the whole GPU
    cfg = gpusim.config.load("h100").with_overrides({"dram.read_channel_bytes": 4096})
    for k, n, share in ((8, 132, 5), (1, 132, 1), (66, 132, 40)):
        sliced = cfg.with_overrides({"dram.read_channels": max(1, round(80 * k / n)),
                                     "dram.bandwidth_bytes_per_s": cfg.dram.bandwidth_bytes_per_s * k / n})
        dram = memsys.DRAM(sliced, collections.Counter())
        assert dram.read_channels == share
        full = memsys.DRAM(cfg, collections.Counter())
        exact = 80 * k / n                                        # a channel as fast as on the whole GPU
        assert dram.read_byte_cycles == pytest.approx(full.read_byte_cycles * share / exact)
