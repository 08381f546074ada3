"""The DDP step model (gpusim.multigpu.ddp) and ``gpusim ddp``.

Behaviour that could fail: DDP's bucket assignment (a bucket closes once it reaches its cap, the first cap
1 MiB, gradients in ready order), the overlap of all-reduce with the backward (a step is no longer than
compute + all its communication, no shorter than either path), scaling efficiency <= 1 and falling with
the GPUs, and the errors for bad arguments.
"""

from __future__ import annotations

import math

import pytest

from gpusim.cli import main
from gpusim.errors import ConfigError
from gpusim.multigpu import Layer, buckets, collective_time, ddp_step, load_topology, mlp_layers, scaling
from gpusim.multigpu.ddp import MiB, layers_from_probe


@pytest.fixture(scope="module")
def topo():
    return load_topology("hgx_h200_nvswitch")


def _layers(n, params, fwd=100e-6, bwd=200e-6):
    return [Layer(f"l{i}", (params,), fwd, bwd) for i in range(n)]


@pytest.mark.parametrize("per_tensor_mib, cap_mb", [(0.3, 1), (0.3, 2), (1.0, 4), (5.0, 1), (0.25, 25)])
def test_bucket_count_follows_the_cap(per_tensor_mib, cap_mb):
    n = 40
    layers = _layers(n, int(per_tensor_mib * MiB / 4))
    got = buckets(layers, cap_mb, first_bucket_bytes=MiB)
    size = layers[0].nbytes
    first = math.ceil(MiB / size)              # tensors until the first bucket reaches 1 MiB
    per = math.ceil(cap_mb * MiB / size)       # then until each reaches the cap
    assert len(got) == 1 + math.ceil((n - first) / per)
    assert sum(len(b.params) for b in got) == n
    assert all(b.nbytes >= b.cap for b in got[:-1])            # closed at or over the cap
    assert all(b.nbytes - size < b.cap for b in got)           # ... by the last tensor only
    assert got[0].params[0] == (n - 1, 0)                     # the last layer's gradient is ready first


def test_probe_mlp_buckets(topo):
    layers = mlp_layers(4096, 8, 64)
    # each 64 MiB weight is over the 25 MB cap: one bucket a layer, the small last layer with layer 7
    assert len(buckets(layers, 25, topo.ddp.first_bucket_bytes)) == 8
    assert len(buckets(layers, 100, topo.ddp.first_bucket_bytes)) == 5  # then two layers a bucket
    assert len(buckets(layers, 1000, topo.ddp.first_bucket_bytes)) == 2


def test_one_gpu_step_is_the_sum_of_its_parts(topo):
    layers = mlp_layers(1024, 4, 32)
    r = ddp_step(topo, layers, 1)
    assert r.comm_s == 0 and not r.buckets
    assert r.seconds == pytest.approx(sum(ly.forward_s + ly.backward_s for ly in layers) + r.optimizer_s
                                      + topo.ddp.step_overhead_us * 1e-6)


@pytest.mark.parametrize("cap", [1, 25, 100])
@pytest.mark.parametrize("world", [2, 4, 8])
def test_overlap_bounds_the_step(topo, world, cap):
    t = topo.with_overrides({"ddp.overlap_slowdown": 1.0})
    layers = mlp_layers(2048, 6, 64)
    r = ddp_step(t, layers, world, bucket_cap_mb=cap)
    one = ddp_step(t, layers, 1)
    compute = one.seconds + r.reducer_s
    assert r.seconds <= compute + r.comm_s + 1e-12            # no overlap at all is the worst
    assert r.seconds >= compute - 1e-12                        # the compute path is there
    last = collective_time(t, "all_reduce", r.buckets[-1].nbytes, world).seconds
    assert r.seconds >= one.forward_s + r.comm_s + r.optimizer_s - 1e-12  # the all-reduces run one at a time
    assert r.exposed_comm_s >= last * 0.999   # the last bucket (layer 0's) starts when the backward ends
    starts = [s for s, _ in r.timeline]
    assert starts == sorted(starts) and all(b - a >= 0 for a, b in r.timeline)


def test_slowdown_beside_nccl_lengthens_the_step(topo):
    layers = mlp_layers(4096, 8, 64)
    steps = [ddp_step(topo.with_overrides({"ddp.overlap_slowdown": s}), layers, 4).seconds for s in (1.0, 1.5, 2.0)]
    assert steps[0] < steps[1] < steps[2]


def test_hidden_comm_when_backward_is_long(topo):
    layers = _layers(16, 1 << 20, bwd=5e-3)   # 4 MiB a layer, 5 ms of backward each
    r = ddp_step(topo.with_overrides({"ddp.overlap_slowdown": 1.0}), layers, 4)
    last = collective_time(topo, "all_reduce", r.buckets[-1].nbytes, 4).seconds
    assert r.exposed_comm_s == pytest.approx(last, rel=1e-6)   # only the last bucket sticks out


@pytest.mark.parametrize("name", ["hgx_h200_nvswitch", "pcie_gen5"])
def test_scaling_efficiency_at_most_one_and_falling(name):
    steps = scaling(name, mlp_layers(4096, 8, 64), worlds=(1, 2, 4, 8))
    eff = [s.efficiency for s in steps]
    assert eff[0] == 1.0
    assert all(0 < e <= 1 for e in eff)
    assert eff == sorted(eff, reverse=True)


def test_faster_links_never_slow_a_step(topo):
    layers = mlp_layers(4096, 8, 64)
    slow = ddp_step(topo, layers, 4).seconds
    fast = ddp_step(topo.with_overrides({"link.count": 36}), layers, 4).seconds
    pcie = ddp_step("pcie_gen5", layers, 4).seconds
    assert fast <= slow < pcie


def test_layers_from_probe_scales_the_hook_times(topo):
    rows = [{"layer": 0, "params": 10, "forward_s": 1e-3, "backward_s": 2e-3}]
    (ly,) = layers_from_probe(rows, topo)
    assert ly.forward_s == pytest.approx(1e-3 * topo.ddp.hook_time_scale)
    with pytest.raises(ConfigError, match=r"layers_timed\[0\]"):
        layers_from_probe([{"layer": 0}], topo)


@pytest.mark.parametrize("kwargs, field", [
    ({"world": 0}, "argument world"),
    ({"world": 9}, "argument world"),
    ({"bucket_cap_mb": 0}, "argument bucket_cap_mb"),
    ({"layers": []}, "argument layers"),
    ({"layers": ["fc1"]}, r"argument layers\[0\]"),
])
def test_bad_arguments(topo, kwargs, field):
    args = {"layers": mlp_layers(256, 2, 8), "world": 2} | kwargs
    with pytest.raises(ConfigError, match=field):
        ddp_step(topo, args.pop("layers"), args.pop("world"), **args)


def test_cli_table_and_errors(capsys):
    assert main(["ddp", "--gpus", "1", "2", "--hidden", "1024", "--layers", "2", "--bucket-mb", "1", "25"]) == 0
    out = capsys.readouterr().out
    assert "efficiency" in out and "100.0 %" in out
    assert main(["ddp", "--collective", "broadcast", "--gpus", "2"]) == 0
    assert "busbw" in capsys.readouterr().out
    assert main(["ddp", "--set", "link.count=0"]) == 2
    assert "link.count" in capsys.readouterr().err
    assert main(["ddp", "--topology", "nope"]) == 2
    assert "not a shipped topology" in capsys.readouterr().err
