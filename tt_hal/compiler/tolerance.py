"""How close a compiled module's outputs must be to the llvm-cpu reference.

The error measure is the max abs error relative to the output's scale,
max|out - ref| / max|ref|: a bf16 model's elementwise relative error is meaningless
where the reference is near zero (relu, softmax tails, cancellation in matmuls), while
its error relative to the largest value stays near bf16's precision times the depth.
"""

from __future__ import annotations

import numpy as np

# Max allowed max_error per data format, in units of bf16's unit roundoff u = 2^-8:
# - bfloat16: tensors rounded to nearest even at every step; 10u. The models in
#   examples/models measured 0.007-0.021 with bf16 tiles (the former .ttm path; the
#   .vmfb path computes in float32 and offers no bf16 format yet).
# - float32: tensors stay float32, but the FPU (matmul, reduce) multiplies operands
#   truncated to bf16's 7 mantissa bits (docs/tensix.md), a bias that rounding does
#   not have; 15u. Measured on the .vmfb path (python examples/run_models.py):
#   layernorm 0.0012, softmax 0.0030, mlp 0.0062, attention 0.0148, the PyTorch and
#   JAX exports 0.0022-0.0148.
TOLERANCE = {"bfloat16": 10 * 2.0**-8, "float32": 15 * 2.0**-8}
_TINY = 1e-30  # an all-zero reference: the error is then absolute


def _pairs(outputs, references):
    """Outputs (one array or a tuple/list) and references (a list) as float64 pairs."""
    if isinstance(outputs, np.ndarray) or not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    if len(outputs) != len(references):
        raise AssertionError(f"{len(outputs)} outputs but {len(references)} references")
    pairs = []
    for i, (out, ref) in enumerate(zip(outputs, references)):
        out, ref = np.asarray(out), np.asarray(ref)
        if out.shape != ref.shape:
            raise AssertionError(f"output {i}: shape {out.shape}, reference {ref.shape}")
        pairs.append((out.astype(np.float64), ref.astype(np.float64)))
    return pairs


def max_error(out, ref) -> float:
    """max|out - ref| / max(max|ref|, tiny); inf if `out` has a NaN or inf where `ref` does not."""
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    if not np.array_equal(np.isfinite(out), np.isfinite(ref)):
        return float("inf")
    finite = np.isfinite(ref)
    if not finite.any():
        return 0.0
    scale = max(float(np.abs(ref[finite]).max()), _TINY)
    return float(np.abs(out[finite] - ref[finite]).max()) / scale


def pcc(out, ref) -> float:
    """Pearson correlation of the flattened arrays (1.0 for equal constant arrays)."""
    out, ref = np.ravel(np.asarray(out, np.float64)), np.ravel(np.asarray(ref, np.float64))
    if np.array_equal(out, ref):
        return 1.0
    if out.std() == 0 or ref.std() == 0:
        return 0.0
    return float(np.corrcoef(out, ref)[0, 1])


def report(outputs, references) -> str:
    """One line per output: shape, max abs error, normalized error (max_error) and PCC."""
    lines = []
    for i, (out, ref) in enumerate(_pairs(outputs, references)):
        abs_err = float(np.abs(out - ref).max()) if out.size else 0.0
        lines.append(f"output {i} {list(ref.shape)}: max abs err {abs_err:.3g}, "
                     f"normalized err {max_error(out, ref):.3g} (scale {np.abs(ref).max() if ref.size else 0:.3g}), "
                     f"PCC {pcc(out, ref):.6f}")
    return "\n".join(lines)


def check(outputs, references, data_format: str) -> None:
    """Raises AssertionError (with `report`) unless every float output's max_error is
    within TOLERANCE[data_format] and every boolean or integer output is equal."""
    limit = TOLERANCE[data_format]
    pairs = _pairs(outputs, references)
    exact = [np.asarray(ref).dtype.kind in "biu" for ref in references]  # predicates and integers: every value
    failed = [i for i, (out, ref) in enumerate(pairs)
              if not (np.array_equal(out, ref) if exact[i] else max_error(out, ref) <= limit)]
    if failed:
        raise AssertionError(f"outputs {failed} beyond the {data_format} tolerance {limit} "
                             f"(max abs error / max |reference|):\n" + report(outputs, references))
