"""Writes hf_llama.mlir: Hugging Face transformers' own LlamaForCausalLM (a small config,
random weights) over a padded batch, exported by iree-turbine with its defaults: the
model a user would take from the hub, at a size a test can run (hf_export.py).

    ids: [2, 16] int64 (vocabulary 64), mask: [2, 16] int64 (1 a token, 0 padding)
    logits = LlamaForCausalLM(hidden 32, 2 layers, 4 heads, 2 key-value heads)(ids, attention_mask=mask).logits
                                                                                              -> [2, 16, 64]
RMSNorm, rotary embeddings from int64 positions, grouped-query attention
(scaled_dot_product_attention with the causal-and-padding mask transformers builds), SwiGLU.

    python examples/models/exports/hf_llama.py          # rewrites hf_llama.mlir, then checks it
    python examples/models/exports/hf_llama.py --check  # checks the hf_llama.mlir there is
"""

import hf_export
import transformers

if __name__ == "__main__":
    config = transformers.LlamaConfig(vocab_size=hf_export.VOCAB, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=hf_export.SEQ)
    hf_export.cli(__file__, __doc__, transformers.LlamaForCausalLM, config, use_cache=False)
