"""Writes jax_llama.mlir: a LLaMA-style decoder block in JAX, lowered to StableHLO by jax.jit.

    ids: [1, 8] int32 token ids (vocabulary 64); start: int32 scalar, the first position
    h = embedding[ids]                                         (a gather)
    h += attention(rmsnorm(h)): 4 heads of 8, rotary position embeddings (cos and sin of
         (start + t) / 10000^(2i/8), computed in the program), a causal mask
    h += (silu(rmsnorm(h) W1) * (rmsnorm(h) W3)) W2            (SwiGLU, 32 -> 64 -> 32)
    logits = rmsnorm(h) @ embedding^T                          -> [1, 8, 64]
Weights N(0, 0.1^2) from numpy.random.default_rng(0), closed over by the jitted function.

Export: `jax.jit(llama).lower(ids, start).as_text()`: StableHLO with `func.func public
@main(ids, start)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_llama.py          # rewrites jax_llama.mlir, then checks it
    python examples/models/exports/jax_llama.py --check  # checks the jax_llama.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with seeded token ids and start 3, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

VOCAB, SEQ, D, HEADS, HIDDEN, EPS, START = 64, 8, 32, 4, 64, 1e-6, 3


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def weight(*shape):
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)

    embedding = jnp.asarray(weight(VOCAB, D))
    wq, wk, wv, wo = (weight(D, D) for _ in range(4))
    w1, w2, w3 = weight(D, HIDDEN), weight(HIDDEN, D), weight(D, HIDDEN)
    head = D // HEADS

    def rmsnorm(x):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + EPS)

    def llama(ids, start):
        x = embedding[ids]
        angles = (start + jnp.arange(SEQ))[:, None].astype(jnp.float32) / 10000.0 ** (jnp.arange(0, head, 2) / head)
        cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]

        def rotary(q):
            q = q.reshape(1, SEQ, HEADS, head)
            even, odd = q[..., ::2], q[..., 1::2]
            return jnp.stack([even * cos - odd * sin, even * sin + odd * cos], -1).reshape(1, SEQ, HEADS, head)

        h = rmsnorm(x)
        q, k, v = rotary(h @ wq), rotary(h @ wk), (h @ wv).reshape(1, SEQ, HEADS, head)
        scores = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(head)
        scores = jnp.where(jnp.tril(jnp.ones((SEQ, SEQ), bool)), scores, -1e9)
        x = x + jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores, -1), v).reshape(1, SEQ, D) @ wo
        h = rmsnorm(x)
        x = x + (jax.nn.silu(h @ w1) * (h @ w3)) @ w2
        return rmsnorm(x) @ embedding.T

    return llama


def token_ids(seed: int = iree_check.SEED) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (1, SEQ)).astype(np.int32)


def export(out: Path) -> None:
    shapes = (jax.ShapeDtypeStruct((1, SEQ), jnp.int32), jax.ShapeDtypeStruct((), jnp.int32))
    text = jax.jit(build()).lower(*shapes).as_text()
    what = (f"LLaMA-style block: embedding, RMSNorm, {HEADS}-head causal attention with rotary embeddings from a "
            f"start position, SwiGLU MLP, tied logits; ids: 1x{SEQ} int32, start: int32; weights as constants.")
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(llama).lower(ids, start).as_text()",
                                     what) + text)


def check(text: str) -> None:
    ids, start = token_ids(), np.array(START, np.int32)
    want = np.asarray(jax.jit(build())(ids, start))
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    (got,) = iree_check.call(module["main"], ids, start)
    iree_check.compare("jax_llama llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
