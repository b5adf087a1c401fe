"""Writes torch_gpt.mlir: a GPT-style causal decoder over padded batches, its attention
torch's scaled_dot_product_attention with masks (what a causal language model's forward
pass exports to), exported by iree-turbine with its defaults.

    ids: [2, 12] int64 (vocabulary 50), keep: [2, 12] int64 (1 a token, 0 padding)
    h = Embedding(50, 32)(ids) + Embedding(12, 32)(positions)
    h = nn.TransformerEncoderLayer(32, 4 heads, 64, gelu, pre-LN)(h, src_mask=causal float mask, is_causal)
    h = h + Linear(attention(LayerNorm(h)))       (attn_mask = causal & keep: a bool mask)
    h = h + MLP(LayerNorm(h))                     (tanh GELU)
    logits = Linear(32, 50)(LayerNorm(h))                                       -> [2, 12, 50]
Weights from torch.manual_seed(0) (the modules' default init). IREE turns both attentions
into `iree_linalg_ext.attention` with a mask operand: an f32 one (0 or -inf) for the first
layer, an i1 one for the second.

Export: `iree.turbine.aot.export(model, ids, keep)` then `save_mlir`, nothing else.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_gpt.py          # rewrites torch_gpt.mlir, then checks it
    python examples/models/exports/torch_gpt.py --check  # checks the torch_gpt.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with seeded token ids and a padded second sequence,
against torch on CPU.
"""


import iree_check
import numpy as np
import torch
import torch.nn.functional as F
import torch_export
from torch import nn

BATCH, SEQ, VOCAB, D, HEADS, FEEDFORWARD, PADDED = 2, 12, 50, 32, 4, 64, 4


class MaskedBlock(nn.Module):
    """A pre-LN GPT-2 block whose attention takes a bool mask."""

    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, FEEDFORWARD), nn.GELU(approximate="tanh"), nn.Linear(FEEDFORWARD, D))

    def forward(self, h, mask):
        q, k, v = (t.view(BATCH, SEQ, HEADS, D // HEADS).transpose(1, 2) for t in self.qkv(self.norm1(h)).chunk(3, -1))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        h = h + self.out(a.transpose(1, 2).reshape(BATCH, SEQ, D))
        return h + self.mlp(self.norm2(h))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(VOCAB, D), nn.Embedding(SEQ, D)
        self.layer = nn.TransformerEncoderLayer(D, HEADS, FEEDFORWARD, dropout=0.0, activation="gelu",
                                                batch_first=True, norm_first=True)
        self.block = MaskedBlock()
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids, keep):
        h = self.tokens(ids) + self.positions(torch.arange(SEQ))
        h = self.layer(h, src_mask=nn.Transformer.generate_square_subsequent_mask(SEQ), is_causal=True)
        # causal & keep as a product compared with 0 (IREE 3.13's torch frontend cannot legalize a broadcast
        # aten.__and__ of bools)
        causal = torch.ones(SEQ, SEQ, dtype=torch.int64).tril()
        h = self.block(h, causal * keep[:, None, None, :] != 0)
        return self.head(self.norm(h))

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return Gpt().eval()


def inputs(seed: int = iree_check.SEED) -> list[np.ndarray]:
    """Seeded token ids, and the second sequence's last PADDED positions padding."""
    ids = np.random.default_rng(seed).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    keep = np.ones((BATCH, SEQ), np.int64)
    keep[-1, SEQ - PADDED:] = 0
    return [ids, keep]


if __name__ == "__main__":
    what = (f"GPT-style decoder: Embedding({VOCAB}, {D}) + positions, nn.TransformerEncoderLayer({D}, {HEADS} heads, "
            f"{FEEDFORWARD}, gelu, pre-LN) with a causal float mask, a pre-LN block whose "
            f"scaled_dot_product_attention takes a bool causal & padding mask, LayerNorm, Linear({D}, {VOCAB}); "
            f"ids and keep: {BATCH}x{SEQ} int64.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
