"""Writes jax_bert_bf16.mlir: jax_bert.py's BERT-style encoder computing in bfloat16,
as a user casts a model to run it on a Tenstorrent chip (whose native format it is).

The same model, weights and inputs as jax_bert.py, every weight, activation and output
in bfloat16 (jax_bert.build(jnp.bfloat16)): the embeddings, matmuls, softmax, LayerNorm
and gelu on bf16 tensors, which IREE computes as float32 inside each dispatch and rounds
to bf16 where a dispatch stores (and, on llvm-cpu, after each op).

Export: `jax.jit(bert).lower(ids, mask).as_text()`.

Needs (a separate virtualenv, Python 3.11): jax/jaxlib 0.10.2 (CPU), and for the check
iree-base-compiler and iree-base-runtime 3.13.0, numpy.

    python examples/models/exports/jax_bert_bf16.py          # rewrites jax_bert_bf16.mlir, then checks it
    python examples/models/exports/jax_bert_bf16.py --check  # checks the jax_bert_bf16.mlir there is

Check (iree_check.py): as jax_bert.py's, within bf16's error: IREE llvm-cpu and jax
round at different places, so they agree to a few bf16 units of the outputs' scale
(BF16_MAX_ABS_ERROR), not to float32's.
"""

from pathlib import Path

import iree_check
import jax
import jax.numpy as jnp
import jax_bert
import numpy as np

BF16_MAX_ABS_ERROR = 0.1  # the sequence output's values reach about 4: 8 units of bf16's 2^-8 there


def export(out: Path) -> None:
    spec = jax.ShapeDtypeStruct((jax_bert.BATCH, jax_bert.SEQ), jnp.int32)
    text = jax.jit(jax_bert.build(jnp.bfloat16)).lower(spec, spec).as_text()
    what = "jax_bert.py's BERT-style encoder with every weight and activation in bfloat16."
    out.write_text(iree_check.header(__file__, f"jax {jax.__version__}, jax.jit(bert).lower(ids, mask).as_text()",
                                     what) + text)


def check(text: str) -> None:
    ids, mask = jax_bert.inputs()
    want = [np.asarray(w).astype(np.float32) for w in jax.jit(jax_bert.build(jnp.bfloat16))(ids, mask)]
    module = iree_check.load(iree_check.compile_llvm_cpu(text, "stablehlo"))
    got = [g.astype(np.float32) for g in iree_check.call(module["main"], ids, mask)]
    iree_check.compare("jax_bert_bf16 llvm-cpu (sequence)", got[0], want[0], BF16_MAX_ABS_ERROR)
    iree_check.compare("jax_bert_bf16 llvm-cpu (pooled)", got[1], want[1], BF16_MAX_ABS_ERROR)


if __name__ == "__main__":
    iree_check.cli(__file__, export, check, __doc__)
