"""Writes hf_gpt2.mlir: Hugging Face transformers' own GPT2LMHeadModel (a small config,
random weights) over a padded batch, exported by iree-turbine with its defaults: the
model a user would take from the hub, at a size a test can run (hf_export.py).

    ids: [2, 16] int64 (vocabulary 64), mask: [2, 16] int64 (1 a token, 0 padding)
    logits = GPT2LMHeadModel(n_embd 32, 2 layers, 4 heads)(ids, attention_mask=mask).logits   -> [2, 16, 64]
Its attention is scaled_dot_product_attention with the causal-and-padding mask
transformers builds; Conv1D projections, tanh GELU, a tied LM head.

    python examples/models/exports/hf_gpt2.py          # rewrites hf_gpt2.mlir, then checks it
    python examples/models/exports/hf_gpt2.py --check  # checks the hf_gpt2.mlir there is
"""

import hf_export
import transformers

if __name__ == "__main__":
    config = transformers.GPT2Config(vocab_size=hf_export.VOCAB, n_positions=hf_export.SEQ, n_embd=32, n_layer=2,
                                     n_head=4)
    hf_export.cli(__file__, __doc__, transformers.GPT2LMHeadModel, config, use_cache=False)
