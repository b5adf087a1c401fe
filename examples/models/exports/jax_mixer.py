"""Writes jax_mixer.mlir: an MLP-Mixer in JAX, lowered to StableHLO by jax.jit.

    x: [1, 32, 32, 3] float32 (NHWC)
    patch embedding: conv 8x8 stride 8 -> 32 channels, flattened      -> [1, 16, 32] (tokens, channels)
    2 mixer layers: LayerNorm, token-mixing MLP (16 -> 32 -> 16, gelu)
    across tokens (on the transposed tensor), residual; LayerNorm,
    channel-mixing MLP (32 -> 64 -> 32, gelu), residual                  -> [1, 16, 32]
    LayerNorm, mean over tokens, dense 10                              -> [1, 10]
Weights drawn like PyTorch's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and
LayerNorm parameters near (1, 0), from numpy.random.default_rng(0), closed over by the
jitted function (`stablehlo.constant`s). gelu is jax.nn.gelu's default (tanh form).

Export: `jax.jit(mixer).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_mixer.py          # rewrites jax_mixer.mlir, then checks it
    python examples/models/exports/jax_mixer.py --check  # checks the jax_mixer.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

SHAPE, PATCH, CHANNELS, TOKENS, LAYERS, CLASSES = (1, 32, 32, 3), 8, 32, 16, 2, 10


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    def dense(fan_in, fan_out):
        return uniform((fan_in, fan_out), fan_in), uniform((fan_out,), fan_in)

    def norm_params():
        return ((1 + 0.1 * rng.standard_normal(CHANNELS)).astype(np.float32),
                (0.1 * rng.standard_normal(CHANNELS)).astype(np.float32))

    patch_w, patch_b = uniform((PATCH, PATCH, 3, CHANNELS), PATCH * PATCH * 3), uniform((CHANNELS,), PATCH * PATCH * 3)
    layers = [dict(norm1=norm_params(), token1=dense(TOKENS, 2 * TOKENS), token2=dense(2 * TOKENS, TOKENS),
                   norm2=norm_params(), channel1=dense(CHANNELS, 2 * CHANNELS), channel2=dense(2 * CHANNELS, CHANNELS))
              for _ in range(LAYERS)]
    final_norm, head = norm_params(), dense(CHANNELS, CLASSES)

    def layernorm(x, params):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * params[0] + params[1]

    def mlp(x, first, second):
        return jax.nn.gelu(x @ first[0] + first[1]) @ second[0] + second[1]

    def mixer(x):
        h = jax.lax.conv_general_dilated(x, patch_w, (PATCH, PATCH), "VALID",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC")) + patch_b
        h = h.reshape(h.shape[0], TOKENS, CHANNELS)
        for layer in layers:
            mixed = mlp(layernorm(h, layer["norm1"]).transpose(0, 2, 1), layer["token1"], layer["token2"])
            h = h + mixed.transpose(0, 2, 1)
            h = h + mlp(layernorm(h, layer["norm2"]), layer["channel1"], layer["channel2"])
        return layernorm(h, final_norm).mean(axis=1) @ head[0] + head[1]

    return mixer


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   f"MLP-Mixer: 8x8 patches, {LAYERS} layers of token- and channel-mixing MLPs, x: {SHAPE} f32.")
