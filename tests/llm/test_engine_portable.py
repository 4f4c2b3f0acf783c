"""The installed engine (xllamacpp's wheel) is portable: no instruction a machine of ChaosLM's kind may refuse.

A native build once baked AMX into llama.cpp, and on a machine whose CPU advertised AMX while its kernel refused
it the model died on its first completion (a general protection fault on `ldtilecfg`). So: no AMX tile
instruction, no AVX-512 register, no AVX-VNNI, and llama.cpp's own report of its CPU features says the same.
docs/operations.md: Embedded model build.
"""

import importlib.util
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the baseline is an x86-64 one")

# AMX tile instructions; any use of an AVX-512 register; AVX-VNNI's dot products (VEX or EVEX encoded). And FMA's
# vfmadd, which the AVX2 kernels use: the one word found, it shows that the listing is the library's.
REFUSED = r"ldtilecfg|sttilecfg|tileloadd|tilestored|tdpb[a-z0-9]*|vpdpbusd|vpdpwssd|%zmm|vfmadd"


def engine_library() -> Path:
    spec = importlib.util.find_spec("xllamacpp")
    require(spec is not None and spec.submodule_search_locations, "the embedded model's engine (xllamacpp)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return next(folder.glob("xllamacpp*.so"))


def test_the_engine_has_no_amx_avx512_or_vnni_instruction():
    library = engine_library()
    require(shutil.which("objdump") is not None and shutil.which("grep") is not None, "objdump (binutils), grep")
    # objdump's 170 MB listing goes straight to grep: read into Python it took a minute and a half on a busy machine.
    objdump = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", str(library)], stdout=subprocess.PIPE)
    grep = subprocess.run(["grep", "-E", "-o", REFUSED], stdin=objdump.stdout, capture_output=True, text=True)
    objdump.stdout.close()
    assert objdump.wait() == 0
    found = sorted(set(grep.stdout.split()))
    assert found == ["vfmadd"], f"{library.name} uses {found}"


def test_llama_cpp_reports_the_baseline_and_nothing_beyond():
    engine_library()
    import xllamacpp

    features = set(re.findall(r"(\w+) = 1", xllamacpp.get_system_info()))
    assert {"AVX2", "FMA", "F16C", "BMI2"} <= features
    assert [name for name in features if "AVX512" in name or "AMX" in name or "VNNI" in name] == []
