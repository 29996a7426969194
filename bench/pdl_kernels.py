# SPDX-License-Identifier: Apache-2.0
"""bench_xla's `trident.jax+pdl` kernel: tests/fixtures' add_out_kernel made safe for programmatic dependent
launch (compiled with launch_pdl=True). It lets the next kernel launch at once and waits, before its first load,
for the kernel before it to finish and flush (gdc_wait), as XLA's own PDL kernels do."""
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


@triton.jit
def add_out_pdl_kernel(x_ptr, y_ptr, n_elements, out_ptr, BLOCK: tl.constexpr):
    gdc_launch_dependents()
    gdc_wait()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
