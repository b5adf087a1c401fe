"""Writes jax_gnn.mlir: a message-passing graph network in JAX, lowered to StableHLO by jax.jit.

    x: [48, 16] float32 node features; src, dst: [192] int32 edges (src -> dst)
    2 layers of: m = relu([x[src], x[dst]] @ W_m + b_m)             (gathers of node rows)
                 a = segment_sum(m, dst, 48) / max(in-degree, 1)    (a scatter-add with repeated
                                                                     indices: a mean over in-edges)
                 p = segment_max(m, dst, 48), 0 without in-edges   (a scatter-max likewise)
                 x = relu([x, a, p] @ W_u + b_u)                    (16 -> 32, then 32 -> 32)
    logits = mean over nodes (x) @ W_o + b_o                       -> [4]
Weights drawn like nn.Linear's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from
numpy.random.default_rng(0), closed over by the jitted function. The edges are inputs:
the scatters' indices are run-time data, many nodes receiving several messages.

Export: `jax.jit(gnn).lower(x, src, dst).as_text()`: StableHLO with `func.func public
@main(x, src, dst)`; `jax.ops.segment_sum` and `segment_max` are `stablehlo.scatter`s
whose regions add and take the maximum (`unique_indices = false`).

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_gnn.py          # rewrites jax_gnn.mlir, then checks it
    python examples/models/exports/jax_gnn.py --check  # checks the jax_gnn.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="stablehlo"), @main run
on iree.runtime's local-task driver with seeded features and edges, against jax on CPU.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import numpy as np

NODES, EDGES, FEATURES, HIDDEN, CLASSES = 48, 192, 16, 32, 4


def build():
    """The function to jit, its weights closed over (seeded)."""
    rng = np.random.default_rng(0)
    layers = []
    width = FEATURES
    for _ in range(2):
        message, update = iree_check.linear(rng, 2 * width, HIDDEN), iree_check.linear(rng, width + 2 * HIDDEN, HIDDEN)
        layers.append((message, update))
        width = HIDDEN
    w_out, b_out = iree_check.linear(rng, HIDDEN, CLASSES)

    def gnn(x, src, dst):
        degree = jax.ops.segment_sum(jnp.ones((EDGES,), jnp.float32), dst, NODES)
        for (w_m, b_m), (w_u, b_u) in layers:
            messages = jax.nn.relu(jnp.concatenate([x[src], x[dst]], axis=1) @ w_m + b_m)
            mean = jax.ops.segment_sum(messages, dst, NODES) / jnp.maximum(degree, 1.0)[:, None]
            pooled = jnp.where(degree[:, None] > 0, jax.ops.segment_max(messages, dst, NODES), 0.0)
            x = jax.nn.relu(jnp.concatenate([x, mean, pooled], axis=1) @ w_u + b_u)
        return x.mean(axis=0) @ w_out + b_out

    return gnn


def edges(seed: int = iree_check.SEED) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (src, dst) int32 edges: 192 among 48 nodes, so most nodes receive several."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, NODES, EDGES).astype(np.int32), rng.integers(0, NODES, EDGES).astype(np.int32))


def export(out: Path) -> None:
    shapes = (jax.ShapeDtypeStruct((NODES, FEATURES), jnp.float32), jax.ShapeDtypeStruct((EDGES,), jnp.int32),
              jax.ShapeDtypeStruct((EDGES,), jnp.int32))
    text = jax.jit(build()).lower(*shapes).as_text()
    what = (f"message-passing GNN, {NODES} nodes x {FEATURES} features, {EDGES} edges as int32 inputs, 2 layers "
            f"of {HIDDEN}, segment-sum means and segment maxima, {CLASSES} logits; weights as constants.")
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(gnn).lower(x, src, dst).as_text()",
                                     what) + text)


def check(text: str) -> None:
    x = iree_check.random_input((NODES, FEATURES))
    src, dst = edges()
    want = np.asarray(jax.jit(build())(x, src, dst))
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    (got,) = iree_check.call(module["main"], x, src, dst)
    iree_check.compare("jax_gnn llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
