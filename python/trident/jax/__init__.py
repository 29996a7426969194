# SPDX-License-Identifier: Apache-2.0
"""trident.jax: Triton kernels inside jax.jit, through libtrident's XLA
custom-call handlers (C, typed FFI, command-buffer compatible).

jax-triton's API (upstream 0.4 and the ROCm fork's 0.5.1): change only the
import.

    import trident.jax as jt
    out = jt.triton_call(x, y, x.size, kernel=add_kernel, out_shape=x,
                         grid=(jt.cdiv(x.size, 1024),), BLOCK_SIZE=1024)

    @jt.kernel(out_names="out_ptr")
    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr): ...
    out = add[(jt.cdiv(n, 1024),)](x, y, n=n, BLOCK_SIZE=1024, out_shape=x)

The low-level call of an already compiled kernel (a trident bundle, a Triton
cache entry or a raw image) stays available:

    out = jt.kernel_call(kernel, x, y, x.size, grid=(n // 1024,),
                         out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))

Both are triton_kernel_call_p (jax-triton's primitive): compiled when lowered,
for the platform lowered for. The layers, each a module: platforms (targets),
dtypes, compile (specialize, compile, bundle), call (kernel_call and the
custom call's attributes; tma: tensor maps), lowering (a triton_call per
platform; interpret: Triton's interpreter on the CPU platform, through
host_ffi's Python FFI handler), triton (jax-triton's API), primitive (the
primitive and its rules), protocol (the XLA protocol), cache; errors holds
the exceptions they raise.
"""
from .._version import __version__  # noqa: F401 (trident's own version)
from . import utils  # noqa: F401
from .compile import TritonFunction, compile_ttir_inplace, host_twin  # noqa: F401
from .errors import (AutotuneError, CompileError, CoordinateError, KernelCallError, OptionError,  # noqa: F401
                     ShardingRuleError)
from .call import kernel_call, normalize_grid, pack_scalar  # noqa: F401
from .primitive import triton_kernel_call_p  # noqa: F401
from .protocol import TARGET, register  # noqa: F401
from .platforms import Target, cpu_kernels, device_targets, get_compute_capability, target, targets  # noqa: F401
from .sharding import ShardingRule  # noqa: F401
from .tensordesc import TensorDescriptor  # noqa: F401
from .triton import JTKernel, kernel, triton_call  # noqa: F401
from .utils import cdiv, next_power_of_2, strides_from_shape  # noqa: F401

# jax-triton's name for the custom-call target (trident registers its own handler under it)
CUSTOM_CALL_TARGET_NAME = TARGET
JAX_TRITON_API_VERSION_INFO = (0, 5, 1)   # the jax-triton API level this module provides
JAX_TRITON_API_VERSION = ".".join(str(v) for v in JAX_TRITON_API_VERSION_INFO)

__all__ = [
    "triton_call", "kernel", "JTKernel", "utils", "cdiv", "next_power_of_2", "strides_from_shape",
    "TensorDescriptor", "get_compute_capability", "CUSTOM_CALL_TARGET_NAME", "__version__", "JAX_TRITON_API_VERSION",
    "JAX_TRITON_API_VERSION_INFO",
    "targets", "target", "Target", "device_targets", "host_twin", "cpu_kernels",
    "kernel_call", "KernelCallError", "CompileError", "CoordinateError", "OptionError", "AutotuneError", "register",
    "triton_kernel_call_p", "TritonFunction", "compile_ttir_inplace", "ShardingRule", "ShardingRuleError",
]
