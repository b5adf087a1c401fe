"""Writes jax_resnet.mlir: a small ResNet in JAX (inference), lowered to StableHLO by jax.jit.

    x: [1, 16, 16, 3] float32 (NHWC)
    stem: conv 3x3 -> 16, SAME, batch norm, relu                        -> [1, 16, 16, 16]
    basic block 16 -> 16, stride 1, identity shortcut                   -> [1, 16, 16, 16]
    basic block 16 -> 32, stride 2, 1x1 conv + batch norm shortcut      -> [1, 8, 8, 32]
    global average pool, dense 10                                       -> [1, 10]
A basic block is conv 3x3, batch norm, relu, conv 3x3, batch norm, + shortcut, relu.
Batch norm in inference form, (x - mean) / sqrt(var + 1e-5) * scale + offset, with
seeded running statistics (not folded into the convolutions: as a user's model is).
Weights drawn like PyTorch's default init from numpy.random.default_rng(0), closed over
by the jitted function (`stablehlo.constant`s).

Export: `jax.jit(resnet).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_resnet.py          # rewrites jax_resnet.mlir, then checks it
    python examples/models/exports/jax_resnet.py --check  # checks the jax_resnet.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

SHAPE = (1, 16, 16, 3)


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

    def conv(x, w, stride=1):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def norm(x, params):
        scale, offset, mean, var = params
        return (x - mean) / jnp.sqrt(var + 1e-5) * scale + offset

    def block_params(cin, cout, stride):
        params = {"w1": conv_weights(3, cin, cout), "n1": norm_params(cout),
                  "w2": conv_weights(3, cout, cout), "n2": norm_params(cout)}
        if stride != 1 or cin != cout:
            params["ws"], params["ns"] = conv_weights(1, cin, cout), norm_params(cout)
        return params

    def block(x, p, stride):
        h = jax.nn.relu(norm(conv(x, p["w1"], stride), p["n1"]))
        h = norm(conv(h, p["w2"]), p["n2"])
        shortcut = norm(conv(x, p["ws"], stride), p["ns"]) if "ws" in p else x
        return jax.nn.relu(h + shortcut)

    stem_w, stem_n = conv_weights(3, 3, 16), norm_params(16)
    block1, block2 = block_params(16, 16, 1), block_params(16, 32, 2)
    dense_w, dense_b = uniform((32, 10), 32), uniform((10,), 32)

    def resnet(x):
        h = jax.nn.relu(norm(conv(x, stem_w), stem_n))
        h = block(h, block1, 1)
        h = block(h, block2, 2)
        return h.mean(axis=(1, 2)) @ dense_w + dense_b

    return resnet


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   f"Small ResNet (stem, two basic blocks, one strided with a projection shortcut), x: {SHAPE} f32.")
