"""One launch in worker processes (gpusim.functional.parallel): identical outputs, counters,
cycles and faults for jobs=2 and jobs=1, the serial path for kernels whose CTAs communicate,
and the jobs setting (Device(jobs=), GPUSIM_JOBS, --jobs, the sweep pool)."""

from __future__ import annotations

import numpy as np
import pytest

import gpusim
from gpusim.errors import GpusimError, KernelFault
from gpusim.functional import parallel
from gpusim.suite import CASES, run_case

pytestmark = pytest.mark.skipif(not parallel.available(), reason="parallel launches need fork (Linux)")


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of one 256-thread CTA and no thread minimum, so that test-sized launches take the parallel path."""
    monkeypatch.setattr(parallel, "MIN_CHUNK_THREADS", 256)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_THREADS", 0)


def _run(case: str, n: int, jobs: int, mode: str = "functional", **kw):
    with gpusim.Device("h100", mode, jobs=jobs, **kw):
        return run_case(CASES[case], gpusim, n, 0)


def _same_runs(a, b) -> None:
    assert a.outputs.keys() == b.outputs.keys()
    for key in a.outputs:
        x, y = np.asarray(a.outputs[key]), np.asarray(b.outputs[key])
        assert x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8)), key
    assert len(a.launches) == len(b.launches)
    for la, lb in zip(a.launches, b.launches):
        assert la.metrics == lb.metrics
        np.testing.assert_array_equal(la.inst_executed, lb.inst_executed)
        np.testing.assert_array_equal(la.thread_inst_executed, lb.thread_inst_executed)
        assert la.pc_metrics.keys() == lb.pc_metrics.keys()
        for name in la.pc_metrics:
            np.testing.assert_array_equal(la.pc_metrics[name], lb.pc_metrics[name])
        assert la.cycles == lb.cycles


@pytest.mark.parametrize("case, n", [("reduce_v2", 1 << 15), ("matmul_tiled", 64), ("transpose_padded", 128), ("divergent_loop", 1 << 14)])
def test_two_workers_give_the_serial_outputs_and_counters(small_chunks, case, n):
    from gpusim.suite import check

    one, two = _run(case, n, 1), _run(case, n, 2)
    assert check(one)[0], check(one)[1]
    _same_runs(one, two)
    first = one.launches[0]
    assert first.parallel == "serial"
    blocks = first.grid[0] * first.grid[1] * first.grid[2]
    per = parallel.parallel_chunk(gpusim.functional.executor.Grid(first.grid, first.block), blocks, blocks)
    assert two.launches[0].parallel == f"2 workers ({-(-blocks // per)} chunks)"


def test_kernels_with_global_atomics_run_serially_with_the_reason(small_chunks):
    one, two = _run("reduce_atomic_int", 1 << 14, 1), _run("reduce_atomic_int", 1 << 14, 2)
    _same_runs(one, two)
    path = two.launches[0].parallel
    assert path.startswith("serial (") and "global memory at line" in path, path


def test_a_sampled_timing_launch_has_the_serial_cycles_and_counters(small_chunks):
    from gpusim.timing import Policy

    policy = Policy(sms=2, min_waves=3, max_waves=4, window=1)
    one = _run("reduce_v2", 1 << 15, 1, "timing", sampling=policy, sass=False, regs_per_thread=32)
    two = _run("reduce_v2", 1 << 15, 2, "timing", sampling=policy, sass=False, regs_per_thread=32)
    assert one.launches[0].sampling.method != "detailed"
    _same_runs(one, two)
    for la, lb in zip(one.launches, two.launches):
        assert la.stalls.keys() == lb.stalls.keys()
        for r in la.stalls:
            np.testing.assert_array_equal(la.stalls[r], lb.stalls[r])
    assert two.launches[0].parallel.startswith("2 workers (")


FAULT_PTX = """
.version 9.0
.target sm_90
.address_size 64

// out[i] = i; then thread 7 of CTA `early` loads from address 0 after a loop of `spin` steps,
// and thread 3 of CTA `late` (a later CTA) loads from address 0 at once (the other threads load out[i]).
.visible .entry fault_two(
    .param .u64 fault_two_out,
    .param .u32 fault_two_early,
    .param .u32 fault_two_late,
    .param .u32 fault_two_spin
)
{
    .reg .pred %p<6>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [fault_two_out];
    ld.param.u32 %r1, [fault_two_early];
    ld.param.u32 %r2, [fault_two_late];
    ld.param.u32 %r10, [fault_two_spin];
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ntid.x;
    mad.lo.s32 %r6, %r4, %r5, %r3;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r6, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r6;
    mov.u64 %rd5, 0;
    setp.eq.u32 %p1, %r4, %r2;
    setp.eq.u32 %p2, %r3, 3;
    and.pred %p3, %p1, %p2;
    selp.b64 %rd6, %rd5, %rd4, %p3;
    ld.global.u32 %r7, [%rd6];
    mov.u32 %r11, 0;
LOOP:
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p4, %r11, %r10;
    @%p4 bra LOOP;
    setp.eq.u32 %p1, %r4, %r1;
    setp.eq.u32 %p2, %r3, 7;
    and.pred %p5, %p1, %p2;
    selp.b64 %rd7, %rd5, %rd4, %p5;
    ld.global.u32 %r8, [%rd7];
    ret;
}
"""


def test_a_fault_is_the_serial_one_with_the_memory_before_it_written(small_chunks):
    messages, outs = [], []
    for jobs in (1, 2):
        with gpusim.Device("h100", jobs=jobs):
            k = gpusim.RawModule(code=FAULT_PTX).get_function("fault_two")
            out = gpusim.zeros(32 * 256, np.uint32)
            with pytest.raises(KernelFault) as info:
                k((32,), (256,), (out, np.uint32(13), np.uint32(20), np.uint32(50)))
            messages.append(str(info.value))
            outs.append(out.get())
    assert messages[0] == messages[1]
    # The first fault in CTA order: CTA 13's, though CTA 20's thread faults earlier in its own run.
    assert "block (13, 0, 0) thread (7, 0, 0)" in messages[0] and "address 0x0" in messages[0]
    written = np.arange(14 * 256, dtype=np.uint32)
    for got in outs:  # every CTA up to the faulting one stored its indices
        np.testing.assert_array_equal(got[:14 * 256], written)


def test_a_fault_in_one_chunk_of_a_parallel_launch_is_the_serial_fault(small_chunks):
    # A single faulting CTA among 32: the same KernelFault for 1 and 2 workers.
    messages = []
    for jobs in (1, 2):
        with gpusim.Device("h100", jobs=jobs):
            k = gpusim.RawModule(code=FAULT_PTX).get_function("fault_two")
            out = gpusim.zeros(32 * 256, np.uint32)
            with pytest.raises(KernelFault) as info:
                k((32,), (256,), (out, np.uint32(99), np.uint32(20), np.uint32(2)))
            messages.append(str(info.value))
    assert messages[0] == messages[1] and "block (20, 0, 0) thread (3, 0, 0)" in messages[0]


DETECT_PTX = """
.version 9.0
.target sm_90
.address_size 64

.visible .entry local_only(.param .u64 local_only_p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 cnt;
    ld.param.u64 %rd1, [local_only_p];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.u32 %r1, [%rd2];
    atom.shared.add.u32 %r2, [cnt], %r1;
    membar.cta;
    fence.acq_rel.cta;
    ld.volatile.shared.u32 %r3, [cnt];
    bar.sync 0;
    st.global.u32 [%rd2], %r2;
    ret;
}

.visible .entry atom_global(.param .u64 atom_global_p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [atom_global_p];
    atom.global.add.u32 %r1, [%rd1], 1;
    ret;
}

.visible .entry red_generic(.param .u64 red_generic_p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [red_generic_p];
    red.add.u32 [%rd1], 1;
    ret;
}

.visible .entry flag_volatile(.param .u64 flag_volatile_p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [flag_volatile_p];
    ld.volatile.global.u32 %r1, [%rd1];
    ret;
}

.visible .entry flag_release(.param .u64 flag_release_p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [flag_release_p];
    st.release.gpu.global.u32 [%rd1], 1;
    ret;
}

.visible .entry fence_gl(.param .u64 fence_gl_p)
{
    membar.gl;
    ret;
}

.visible .entry fence_gpu(.param .u64 fence_gpu_p)
{
    fence.sc.gpu;
    ret;
}

.visible .entry reads_clock(.param .u64 reads_clock_p)
{
    .reg .b32 %r<2>;
    mov.u32 %r1, %clock;
    ret;
}
"""


@pytest.mark.parametrize("name, expect", [
    ("local_only", None), ("atom_global", "atom on global memory at line"),
    ("red_generic", "red on generic memory at line"), ("flag_volatile", "ld.volatile at line"),
    ("flag_release", "st.release at line"), ("fence_gl", "membar.gl at line"), ("fence_gpu", "fence.sc.gpu at line"),
    ("reads_clock", "%clock/%globaltimer read at line"),
])
def test_kernels_whose_ctas_may_communicate_are_found_statically(dev, name, expect):
    kernel = gpusim.RawModule(code=DETECT_PTX).get_function(name).kernel
    reason = parallel.serial_reason(kernel)
    assert reason == expect if expect is None else reason.startswith(expect), reason


def test_the_path_says_why_a_launch_ran_serially():
    assert parallel.plan(1, 64, None) == (1, "serial")
    assert parallel.plan(4, 64, "atom on global memory at line 9") == (1, "serial (atom on global memory at line 9)")
    assert parallel.plan(4, 1, None) == (1, "serial (1 chunk: too few for workers)")
    assert parallel.plan(4, 8, None, parallel.MIN_PARALLEL_THREADS - 1) == \
        (1, f"serial ({parallel.MIN_PARALLEL_THREADS - 1:,} threads: too few for workers)")
    assert parallel.plan(4, 3, None, parallel.MIN_PARALLEL_THREADS) == (3, "3 workers (3 chunks)")
    assert parallel.plan(16, 64, None) == (16, "16 workers (64 chunks)")
    assert parallel.combine([parallel.NOTHING, "2 workers (5 chunks)", "2 workers (3 chunks)"]) == "2 workers (8 chunks)"
    assert parallel.combine(["serial", parallel.NOTHING]) == "serial"


def test_parallel_chunks_do_not_depend_on_the_workers():
    grid = gpusim.functional.executor.Grid((4096, 1, 1), (256, 1, 1))
    # MIN_CHUNK_THREADS (2^14) threads at least, TARGET_CHUNKS (64) chunks at most, never more than the serial chunk.
    assert parallel.parallel_chunk(grid, 512, 4096) == 64
    assert parallel.parallel_chunk(grid, 512, 1 << 16) == 512
    assert parallel.parallel_chunk(grid, 512, 100) == 64
    assert parallel.parallel_chunk(grid, 512, 1 << 14) == 256


def test_jobs_come_from_the_device_the_environment_or_one(monkeypatch):
    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    assert gpusim.Device("h100").jobs == 1
    assert gpusim.Device("h100", jobs=3).jobs == 3
    monkeypatch.setenv(parallel.JOBS_ENV, "4")
    assert gpusim.Device("h100").jobs == 4
    assert gpusim.Device("h100", jobs=1).jobs == 1
    monkeypatch.setenv(parallel.JOBS_ENV, "lots")
    with pytest.raises(GpusimError, match="environment variable GPUSIM_JOBS: expected a number of worker processes"):
        gpusim.Device("h100")
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(GpusimError, match=r"Device\(jobs=\.\.\.\): expected a number of worker processes"):
            gpusim.Device("h100", jobs=bad)


def test_the_cli_takes_jobs_and_says_how_the_ctas_ran(tmp_path, capsys, monkeypatch, small_chunks):
    from gpusim.cli import main

    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    path = tmp_path / "k.ptx"
    path.write_text(FAULT_PTX)
    args = ["run", str(path), "--kernel", "fault_two", "--grid", "8", "--block", "256", "--arg", "u32[2048]",
            "--arg", "u32=99", "--arg", "u32=99", "--arg", "u32=1"]
    assert main(args + ["--jobs", "2"]) == 0
    assert "CTAs run: 2 workers (8 chunks)" in capsys.readouterr().out
    assert main(args) == 0
    assert "CTAs run: serial" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(args + ["--jobs", "0"])
    assert info.value.code == 2 and "--jobs: must be a positive integer, got 0" in capsys.readouterr().err


def _jobs_in_worker() -> str | None:
    import os

    return os.environ.get("GPUSIM_JOBS")


def test_sweep_pool_workers_run_their_launches_in_one_process(monkeypatch):
    from gpusim.sweep.runner import backend

    monkeypatch.setenv(parallel.JOBS_ENV, "8")
    with backend(2) as be:
        got = [v for _, v in be.imap_unordered(_jobs_in_worker, [(), ()])]
    assert got == ["1", "1"]
