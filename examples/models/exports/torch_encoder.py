"""Writes torch_encoder.mlir: a transformer encoder built from torch's own nn modules
(nn.TransformerEncoderLayer, whose attention is scaled_dot_product_attention) exported by
iree-turbine with its defaults.

    ids: [2, 12] int64 (vocabulary 50)
    h = Embedding(50, 32)(ids)
    h = nn.TransformerEncoderLayer(32, 4 heads, 64, dropout 0, batch_first)(h)   (post-LN, ReLU)
    logits = Linear(32, 5)(mean over the sequence (h))                           -> [2, 5]
Weights from torch.manual_seed(0) (the modules' default init). IREE turns the layer's
attention into `iree_linalg_ext.attention` inside a dispatch (sequence-first operands,
heads as batch dims).

Export: `iree.turbine.aot.export(model, ids)` then `save_mlir`, nothing else.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_encoder.py          # rewrites torch_encoder.mlir, then checks it
    python examples/models/exports/torch_encoder.py --check  # checks the torch_encoder.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with seeded token ids, against torch on CPU.
"""


import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, SEQ, VOCAB, D, HEADS, FEEDFORWARD, CLASSES = 2, 12, 50, 32, 4, 64, 5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D)
        self.layer = nn.TransformerEncoderLayer(D, HEADS, FEEDFORWARD, dropout=0.0, batch_first=True)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, ids):
        return self.head(self.layer(self.embedding(ids)).mean(dim=1))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return Encoder().eval()


def inputs() -> list[np.ndarray]:
    """Seeded token ids."""
    return [np.random.default_rng(iree_check.SEED).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)]


if __name__ == "__main__":
    what = (f"Transformer encoder: Embedding({VOCAB}, {D}), nn.TransformerEncoderLayer({D}, {HEADS} heads, "
            f"{FEEDFORWARD}, post-LN) with scaled_dot_product_attention, mean over the sequence, Linear({D}, "
            f"{CLASSES}); ids: {BATCH}x{SEQ} int64.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
