"""The NCCL collective model (gpusim.multigpu.nccl) and the topology files (gpusim.multigpu.topology).

Behaviour that could fail: the ring's bandwidth term 2(W-1)/W x S / B at large sizes, the latency term at
small ones, the protocol order LL -> LL128 -> Simple as sizes grow, NCCL's channel dropping, tree against
ring, and the errors a bad topology file or argument gives (ConfigError naming the field).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpusim.errors import ConfigError, GpusimError
from gpusim.multigpu import available, bus_factor, collective_time, load_topology, select
from gpusim.multigpu.nccl import channels_for
from gpusim.multigpu.topology import PROTOCOLS

ROOT = Path(__file__).resolve().parents[2]
GiB = 1 << 30


@pytest.fixture(scope="module")
def topo():
    # no host floor, so the GPU-side model is what is measured here
    return load_topology("hgx_h200_nvswitch").with_overrides({"nccl.call_overhead_us": 0.0})


def _bus_Bps(t, collective="all_reduce", proto="Simple"):
    p = t.nccl.protocols[proto]
    return t.link.GBps * t.link.bw_efficiency * t.nccl.bw_factor[collective] * p.payload * 1e9


@pytest.mark.parametrize("world", [2, 4, 8])
def test_ring_allreduce_large_is_2_w_minus_1_over_w_bytes_over_bandwidth(topo, world):
    r = collective_time(topo, "all_reduce", GiB, world, algorithm="ring", protocol="Simple")
    p = topo.nccl.protocols["Simple"]
    latency = (p.base_latency_us + topo.nccl.launch_us + 2 * (world - 1) * p.hop_latency_us) * 1e-6
    ideal = 2 * (world - 1) / world * GiB / _bus_Bps(topo) + latency
    assert r.channels == topo.nccl.max_channels
    assert r.seconds == pytest.approx(ideal, rel=0.03)  # pipeline fill and drain are the rest
    assert r.busbw_GBps == pytest.approx(_bus_Bps(topo) / 1e9, rel=0.03)


def test_doubling_the_links_halves_large_times_but_not_small_ones(topo):
    fast = topo.with_overrides({"link.count": 2 * topo.link.count})
    big = [collective_time(t, "all_reduce", GiB, 4, protocol="Simple").seconds for t in (topo, fast)]
    assert big[1] / big[0] == pytest.approx(0.5, rel=0.03)
    small = [collective_time(t, "all_reduce", 1024, 4).seconds for t in (topo, fast)]
    assert small[1] == pytest.approx(small[0], rel=0.01)


def test_small_message_time_is_nccl_latency(topo):
    r = collective_time(topo, "all_reduce", 1024, 4)
    assert (r.algorithm, r.protocol, r.channels) == ("ring", "LL", 1)
    p = topo.nccl.protocols["LL"]
    latency = (p.base_latency_us + topo.nccl.launch_us + 6 * p.hop_latency_us) * 1e-6
    assert latency < r.seconds < latency * 1.1


def test_host_floor_bounds_small_calls():
    t = load_topology("hgx_h200_nvswitch")
    assert collective_time(t, "broadcast", 1024, 2).seconds == pytest.approx(t.nccl.call_overhead_us * 1e-6)


@pytest.mark.parametrize("collective", ["all_reduce", "reduce_scatter", "all_gather", "broadcast"])
@pytest.mark.parametrize("world", [2, 4, 8])
def test_protocols_switch_in_order_as_sizes_grow(topo, collective, world):
    sizes = [1 << k for k in range(10, 31)]
    order = [PROTOCOLS.index(select(topo, collective, s, world)[1]) for s in sizes]
    assert order == sorted(order), order
    assert order[0] == 0 and order[-1] == 2


def test_disabling_ll128_moves_its_sizes_to_ll_or_simple(topo):
    sizes = [1 << k for k in range(10, 31)]
    with_ll128 = [select(topo, "all_reduce", s, 4)[1] for s in sizes]
    assert "LL128" in with_ll128
    no = topo.with_overrides({"nccl.protocols.LL128.enabled": False})
    assert {select(no, "all_reduce", s, 4)[1] for s in sizes} == {"LL", "Simple"}
    with pytest.raises(ConfigError, match=r"nccl\.protocols\.LL128\.enabled"):
        collective_time(no, "all_reduce", 1 << 20, 4, protocol="LL128")


def test_channels_drop_for_small_sizes(topo):
    sizes = [1 << k for k in range(10, 31)]
    nc = [channels_for(topo, s, "ring", "Simple", 4) for s in sizes]
    assert nc == sorted(nc) and nc[0] == 1 and nc[-1] == topo.nccl.max_channels
    # NCCL's rule: the channels times threads times threshold stay within the bytes
    p = topo.nccl.protocols["Simple"]
    for s, c in zip(sizes, nc):
        assert c == 1 or s >= c * p.threads * p.thread_threshold


def test_tree_allreduce_is_slower_than_ring_on_one_node(topo):
    ring = collective_time(topo, "all_reduce", GiB, 4, algorithm="ring", protocol="Simple")
    tree = collective_time(topo, "all_reduce", GiB, 4, algorithm="tree", protocol="Simple")
    # the chain's up and down sends share a GPU's link: the whole buffer twice through it
    assert tree.seconds > 1.3 * ring.seconds
    assert select(topo, "all_reduce", GiB, 4)[0] == "ring"


def test_reduce_scatter_moves_half_an_allreduce(topo):
    ar = collective_time(topo, "all_reduce", GiB, 4, protocol="Simple").seconds
    rs = collective_time(topo, "reduce_scatter", GiB, 4, protocol="Simple").seconds
    expected = 0.5 * ar / topo.nccl.bw_factor["reduce_scatter"]
    assert rs == pytest.approx(expected, rel=0.03)


def test_bus_factor_is_nccl_tests_definition():
    assert bus_factor("all_reduce", 4) == 1.5
    assert bus_factor("reduce_scatter", 4) == bus_factor("all_gather", 4) == 0.75
    assert bus_factor("broadcast", 8) == 1.0


def test_pcie_is_slower_than_nvswitch():
    nv = collective_time("hgx_h200_nvswitch", "all_reduce", 256 << 20, 4).seconds
    pcie = collective_time("pcie_gen5", "all_reduce", 256 << 20, 4).seconds
    assert pcie > 4 * nv


@pytest.mark.parametrize("kwargs, field", [
    ({"collective": "allreduce"}, "argument collective"),
    ({"world": 1}, "argument world"),
    ({"world": 9}, "argument world"),
    ({"nbytes": 0}, "argument bytes"),
    ({"algorithm": "tree", "collective": "broadcast"}, "argument algorithm"),
    ({"protocol": "LL64"}, "argument protocol"),
])
def test_bad_arguments_name_the_argument(topo, kwargs, field):
    args = {"collective": "all_reduce", "nbytes": 4096, "world": 2} | kwargs
    coll, n, w = args.pop("collective"), args.pop("nbytes"), args.pop("world")
    with pytest.raises(ConfigError, match=field):
        collective_time(topo, coll, n, w, **args)


def _write(tmp_path, text):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("old, new, field", [
    ("count = 18 ", "count = 0 ", "link.count"),
    ("count = 18 ", "count = 18.5 ", "link.count"),
    ('kind = "nvswitch"', 'kind = "infiniband"', "link.kind"),
    ("max_channels = 24 ", "max_channels = 0 ", "nccl.max_channels"),
    ("[nccl.protocols.LL128]", "[nccl.protocols.LL256]", "nccl.protocols"),
    ("chunk_steps = 4 ", "chunk_steps = 3 ", "chunk_steps"),
    ("payload = 0.5 ", "payload = 1.5 ", "nccl.protocols.LL.payload"),
    ("reducer_passes = 3.0", "reducer_passes = -1", "ddp.reducer_passes"),
    ("hbm_GBps = 4800.0", "hbm_GBps = 4800.0\nnvlinks = 3", "nvlinks: unknown field"),
])
def test_bad_topology_file_names_file_and_field(tmp_path, old, new, field):
    text = (ROOT / "configs/topologies/hgx_h200_nvswitch.toml").read_text()
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(ConfigError) as exc:
        load_topology(path)
    assert str(path) in str(exc.value) and field in str(exc.value)
    assert isinstance(exc.value, GpusimError)


def test_missing_or_broken_topology_files(tmp_path):
    with pytest.raises(ConfigError, match="no such topology file"):
        load_topology(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_topology(_write(tmp_path, "name = \n"))
    with pytest.raises(ConfigError, match="not a shipped topology"):
        load_topology("dgx_z9000")


def test_overrides_name_unknown_paths(topo):
    with pytest.raises(ConfigError, match="link.cont"):
        topo.with_overrides({"link.cont": 3})


@pytest.mark.parametrize("name", ["hgx_h100_nvswitch", "hgx_h200_nvswitch", "pcie_gen5"])
def test_shipped_topologies_load_and_every_number_has_a_source(name):
    assert name in available()
    load_topology(name)
    path = ROOT / "configs/topologies" / f"{name}.toml"
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if "=" in code and re.match(r"[\d\[{-]", code.split("=", 1)[1].strip()):
            comment = line.split("#", 1)[1] if "#" in line else ""
            assert re.search(r"\[[A-Z0-9-]+|ASSUMED|§\d", comment), f"{path.name}:{lineno} has no source: {line}"
