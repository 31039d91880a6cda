"""tools/llama_cmake_args.py: the llama.cpp build flags `make install-local` uses by default. A plain AVX2
CPU gets the portable build; AVX-512 options only for what the CPU reports; AMX never. The Makefile builds
one wheel per set of flags, because pip's own cache would reinstall the first one whatever the flags."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scripts import load_script

TOOL = Path(__file__).parents[1] / "tools" / "llama_cmake_args.py"

HASWELL = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss "
           "ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid pni pclmulqdq ssse3 fma cx16 "
           "pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm bmi1 avx2 smep "
           "bmi2 erms invpcid xsaveopt")
SAPPHIRE = (HASWELL + " avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx_vnni avx512_bf16 avx512vbmi "
            "avx512_vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq avx512_fp16 amx_bf16 amx_tile amx_int8")


tool = load_script("tools/llama_cmake_args.py")


def _cpuinfo(flags: str) -> str:
    return f"processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: {flags}\nbugs\t\t: spectre_v1\n\nprocessor\t: 1\n"


def test_a_plain_avx2_cpu_gets_the_portable_build() -> None:
    assert tool.cmake_args(tool.cpu_flags(_cpuinfo(HASWELL))) == "-DGGML_NATIVE=OFF"


def test_an_avx512_cpu_gets_what_it_reports_and_never_amx() -> None:
    args = tool.cmake_args(tool.cpu_flags(_cpuinfo(SAPPHIRE)))
    assert args == ("-DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON "
                    "-DGGML_AVX512_BF16=ON")
    assert "AMX" not in args


def test_avx512_without_its_whole_base_set_is_not_used() -> None:
    # AVX-512 F and CD without VL/DQ/BW (Knights Landing): ggml's AVX512 option needs all five.
    assert tool.cmake_args(tool.cpu_flags(_cpuinfo(HASWELL + " avx512f avx512cd avx512_vnni"))) == "-DGGML_NATIVE=OFF"


def test_no_cpuinfo_or_no_x86_flags_gives_the_portable_build(tmp_path: Path) -> None:
    arm = tmp_path / "cpuinfo"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n")
    for path in (arm, tmp_path / "missing"):
        run = subprocess.run([sys.executable, str(TOOL), str(path)], capture_output=True, text=True, check=True)
        assert run.stdout.strip() == "-DGGML_NATIVE=OFF"


def _make_plan(tmp_path: Path, target: str, *overrides: str) -> str:
    """What `make TARGET` would run, for a venv that does not exist yet (`make -n`: nothing runs)."""
    run = subprocess.run(["make", "-n", target, f"VENV={tmp_path / 'venv'}", f"PYTHON={sys.executable}",
                          f"HOME={tmp_path}", *overrides],
                         cwd=TOOL.parents[1], capture_output=True, text=True, check=True)
    return run.stdout


def _make_install_llama(tmp_path: Path, *overrides: str) -> str:
    """What `make install-llama` (the optional llama.cpp runtime) would run."""
    return _make_plan(tmp_path, "install-llama", *overrides)


def _built(plan: str) -> tuple[str, str]:
    """The CMAKE_ARGS the wheel is built with and the folder it is built into."""
    match = re.search(r'CMAKE_ARGS="([^"]*)" .* wheel .*--wheel-dir (\S+)', plan, re.S)
    assert match, plan
    return match.group(1), match.group(2)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_install_llama_builds_what_the_cpu_reports_into_a_folder_per_flag_set(tmp_path: Path) -> None:
    haswell, sapphire = tmp_path / "haswell", tmp_path / "sapphire"
    haswell.write_text(_cpuinfo(HASWELL))
    sapphire.write_text(_cpuinfo(SAPPHIRE))
    avx2_args, avx2_dir = _built(_make_install_llama(tmp_path, f"LLAMA_CPUINFO={haswell}"))
    avx512_args, avx512_dir = _built(_make_install_llama(tmp_path, f"LLAMA_CPUINFO={sapphire}"))
    assert avx2_args == "-DGGML_NATIVE=OFF"
    assert avx512_args.startswith("-DGGML_NATIVE=OFF -DGGML_AVX512=ON") and "AMX" not in avx512_args
    assert avx2_dir != avx512_dir and avx2_dir.startswith(str(tmp_path / ".cache/helper-agent/llama-wheels"))
    # The same flags give the same folder, so a second install reuses the wheel built the first time;
    # an explicit override is honoured as given.
    assert _built(_make_install_llama(tmp_path, f"LLAMA_CPUINFO={haswell}"))[1] == avx2_dir
    assert _built(_make_install_llama(tmp_path, "LLAMA_CMAKE_ARGS=-DGGML_NATIVE=OFF"))[1] == avx2_dir
    plan = _make_install_llama(tmp_path, f"LLAMA_CPUINFO={haswell}")
    assert f"pip install --quiet {avx2_dir}/llama_cpp_python-" in plan


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_install_local_compiles_nothing(tmp_path: Path) -> None:
    """The default runtime (OpenVINO) installs from wheels: no llama.cpp build, no CMAKE_ARGS."""
    plan = _make_plan(tmp_path, "install-local")
    assert "helper models prepare" in plan and "'.[dev,local]'" in plan
    assert "CMAKE_ARGS" not in plan and "llama" not in plan.replace("llama_cmake_args.py", "")
