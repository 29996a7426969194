"""trident.jax: trident kernels inside jax.jit, through libtrident's XLA
custom-call handlers (C, typed FFI, command-buffer compatible).

    import trident.jax as tj
    out = tj.kernel_call(kernel, x, y, x.size, grid=(n // 1024,),
                         out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
"""
from ._call import KernelCallError, kernel_call, normalize_grid, pack_scalar  # noqa: F401
from ._ffi import register, TARGET  # noqa: F401

__all__ = ["kernel_call", "KernelCallError", "register"]
