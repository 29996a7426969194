"""What trident.jax's speed rests on, checked without a GPU: the matmul of the benchmark suite (bench/kernels.py),
compiled for sm90 as trident.jax compiles it, keeps Triton's own specialization of its arguments (16-divisible
pointers and integers) and so the TTGIR the 3.5x over jax-triton comes from (bench/NOTES.md, bench/matmul_spec.py):
vectorized loads, a pipeline of asynchronous copies and wgmma."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import matmul_spec  # noqa: E402


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    return matmul_spec.compile_trident(tmp_path_factory.mktemp("matmul"))


def test_matmul_integers_and_pointers_are_specialized_divisible_by_16(stages):
    attrs = matmul_spec.arg_attrs(stages["ttir"])
    for p in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"):
        assert attrs[p] == "tt.divisibility = 16 : i32", (p, attrs)
    for p in ("stride_ak", "stride_bn", "stride_cn"):   # equal to 1: compiled in, as Triton's launcher does
        assert attrs[p] == "constexpr 1", (p, attrs)


def test_matmul_ttgir_is_pipelined_with_vector_loads_and_wgmma(stages):
    facts = matmul_spec.ttgir_facts(stages["ttgir"])
    assert int(facts["wgmma (ttng.warp_group_dot)"]) >= 1, facts
    assert int(facts["async copies (ttg.async_copy_global_to_local)"]) >= 2, facts   # both operands, pipelined
    assert int(facts["plain tt.load in the loop"]) == 0, facts
    assert "8" in facts["blocked layouts' innermost sizePerThread"].split(","), facts  # 8 fp16 = 16-byte loads
