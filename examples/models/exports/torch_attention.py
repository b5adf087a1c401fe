"""Writes torch_attention.mlir: a one-head self-attention block exported by iree-turbine
with its defaults.

    x: [1, 16, 64] float32 (batch 1, seq 16, d 64)
    q, k, v = Linear(64, 64)(x) each
    a = softmax(q @ k^T / sqrt(64), dim=-1) @ v
    out = LayerNorm(64)(x + Linear(64, 64)(a))
Weights from torch.manual_seed(0) (nn.Linear's default init; LayerNorm's gamma 1 + 0.1 N(0, 1),
beta 0.1 N(0, 1), so they are not the identity), held in the module.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else: torch-dialect
MLIR with one `func.func @main`; the four 64x64 weight matrices are `util.global private`
initialised from `dense_resource` blobs, the biases and LayerNorm parameters
`torch.vtensor.literal(dense_resource<...>)`. IREE's torch input conversion turns @main
into `@main$async` (coarse-fences ABI) plus a synchronous `@main` wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_attention.py          # rewrites torch_attention.mlir, then checks it
    python examples/models/exports/torch_attention.py --check  # checks the torch_attention.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""

import math

import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, SEQ, D = 1, 16, 64


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.o = nn.Linear(D, D)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        a = torch.softmax(scores, dim=-1) @ v
        return self.norm(x + self.o(a))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return torch_export.seeded_layer_norms(SelfAttention()).eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, SEQ, D))]


if __name__ == "__main__":
    what = f"One-head self-attention + residual + LayerNorm, x: {BATCH}x{SEQ}x{D} f32."
    torch_export.cli(__file__, __doc__, build, inputs, what)
