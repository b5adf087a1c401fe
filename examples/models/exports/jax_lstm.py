"""Writes jax_lstm.mlir: an LSTM over a sequence in JAX (`lax.scan`), lowered to StableHLO
by jax.jit.

    x: [2, 8, 16] float32 (batch, time, features)
    LSTM, hidden 32: per step gates = x_t W + h U + b, split into i, f, g, o;
    c = sigmoid(f) * c + sigmoid(i) * tanh(g); h = sigmoid(o) * tanh(c)    -> h_8: [2, 32]
    dense 10 on the last hidden state                                    -> [2, 10]
The time loop is `jax.lax.scan`, which lowers to a `stablehlo.while` whose body holds
the step: IREE keeps the loop on the host and dispatches each step. Weights drawn like
PyTorch's nn.LSTM init, U(-1/sqrt(hidden), 1/sqrt(hidden)), from
numpy.random.default_rng(0), closed over by the jitted function (`stablehlo.constant`s).

Export: `jax.jit(lstm).lower(x).as_text()`: StableHLO with `func.func public @main(x)`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_lstm.py          # rewrites jax_lstm.mlir, then checks it
    python examples/models/exports/jax_lstm.py --check  # checks the jax_lstm.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""


import jax
import jax.numpy as jnp
import jax_export
import numpy as np

BATCH, TIME, FEATURES, HIDDEN, CLASSES = 2, 8, 16, 32, 10
SHAPE = (BATCH, TIME, FEATURES)


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    def uniform(*shape):
        bound = 1.0 / np.sqrt(HIDDEN)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    w, u, b = uniform(FEATURES, 4 * HIDDEN), uniform(HIDDEN, 4 * HIDDEN), uniform(4 * HIDDEN)
    dense_w, dense_b = uniform(HIDDEN, CLASSES), uniform(CLASSES)

    def step(carry, x_t):
        h, c = carry
        i, f, g, o = jnp.split(x_t @ w + h @ u + b, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), None

    def lstm(x):
        zeros = jnp.zeros((BATCH, HIDDEN), jnp.float32)
        (h, _), _ = jax.lax.scan(step, (zeros, zeros), x.transpose(1, 0, 2))
        return h @ dense_w + dense_b

    return lstm


if __name__ == "__main__":
    jax_export.cli(__file__, __doc__, build, SHAPE,
                   f"LSTM (hidden {HIDDEN}) over {TIME} steps by lax.scan, then a dense layer, x: {SHAPE} f32.")
