"""Writes jax_unet.mlir: a small U-Net block in JAX (a diffusion model's or a segmenter's
shape), lowered to StableHLO by jax.jit.

    x: [1, 16, 16, 4] float32, NHWC
    a = silu(groupnorm(conv3x3(x, 4 -> 8)))                    (GroupNorm: 4 groups)
    b = silu(groupnorm(conv3x3 stride 2(a, 8 -> 16)))          -> [1, 8, 8, 16]
    u = resize_bilinear(b, 16x16) + conv_transpose2x2 stride 2(b)
    y = conv3x3(concat([a, u], channels), 24 -> 8)            -> [1, 16, 16, 8]
Weights N(0, 0.1^2) from numpy.random.default_rng(0), closed over by the jitted function.
The transposed convolution is a `stablehlo.convolution` with lhs_dilate 2, which IREE
splits into a store of the input into every other row and column of a zero-filled
buffer (a strided slice) and a convolution of that.

Export: `jax.jit(unet).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_unet.py          # rewrites jax_unet.mlir, then checks it
    python examples/models/exports/jax_unet.py --check  # checks the jax_unet.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

SHAPE, GROUPS, EPS = (1, 16, 16, 4), 4, 1e-5
NHWC = ("NHWC", "HWIO", "NHWC")


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def weight(*shape):
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)

    k_in, k_down, k_up, k_out = weight(3, 3, 4, 8), weight(3, 3, 8, 16), weight(2, 2, 16, 16), weight(3, 3, 24, 8)

    def conv(x, k, stride=1):
        return jax.lax.conv_general_dilated(x, k, (stride, stride), "SAME", dimension_numbers=NHWC)

    def groupnorm(x):
        n, h, w, c = x.shape
        g = x.reshape(n, h, w, GROUPS, c // GROUPS)
        mean = g.mean(axis=(1, 2, 4), keepdims=True)
        var = ((g - mean) ** 2).mean(axis=(1, 2, 4), keepdims=True)
        return ((g - mean) / jnp.sqrt(var + EPS)).reshape(n, h, w, c)

    def unet(x):
        a = jax.nn.silu(groupnorm(conv(x, k_in)))
        b = jax.nn.silu(groupnorm(conv(a, k_down, 2)))
        up = jax.image.resize(b, (1, 16, 16, 16), "bilinear")
        up = up + jax.lax.conv_transpose(b, k_up, (2, 2), "SAME", dimension_numbers=NHWC)
        return conv(jnp.concatenate([a, up], axis=-1), k_out)

    return unet


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   "U-Net block: 3x3 convolutions, GroupNorm, SiLU, a stride-2 down convolution, bilinear resize and a "
                   "stride-2 transposed convolution up, a skip concatenation; x: 1x16x16x4 f32, weights as constants.")
