"""Writes jax_control_flow.mlir: a JAX function whose result depends on a data-dependent
branch and a data-dependent loop, lowered to StableHLO by jax.jit.

    x: [8, 64] float32
    h = lax.cond(mean(x) > 0,
                 lambda x: 4 * (relu(x @ w1 + b1) @ w2),    # taken for the positive-mean input
                 lambda x: tanh(x @ w3 + b3),               # taken for the negative-mean input
                 x)
    n, h = lax.while_loop(lambda c: max|c.h| > 1, lambda c: (c.n + 1, c.h / 2), (0., h))
    return h, n          # h: [8, 64], n: f32 scalar (the loop's trip count)
Weights (w1: [64, 128], w2: [128, 64], w3: [64, 64]) drawn like nn.Linear's default init
from numpy.random.default_rng(0), closed over, so they are constants in the module.

Export: `jax.jit(control_flow).lower(x).as_text()`: StableHLO whose `stablehlo.case`
(lax.cond) and `stablehlo.while` (lax.while_loop) take a predicate computed on the device,
so IREE's host code must read it back and branch. JAX has no mutable state to export,
so the mutable globals are in torch_stateful.py (iree-turbine).

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_control_flow.py          # rewrites jax_control_flow.mlir, then checks it
    python examples/models/exports/jax_control_flow.py --check  # checks the jax_control_flow.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with two seeded inputs, N(0, 1) + 0.5 (first branch,
the loop runs) and N(0, 1) - 0.5 (second branch, the loop does not), against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

BATCH, D_IN, D_HIDDEN = 8, 64, 128
SHIFTS = (0.5, -0.5)  # input offsets that take the first and the second branch


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)

    (w1, b1), (w2, _), (w3, b3) = (iree_check.linear(rng, *sizes) for sizes in
                                    ((D_IN, D_HIDDEN), (D_HIDDEN, D_IN), (D_IN, D_IN)))

    def control_flow(x):
        h = lax.cond(jnp.mean(x) > 0,
                     lambda x: 4.0 * (jax.nn.relu(x @ w1 + b1) @ w2),
                     lambda x: jnp.tanh(x @ w3 + b3),
                     x)
        n, h = lax.while_loop(lambda c: jnp.max(jnp.abs(c[1])) > 1.0,
                              lambda c: (c[0] + 1.0, c[1] * 0.5),
                              (jnp.float32(0.0), h))
        return h, n

    return control_flow


def export(out: Path) -> None:
    text = jax.jit(build()).lower(jax.ShapeDtypeStruct((BATCH, D_IN), jnp.float32)).as_text()
    what = (f"lax.cond on mean(x) > 0 between two dense branches, then lax.while_loop halving until max|h| <= 1; "
            f"x: {BATCH}x{D_IN} f32 -> (h, trip count).")
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(control_flow).lower(x).as_text()",
                                     what) + text)


def inputs():
    return [iree_check.random_input((BATCH, D_IN), seed=iree_check.SEED + i) + np.float32(shift)
            for i, shift in enumerate(SHIFTS)]


def check(text: str) -> None:
    f = jax.jit(build())
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    for x in inputs():
        want_h, want_n = (np.asarray(v) for v in f(x))
        got_h, got_n = iree_check.call(module["main"], x)
        label = f"jax_control_flow llvm-cpu mean(x) {float(x.mean()):+.2f}"
        iree_check.compare(f"{label} h", got_h, want_h)
        iree_check.compare(f"{label} n (loop trips {float(want_n):g})", got_n, want_n)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
