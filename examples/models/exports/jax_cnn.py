"""Writes jax_cnn.mlir: a LeNet-style CNN in JAX, lowered to StableHLO by jax.jit.

    x: [2, 28, 28, 1] float32 (NHWC)
    conv 5x5 -> 6, SAME padding, + bias, relu; max pool 2x2 stride 2   -> [2, 14, 14, 6]
    conv 5x5 -> 16, VALID, + bias, relu; average pool 2x2 stride 2     -> [2, 5, 5, 16]
    flatten -> dense 120, relu -> dense 10 -> log_softmax             -> [2, 10]
Weights drawn like PyTorch's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from
numpy.random.default_rng(0), closed over by the jitted function (`stablehlo.constant`s).

Export: `jax.jit(cnn).lower(x).as_text()`: StableHLO with `func.func public @main(x)`:
`stablehlo.convolution` (with padding), `stablehlo.reduce_window` (max and add), a
reshape across tiles, dots, a log-softmax.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_cnn.py          # rewrites jax_cnn.mlir, then checks it
    python examples/models/exports/jax_cnn.py --check  # checks the jax_cnn.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

SHAPE = (2, 28, 28, 1)


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    w1, b1 = uniform((5, 5, 1, 6), 25), uniform((6,), 25)
    w2, b2 = uniform((5, 5, 6, 16), 150), uniform((16,), 150)
    w3, b3 = uniform((400, 120), 400), uniform((120,), 400)
    w4, b4 = uniform((120, 10), 120), uniform((10,), 120)

    def conv(x, w, padding):
        return jax.lax.conv_general_dilated(x, w, (1, 1), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def cnn(x):
        h = jax.nn.relu(conv(x, w1, "SAME") + b1)
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jax.nn.relu(conv(h, w2, "VALID") + b2)
        h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        h = jax.nn.relu(h.reshape(h.shape[0], -1) @ w3 + b3)
        return jax.nn.log_softmax(h @ w4 + b4)

    return cnn


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   f"LeNet-style CNN (two convolutions, max and average pooling, two dense layers), x: {SHAPE} f32.")
