"""Writes torch_lstm.mlir: a one-layer nn.LSTM over a sequence plus a Linear head, exported
by iree-turbine with torch's LSTM decomposition added to its defaults.

    x: [2, 8, 16] float32 (batch 2, sequence 8, features 16; batch_first)
    nn.LSTM(input_size=16, hidden_size=32, num_layers=1, batch_first=True), zero initial state
    out = Linear(32, 10)(h_n[-1])      (the last hidden state)      -> [2, 10]
Weights from torch.manual_seed(0) (the modules' default init, U(-1/sqrt(32), 1/sqrt(32))),
held in the module.

Export: `iree.turbine.aot.export(model, x)` then `save_mlir`, inside
`aot.decompositions.extend_aot_decompositions(add_ops=[torch.ops.aten.lstm.input])`. With
turbine's defaults alone nn.LSTM stays one `torch.aten.lstm.input` op, which
iree-base-compiler 3.13 cannot lower ("failed to legalize operation 'torch.operator' that
was explicitly marked illegal"); torch's own decomposition of it (torch._decomp) unrolls
the 8 time steps: one Linear of the input over all steps, then per step a Linear of h,
the gates split 4 ways, sigmoid / tanh, c and h updates, and the h's stacked. The result is
torch-dialect MLIR with one `func.func @main`; the 128x16 and 128x32 gate weights are
`util.global private` from `dense_resource` blobs, the biases and the head
`torch.vtensor.literal(dense_resource<...>)`. IREE's torch input conversion turns @main
into `@main$async` (coarse-fences ABI) plus a synchronous `@main` wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_lstm.py          # rewrites torch_lstm.mlir, then checks it
    python examples/models/exports/torch_lstm.py --check  # checks the torch_lstm.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with a seeded N(0, 1) input, against the model in torch.
"""


import iree_check
import numpy as np
import torch
import torch_export
from iree.turbine import aot
from torch import nn

BATCH, SEQ, D_IN, D_HIDDEN, CLASSES = 2, 8, 16, 32, 10


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=D_IN, hidden_size=D_HIDDEN, num_layers=1, batch_first=True)
        self.fc = nn.Linear(D_HIDDEN, CLASSES)

    def forward(self, x):
        _, (h_n, _) = self.lstm(x)
        return self.fc(h_n[-1])

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return LSTMClassifier().eval()


def inputs() -> list[np.ndarray]:
    return [iree_check.random_input((BATCH, SEQ, D_IN))]


def export(model, *args):
    """aot.export with aten.lstm.input decomposed (IREE's torch frontend has no LSTM)."""
    with aot.decompositions.extend_aot_decompositions(add_ops=[torch.ops.aten.lstm.input]):
        return aot.export(model, *args)


if __name__ == "__main__":
    what = (f"nn.LSTM({D_IN}, {D_HIDDEN}) unrolled over {SEQ} steps, Linear({D_HIDDEN}, {CLASSES}) on h_n; "
            f"x: {BATCH}x{SEQ}x{D_IN} f32.")
    generator = f"{torch_export.GENERATOR} + aten.lstm.input decomposition"
    torch_export.cli(__file__, __doc__, build, inputs, what, generator=generator, export=export)
