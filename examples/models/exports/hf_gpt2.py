"""Writes hf_gpt2.mlir: Hugging Face transformers' own GPT2LMHeadModel (a small config,
random weights) over a padded batch, exported by iree-turbine with its defaults: the
model a user would take from the hub, at a size a test can run.

    ids: [2, 16] int64 (vocabulary 64), mask: [2, 16] int64 (1 a token, 0 padding)
    logits = GPT2LMHeadModel(n_embd 32, 2 layers, 4 heads)(ids, attention_mask=mask).logits   -> [2, 16, 64]
Weights from torch.manual_seed(0) (transformers' own init). Its attention is
scaled_dot_product_attention with the causal-and-padding mask transformers builds.

Export: `iree.turbine.aot.export(model, ids, mask)` then `save_mlir`, nothing else.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
transformers 4.46.3 (5.x builds its masks with aten.diff and i1 literals, which IREE
3.13's torch frontend does not legalize), iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/hf_gpt2.py          # rewrites hf_gpt2.mlir, then checks it
    python examples/models/exports/hf_gpt2.py --check  # checks the hf_gpt2.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with seeded ids and a padded second sequence, against
transformers on CPU.
"""

from pathlib import Path

import iree_check
import numpy as np
import torch
import transformers
from iree.turbine import aot

BATCH, SEQ, VOCAB, PADDED = 2, 16, 64, 4


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits


def build():
    """The model (seeded weights, eval mode) and example inputs."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=4)
    model = Logits(transformers.GPT2LMHeadModel(config)).eval()
    return model, (torch.zeros(BATCH, SEQ, dtype=torch.int64), torch.ones(BATCH, SEQ, dtype=torch.int64))


def inputs(seed: int = iree_check.SEED) -> list[np.ndarray]:
    """Seeded ids, and the second sequence's last PADDED positions padding."""
    ids = np.random.default_rng(seed).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[-1, SEQ - PADDED:] = 0
    return [ids, mask]


def export(out: Path) -> None:
    model, args = build()
    aot.export(model, *args).save_mlir(out)
    what = (f"transformers {transformers.__version__} GPT2LMHeadModel (vocabulary {VOCAB}, n_embd 32, 2 layers, "
            f"4 heads) with an attention mask; ids and mask: {BATCH}x{SEQ} int64.")
    out.write_text(iree_check.header(__file__, f"torch {torch.__version__}, iree-turbine aot.export defaults", what)
                   + out.read_text())


def check(text: str) -> None:
    model, _ = build()
    args = inputs()
    with torch.no_grad():
        want = model(*map(torch.from_numpy, args)).numpy()
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "torch"))
    (got,) = iree_check.call(module["main"], *args)
    iree_check.compare("hf_gpt2 llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
