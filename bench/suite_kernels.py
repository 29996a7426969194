# SPDX-License-Identifier: Apache-2.0
"""The Triton kernels of the benchmark suite (bench_kernels.py) and of the
matmul specialization check (matmul_spec.py, python/tests): one source each,
called through trident.jax and through jax-triton alike (only the import
differs), each with a jnp reference in bench_kernels.py. Outputs are the last
parameters before the constexprs, as jax-triton's triton_call passes them."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, c_ptr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # C[M, N] = A[M, K] @ B[K, N] in fp16 with fp32 accumulation; programs grouped along M for L2 reuse
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    width = GROUP_M * grid_n
    group = pid // width
    first_m = group * GROUP_M
    size_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % width) // size_m
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0),
                     tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0), acc)
        a += BK * stride_ak
        b += BK * stride_bk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    c = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c, acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def softmax_kernel(x_ptr, n_cols, x_stride, out_stride, out_ptr, BLOCK: tl.constexpr):
    # one row per program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, n_cols, stride, eps, out_ptr, BLOCK: tl.constexpr):
    # one row per program: (x - mean) / sqrt(var + eps) * w + b
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, (d * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, seq, scale, stride_h, stride_s, o_ptr,
                         BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    # non-causal flash attention forward, fp16 in/out, one (query block, batch*head) per program;
    # q, k, v, o are [batch*heads, seq, D] contiguous; seq is a multiple of BN
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * stride_h
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * stride_s + rd[None, :], mask=rm[:, None] < seq, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    qk_scale = scale * 1.44269504   # exp(x) = exp2(x * log2(e))
    for start_n in range(0, seq, BN):
        rn = start_n + tl.arange(0, BN)
        k = tl.load(k_ptr + base + rn[None, :] * stride_s + rd[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + rn[:, None] * stride_s + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * stride_s + rd[None, :], o.to(tl.float16), mask=rm[:, None] < seq)


@triton.jit
def elementwise_chain_kernel(x_ptr, y_ptr, n, out_ptr, BLOCK: tl.constexpr):
    # a memory-bound chain: out = tanh-free GELU(x * y + x) * 0.5 + y, fp32
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    t = x * y + x
    g = t * tl.sigmoid(1.702 * t)
    tl.store(out_ptr + offs, g * 0.5 + y, mask=mask)
