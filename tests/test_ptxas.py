"""gpusim.ptxas: finding ptxas, parsing ``ptxas -v``, the cache, assembling, and the
``.shared`` estimate.

Covers: parse_ptxas_output and static_shared_from_ptx on fixed text (no ptxas needed); the
not-found and bad-input errors; and, marked ``ptxas`` (skipped without one), resource_usage /
assemble / the content-hash cache against the real assembler.
"""

from __future__ import annotations

import subprocess

import pytest

from gpusim import ptxas
from gpusim.ptxas import PtxasError, PtxasNotFoundError, ResourceUsage

needs_ptxas = [
    pytest.mark.ptxas,
    pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine"),
]

PTX = """\
.version 8.0
.target sm_90
.address_size 64

// module-scope shared variable, used by kern only
.shared .align 8 .b8 table[24];
.extern .shared .align 16 .b8 dyn[];

.visible .entry kern(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 buf[1000];
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    st.shared.u32 [buf], %r1;
    st.shared.u32 [table], %r1;
    bar.sync 3;
    ld.shared.u32 %r3, [buf+4];
    st.global.u32 [%rd1], %r3;
    ret;
}

.visible .entry tiny()
{
    ret;
}
"""

VERBOSE = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'tiny' for 'sm_90'
ptxas info    : Function properties for tiny
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers
ptxas info    : Compile time = 13.525 ms
ptxas info    : Function properties for helper
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'kern' for 'sm_90'
ptxas info    : Function properties for kern
    72 bytes stack frame, 88 bytes spill stores, 92 bytes spill loads
ptxas info    : Used 24 registers, used 4 barriers, 72 bytes cumulative stack size, 1024 bytes smem, 360 bytes cmem[0]
ptxas info    : Compile time = 1.979 ms
"""


@pytest.fixture
def ptx_file(tmp_path):
    path = tmp_path / "kern.ptx"
    path.write_text(PTX)
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "cache"))
    ptxas._memory_cache.clear()


def test_parse_ptxas_output():
    usage = ptxas.parse_ptxas_output(VERBOSE, "sm_90")
    assert list(usage) == ["tiny", "kern"]  # 'helper' is a .func, not a kernel
    assert usage["tiny"] == ResourceUsage("tiny", "sm_90", 4, 0, 0, 0, 0, 0, 0)
    assert usage["kern"] == ResourceUsage(
        kernel="kern", arch="sm_90", registers=24, static_shared_bytes=1024, local_bytes=72,
        spill_store_bytes=88, spill_load_bytes=92, barriers=4, constant_bytes=360,
    )


def test_parse_old_format_without_barriers():
    text = (
        "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_70'\n"
        "ptxas info    : Used 8 registers, 1000 bytes smem, 352 bytes cmem[0]\n"
    )
    usage = ptxas.parse_ptxas_output(text, "sm_70")["_Z1kPf"]
    assert (usage.registers, usage.static_shared_bytes, usage.barriers, usage.local_bytes) == (8, 1000, 0, 0)


def test_static_shared_from_ptx_and_kernel_names():
    assert ptxas.kernel_names(PTX) == ["kern", "tiny"]
    # table (24 B, align 8) then buf (1000 B, align 4); the extern (dynamic) array adds no
    # bytes but rounds the total up to its 16 B alignment.
    assert ptxas.static_shared_from_ptx(PTX) == {"kern": 1024, "tiny": 0}
    assert ptxas.static_shared_from_ptx(PTX.replace("buf[1000]", "buf[2000]"))["kern"] == 2032


def test_static_shared_alignment_and_vectors():
    text = """
.visible .entry k() {
    .shared .align 4 .b8 a[6];
    .shared .align 4 .b8 b[6];
    .shared .v4 .f32 c[2];
    // .shared .b8 commented_out[4096];
    ret;
}"""
    # a: 0..6, b: 8..14, c (align 16, 32 B): 16..48
    assert ptxas.static_shared_from_ptx(text) == {"k": 48}


def test_find_ptxas_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSIM_PTXAS", str(tmp_path / "missing-ptxas"))
    assert ptxas.find_ptxas() is None
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GPUSIM_PTXAS", str(fake))
    assert ptxas.find_ptxas() == str(fake)


def test_find_ptxas_wheel_layout(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUSIM_PTXAS", raising=False)
    monkeypatch.setattr(ptxas.shutil, "which", lambda name: None)
    site_dir = tmp_path / "site-packages"
    exe = site_dir / "nvidia" / "cu13" / "bin" / "ptxas"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.setattr(ptxas, "_site_dirs", lambda: [site_dir])
    assert ptxas.find_ptxas() == str(exe)


def test_no_ptxas_is_a_clear_error(monkeypatch, ptx_file):
    monkeypatch.setattr(ptxas, "find_ptxas", lambda: None)
    with pytest.raises(PtxasNotFoundError) as err:
        ptxas.resource_usage(ptx_file, "sm_90")
    assert str(err.value).startswith("ptxas not found: install the CUDA toolkit or `pip install nvidia-cuda-nvcc`")
    with pytest.raises(PtxasNotFoundError):
        ptxas.assemble(ptx_file, "sm_90")


def test_bad_inputs(ptx_file, tmp_path):
    with pytest.raises(PtxasError, match=r"arch must look like 'sm_90', got 'hopper'"):
        ptxas.resource_usage(ptx_file, "hopper")
    with pytest.raises(PtxasError, match=r"nope.ptx: no such PTX file"):
        ptxas.resource_usage(tmp_path / "nope.ptx", "sm_90")


@pytest.mark.parametrize("arch", ["sm_90", "sm_80", "sm_86"])
@pytest.mark.ptxas
@pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine")
def test_resource_usage_real_ptxas(ptx_file, arch):
    text = PTX.replace(".target sm_90", f".target {arch}")
    ptx_file.write_text(text)
    usage = ptxas.resource_usage(ptx_file, arch)
    assert set(usage) == {"kern", "tiny"}
    kern = usage["kern"]
    assert kern.arch == arch
    assert kern.static_shared_bytes == 1024 == ptxas.static_shared_from_ptx(text)["kern"]
    assert kern.barriers == 4 and 1 <= kern.registers <= 32 and kern.local_bytes == 0


@pytest.mark.ptxas
@pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine")
def test_cache_by_content_hash(ptx_file, monkeypatch):
    first = ptxas.resource_usage(ptx_file, "sm_90")
    calls = []
    real_run = subprocess.run
    monkeypatch.setattr(ptxas.subprocess, "run", lambda *a, **k: calls.append(a) or real_run(*a, **k))
    assert ptxas.resource_usage(ptx_file, "sm_90") == first  # memory cache
    ptxas._memory_cache.clear()
    assert ptxas.resource_usage(ptx_file, "sm_90") == first  # disk cache
    assert calls == []
    ptx_file.write_text(PTX.replace("buf[1000]", "buf[2000]"))
    # New content: ptxas runs again (2024 B rounded up to the 16 B alignment of the extern array).
    assert ptxas.resource_usage(ptx_file, "sm_90")["kern"].static_shared_bytes == 2032
    assert len(calls) == 1


@pytest.mark.ptxas
@pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine")
def test_assemble_returns_a_cubin(ptx_file, tmp_path):
    out = tmp_path / "k.cubin"
    cubin = ptxas.assemble(ptx_file, "sm_90", out)
    assert cubin[:4] == b"\x7fELF" and out.read_bytes() == cubin


@pytest.mark.ptxas
@pytest.mark.skipif(ptxas.find_ptxas() is None, reason="no ptxas on this machine")
def test_assemble_failure_carries_ptxas_message(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(PTX.replace("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %nosuchreg;"))
    with pytest.raises(PtxasError) as err:
        ptxas.assemble(bad, "sm_90")
    message = str(err.value)
    assert message.startswith(f"ptxas failed on {bad} for sm_90 (exit status")
    assert "nosuchreg" in message
    with pytest.raises(PtxasError, match="nosuchreg"):
        ptxas.resource_usage(bad, "sm_90")
