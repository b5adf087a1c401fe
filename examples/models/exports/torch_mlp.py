"""Writes torch_mlp.mlir: a PyTorch MLP exported by iree-turbine with its defaults.

    Linear(64, 128) -> ReLU -> Linear(128, 64) -> GELU(approximate="tanh"), batch 8, float32;
    weights from torch.manual_seed(0) (nn.Linear's default init), held in the module.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, nothing else. The text is
torch-dialect MLIR (torch.aten.* ops on !torch.vtensor) with one `func.func @main`; the
weight matrices are `util.global private` initialised from `dense_resource` blobs
(turbine's `__auto.constant_*`), the biases `torch.vtensor.literal(dense_resource<...>)`.
IREE's torch input conversion turns @main into `@main$async` (coarse-fences ABI) plus a
synchronous `@main` wrapper.

Needs (not the project's environment; a separate virtualenv, Python 3.11):
    torch 2.13.0+cpu, iree-turbine 3.9.0, iree-base-compiler 3.13.0 (turbine builds the
    MLIR with its Python bindings), numpy.

    python examples/models/exports/torch_mlp.py          # rewrites torch_mlp.mlir, then checks it
    python examples/models/exports/torch_mlp.py --check  # checks the torch_mlp.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""


import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, D_IN, D_HIDDEN = 8, 64, 128


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D_HIDDEN)
        self.fc2 = nn.Linear(D_HIDDEN, D_IN)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.fc2(torch.relu(self.fc1(x))))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return MLP().eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, D_IN))]


if __name__ == "__main__":
    what = f"MLP {D_IN}->{D_HIDDEN} relu ->{D_IN} gelu(tanh), x: {BATCH}x{D_IN} f32."
    torch_export.cli(__file__, __doc__, build, inputs, what)
