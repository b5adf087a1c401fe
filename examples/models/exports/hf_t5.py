"""Writes hf_t5.mlir: Hugging Face transformers' own T5EncoderModel (a small config,
random weights) over a padded batch, exported by iree-turbine with its defaults: the
model a user would take from the hub, at a size a test can run (hf_export.py).

    ids: [2, 16] int64 (vocabulary 64), mask: [2, 16] int64 (1 a token, 0 padding)
    h = T5EncoderModel(d_model 32, 2 layers, 4 heads)(ids, attention_mask=mask).last_hidden_state   -> [2, 16, 32]
T5's relative position buckets are int64 arithmetic on positions (abs, min, a log of
the distance cast back to int64), its attention an explicit softmax of scores plus the
position bias and the padding mask, its norms RMSNorm without a mean.

    python examples/models/exports/hf_t5.py          # rewrites hf_t5.mlir, then checks it
    python examples/models/exports/hf_t5.py --check  # checks the hf_t5.mlir there is
"""

import hf_export
import transformers

if __name__ == "__main__":
    config = transformers.T5Config(vocab_size=hf_export.VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)
    hf_export.cli(__file__, __doc__, transformers.T5EncoderModel, config, field="last_hidden_state")
