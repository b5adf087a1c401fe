"""Writes jax_bert.mlir: a BERT-style encoder in JAX, lowered to StableHLO by jax.jit.

    ids: [2, 16] int32 (vocabulary 100), mask: [2, 16] int32 (1 = a token, 0 = padding)
    word + position + token-type (segment 0) embeddings, LayerNorm          -> [2, 16, 64]
    2 post-LayerNorm encoder layers: 4-head self-attention with the padding
    mask as an additive bias (1 - mask) * -10000, residual, LayerNorm;
    dense 128, gelu (erf), dense 64, residual, LayerNorm                    -> [2, 16, 64]
    pooler: tanh(dense 64) of the first token                               -> [2, 64]
Returns (sequence output, pooled output). Weights N(0, 0.02) and LayerNorm parameters
near (1, 0), as BERT's init, from numpy.random.default_rng(0), closed over by the jitted
function (`stablehlo.constant`s).

Export: `jax.jit(bert).lower(ids, mask).as_text()`: StableHLO with `func.func public @main(ids, mask)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_bert.py          # rewrites jax_bert.mlir, then checks it
    python examples/models/exports/jax_bert.py --check  # checks the jax_bert.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with seeded token ids and a mask padding the second
sequence's last 5 tokens, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

VOCAB, BATCH, SEQ, D, HEADS, FF, LAYERS, EPS = 100, 2, 16, 64, 4, 128, 2, 1e-12


def build(dtype=jnp.float32):
    """The function to jit, its weights closed over (seeded), computing in `dtype`."""
    rng = np.random.default_rng(0)

    def normal(*shape):
        return (0.02 * rng.standard_normal(shape)).astype(dtype)

    def norm_params():
        return (1 + 0.1 * rng.standard_normal(D)).astype(dtype), (0.1 * rng.standard_normal(D)).astype(dtype)

    words, positions, segments = normal(VOCAB, D), normal(SEQ, D), normal(2, D)
    embedding_norm = norm_params()
    layers = [dict(q=normal(D, D), k=normal(D, D), v=normal(D, D), o=normal(D, D), bias=normal(D),
                   norm1=norm_params(), up=normal(D, FF), up_bias=normal(FF), down=normal(FF, D),
                   norm2=norm_params()) for _ in range(LAYERS)]
    pool_w, pool_b = normal(D, D), normal(D)

    def layernorm(x, params):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + EPS) * params[0] + params[1]

    def heads(t):
        return t.reshape(BATCH, SEQ, HEADS, D // HEADS).transpose(0, 2, 1, 3)

    def attention(x, bias, layer):
        q, k, v = heads(x @ layer["q"]), heads(x @ layer["k"]), heads(x @ layer["v"])
        scores = q @ k.transpose(0, 1, 3, 2) / float(np.sqrt(D // HEADS)) + bias
        a = jax.nn.softmax(scores, axis=-1) @ v
        return a.transpose(0, 2, 1, 3).reshape(BATCH, SEQ, D) @ layer["o"] + layer["bias"]

    def bert(ids, mask):
        h = jnp.take(jnp.asarray(words), ids, axis=0) + positions + segments[0]
        h = layernorm(h, embedding_norm)
        bias = ((1.0 - mask.astype(dtype)) * -10000.0)[:, None, None, :]
        for layer in layers:
            h = layernorm(h + attention(h, bias, layer), layer["norm1"])
            up = jax.nn.gelu(h @ layer["up"] + layer["up_bias"], approximate=False)
            h = layernorm(h + up @ layer["down"], layer["norm2"])
        return h, jnp.tanh(h[:, 0] @ pool_w + pool_b)

    return bert


def inputs(seed: int = iree_check.SEED) -> tuple[np.ndarray, np.ndarray]:
    ids = np.random.default_rng(seed).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    mask = np.ones((BATCH, SEQ), np.int32)
    mask[1, -5:] = 0
    return ids, mask


def export(out: Path) -> None:
    spec = jax.ShapeDtypeStruct((BATCH, SEQ), jnp.int32)
    text = jax.jit(build()).lower(spec, spec).as_text()
    what = (f"BERT-style encoder: embeddings, {LAYERS} post-LayerNorm layers of masked {HEADS}-head attention "
            "and erf-gelu MLP, tanh pooler.")
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(bert).lower(ids, mask).as_text()",
                                     what) + text)


def check(text: str) -> None:
    ids, mask = inputs()
    want = [np.asarray(w) for w in jax.jit(build())(ids, mask)]
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    got = iree_check.call(module["main"], ids, mask)
    iree_check.compare("jax_bert llvm-cpu (sequence)", got[0], want[0])
    iree_check.compare("jax_bert llvm-cpu (pooled)", got[1], want[1])


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
