"""What the Hugging Face exports (hf_*.py) share: a transformers model built from a small
config with transformers' own seeded init, wrapped to return one tensor, exported by
iree-turbine with its defaults and checked against transformers on IREE's llvm-cpu
(torch_export.py). The text models take seeded token ids and a padding mask (the second
sequence's last PADDED positions).

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
transformers 4.46.3 (5.x builds its masks with aten.diff and i1 literals, which IREE
3.13's torch frontend does not legalize), iree-base-compiler 3.13.0, numpy.
"""

from __future__ import annotations

import iree_check
import numpy as np
import torch
import torch_export
import transformers

BATCH, SEQ, VOCAB, PADDED = 2, 16, 64, 4
TEXT_ARGUMENTS = ("input_ids", "attention_mask")


class Output(torch.nn.Module):
    """The model called with its keyword arguments `names` (and `fixed`), returning its
    output's `field`."""

    def __init__(self, model, names, field: str, **fixed):
        super().__init__()
        self.model, self.names, self.field, self.fixed = model, names, field, fixed

    def forward(self, *args):
        return getattr(self.model(**dict(zip(self.names, args)), **self.fixed), self.field)


def token_inputs(seed: int = iree_check.SEED) -> list[np.ndarray]:
    """Seeded ids, and a mask whose second sequence's last PADDED positions are padding."""
    ids = np.random.default_rng(seed).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[-1, SEQ - PADDED:] = 0
    return [ids, mask]


def cli(script: str, doc: str, model_class, config, names=TEXT_ARGUMENTS, field: str = "logits",
        inputs=token_inputs, **fixed) -> None:
    """Exports (unless --check) and checks model_class(config) as Output(names, field)."""

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return Output(model_class(config), names, field, **fixed).eval()

    build()  # the config as the model completes it (transformers sets _attn_implementation_autoset)
    shapes = ", ".join(f"{n} {'x'.join(map(str, x.shape))} {torch.from_numpy(x).dtype}"
                       for n, x in zip(names, inputs()))
    what = f"transformers {transformers.__version__} {model_class.__name__}({config.to_diff_dict()}); {shapes}."
    torch_export.cli(script, doc, build, inputs, what)
