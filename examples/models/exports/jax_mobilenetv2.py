"""Writes jax_mobilenetv2.mlir: MobileNetV2-style inverted residual blocks in JAX
(inference), lowered to StableHLO by jax.jit.

    x: [1, 32, 32, 3] float32 (NHWC)
    stem: conv 3x3 -> 16, stride 2, SAME, batch norm, relu6                      -> [1, 16, 16, 16]
    inverted residual 16 -> 16, expand 4, stride 1, residual                     -> [1, 16, 16, 16]
    inverted residual 16 -> 24, expand 4, stride 2                               -> [1, 8, 8, 24]
    global average pool, dense 10                                                -> [1, 10]
An inverted residual is conv 1x1 (expand), batch norm, relu6, depthwise conv 3x3
(`feature_group_count` = channels), batch norm, relu6, conv 1x1 (project), batch norm.
Batch norm in inference form with seeded running statistics; weights drawn like
PyTorch's default init from numpy.random.default_rng(0), closed over by the jitted
function (`stablehlo.constant`s).

Export: `jax.jit(mobilenet).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_mobilenetv2.py          # rewrites jax_mobilenetv2.mlir, then checks it
    python examples/models/exports/jax_mobilenetv2.py --check  # checks the jax_mobilenetv2.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

SHAPE = (1, 32, 32, 3)


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    def conv_weights(k, cin, cout):
        return uniform((k, k, cin, cout), k * k * cin)

    def norm_params(c):
        return (rng.uniform(0.5, 1.5, c).astype(np.float32), (0.1 * rng.standard_normal(c)).astype(np.float32),
                (0.1 * rng.standard_normal(c)).astype(np.float32), rng.uniform(0.5, 1.5, c).astype(np.float32))

    def conv(x, w, stride=1, groups=1):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME", feature_group_count=groups,
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def norm(x, params):
        scale, offset, mean, var = params
        return (x - mean) / jnp.sqrt(var + 1e-5) * scale + offset

    def relu6(x):
        return jnp.clip(x, 0.0, 6.0)

    def block_params(cin, cout, expand=4):
        hidden = cin * expand
        return {"we": conv_weights(1, cin, hidden), "ne": norm_params(hidden),
                "wd": uniform((3, 3, 1, hidden), 9), "nd": norm_params(hidden),
                "wp": conv_weights(1, hidden, cout), "np": norm_params(cout)}

    def block(x, p, stride):
        h = relu6(norm(conv(x, p["we"]), p["ne"]))
        h = relu6(norm(conv(h, p["wd"], stride, groups=h.shape[-1]), p["nd"]))
        h = norm(conv(h, p["wp"]), p["np"])
        return x + h if stride == 1 and x.shape == h.shape else h

    stem_w, stem_n = conv_weights(3, 3, 16), norm_params(16)
    block1, block2 = block_params(16, 16), block_params(16, 24)
    dense_w, dense_b = uniform((24, 10), 24), uniform((10,), 24)

    def mobilenet(x):
        h = relu6(norm(conv(x, stem_w, 2), stem_n))
        h = block(h, block1, 1)
        h = block(h, block2, 2)
        return h.mean(axis=(1, 2)) @ dense_w + dense_b

    return mobilenet


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   f"MobileNetV2-style (stem, two inverted residual blocks with depthwise convolutions, relu6), "
                   f"x: {SHAPE} f32.")
