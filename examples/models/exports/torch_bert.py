"""Writes torch_bert.mlir: a BERT-style encoder (plain nn modules, no transformers library)
exported by iree-turbine with its defaults.

    input_ids: [1, 16] int64 (vocabulary 100); attention_mask: [1, 16] int64 (1 = keep)
    h = LayerNorm(word_emb[input_ids] + position_emb[0..15] + token_type_emb[0])
    2 encoder layers (hidden 64, 4 heads of 16, intermediate 128), post-LayerNorm as BERT:
        a = softmax(q k^T / sqrt(16) + (1 - attention_mask) * -10000) v   (heads merged)
        h = LayerNorm(h + Linear(a));  h = LayerNorm(h + Linear(GELU(Linear(h))))   (erf GELU)
    pooled = tanh(Linear(64, 64)(h[:, 0]))
    returns (pooled [1, 64], sequence output h [1, 16, 64])
Weights from torch.manual_seed(0) (the modules' default init: embeddings N(0, 1));
every LayerNorm's gamma 1 + 0.1 N(0, 1), beta 0.1 N(0, 1), so they are not the identity;
LayerNorm eps 1e-12 as BERT. The position ids (arange) and token-type ids (zeros) are
non-persistent buffers, i.e. constants in the export, as in transformers' BertEmbeddings.

Export: `iree.turbine.aot.export(model, input_ids, attention_mask)` then `save_mlir`,
nothing else: torch-dialect MLIR with one `func.func @main` taking two si64 tensors and
returning two f32 tensors; the three lookups are `torch.aten.embedding` (a gather; the
word table's on the int64 argument, the position and token-type tables' on constant ids),
the mask `torch.aten.rsub` of the int64 mask cast to f32; the 100x64 word table and the
64x64, 64x128, 128x64 weights are `util.global private` from `dense_resource` blobs, smaller
tensors `torch.vtensor.literal(dense_resource<...>)`. IREE's torch input conversion turns
@main into `@main$async` (coarse-fences ABI) plus a synchronous `@main` wrapper.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/torch_bert.py          # rewrites torch_bert.mlir, then checks it
    python examples/models/exports/torch_bert.py --check  # checks the torch_bert.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with seeded ids (np.random.default_rng(0).integers(0, 100,
(1, 16)) as int64) and a mask of ones with the last 4 positions 0, against the model in
torch; both results compared.
"""

import math

import iree_check
import numpy as np
import torch
import torch_export
from torch import nn

BATCH, SEQ, VOCAB, HIDDEN, HEADS, INTERMEDIATE, LAYERS, PADDED = 1, 16, 100, 64, 4, 128, 2, 4
HEAD = HIDDEN // HEADS
EPS = 1e-12


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(SEQ, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN, eps=EPS)
        self.register_buffer("position_ids", torch.arange(SEQ)[None], persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(1, SEQ, dtype=torch.long), persistent=False)

    def forward(self, input_ids):
        h = self.word(input_ids) + self.position(self.position_ids) + self.token_type(self.token_type_ids)
        return self.norm(h)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.o = nn.Linear(HIDDEN, HIDDEN)
        self.norm1 = nn.LayerNorm(HIDDEN, eps=EPS)
        self.up, self.down = nn.Linear(HIDDEN, INTERMEDIATE), nn.Linear(INTERMEDIATE, HIDDEN)
        self.act = nn.GELU()
        self.norm2 = nn.LayerNorm(HIDDEN, eps=EPS)

    def heads(self, x):
        return x.view(x.shape[0], x.shape[1], HEADS, HEAD).transpose(1, 2)

    def forward(self, h, additive_mask):
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        scores = q @ k.transpose(-2, -1) / math.sqrt(HEAD) + additive_mask
        a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(h.shape)
        h = self.norm1(h + self.o(a))
        return self.norm2(h + self.down(self.act(self.up(h))))


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.layers = nn.ModuleList(EncoderLayer() for _ in range(LAYERS))
        self.pooler = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, input_ids, attention_mask):
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h, additive_mask)
        return torch.tanh(self.pooler(h[:, 0])), h

def build():
    """The model: seeded weights, eval mode."""
    torch.manual_seed(0)
    return torch_export.seeded_layer_norms(Bert()).eval()


def inputs() -> list[np.ndarray]:
    """Seeded ids, and a mask of ones with the last PADDED positions 0."""
    ids = np.random.default_rng(iree_check.SEED).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[:, SEQ - PADDED:] = 0
    return [ids, mask]


if __name__ == "__main__":
    what = (f"BERT-style encoder: embeddings (vocabulary {VOCAB}), {LAYERS} post-LN layers of {HEADS}-head "
            f"masked attention and erf-GELU MLP, tanh pooler; ids, mask: {BATCH}x{SEQ} i64.")
    torch_export.cli(__file__, __doc__, build, inputs, what)
