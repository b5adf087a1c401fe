"""Writes hf_vit.mlir: Hugging Face transformers' own ViTForImageClassification (a small
config, random weights), exported by iree-turbine with its defaults: the model a user
would take from the hub, at a size a test can run (hf_export.py).

    pixels: [1, 3, 32, 32] float32 (seeded normal)
    logits = ViTForImageClassification(8x8 patches, hidden 32, 2 layers, 4 heads, 10 labels)(pixels).logits -> [1, 10]
A strided patch convolution, a class token and position embeddings, pre-LN encoder
layers whose attention is scaled_dot_product_attention, erf GELU, the class token's logits.

    python examples/models/exports/hf_vit.py          # rewrites hf_vit.mlir, then checks it
    python examples/models/exports/hf_vit.py --check  # checks the hf_vit.mlir there is
"""

import hf_export
import iree_check
import transformers

if __name__ == "__main__":
    config = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                    num_attention_heads=4, intermediate_size=64, num_labels=10)
    hf_export.cli(__file__, __doc__, transformers.ViTForImageClassification, config, names=("pixel_values",),
                  inputs=lambda: [iree_check.random_input((1, 3, 32, 32))])
