# SPDX-License-Identifier: Apache-2.0
"""Row-wise softmax through trident.jax (jax-triton's softmax example, the
import changed): one program per row, the row in one block."""
import jax
import jax.numpy as jnp
import trident.jax as jt
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(input_ptr, output_ptr, input_row_stride: tl.constexpr, output_row_stride: tl.constexpr,
                   n_cols: tl.constexpr, block_size: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, block_size)
    # the block covers the row; padding reads -inf so that it adds nothing
    x = tl.load(input_ptr + row * input_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(output_ptr + row * output_row_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def softmax(x: jnp.ndarray) -> jnp.ndarray:
    block_size = triton.next_power_of_2(x.shape[1])
    strides = jt.strides_from_shape(x.shape)
    return jt.triton_call(x, kernel=softmax_kernel, out_type=jax.typeof(x), input_row_stride=strides[0],
                          output_row_stride=strides[0], n_cols=x.shape[1], grid=x.shape[0], block_size=block_size)


def main():
    x = jnp.ones((8, 5), dtype="float32")
    print(softmax(x).block_until_ready())
    print(jax.jit(softmax)(x).block_until_ready())


if __name__ == "__main__":
    main()
