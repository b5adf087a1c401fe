"""Writes torch_mlp_dynamic.mlir: torch_mlp's MLP with a dynamic batch dimension, exported
by iree-turbine.

    Linear(64, 128) -> ReLU -> Linear(128, 64) -> GELU(approximate="tanh"), float32;
    x: [batch, 64], batch a torch.export.Dim("batch", max=1024) (the example input has 8 rows);
    weights from torch.manual_seed(0) (nn.Linear's default init, as torch_mlp), held in the module.

Export: `iree.turbine.aot.export(model, x, dynamic_shapes={"x": {0: Dim("batch")}})` then
`save_mlir`: torch-dialect MLIR whose @main takes and returns `!torch.vtensor<[?,64],f32>`;
weights as in torch_mlp (dense_resource). IREE passes the batch to each dispatch as two
i32 push constants (an i64 split) and binds tensors with dynamic dims.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/torch_mlp_dynamic.py          # rewrites torch_mlp_dynamic.mlir, then checks it
    python examples/models/exports/torch_mlp_dynamic.py --check  # checks the torch_mlp_dynamic.mlir there is

Check (iree_check.py): the .mlir compiled once for llvm-cpu (input_type="torch"), @main run
on iree.runtime's local-task driver with seeded N(0, 1) inputs of 8, 5 and 33 rows
(one compiled module, three shapes), each against the model in torch.
"""

from pathlib import Path

import iree_check
import torch
from iree.turbine import aot
from torch import nn
from torch.export import Dim

BATCH, D_IN, D_HIDDEN = 8, 64, 128
CHECK_BATCHES = (8, 5, 33)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D_HIDDEN)
        self.fc2 = nn.Linear(D_HIDDEN, D_IN)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.fc2(torch.relu(self.fc1(x))))


def build():
    """The model (seeded weights, eval mode) and an example input."""
    torch.manual_seed(0)
    return MLP().eval(), torch.zeros(BATCH, D_IN)


def export(out: Path) -> None:
    model, x = build()
    exported = aot.export(model, x, dynamic_shapes={"x": {0: Dim("batch", max=1024)}})
    exported.save_mlir(out)
    what = f"MLP {D_IN}->{D_HIDDEN} relu ->{D_IN} gelu(tanh), x: ?x{D_IN} f32 (dynamic batch)."
    out.write_text(iree_check.header(__file__, f"torch {torch.__version__}, iree-turbine aot.export, dynamic_shapes",
                                     what) + out.read_text())


def check(text: str) -> None:
    model, _ = build()
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "torch"))
    for i, batch in enumerate(CHECK_BATCHES):
        x = iree_check.random_input((batch, D_IN), seed=iree_check.SEED + i)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        (got,) = iree_check.call(module["main"], x)
        iree_check.compare(f"torch_mlp_dynamic llvm-cpu batch {batch}", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
