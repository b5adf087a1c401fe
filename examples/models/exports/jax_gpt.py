"""Writes jax_gpt.mlir: a GPT-2-style decoder in JAX, lowered to StableHLO by jax.jit.

    ids: [1, 16] int32 token ids (vocabulary 128)
    h = token_embedding[ids] + position_embedding          (a gather: stablehlo.gather)
    2 blocks of: h += attention(layernorm(h)), 4 heads of 16, causal mask (iota compare
                 + select); h += mlp(layernorm(h)), 64 -> 256 -> 64 with tanh gelu
    logits = layernorm(h) @ token_embedding^T               -> [1, 16, 128]
Weights N(0, 0.02) (GPT-2's init), layernorm gains 1 and biases 0, from
numpy.random.default_rng(0), closed over by the jitted function.

Export: `jax.jit(gpt).lower(ids).as_text()`: StableHLO with `func.func public @main(ids)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_gpt.py          # rewrites jax_gpt.mlir, then checks it
    python examples/models/exports/jax_gpt.py --check  # checks the jax_gpt.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with seeded token ids, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

VOCAB, SEQ, D, HEADS, LAYERS, EPS = 128, 16, 64, 4, 2, 1e-5


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def normal(*shape):
        return (0.02 * rng.standard_normal(shape)).astype(np.float32)

    tokens, positions = normal(VOCAB, D), normal(SEQ, D)
    blocks = [dict(qkv=normal(D, 3 * D), proj=normal(D, D), up=normal(D, 4 * D), down=normal(4 * D, D))
              for _ in range(LAYERS)]

    def layernorm(x):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + EPS)

    def attention(x, block):
        q, k, v = jnp.split(x @ block["qkv"], 3, axis=-1)
        heads = [t.reshape(SEQ, HEADS, D // HEADS).transpose(1, 0, 2) for t in (q, k, v)]
        q, k, v = heads
        scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(D // HEADS))
        causal = jnp.arange(SEQ)[:, None] >= jnp.arange(SEQ)[None, :]
        scores = jnp.where(causal, scores, np.float32(-1e9))
        a = jax.nn.softmax(scores, axis=-1) @ v
        return a.transpose(1, 0, 2).reshape(SEQ, D) @ block["proj"]

    def gpt(ids):
        h = jnp.take(jnp.asarray(tokens), ids[0], axis=0) + positions
        for block in blocks:
            h = h + attention(layernorm(h), block)
            h = h + jax.nn.gelu(layernorm(h) @ block["up"], approximate=True) @ block["down"]
        return (layernorm(h) @ tokens.T)[None]

    return gpt


def token_ids(seed: int = iree_check.SEED) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (1, SEQ)).astype(np.int32)


def export(out: Path) -> None:
    text = jax.jit(build()).lower(jax.ShapeDtypeStruct((1, SEQ), jnp.int32)).as_text()
    what = f"GPT-2-style decoder: embeddings, {LAYERS} blocks of causal {HEADS}-head attention and MLP, tied logits."
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(gpt).lower(ids).as_text()", what)
                   + text)


def check(text: str) -> None:
    ids = token_ids()
    want = np.asarray(jax.jit(build())(ids))
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    (got,) = iree_check.call(module["main"], ids)
    iree_check.compare("jax_gpt llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
