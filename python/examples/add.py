# SPDX-License-Identifier: Apache-2.0
"""Vector addition through trident.jax: jax-triton's add example, where only
the import changes (`import trident.jax as jt`)."""
import jax
import jax.numpy as jnp
import trident.jax as jt
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements: tl.constexpr, block_size: tl.constexpr):
    """output = x + y, block_size elements per program."""
    start = tl.program_id(axis=0) * block_size
    offsets = start + tl.arange(0, block_size)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def add(x: jnp.ndarray, y: jnp.ndarray, block_size: int = 8) -> jnp.ndarray:
    grid = (triton.cdiv(x.size, block_size),)
    return jt.triton_call(x, y, kernel=add_kernel, out_type=jax.typeof(x), grid=grid, n_elements=x.size,
                          block_size=block_size)


def main():
    x = jnp.arange(8)
    y = jnp.arange(8, 16)
    print(add(x, y))
    print(jax.jit(add)(x, y))


if __name__ == "__main__":
    main()
