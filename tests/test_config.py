"""GPU configurations: the shipped TOML files, the schema rules, overrides and error messages.

Covers: gpusim.config.load / available / GPUConfig.with_overrides / parse_override, the
attribute names the functional engine reads, every TOML number having a source comment, the
occupancy constants equalling cuda_occupancy.h's per-architecture switch statements
(hardware-facts §1, §4), and the H100 file equalling the device properties the driver
reported (validation/reports/h100/device_h100.json).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from gpusim import config
from gpusim.config import UNIT_NAMES, GPUConfig
from gpusim.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["a100", "a5000", "h100", "rtx3090", "v100"]


def test_available_lists_the_five_shipped_configs():
    assert config.available() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_engine_attribute_names(name):
    cfg = config.load(name)
    assert isinstance(cfg.name, str) and cfg.name == name
    assert re.fullmatch(r"sm_\d+", cfg.arch)
    assert cfg.arch == "sm_%d%d" % cfg.compute_capability
    assert cfg.warp_size == 32
    assert cfg.max_threads_per_block == 1024
    assert cfg.max_block_dims == (1024, 1024, 64)
    assert cfg.max_grid_dims == (2147483647, 65535, 65535)
    assert cfg.sm_count > 0 and cfg.clock_hz > 1e9
    sm = cfg.sm
    assert sm.max_threads == sm.max_warps * 32
    assert sm.registers == 65536 and sm.max_registers_per_thread == 255
    assert sm.shared_per_block_bytes == 48 * 1024
    assert sm.shared_per_block_optin_bytes + sm.reserved_shared_per_block_bytes == sm.shared_per_sm_bytes
    assert set(sm.units) == set(UNIT_NAMES)
    assert sm.max_warps_per_scheduler * sm.scheduler.count == sm.max_warps
    assert cfg.l1.size_bytes == cfg.l1.unified_bytes - cfg.l1.carveout_kib * 1024


# cuda_occupancy.h (CUDA 12.6/13.0) switch statements, keyed by compute capability.
HEADER = {
    (7, 0): dict(max_blocks=32, gran=256, carveouts=(0, 8, 16, 32, 64, 96), bars=2),
    (8, 0): dict(max_blocks=32, gran=128, carveouts=(0, 8, 16, 32, 64, 100, 132, 164), bars=2),
    (8, 6): dict(max_blocks=16, gran=128, carveouts=(0, 8, 16, 32, 64, 100), bars=1),
    (9, 0): dict(max_blocks=32, gran=128, carveouts=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228), bars=2),
}


@pytest.mark.parametrize("name", NAMES)
def test_occupancy_constants_equal_cuda_occupancy_h(name):
    cfg = config.load(name)
    want = HEADER[cfg.compute_capability]
    assert cfg.sm.max_blocks == want["max_blocks"]  # cudaOccMaxBlocksPerMultiprocessor
    assert cfg.sm.shared_alloc_granularity_bytes == want["gran"]  # cudaOccSMemAllocationGranularity
    assert cfg.sm.shared_carveouts_kib == want["carveouts"]  # cudaOccAlignUpShmemSizeVoltaPlus
    assert cfg.sm.barriers_per_block_slot == want["bars"]  # cudaOccMaxBlocksPerSMBlockBarrierLimit
    assert cfg.sm.register_alloc_unit == 256  # cudaOccRegAllocationGranularity
    assert cfg.sm.register_sub_partitions == 4  # cudaOccSubPartitionsPerMultiprocessor
    assert cfg.sm.reserved_shared_per_block_bytes == (0 if cfg.compute_capability < (8, 0) else 1024)


def test_h100_config_equals_the_driver_device_properties():
    props = json.loads((ROOT / "validation/reports/h100/device_h100.json").read_text())
    cfg = config.load("h100")
    assert (props["major"], props["minor"]) == cfg.compute_capability
    assert props["multiProcessorCount"] == cfg.sm_count
    assert props["maxThreadsPerMultiProcessor"] == cfg.sm.max_threads
    assert props["maxBlocksPerMultiProcessor"] == cfg.sm.max_blocks
    assert props["regsPerMultiprocessor"] == cfg.sm.registers
    assert props["regsPerBlock"] == cfg.sm.max_registers_per_block
    assert props["sharedMemPerBlock"] == cfg.sm.shared_per_block_bytes
    assert props["sharedMemPerMultiprocessor"] == cfg.sm.shared_per_sm_bytes
    assert props["sharedMemPerBlockOptin"] == cfg.sm.shared_per_block_optin_bytes
    assert props["reservedSharedMemPerBlock"] == cfg.sm.reserved_shared_per_block_bytes
    assert props["warpSize"] == cfg.warp_size
    assert props["maxThreadsPerBlock"] == cfg.max_threads_per_block
    assert tuple(props["maxThreadsDim"]) == cfg.max_block_dims
    assert tuple(props["maxGridSize"]) == cfg.max_grid_dims
    assert props["clockRate"] * 1000 == cfg.clock_hz
    assert props["l2CacheSize"] == cfg.l2.size_bytes
    assert props["memoryBusWidth"] == cfg.dram.bus_width_bits


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_every_number_in_a_toml_file_has_a_source_comment(path):
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if "=" in code and re.match(r"[\d\[{]", code.split("=", 1)[1].strip()):
            comment = line.split("#", 1)[1] if "#" in line else ""
            assert re.search(r"\[[A-Z0-9-]+|ASSUMED|§\d", comment), f"{path.name}:{lineno} has no source: {line}"


def _all_fields(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        yield prefix + name, field
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _all_fields(annotation, prefix + name + ".")


def test_every_field_is_documented_and_models_are_strict():
    for path, field in _all_fields(GPUConfig):
        assert field.description and len(field.description) > 8, path
    for model in (GPUConfig, config.SMSpec, config.UnitSpec, config.L1Spec, config.L2Spec, config.DRAMSpec):
        assert model.model_config["frozen"] is True
        assert model.model_config["extra"] == "forbid"


def test_configs_are_frozen():
    cfg = config.load("h100")
    with pytest.raises(ValidationError, match="frozen"):
        cfg.sm.max_warps = 48  # type: ignore[misc]


def test_load_is_case_insensitive_and_accepts_a_config():
    cfg = config.load("H100")
    assert cfg.name == "h100"
    assert config.load(cfg) is cfg
    assert config.load().name == config.DEFAULT == "h100"


def test_with_overrides_example_from_the_issue():
    cfg = config.load("h100")
    small = cfg.with_overrides({"sm.max_warps": 48, "l2.size_bytes": 25_000_000})
    assert small.sm.max_warps == 48 and small.sm.max_threads == 1536
    assert small.l2.size_bytes == 25_000_000
    assert cfg.sm.max_warps == 64 and cfg.l2.size_bytes == 52428800  # the original is untouched
    unit = cfg.with_overrides({"sm.units.fma.latency": 6})
    assert unit.sm.units["fma"].latency == 6 and cfg.sm.units["fma"].latency == 4
    assert cfg.with_overrides({}) is cfg


def test_override_unknown_path_names_it():
    cfg = config.load("h100")
    with pytest.raises(ConfigError) as err:
        cfg.with_overrides({"sm.max_warp": 48})
    assert str(err.value).startswith(
        "override 'sm.max_warp': unknown field 'sm.max_warp'; did you mean 'sm.max_warps'?"
    )
    with pytest.raises(ConfigError, match=r"override 'l3.size_bytes': unknown field 'l3'"):
        cfg.with_overrides({"l3.size_bytes": 1})
    with pytest.raises(ConfigError, match=r"sm.max_warps is a value, not a section"):
        cfg.with_overrides({"sm.max_warps.x": 1})


def test_override_bad_value_names_field_and_reason():
    cfg = config.load("h100")
    with pytest.raises(ConfigError) as err:
        cfg.with_overrides({"sm.max_warps": -1})
    assert str(err.value) == (
        "override sm.max_warps=-1: sm.max_warps: Input should be greater than or equal to 1 (got -1)"
    )
    with pytest.raises(ConfigError, match=r"sm.max_warps: Input should be a valid integer \(got 'many'\)"):
        cfg.with_overrides({"sm.max_warps": "many"})
    with pytest.raises(ConfigError, match=r"warp_size: Input should be 32"):
        cfg.with_overrides({"warp_size": 64})
    with pytest.raises(ConfigError, match=r"unknown field 'sm.units.rtcore' \(known here: alu, branch, fma, fp64"):
        cfg.with_overrides({"sm.units.rtcore": {"latency": 1, "issue_interval": 1, "count": 1}})
    units = {name: {"latency": 4, "issue_interval": 1, "count": 1} for name in UNIT_NAMES + ("rtcore",)}
    with pytest.raises(ConfigError, match=r"sm.units: unknown functional unit\(s\) 'rtcore'; the unit classes are alu"):
        cfg.with_overrides({"sm.units": units})
    del units["rtcore"], units["sync"]
    with pytest.raises(ConfigError, match=r"sm.units: missing functional unit\(s\): sync"):
        cfg.with_overrides({"sm.units": units})
    with pytest.raises(ConfigError, match=r"sm.sass_pipes: .*sass_pipes\['IMAD.WIDE'\] names unknown unit\(s\) 'fmaheavy'; "
                                          r"the unit classes are alu"):
        cfg.with_overrides({"sm.sass_pipes": {"IMAD.WIDE": {"fmaheavy": 8}}})
    with pytest.raises(ConfigError, match=r"sass_pipes\['IMAD.WIDE'\]\['fma'\] must be a whole number of cycles >= 1, got 0"):
        cfg.with_overrides({"sm.sass_pipes": {"IMAD.WIDE": {"fma": 0}}})


def test_override_cross_field_rules():
    cfg = config.load("h100")
    with pytest.raises(ConfigError, match=r"arch \('sm_80'\) does not match compute_capability \(9, 0\)"):
        cfg.with_overrides({"arch": "sm_80"})
    with pytest.raises(ConfigError, match=r"sm.max_warps \(30\) must be a multiple of sm.scheduler.count \(4\)"):
        cfg.with_overrides({"sm.max_warps": 30})
    with pytest.raises(ConfigError, match=r"l1.carveout_kib \(33\) is not a legal carveout"):
        cfg.with_overrides({"l1.carveout_kib": 33})
    with pytest.raises(ConfigError, match=r"max_threads_per_block \(1024\) exceeds sm.max_warps \* warp_size \(512\)"):
        cfg.with_overrides({"sm.max_warps": 16})


def test_parse_override():
    assert config.parse_override("sm.max_warps=48") == ("sm.max_warps", 48)
    assert config.parse_override("clock_hz = 1.5e9") == ("clock_hz", 1.5e9)
    assert config.parse_override("sm.scheduler.policy=lrr") == ("sm.scheduler.policy", "lrr")
    assert config.parse_override("sm.shared_carveouts_kib=[0, 8]") == ("sm.shared_carveouts_kib", [0, 8])
    with pytest.raises(ConfigError, match=r"expected PATH=VALUE"):
        config.parse_override("sm.max_warps")


def test_unknown_config_name_suggests():
    with pytest.raises(ConfigError) as err:
        config.load("h10")
    assert str(err.value) == (
        "unknown GPU configuration 'h10'; did you mean 'h100'? (available: a100, a5000, h100, rtx3090, v100; "
        "or give the path of a .toml file)"
    )


def test_user_toml_file(tmp_path):
    text = (ROOT / "configs/h100.toml").read_text().replace('name = "h100"', 'name = "mine"')
    path = tmp_path / "mine.toml"
    path.write_text(text.replace("sm_count = 132", "sm_count = 66"))
    cfg = config.load(str(path))
    assert cfg.name == "mine" and cfg.sm_count == 66
    assert config.load(path).sm_count == 66


def test_bad_toml_syntax_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = \n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: invalid TOML: "):
        config.load(path)


def test_bad_toml_field_names_file_and_field(tmp_path):
    text = (ROOT / "configs/h100.toml").read_text()
    path = tmp_path / "bad.toml"
    path.write_text(text.replace("max_blocks = 32", "max_blocks = 32.5"))
    with pytest.raises(ConfigError) as err:
        config.load(path)
    assert str(err.value) == f"{path}: sm.max_blocks: Input should be a valid integer (got 32.5)"
    path.write_text(text.replace("[sm]\n", "[sm]\nmax_wraps = 3\n"))
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: sm.max_wraps: unknown field"):
        config.load(path)
    path.write_text(text.replace("mshrs = 512", ""))
    with pytest.raises(ConfigError, match=r"l1.mshrs: required field is missing"):
        config.load(path)


def test_missing_file():
    with pytest.raises(ConfigError, match=r"nope.toml: no such configuration file"):
        config.load("nope.toml")
