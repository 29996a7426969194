# SPDX-License-Identifier: Apache-2.0
"""Causal flash attention (forward) through trident.jax, in the shape of
jax-triton's fused attention example (the import changed): q, k, v and their
strides as arguments, three outputs (the row sums L and maxima M of the
online softmax, and the attention output), a 2-D grid of query blocks by
batch x heads."""
import functools

import jax
from jax import random
import jax.numpy as jnp
import trident.jax as jt
import triton
import triton.language as tl


@triton.jit
def fused_attention_kernel(Q, K, V,
                           stride_qz, stride_qh, stride_qm, stride_qk,
                           stride_kz, stride_kh, stride_kn, stride_kk,
                           stride_vz, stride_vh, stride_vn, stride_vk,
                           stride_oz, stride_oh, stride_om, stride_ok,
                           Z, H, N_CTX,
                           L, M, Out,
                           sm_scale,
                           BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    q_base = Q + off_z * stride_qz + off_h * stride_qh
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    # online softmax in base 2: exp(x) = exp2(x * log2(e))
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    # causal: the keys up to the end of this query block
    for start_n in range(0, (start_m + 1) * BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * stride_kn + offs_d[:, None] * stride_kk)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(offs_m[:, None] >= cols[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(L + off_hz * N_CTX + offs_m, l_i)
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    o_base = Out + off_z * stride_oz + off_h * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok, acc.to(Out.dtype.element_ty))


@functools.partial(jax.jit, static_argnames=["sm_scale"])
def fused_attention(q: jnp.ndarray, k: jnp.ndarray, v: jnp.ndarray, sm_scale: float = None) -> jnp.ndarray:
    """softmax(q k^T * sm_scale, causal) v for q, k, v of shape (batch, heads, seq, head_dim)."""
    block_m, block_n = 128, 64
    sm_scale = q.shape[-1] ** -0.5 if sm_scale is None else sm_scale
    grid = (triton.cdiv(q.shape[2], block_m), q.shape[0] * q.shape[1])
    out_type = [
        jax.ShapeDtypeStruct(shape=(q.shape[0] * q.shape[1], q.shape[2]), dtype=jnp.float32),
        jax.ShapeDtypeStruct(shape=(q.shape[0] * q.shape[1], q.shape[2]), dtype=jnp.float32),
        jax.ShapeDtypeStruct(shape=q.shape, dtype=q.dtype),
    ]
    metaparams = dict(BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_DMODEL=q.shape[-1], num_warps=4, num_stages=2)
    _, _, output = jt.triton_call(
        q, k, v,
        *jt.strides_from_shape(q.shape),
        *jt.strides_from_shape(k.shape),
        *jt.strides_from_shape(v.shape),
        *jt.strides_from_shape(q.shape),
        q.shape[0], q.shape[1], q.shape[2],
        kernel=fused_attention_kernel,
        out_type=out_type,
        grid=grid,
        sm_scale=sm_scale,
        **metaparams)
    return output


def reference(q, k, v, sm_scale=None):
    sm_scale = q.shape[-1] ** -0.5 if sm_scale is None else sm_scale
    s = jnp.einsum("bhqd,bhkd->bhqk", q.astype(jnp.float32), k.astype(jnp.float32)) * sm_scale
    n = q.shape[2]
    s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -jnp.inf)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v.astype(jnp.float32)).astype(q.dtype)


def main():
    q_key, k_key, v_key = random.split(random.PRNGKey(0), 3)
    B, H, S, D = 2, 3, 1024, 64
    q = random.normal(q_key, (B, H, S, D), dtype=jnp.float16)
    k = random.normal(k_key, (B, H, S, D), dtype=jnp.float16)
    v = random.normal(v_key, (B, H, S, D), dtype=jnp.float16)
    print(jax.jit(fused_attention)(q, k, v))


if __name__ == "__main__":
    main()
