# SPDX-License-Identifier: Apache-2.0
"""jax-triton's four examples (python/examples: add, matmul, softmax, fused
attention), written against `import trident.jax as jt` and nothing else
changed, checked against jnp on random inputs, on JAX's CPU platform (through
Triton's interpreter, smaller sizes) and on its GPU (skipped without one)."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import SRC  # noqa: E402

sys.path.insert(0, str(SRC / "python" / "examples"))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.float32, jnp.float16])
@pytest.mark.parametrize("size", [8, 1000, 4096])
def test_add(platform, size, dtype):
    import add
    if platform == "cpu" and size > 1000:
        size = 520   # jax.jit(add.add) runs programs of 8 elements: the interpreter takes about 2 ms each
    x = jax.random.normal(jax.random.key(0), (size,)).astype(dtype) * 10
    y = jax.random.normal(jax.random.key(1), (size,)).astype(dtype) * 10
    np.testing.assert_array_equal(add.add(x, y, block_size=256), x + y)
    np.testing.assert_array_equal(jax.jit(add.add)(x, y), x + y)
    add.main()


@pytest.mark.parametrize("shape", [(8, 5), (64, 1000), (300, 128)])
def test_softmax(platform, shape):
    import softmax
    x = jax.random.normal(jax.random.key(2), shape, jnp.float32)
    np.testing.assert_allclose(jax.jit(softmax.softmax)(x), jax.nn.softmax(x, axis=1), rtol=1e-4, atol=1e-6)
    softmax.main()


@pytest.mark.parametrize("activation", [None, "relu"])
def test_matmul(platform, activation):
    import matmul
    k1, k2 = jax.random.split(jax.random.key(3))
    n = 256 if platform == "cpu" else 512   # the example's blocks are 128 x 256: n must be a multiple of 256
    a = jax.random.normal(k1, (n, n), jnp.float32)
    b = jax.random.normal(k2, (n, n), jnp.float32)
    act = matmul.relu if activation else None
    ref = jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
    if activation:
        ref = jnp.maximum(ref, 0)
    # tl.dot on fp32 uses tf32 by default: about 1e-3 relative
    np.testing.assert_allclose(matmul.matmul(a, b, act), ref, rtol=2e-2, atol=0.25)
    np.testing.assert_allclose(jax.jit(matmul.matmul, static_argnums=2)(a, b, act), ref, rtol=2e-2, atol=0.25)


def test_fused_attention(platform):
    import fused_attention as fa
    kq, kk, kv = jax.random.split(jax.random.key(4), 3)
    B, H, S, D = (1, 2, 256, 64) if platform == "cpu" else (2, 3, 1024, 64)
    q = jax.random.normal(kq, (B, H, S, D), jnp.float16)
    k = jax.random.normal(kk, (B, H, S, D), jnp.float16)
    v = jax.random.normal(kv, (B, H, S, D), jnp.float16)
    out = fa.fused_attention(q, k, v)
    np.testing.assert_allclose(np.asarray(out, np.float32), np.asarray(fa.reference(q, k, v), np.float32),
                               atol=2e-2, rtol=2e-2)
