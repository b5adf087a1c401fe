"""Writes jax_attention.mlir: torch_attention's block in JAX, lowered to StableHLO by jax.jit.

    x: [1, 16, 64] float32 (batch 1, seq 16, d 64)
    q, k, v = x @ wq + bq, x @ wk + bk, x @ wv + bv
    a = jax.nn.softmax(q @ k^T / sqrt(64), axis=-1) @ v
    out = layernorm(x + a @ wo + bo) * gamma + beta   (eps 1e-5, over the last dim)
Weights drawn like nn.Linear's default init, U(-1/8, 1/8), gamma 1 + 0.1 N(0, 1) and
beta 0.1 N(0, 1), from numpy.random.default_rng(0), closed over by the jitted function,
so they are `stablehlo.constant dense<...>` ops inside the module.

Export: `jax.jit(attention).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_attention.py          # rewrites jax_attention.mlir, then checks it
    python examples/models/exports/jax_attention.py --check  # checks the jax_attention.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

BATCH, SEQ, D = 1, 16, 64
EPS = 1e-5


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)
    bound = 1.0 / np.sqrt(D)
    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = [
        (rng.uniform(-bound, bound, (D, D)).astype(np.float32), rng.uniform(-bound, bound, (D,)).astype(np.float32))
        for _ in range(4)]
    gamma = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(D)).astype(np.float32)

    def attention(x):
        q, k, v = x @ wq + bq, x @ wk + bk, x @ wv + bv
        scores = q @ jnp.swapaxes(k, -2, -1) / np.float32(np.sqrt(D))
        h = x + jax.nn.softmax(scores, axis=-1) @ v @ wo + bo
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(h - mean), axis=-1, keepdims=True)
        return (h - mean) * jax.lax.rsqrt(var + EPS) * gamma + beta

    return attention


def export(out: Path) -> None:
    text = jax.jit(build()).lower(jax.ShapeDtypeStruct((BATCH, SEQ, D), jnp.float32)).as_text()
    what = f"One-head self-attention + residual + LayerNorm, x: {BATCH}x{SEQ}x{D} f32, weights as constants."
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(attention).lower(x).as_text()", what)
                   + text)


def check(text: str) -> None:
    x = iree_check.random_input((BATCH, SEQ, D))
    want = np.asarray(jax.jit(build())(x))
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    (got,) = iree_check.call(module["main"], x)
    iree_check.compare("jax_attention llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
