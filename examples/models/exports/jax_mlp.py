"""Writes jax_mlp.mlir: torch_mlp's MLP in JAX, lowered to StableHLO by jax.jit.

    y = gelu(relu(x @ w1 + b1) @ w2 + b2, approximate=True)
    x: [8, 64] float32; w1: [64, 128], b1: [128], w2: [128, 64], b2: [64]
Weights drawn like nn.Linear's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from
numpy.random.default_rng(0), closed over by the jitted function, so they are
`stablehlo.constant dense<...>` ops inside the module (not arguments).

Export: `jax.jit(mlp).lower(x).as_text()`: StableHLO with `func.func public @main(x)`
and JAX's private helper `@relu`; jnp.maximum for relu, x*x*x for gelu's cube.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_mlp.py          # rewrites jax_mlp.mlir, then checks it
    python examples/models/exports/jax_mlp.py --check  # checks the jax_mlp.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with a seeded N(0, 1) input, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

BATCH, D_IN, D_HIDDEN = 8, 64, 128


def build():
    """The jitted-ready function, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)
    w1, b1 = iree_check.linear(rng, D_IN, D_HIDDEN)
    w2, b2 = iree_check.linear(rng, D_HIDDEN, D_IN)

    def mlp(x):
        h = jax.nn.relu(x @ w1 + b1)
        return jax.nn.gelu(h @ w2 + b2, approximate=True)

    return mlp


def export(out: Path) -> None:
    text = jax.jit(build()).lower(jax.ShapeDtypeStruct((BATCH, D_IN), jnp.float32)).as_text()
    what = f"MLP {D_IN}->{D_HIDDEN} relu ->{D_IN} gelu(tanh), x: {BATCH}x{D_IN} f32, weights as constants."
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(mlp).lower(x).as_text()", what)
                   + text)


def check(text: str) -> None:
    x = iree_check.random_input((BATCH, D_IN))
    want = np.asarray(jax.jit(build())(x))
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    (got,) = iree_check.call(module["main"], x)
    iree_check.compare("jax_mlp llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
