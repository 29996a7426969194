# SPDX-License-Identifier: Apache-2.0
"""Matrix multiplication with a fused activation through trident.jax
(jax-triton's matmul example, the import changed): grouped program order for
L2 reuse, every size and stride a constexpr, the activation a @triton.jit
function passed as an argument (or None)."""
import jax
import jax.numpy as jnp
import trident.jax as jt
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, m: tl.constexpr, n: tl.constexpr, k: tl.constexpr,
                  stride_am: tl.constexpr, stride_ak: tl.constexpr, stride_bk: tl.constexpr, stride_bn: tl.constexpr,
                  stride_cm: tl.constexpr, stride_cn: tl.constexpr, block_size_m: tl.constexpr,
                  block_size_n: tl.constexpr, block_size_k: tl.constexpr, group_size_m: tl.constexpr,
                  activation: tl.constexpr):
    """c = activation(a @ b) for a (m, k) and b (k, n); k a multiple of block_size_k."""
    pid = tl.program_id(axis=0)
    blocks_m = tl.cdiv(m, block_size_m)
    blocks_n = tl.cdiv(n, block_size_n)
    # programs walk group_size_m block rows column by column, so that neighbours share B's blocks
    in_group = group_size_m * blocks_n
    first_m = (pid // in_group) * group_size_m
    rows_in_group = min(blocks_m - first_m, group_size_m)
    pid_m = first_m + (pid % rows_in_group)
    pid_n = (pid % in_group) // rows_in_group

    rm = pid_m * block_size_m + tl.arange(0, block_size_m)
    rn = pid_n * block_size_n + tl.arange(0, block_size_n)
    rk = tl.arange(0, block_size_k)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((block_size_m, block_size_n), dtype=tl.float32)
    for _ in range(0, k, block_size_k):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += block_size_k * stride_ak
        b_ptrs += block_size_k * stride_bk
    if activation is not None:
        acc = activation(acc)
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < m) & (rn[None, :] < n))


@triton.jit
def relu(x):
    return tl.where(x >= 0, x, 0)


def matmul(a, b, activation=None):
    block_size_m, block_size_n, block_size_k, group_size_m = 128, 256, 32, 8
    m, k = a.shape
    _, n = b.shape
    grid = (m // block_size_m * n // block_size_n,)
    return jt.triton_call(a, b, kernel=matmul_kernel, out_type=jax.ShapeDtypeStruct(shape=(m, n), dtype=a.dtype),
                          grid=grid, num_warps=8, num_stages=3, m=m, n=n, k=k, stride_am=k, stride_ak=1,
                          stride_bk=n, stride_bn=1, stride_cm=n, stride_cn=1, block_size_m=block_size_m,
                          block_size_n=block_size_n, block_size_k=block_size_k, group_size_m=group_size_m,
                          activation=activation)


def main():
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(k1, (512, 512), dtype=jnp.float32)
    b = jax.random.normal(k2, (512, 512), dtype=jnp.float32)
    print(matmul(a, b, relu).block_until_ready())
    print(jax.jit(matmul, static_argnums=2)(a, b, relu).block_until_ready())


if __name__ == "__main__":
    main()
