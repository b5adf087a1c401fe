"""Writes hf_vit.mlir: Hugging Face transformers' own ViTForImageClassification (a small
config, random weights), exported by iree-turbine with its defaults: the model a user
would take from the hub, at a size a test can run.

    pixels: [1, 3, 32, 32] float32
    logits = ViTForImageClassification(8x8 patches, hidden 32, 2 layers, 4 heads, 10 labels)(pixels).logits -> [1, 10]
Weights from torch.manual_seed(0) (transformers' own init). A strided patch convolution,
a class token and position embeddings, pre-LN encoder layers whose attention is
scaled_dot_product_attention, erf GELU, the class token's logits.

Export: `iree.turbine.aot.export(model, pixels)` then `save_mlir`, nothing else.

Needs (a separate virtualenv, Python 3.11): torch 2.13.0+cpu, iree-turbine 3.9.0,
transformers 4.46.3, iree-base-compiler 3.13.0, numpy.

    python examples/models/exports/hf_vit.py          # rewrites hf_vit.mlir, then checks it
    python examples/models/exports/hf_vit.py --check  # checks the hf_vit.mlir there is

Check (iree_check.py): the .mlir compiled for llvm-cpu (input_type="torch"), @main run on
iree.runtime's local-task driver with seeded pixels, against transformers on CPU.
"""

from pathlib import Path

import iree_check
import numpy as np
import torch
import transformers
from iree.turbine import aot

SHAPE = (1, 3, 32, 32)


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixels):
        return self.model(pixel_values=pixels).logits


def build():
    """The model (seeded weights, eval mode) and an example input."""
    torch.manual_seed(0)
    config = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                    num_attention_heads=4, intermediate_size=64, num_labels=10)
    return Logits(transformers.ViTForImageClassification(config)).eval(), torch.zeros(SHAPE)


def pixels(seed: int = iree_check.SEED) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)


def export(out: Path) -> None:
    model, example = build()
    aot.export(model, example).save_mlir(out)
    what = (f"transformers {transformers.__version__} ViTForImageClassification (32x32 images, 8x8 patches, hidden 32, "
            f"2 layers, 4 heads, 10 labels); pixels: 1x3x32x32 float32.")
    out.write_text(iree_check.header(__file__, f"torch {torch.__version__}, iree-turbine aot.export defaults", what)
                   + out.read_text())


def check(text: str) -> None:
    model, _ = build()
    x = pixels()
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "torch"))
    (got,) = iree_check.call(module["main"], x)
    iree_check.compare("hf_vit llvm-cpu", got, want)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
