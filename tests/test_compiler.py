"""Differential tests of the compiler (tt_hal/compiler/): small StableHLO and linalg
programs, compiled by `tt_hal.compiler.compile_vmfb` into a real IREE .vmfb and run by
iree.runtime's VM on the simulated tenstorrent device, against the same MLIR compiled
by IREE for llvm-cpu and run on iree.runtime (tt_hal.compiler.reference.run_llvm_cpu),
within tt_hal.compiler.tolerance's float32 limit (the .vmfb path computes in float32).

Patterns (CASES, each a @main):
- matmul: shapes not multiples of 32, a fill or an input as init, chained through
  exp so that padding in K must stay zero, K of one tile, one row, one column,
  matrix-vector, transposed operands ([1]x[1], [0]x[0], [0]x[1]; square ones too), batched (batching
  dims, linalg.batch_matmul), a shared rhs (broadcast_in_dim, einsum-like), a bias
  broadcast over the batch;
- reductions: sum and max over the last dim and dim 0 of 2-D, the last and middle
  dim of 3-D, widths not multiples of 32, negative inputs for max (padding must not
  win), bodies that compute before accumulating (x^2, exp(x - max), x * y);
- elementwise: every supported body op alone (math.fpowi too), selects that are a max or
  min, constants folded into scalar forms,
  a linalg.generic body, programs IREE collapses to one dim;
- broadcasts: row, column (an input and a keepdims reduction), scalar (constant and
  0-d argument), batch; transposes (2-D, last two dims of 3-D, fused into an add);
- gathers: permutations of outer dims, broadcasts over some batch dims, convolutions
  (NHWC, NCHW with the result permuted back, depthwise), max pooling, reductions over
  two dims and over an outer dim, an embedding lookup (ids out of range clamped), a
  reverse, slices (strided), a concatenation, a pad, a padded strided convolution,
  linalg.pack and unpack;
- iree_linalg_ext.gather of rows (repeated ids);
- sorting networks and scans: a stable sort with a payload, topk and arg_compare (with
  an index base), topk into outs filled with a value that wins, an exclusive scan with
  an initial value; scatters (rows added at given ids; elements written at repeated ids,
  in range: llvm-cpu writes out-of-range ones outside the tensor, so those are checked
  against numpy); bit counts (popcnt, leading and trailing zeros, i32 and i8); a KV-cache
  row written and a slice read at a position given at run time (lowered per call);
- i64 as pairs of int32 words (arithmetic, bitwise ops, compares, max/min, selects,
  shifts by constants, conversions, a non-splat constant; i64 ids of a gather and the
  start of a dynamic_slice read from the data), i4 and i2 packed to bytes (stored by one
  dispatch, loaded by the next); an RFFT (iree_linalg_ext.fft stages);
- softmax, layernorm and rmsnorm as JAX writes them;
- bf16 and f16 (loads, stores, constants, matmuls, sums, broadcasts, truncf in a body; f16's
  conversions bit for bit over every pattern); complex FFTs (complex tensors between
  dispatches); i64 converted to float; a depthwise NCHW convolution; a generic with a
  constant result beside a reduction;
- several results (two of one linalg.generic), results that are transforms of the inputs
  (or the input itself),
  one executable at four call sites (binding offsets as push constants), a program
  with two public functions and a private helper.
Errors: MLIR that does not parse or that IREE rejects (INVALID_ARGUMENT with the
diagnostics' input.mlir:line:col), ops without a Tensix lowering and element types
without one (UNIMPLEMENTED naming the op and its line), and the
loading and calling errors of a .vmfb.

Cost: each MLIR is compiled once (`vmfb`), and the llvm-cpu references come from one
IREE compile of all cases as functions of one module (`reference`;
`test_combined_reference_is_standalone` checks that this changes nothing), as one
llvm-cpu compile per case would dominate the file's run time.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hal import HalError, StatusCode
from tt_hal import compiler, runtime
from tt_hal.compiler import dispatch, frontend, lowering, tolerance
from tt_hal.compiler import reference as llvm_cpu
from tt_hal.compiler.reference import function_signatures, run_llvm_cpu
from tt_hal.kernels import rowmajor
from tt_hal.kernels.fused import FUSED_INPUTS, FUSED_ROW_TILE_INPUTS, Constant, FusedInput, Input, Ternary
from tt_hal.target.isa import SfpuOp
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, BindingSource
from tt_hal.target.sizes import tile_count
from tt_hal.target.ttx import read_executable
from tt_hal.tools.inspection import embedded_executable

SEED = 1234


# ---- cases -------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Case:
    """An MLIR program with a public @main, and how to draw its inputs: per argument a
    float s for N(0, s^2), or a pair (low, high) for U(low, high); N(0, 1) when not
    given."""

    text: str
    inputs: tuple = ()


def mlir(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def dot(a: str, b: str, out: str, contracting="[1] x [0]", batching=None, name="%r", lhs="%a", rhs="%b") -> str:
    """A stablehlo.dot_general line."""
    batch = f"batching_dims = {batching}, " if batching else ""
    return (f"{name} = stablehlo.dot_general {lhs}, {rhs}, {batch}contracting_dims = {contracting} : "
            f"(tensor<{a}xf32>, tensor<{b}xf32>) -> tensor<{out}xf32>")


def one_op_program(lhs: tuple[str, str], rhs: tuple[str, str], out: str, line: str) -> str:
    """@main of two float32 arguments (name, shape) returning %r, which `line` defines."""
    return mlir(f"""
        func.func @main({lhs[0]}: tensor<{lhs[1]}xf32>, {rhs[0]}: tensor<{rhs[1]}xf32>) -> tensor<{out}xf32> {{
          {line}
          return %r : tensor<{out}xf32>
        }}
    """)


def dot_program(a: str, b: str, out: str, **kw) -> str:
    return one_op_program(("%a", a), ("%b", b), out, dot(a, b, out, **kw))


NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"  # JAX's layouts (HWIO weights)
NCHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"  # torch's (OIHW weights)


def convolution(x: str, w: str, out: str, dims: str = NHWC, stride: int = 1, pad=((0, 0), (0, 0)), groups: int = 1,
                name="%r", lhs="%x", rhs="%w") -> str:
    """A 2-D stablehlo.convolution line."""
    pads = ", ".join(f"[{low}, {high}]" for low, high in pad)
    return (f"{name} = stablehlo.convolution({lhs}, {rhs}) dim_numbers = {dims}, "
            f"window = {{stride = [{stride}, {stride}], pad = [{pads}]}} "
            f"{{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : "
            f"(tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{out}xf32>")


def convolution_program(x: str, w: str, out: str, **kw) -> str:
    return one_op_program(("%x", x), ("%w", w), out, convolution(x, w, out, **kw))


def reduce_program(shape: str, dims: str, out: str, kind: str = "add", prologue: str = "", operand: str = "%x") -> str:
    init = {"add": "0.000000e+00", "maximum": "0xFF800000", "minimum": "0x7F800000"}[kind]
    return mlir(f"""
        func.func @main(%x: tensor<{shape}xf32>) -> tensor<{out}xf32> {{
          %init = stablehlo.constant dense<{init}> : tensor<f32>
          {prologue}
          %r = stablehlo.reduce({operand} init: %init) applies stablehlo.{kind} across dimensions = {dims}
              : (tensor<{shape}xf32>, tensor<f32>) -> tensor<{out}xf32>
          return %r : tensor<{out}xf32>
        }}
    """)


def elementwise_program(shape: str, body: str, args=("%a",)) -> str:
    params = ", ".join(f"{a}: tensor<{shape}xf32>" for a in args)
    body = textwrap.indent(textwrap.dedent(body).strip(), " " * 10).lstrip()
    return mlir(f"""
        func.func @main({params}) -> tensor<{shape}xf32> {{
          {body}
          return %r : tensor<{shape}xf32>
        }}
    """)


def W(fan_in: int) -> float:
    """A weight's std: x @ w keeps unit variance."""
    return 1 / np.sqrt(fan_in)


POSITIVE = (0.25, 4.0)
CASES: dict[str, Case] = {}

# -- matmul --------------------------------------------------------------------------------------
CASES["matmul_50x100_100x70"] = Case(dot_program("50x100", "100x70", "50x70"))
CASES["matmul_linalg_fill_init"] = Case(mlir("""
    func.func @main(%a: tensor<33x65xf32>, %b: tensor<65x31xf32>) -> tensor<33x31xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<33x31xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<33x31xf32>) -> tensor<33x31xf32>
      %r = linalg.matmul ins(%a, %b : tensor<33x65xf32>, tensor<65x31xf32>)
                         outs(%f : tensor<33x31xf32>) -> tensor<33x31xf32>
      return %r : tensor<33x31xf32>
    }
"""))
CASES["matmul_linalg_input_init"] = Case(mlir("""
    func.func @main(%a: tensor<50x100xf32>, %b: tensor<100x70xf32>, %c: tensor<50x70xf32>) -> tensor<50x70xf32> {
      %r = linalg.matmul ins(%a, %b : tensor<50x100xf32>, tensor<100x70xf32>)
                         outs(%c : tensor<50x70xf32>) -> tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""), inputs=(1.0, 1.0, 10.0))
# exp(x @ w + b) @ w2: exp(0) = 1 lands in the padding columns of the hidden layer (K of
# the second matmul) unless the fused kernel re-zeroes them.
CASES["matmul_chained_exp"] = Case(mlir(f"""
    func.func @main(%x: tensor<40x50xf32>, %w: tensor<50x60xf32>, %b: tensor<60xf32>, %w2: tensor<60x30xf32>)
        -> tensor<40x30xf32> {{
      {dot("40x50", "50x60", "40x60", name="%h", lhs="%x", rhs="%w")}
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<60xf32>) -> tensor<40x60xf32>
      %s = stablehlo.add %h, %bb : tensor<40x60xf32>
      %e = stablehlo.exponential %s : tensor<40x60xf32>
      {dot("40x60", "60x30", "40x30", lhs="%e", rhs="%w2")}
      return %r : tensor<40x30xf32>
    }}
"""), inputs=(1.0, W(50), 0.5, W(60)))
# Both operands of the second matmul computed on the device, each a non-zero function
# of 0 (exp, cos + 1), so padding in K would meet padding: K = 40 (24 padding columns),
# and b < -3 keeps the valid exp values small next to the exp(0) = 1 of the padding.
CASES["matmul_chained_both_operands"] = Case(mlir(f"""
    func.func @main(%x: tensor<40x50xf32>, %w: tensor<50x40xf32>, %b: tensor<40xf32>, %w2: tensor<40x30xf32>)
        -> tensor<40x30xf32> {{
      {dot("40x50", "50x40", "40x40", name="%h", lhs="%x", rhs="%w")}
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<40xf32>) -> tensor<40x40xf32>
      %s = stablehlo.add %h, %bb : tensor<40x40xf32>
      %e = stablehlo.exponential %s : tensor<40x40xf32>
      %one = stablehlo.constant dense<1.0> : tensor<40x30xf32>
      %c = stablehlo.cosine %w2 : tensor<40x30xf32>
      %v = stablehlo.add %c, %one : tensor<40x30xf32>
      {dot("40x40", "40x30", "40x30", lhs="%e", rhs="%v")}
      return %r : tensor<40x30xf32>
    }}
"""), inputs=(1.0, W(50), (-4.0, -3.0), 1.0))
CASES["matmul_k_one_tile"] = Case(dot_program("64x32", "32x96", "64x96"))
CASES["matmul_k_20"] = Case(dot_program("40x20", "20x50", "40x50"))
CASES["matmul_one_row"] = Case(dot_program("1x100", "100x70", "1x70"))
CASES["matmul_one_column"] = Case(dot_program("50x100", "100x1", "50x1"))
CASES["matvec"] = Case(dot_program("50x100", "100", "50"))
CASES["vecmat"] = Case(dot_program("100", "100x70", "70", contracting="[0] x [0]"))
CASES["matmul_transposed_rhs"] = Case(dot_program("50x100", "70x100", "50x70", contracting="[1] x [1]"))
CASES["matmul_transposed_lhs"] = Case(dot_program("100x50", "100x70", "50x70", contracting="[0] x [0]"))
CASES["matmul_transposed_both"] = Case(dot_program("100x50", "70x100", "50x70", contracting="[0] x [1]"))
# Square operands: transposed or not, the device shape is the same; the maps must decide.
CASES["matmul_transposed_rhs_square"] = Case(dot_program("8x64", "64x64", "8x64", contracting="[1] x [1]"))
CASES["matmul_transposed_lhs_square"] = Case(dot_program("64x64", "64x64", "64x64", contracting="[0] x [0]"))
CASES["batch_matmul"] = Case(dot_program("3x40x50", "3x50x30", "3x40x30", batching="[0] x [0]",
                                         contracting="[2] x [1]"))
CASES["batch_matmul_transposed_rhs"] = Case(dot_program("3x40x50", "3x30x50", "3x40x30", batching="[0] x [0]",
                                                        contracting="[2] x [2]"))
CASES["batch_matmul_linalg"] = Case(mlir("""
    func.func @main(%a: tensor<2x33x40xf32>, %b: tensor<2x40x20xf32>) -> tensor<2x33x20xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x33x20xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x33x20xf32>) -> tensor<2x33x20xf32>
      %r = linalg.batch_matmul ins(%a, %b : tensor<2x33x40xf32>, tensor<2x40x20xf32>)
                               outs(%f : tensor<2x33x20xf32>) -> tensor<2x33x20xf32>
      return %r : tensor<2x33x20xf32>
    }
"""))
CASES["batch_matmul_shared_rhs_broadcast"] = Case(mlir(f"""
    func.func @main(%a: tensor<3x64x50xf32>, %w: tensor<50x30xf32>) -> tensor<3x64x30xf32> {{
      %b = stablehlo.broadcast_in_dim %w, dims = [1, 2] : (tensor<50x30xf32>) -> tensor<3x50x30xf32>
      {dot("3x64x50", "3x50x30", "3x64x30", batching="[0] x [0]", contracting="[2] x [1]")}
      return %r : tensor<3x64x30xf32>
    }}
"""))
CASES["batch_matmul_shared_rhs_einsum"] = Case(dot_program("2x64x50", "50x30", "2x64x30", contracting="[2] x [0]"))
CASES["batch_matmul_shared_rhs_einsum_m40"] = Case(
    dot_program("3x40x50", "50x30", "3x40x30", contracting="[2] x [0]"))
# A (40, 30) bias over the batch, fused into the batched matmul's dispatch.
CASES["batch_matmul_bias_over_batch"] = Case(mlir(f"""
    func.func @main(%a: tensor<3x40x50xf32>, %b: tensor<3x50x30xf32>, %y: tensor<40x30xf32>) -> tensor<3x40x30xf32> {{
      {dot("3x40x50", "3x50x30", "3x40x30", batching="[0] x [0]", contracting="[2] x [1]", name="%p")}
      %yb = stablehlo.broadcast_in_dim %y, dims = [1, 2] : (tensor<40x30xf32>) -> tensor<3x40x30xf32>
      %r = stablehlo.add %p, %yb : tensor<3x40x30xf32>
      return %r : tensor<3x40x30xf32>
    }}
"""), inputs=(1.0, 1.0, 5.0))

# -- reductions ----------------------------------------------------------------------------------
SQUARE = "%sq = stablehlo.multiply %x, %x : tensor<{}xf32>"
CASES["reduce_sum_last_2d"] = Case(reduce_program("50x70", "[1]", "50"))
CASES["reduce_max_last_2d"] = Case(reduce_program("50x70", "[1]", "50", "maximum"))
CASES["reduce_sum_dim0_2d"] = Case(reduce_program("50x70", "[0]", "70"))
CASES["reduce_max_dim0_2d"] = Case(reduce_program("50x70", "[0]", "70", "maximum"))
# All inputs negative: a max that let the zero padding in would return 0.
CASES["reduce_max_last_negative"] = Case(reduce_program("50x70", "[1]", "50", "maximum"), inputs=((-3.0, -1.0),))
CASES["reduce_max_dim0_negative"] = Case(reduce_program("50x70", "[0]", "70", "maximum"), inputs=((-3.0, -1.0),))
CASES["reduce_sum_last_3d"] = Case(reduce_program("2x64x70", "[2]", "2x64"))
CASES["reduce_max_last_3d"] = Case(reduce_program("2x32x70", "[2]", "2x32", "maximum"))
CASES["reduce_sum_last_3d_m20"] = Case(reduce_program("4x20x70", "[2]", "4x20"))
CASES["reduce_sum_middle_3d"] = Case(reduce_program("4x50x20", "[1]", "4x20"))
CASES["reduce_max_middle_3d"] = Case(reduce_program("4x50x20", "[1]", "4x20", "maximum"))
CASES["reduce_sum_of_squares"] = Case(reduce_program("50x70", "[1]", "50", prologue=SQUARE.format("50x70"),
                                                     operand="%sq"))
CASES["reduce_sum_of_squares_dim0"] = Case(reduce_program("50x70", "[0]", "70", prologue=SQUARE.format("50x70"),
                                                          operand="%sq"))
CASES["reduce_sum_exp_minus_max"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>) -> tensor<50xf32> {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
          : (tensor<50x70xf32>, tensor<f32>) -> tensor<50xf32>
      %max_b = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<50xf32>) -> tensor<50x70xf32>
      %d = stablehlo.subtract %x, %max_b : tensor<50x70xf32>
      %e = stablehlo.exponential %d : tensor<50x70xf32>
      %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<50x70xf32>, tensor<f32>) -> tensor<50xf32>
      return %sum : tensor<50xf32>
    }
"""))
# sum(x * y) over the last dim: a mulf + addf body that is not a matmul.
CASES["reduce_sum_of_products"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %y: tensor<50x70xf32>) -> tensor<50xf32> {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %m = stablehlo.multiply %x, %y : tensor<50x70xf32>
      %r = stablehlo.reduce(%m init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<50x70xf32>, tensor<f32>) -> tensor<50xf32>
      return %r : tensor<50xf32>
    }
"""))
# The same with y broadcast over a batch: maps (b, m, k) x (m, k) -> (b, m).
CASES["reduce_sum_of_products_batch_broadcast"] = Case(mlir("""
    func.func @main(%x: tensor<3x40x50xf32>, %y: tensor<40x50xf32>) -> tensor<3x40xf32> {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %yb = stablehlo.broadcast_in_dim %y, dims = [1, 2] : (tensor<40x50xf32>) -> tensor<3x40x50xf32>
      %m = stablehlo.multiply %x, %yb : tensor<3x40x50xf32>
      %r = stablehlo.reduce(%m init: %zero) applies stablehlo.add across dimensions = [2]
          : (tensor<3x40x50xf32>, tensor<f32>) -> tensor<3x40xf32>
      return %r : tensor<3x40xf32>
    }
"""))
CASES["reduce_linalg_sum_last"] = Case(mlir("""
    func.func @main(%x: tensor<20x45xf32>) -> tensor<20xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<20xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<20xf32>) -> tensor<20xf32>
      %r = linalg.reduce ins(%x : tensor<20x45xf32>) outs(%f : tensor<20xf32>) dimensions = [1]
        (%in: f32, %acc: f32) {
          %s = arith.addf %in, %acc : f32
          linalg.yield %s : f32
        }
      return %r : tensor<20xf32>
    }
"""))

# -- elementwise: every body op ------------------------------------------------------------------
SHAPE = "40x50"
for _op in ("add", "subtract", "multiply", "divide", "maximum", "minimum"):
    CASES[f"eltwise_{_op}"] = Case(
        elementwise_program(SHAPE, f"%r = stablehlo.{_op} %a, %b : tensor<{SHAPE}xf32>", ("%a", "%b")),
        inputs=(1.0, POSITIVE) if _op == "divide" else ())
for _op, _inputs in (("negate", ()), ("exponential", ()), ("log", (POSITIVE,)), ("sqrt", (POSITIVE,)),
                     ("rsqrt", (POSITIVE,)), ("tanh", (2.0,)), ("abs", ()), ("sine", (2.0,)), ("cosine", (2.0,))):
    CASES[f"eltwise_{_op}"] = Case(elementwise_program(SHAPE, f"%r = stablehlo.{_op} %a : tensor<{SHAPE}xf32>"),
                                   inputs=_inputs)
CASES["eltwise_fpowi"] = Case(mlir("""
    #map = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%a: tensor<40x50xf32>) -> tensor<40x50xf32> {
      %e = tensor.empty() : tensor<40x50xf32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<40x50xf32>) outs(%e : tensor<40x50xf32>) {
      ^bb0(%x: f32, %o: f32):
        %c3 = arith.constant 3 : i64
        %y = math.fpowi %x, %c3 : f32, i64
        linalg.yield %y : f32
      } -> tensor<40x50xf32>
      return %r : tensor<40x50xf32>
    }
"""))  # torch's gelu cubes this way
# select(a P b, a, b): a max or min, as torch writes relu and clamps.
for _name, _predicate, _arms in (("select_max", "GT", "%a, %b"), ("select_min", "GE", "%b, %a"),
                                 ("select_min_lt", "LT", "%a, %b")):
    CASES[_name] = Case(elementwise_program(SHAPE, f"""
        %c = stablehlo.compare {_predicate}, %a, %b : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
        %r = stablehlo.select %c, {_arms} : tensor<{SHAPE}xi1>, tensor<{SHAPE}xf32>
    """, ("%a", "%b")))
# Selects on any condition: where_tile (a select of the compared values is a max or min
# but for NaN, where it keeps IEEE's answer).
CASES["select_compare"] = Case(elementwise_program(SHAPE, f"""
    %c = stablehlo.compare GT, %a, %b : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
    %r = stablehlo.select %c, %a, %d : tensor<{SHAPE}xi1>, tensor<{SHAPE}xf32>
""", ("%a", "%b", "%d")))
CASES["select_i1_argument"] = Case(mlir(f"""
    func.func @main(%c: tensor<{SHAPE}xi1>, %a: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xf32> {{
      %n = stablehlo.negate %a : tensor<{SHAPE}xf32>
      %r = stablehlo.select %c, %a, %n : tensor<{SHAPE}xi1>, tensor<{SHAPE}xf32>
      return %r : tensor<{SHAPE}xf32>
    }}
"""))
CASES["select_nan_and_inf"] = Case(elementwise_program(SHAPE, f"""
    %l = stablehlo.log %a : tensor<{SHAPE}xf32>
    %c = stablehlo.compare GT, %l, %b : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
    %r = stablehlo.select %c, %l, %b : tensor<{SHAPE}xi1>, tensor<{SHAPE}xf32>
""", ("%a", "%b")))  # log of a negative input is NaN, of zero -inf: the select keeps IEEE's answer
CASES["select_relu"] = Case(elementwise_program(SHAPE, f"""
    %z = stablehlo.constant dense<0.0> : tensor<{SHAPE}xf32>
    %c = stablehlo.compare GT, %a, %z : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
    %r = stablehlo.select %c, %a, %z : tensor<{SHAPE}xi1>, tensor<{SHAPE}xf32>
"""))
# A reduction from an init value the program passes (a 0-d tensor read in the dispatch),
# over the last dim and the middle one of three.
CASES["reduce_sum_runtime_init"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xf32>, %init: tensor<f32>) -> tensor<40xf32> {
      %r = stablehlo.reduce(%a init: %init) applies stablehlo.add across dimensions = [1]
          : (tensor<40x50xf32>, tensor<f32>) -> tensor<40xf32>
      return %r : tensor<40xf32>
    }
"""))
# Min reductions: -max(-x), over the last dim and dim 0, from a fill of +inf and from an input.
CASES["reduce_min_last_dim"] = Case(reduce_program("40x70", "[1]", "40", kind="minimum"))
CASES["reduce_min_dim0"] = Case(reduce_program("40x70", "[0]", "70", kind="minimum"))

# Loop indices (linalg.index, as iota makes them), with index arithmetic in float32.
# Integers: int32 in Dst (narrow types sign-extended), wrapping as llvm-cpu does.
INT32 = (-2 ** 31, 2 ** 31)  # inputs drawn from the whole range


def integer_program(body: str, args: str, result: str = "i32", shape: str = SHAPE) -> str:
    """@main(args) -> tensor<shape x result> with `body` ending in %r."""
    body = textwrap.indent(textwrap.dedent(body).strip(), " " * 10).lstrip()
    return mlir(f"""
        func.func @main({args}) -> tensor<{shape}x{result}> {{
          {body}
          return %r : tensor<{shape}x{result}>
        }}
    """)


_I32 = f"tensor<{SHAPE}xi32>"
for _op in ("add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor"):
    CASES[f"int32_{_op}"] = Case(integer_program(f"%r = stablehlo.{_op} %a, %b : {_I32}",
                                                 f"%a: {_I32}, %b: {_I32}"), inputs=(INT32, INT32))
for _op in ("divide", "remainder"):  # non-zero divisors of both signs, and -2^31 among the dividends
    CASES[f"int32_{_op}"] = Case(integer_program(f"""
        %one = stablehlo.constant dense<1> : {_I32}
        %d = stablehlo.or %b, %one : {_I32}
        %r = stablehlo.{_op} %a, %d : {_I32}""", f"%a: {_I32}, %b: {_I32}"), inputs=(INT32, (-300, 300)))
for _op in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):  # shifts past the width too
    CASES[f"int32_{_op}"] = Case(integer_program(f"%r = stablehlo.{_op} %a, %b : {_I32}",
                                                 f"%a: {_I32}, %b: {_I32}"), inputs=(INT32, (-2, 40)))
CASES["int32_unary"] = Case(integer_program(f"""
    %n = stablehlo.negate %a : {_I32}
    %b = stablehlo.abs %a : {_I32}
    %m = stablehlo.not %b : {_I32}
    %s = stablehlo.sign %a : {_I32}
    %t = stablehlo.add %n, %m : {_I32}
    %r = stablehlo.multiply %t, %s : {_I32}""", f"%a: {_I32}"), inputs=(INT32,))
CASES["int32_compare_select_clamp"] = Case(integer_program(f"""
    %c = stablehlo.compare LT, %a, %b : ({_I32}, {_I32}) -> tensor<{SHAPE}xi1>
    %s = stablehlo.select %c, %a, %b : tensor<{SHAPE}xi1>, {_I32}
    %lo = stablehlo.constant dense<-1000> : {_I32}
    %hi = stablehlo.constant dense<1000000> : {_I32}
    %r = stablehlo.clamp %lo, %s, %hi : {_I32}""", f"%a: {_I32}, %b: {_I32}"), inputs=(INT32, INT32))
_U32 = f"tensor<{SHAPE}xui32>"
CASES["uint32_compare_divide_max"] = Case(integer_program(f"""
    %c = stablehlo.compare LT, %a, %b : ({_U32}, {_U32}) -> tensor<{SHAPE}xi1>
    %m = stablehlo.maximum %a, %b : {_U32}
    %one = stablehlo.constant dense<1> : {_U32}
    %d = stablehlo.or %b, %one : {_U32}
    %q = stablehlo.remainder %a, %d : {_U32}
    %s = stablehlo.shift_right_logical %m, %one : {_U32}
    %t = stablehlo.add %s, %q : {_U32}
    %r = stablehlo.select %c, %t, %m : tensor<{SHAPE}xi1>, {_U32}""", f"%a: {_U32}, %b: {_U32}", "ui32"),
    inputs=((0, 2 ** 32), (0, 2 ** 32)))
CASES["int32_float_conversions"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>, %b: {_I32}, %u: {_U32}) -> ({_I32}, tensor<{SHAPE}xf32>) {{
      %i = stablehlo.convert %a : (tensor<{SHAPE}xf32>) -> {_I32}
      %f = stablehlo.convert %b : ({_I32}) -> tensor<{SHAPE}xf32>
      %g = stablehlo.convert %u : ({_U32}) -> tensor<{SHAPE}xf32>
      %h = stablehlo.add %f, %g : tensor<{SHAPE}xf32>
      return %i, %h : {_I32}, tensor<{SHAPE}xf32>
    }}
"""), inputs=((-2e9, 2e9), INT32, (0, 2 ** 32)))  # in range: past it, MLIR's fptosi is poison
_I8, _I16 = f"tensor<{SHAPE}xi8>", f"tensor<{SHAPE}xi16>"
CASES["int8_int16_wrap_and_widen"] = Case(mlir(f"""
    func.func @main(%a: {_I8}, %b: {_I8}, %c: {_I16}) -> ({_I8}, {_I16}, {_I32}) {{
      %s = stablehlo.multiply %a, %b : {_I8}
      %t = stablehlo.add %s, %a : {_I8}
      %w = stablehlo.convert %t : ({_I8}) -> {_I16}
      %x = stablehlo.multiply %w, %c : {_I16}
      %y = stablehlo.convert %x : ({_I16}) -> {_I32}
      return %t, %x, %y : {_I8}, {_I16}, {_I32}
    }}
"""), inputs=((-128, 128), (-128, 128), (-2 ** 15, 2 ** 15)))
CASES["int32_broadcast_row_and_scalar"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xi32>, %b: tensor<50xi32>, %c: tensor<i32>) -> tensor<40x50xi32> {
      %rb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<50xi32>) -> tensor<40x50xi32>
      %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<40x50xi32>
      %s = stablehlo.add %a, %rb : tensor<40x50xi32>
      %r = stablehlo.multiply %s, %cb : tensor<40x50xi32>
      return %r : tensor<40x50xi32>
    }
"""), inputs=(INT32, INT32, INT32))
CASES["int32_transpose"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xi32>, %b: tensor<50x40xi32>) -> tensor<50x40xi32> {
      %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<40x50xi32>) -> tensor<50x40xi32>
      %r = stablehlo.xor %t, %b : tensor<50x40xi32>
      return %r : tensor<50x40xi32>
    }
"""), inputs=(INT32, INT32))
CASES["bitcast_f32_to_i32"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>) -> {_I32} {{
      %r = stablehlo.bitcast_convert %a : (tensor<{SHAPE}xf32>) -> {_I32}
      return %r : {_I32}
    }}
"""))
# Integer sums, exact and wrapping (bytewise through the FPU), over the last dim and dim 0,
# from a fill and from a runtime init.
CASES["int32_sum_last_dim"] = Case(mlir("""
    func.func @main(%a: tensor<40x70xi32>) -> tensor<40xi32> {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]
          : (tensor<40x70xi32>, tensor<i32>) -> tensor<40xi32>
      return %r : tensor<40xi32>
    }
"""), inputs=(INT32,))
CASES["int32_sum_dim0_runtime_init"] = Case(mlir("""
    func.func @main(%a: tensor<40x70xi32>, %init: tensor<i32>) -> tensor<70xi32> {
      %r = stablehlo.reduce(%a init: %init) applies stablehlo.add across dimensions = [0]
          : (tensor<40x70xi32>, tensor<i32>) -> tensor<70xi32>
      return %r : tensor<70xi32>
    }
"""), inputs=(INT32, INT32))
CASES["int8_sum_widened"] = Case(mlir("""
    func.func @main(%a: tensor<3x40x50xi8>) -> tensor<3x40xi32> {
      %w = stablehlo.convert %a : (tensor<3x40x50xi8>) -> tensor<3x40x50xi32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [2]
          : (tensor<3x40x50xi32>, tensor<i32>) -> tensor<3x40xi32>
      return %r : tensor<3x40xi32>
    }
"""), inputs=((-128, 128),))
CASES["reduce_sum_middle_dim_runtime_init"] = Case(mlir("""
    func.func @main(%a: tensor<4x20x30xf32>, %init: tensor<f32>) -> tensor<4x30xf32> {
      %r = stablehlo.reduce(%a init: %init) applies stablehlo.add across dimensions = [1]
          : (tensor<4x20x30xf32>, tensor<f32>) -> tensor<4x30xf32>
      return %r : tensor<4x30xf32>
    }
"""))
CASES["int32_push_constant_in_body"] = Case(mlir("""
    #map = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%a: tensor<40x50xi32>, %s: tensor<i32>) -> tensor<40x50xi32> {
      %v = tensor.extract %s[] : tensor<i32>
      %e = tensor.empty() : tensor<40x50xi32>
      %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<40x50xi32>) outs(%e : tensor<40x50xi32>) {
      ^bb0(%x: i32, %o: i32):
        %y = arith.addi %x, %v : i32
        linalg.yield %y : i32
      } -> tensor<40x50xi32>
      return %r : tensor<40x50xi32>
    }
"""), inputs=(INT32, INT32))  # IREE passes %v as a push constant: the kernel fills a tile with it
# Integer max and min reductions, exact byte by byte from the top (signed, unsigned, i8),
# with ties and the extremes of the range among the values.
for _name, _kind, _type, _init, _dims, _spec in (
        ("int32_max_last_dim", "maximum", "i32", "-2147483648", "[1]", INT32),
        ("int32_min_dim0", "minimum", "i32", "2147483647", "[0]", (-5, 5)),
        ("uint32_max_last_dim", "maximum", "ui32", "0", "[1]", (0, 2 ** 32)),
        ("uint32_min_dim0_runtime_init", "minimum", "ui32", None, "[0]", (2 ** 31 - 3, 2 ** 31 + 3)),
        ("int8_max_last_dim", "maximum", "i8", "-128", "[1]", (-128, 128))):
    _out = "40" if _dims == "[1]" else "70"
    _init_line = f"%z = stablehlo.constant dense<{_init}> : tensor<{_type}>" if _init else ""
    _args = f"%a: tensor<40x70x{_type}>" + ("" if _init else f", %z: tensor<{_type}>")
    CASES[_name] = Case(mlir(f"""
        func.func @main({_args}) -> tensor<{_out}x{_type}> {{
          {_init_line}
          %r = stablehlo.reduce(%a init: %z) applies stablehlo.{_kind} across dimensions = {_dims}
              : (tensor<40x70x{_type}>, tensor<{_type}>) -> tensor<{_out}x{_type}>
          return %r : tensor<{_out}x{_type}>
        }}
    """), inputs=(_spec, _spec))
# Integer matmuls, exact and wrapping: byte planes through float matmuls at HiFi4.
CASES["int32_matmul"] = Case(dot_program("40x100", "100x70", "40x70").replace("f32", "i32"), inputs=(INT32, INT32))
CASES["int32_batch_matmul_transposed_rhs"] = Case(
    dot_program("3x40x50", "3x30x50", "3x40x30", batching="[0] x [0]", contracting="[2] x [2]").replace("f32", "i32"),
    inputs=((-1000, 1000), INT32))
CASES["int8_matmul_to_int32"] = Case(mlir("""
    func.func @main(%a: tensor<40x64xi8>, %b: tensor<64x20xi8>) -> tensor<40x20xi32> {
      %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
          : (tensor<40x64xi8>, tensor<64x20xi8>) -> tensor<40x20xi32>
      return %r : tensor<40x20xi32>
    }
"""), inputs=((-128, 128), (-128, 128)))
CASES["fill_runtime_int32_scalar"] = Case(mlir("""
    func.func @main(%a: tensor<2x40x50xi32>, %s: tensor<i32>) -> tensor<2x40x50xi32> {
      %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<i32>) -> tensor<2x40x50xi32>
      %r = stablehlo.subtract %b, %a : tensor<2x40x50xi32>
      return %r : tensor<2x40x50xi32>
    }
"""), inputs=(INT32, INT32))
CASES["iota_add"] = Case(elementwise_program(SHAPE, f"""
    %i = stablehlo.iota dim = 1 : tensor<{SHAPE}xf32>
    %r = stablehlo.add %a, %i : tensor<{SHAPE}xf32>"""))
CASES["iota_product_i32"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi32> {{
      %i = stablehlo.iota dim = 0 : tensor<{SHAPE}xi32>
      %j = stablehlo.iota dim = 1 : tensor<{SHAPE}xi32>
      %m = stablehlo.multiply %i, %j : tensor<{SHAPE}xi32>
      return %m : tensor<{SHAPE}xi32>
    }}
"""))

# Slices of bindings inside dispatches: windows of the row-major tensors (their rows and
# matrices further apart), loaded and stored, as concatenations, slices, pads and head
# splits make them.
CASES["concatenate_last_dim"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xf32>, %b: tensor<40x30xf32>) -> tensor<40x80xf32> {
      %e = stablehlo.exponential %a : tensor<40x50xf32>
      %t = stablehlo.tanh %b : tensor<40x30xf32>
      %c = stablehlo.concatenate %e, %t, dim = 1 : (tensor<40x50xf32>, tensor<40x30xf32>) -> tensor<40x80xf32>
      return %c : tensor<40x80xf32>
    }
"""))
CASES["slice_last_dim"] = Case(mlir("""
    func.func @main(%a: tensor<40x100xf32>) -> tensor<40x30xf32> {
      %s = stablehlo.slice %a [0:40, 20:50] : (tensor<40x100xf32>) -> tensor<40x30xf32>
      %e = stablehlo.exponential %s : tensor<40x30xf32>
      return %e : tensor<40x30xf32>
    }
"""))
CASES["slice_middle_dim_3d"] = Case(mlir("""
    func.func @main(%a: tensor<4x40x100xf32>) -> tensor<4x10x100xf32> {
      %s = stablehlo.slice %a [0:4, 5:15, 0:100] : (tensor<4x40x100xf32>) -> tensor<4x10x100xf32>
      %e = stablehlo.exponential %s : tensor<4x10x100xf32>
      return %e : tensor<4x10x100xf32>
    }
"""))
CASES["split_in_halves"] = Case(mlir("""
    func.func @main(%a: tensor<16x128xf32>, %w: tensor<128x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
      %q = stablehlo.slice %a [0:16, 0:64] : (tensor<16x128xf32>) -> tensor<16x64xf32>
      %k = stablehlo.slice %a [0:16, 64:128] : (tensor<16x128xf32>) -> tensor<16x64xf32>
      %x = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0]
          : (tensor<16x128xf32>, tensor<128x64xf32>) -> tensor<16x64xf32>
      %s = stablehlo.add %q, %x : tensor<16x64xf32>
      %m = stablehlo.multiply %k, %x : tensor<16x64xf32>
      return %s, %m : tensor<16x64xf32>, tensor<16x64xf32>
    }
"""))
CASES["pad_both_dims"] = Case(mlir("""
    func.func @main(%a: tensor<20x30xf32>) -> tensor<24x40xf32> {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %e = stablehlo.exponential %a : tensor<20x30xf32>
      %p = stablehlo.pad %e, %z, low = [1, 3], high = [3, 7], interior = [0, 0]
          : (tensor<20x30xf32>, tensor<f32>) -> tensor<24x40xf32>
      return %p : tensor<24x40xf32>
    }
"""))

# More SFPU ops: rounding, special functions, remainders, powers of tensors.
for _op, _inputs in (("floor", (4.0,)), ("ceil", (4.0,)), ("round_nearest_even", (4.0,)),
                     ("round_nearest_afz", (4.0,)), ("exponential_minus_one", ()), ("log_plus_one", (POSITIVE,)),
                     ("tan", ((-1.4, 1.4),)), ("cbrt", (8.0,)), ("sign", ())):
    CASES[f"eltwise_{_op}"] = Case(elementwise_program(SHAPE, f"%r = stablehlo.{_op} %a : tensor<{SHAPE}xf32>"),
                                   inputs=_inputs)
for _op, _inputs in (("atan2", ()), ("remainder", (4.0, (0.5, 2.0))), ("power", (POSITIVE, (-2.0, 2.0)))):
    CASES[f"eltwise_{_op}"] = Case(
        elementwise_program(SHAPE, f"%r = stablehlo.{_op} %a, %b : tensor<{SHAPE}xf32>", ("%a", "%b")), inputs=_inputs)
CASES["eltwise_is_finite"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1> {{
      %l = stablehlo.log %a : tensor<{SHAPE}xf32>
      %r = stablehlo.is_finite %l : (tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
      return %r : tensor<{SHAPE}xi1>
    }}
"""))  # log of a negative input is NaN, of zero -inf


def ten_inputs(shape: str) -> Case:
    """An elementwise body of ten bindings, its values combined in a chain."""
    return Case(elementwise_program(shape, "\n".join(
        [f"%p0 = stablehlo.multiply %x0, %x1 : tensor<{shape}xf32>"]
        + [f"%p{i} = stablehlo.{('add', 'multiply', 'subtract')[i % 3]} %p{i - 1}, %x{i + 1} : tensor<{shape}xf32>"
           for i in range(1, 9)]
        + [f"%q = stablehlo.tanh %p8 : tensor<{shape}xf32>", f"%r = stablehlo.add %q, %x0 : tensor<{shape}xf32>"]),
        tuple(f"%x{i}" for i in range(10))))


# A body too big for one fused kernel that may read its bindings as row tiles (3 tiles: more
# tensors than fused.FUSED_ROW_TILE_INPUTS), split into kernels through a scratch tensor; and
# the same over 15 tiles, one kernel of ten inputs, the dispatch's last: it writes its result
# row-major, its reader with the registers to read none of them as rows (all tilized first).
CASES["eltwise_ten_inputs_split"] = ten_inputs(SHAPE)
CASES["eltwise_ten_inputs_one_kernel"] = ten_inputs("96x160")
# Every arith.cmpf predicate, on operands with NaNs (logs of negative numbers): IEEE's answers.
for _predicate in ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno"):
    CASES[f"cmpf_{_predicate}"] = Case(mlir(f"""
        #map = affine_map<(d0, d1) -> (d0, d1)>
        func.func @main(%a: tensor<{SHAPE}xf32>, %b: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1> {{
          %e = tensor.empty() : tensor<{SHAPE}xi1>
          %r = linalg.generic {{indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}}
              ins(%a, %b : tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) outs(%e : tensor<{SHAPE}xi1>) {{
          ^bb0(%x: f32, %y: f32, %o: i1):
            %lx = math.log %x : f32
            %ly = math.log %y : f32
            %c = arith.cmpf {_predicate}, %lx, %ly : f32
            linalg.yield %c : i1
          }} -> tensor<{SHAPE}xi1>
          return %r : tensor<{SHAPE}xi1>
        }}
    """), inputs=((-0.5, 2.0), (-0.5, 2.0)))

# Predicates: compares (exact, on the SFPU), their logic, and i1 results stored as i8.
for _predicate in ("GT", "GE", "LT", "LE", "EQ", "NE"):  # EQ/NE against max(a, b): equal about half the time
    CASES[f"compare_{_predicate.lower()}"] = Case(mlir(f"""
        func.func @main(%a: tensor<{SHAPE}xf32>, %b: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1> {{
          %m = stablehlo.maximum %a, %b : tensor<{SHAPE}xf32>
          %c = stablehlo.compare {_predicate}, %a, %m : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
          return %c : tensor<{SHAPE}xi1>
        }}
    """))
CASES["compare_constant_not_and_or"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>, %b: tensor<{SHAPE}xf32>) -> (tensor<{SHAPE}xi1>, tensor<{SHAPE}xi1>) {{
      %h = stablehlo.constant dense<0.5> : tensor<{SHAPE}xf32>
      %c = stablehlo.compare GT, %a, %h : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
      %d = stablehlo.compare LT, %b, %a : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
      %n = stablehlo.not %c : tensor<{SHAPE}xi1>
      %x = stablehlo.and %n, %d : tensor<{SHAPE}xi1>
      %y = stablehlo.or %c, %d : tensor<{SHAPE}xi1>
      %z = stablehlo.xor %x, %y : tensor<{SHAPE}xi1>
      return %x, %z : tensor<{SHAPE}xi1>, tensor<{SHAPE}xi1>
    }}
"""))
CASES["compare_as_mask"] = Case(elementwise_program(SHAPE, f"""
    %c = stablehlo.compare GE, %a, %b : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
    %f = stablehlo.convert %c : (tensor<{SHAPE}xi1>) -> tensor<{SHAPE}xf32>
    %r = stablehlo.multiply %f, %b : tensor<{SHAPE}xf32>
""", ("%a", "%b")))
CASES["compare_as_int32"] = Case(mlir(f"""
    func.func @main(%a: tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi32> {{
      %z = stablehlo.constant dense<0.0> : tensor<{SHAPE}xf32>
      %c = stablehlo.compare LE, %a, %z : (tensor<{SHAPE}xf32>, tensor<{SHAPE}xf32>) -> tensor<{SHAPE}xi1>
      %r = stablehlo.convert %c : (tensor<{SHAPE}xi1>) -> tensor<{SHAPE}xi32>
      return %r : tensor<{SHAPE}xi32>
    }}
"""))
CASES["eltwise_power_constant"] = Case(elementwise_program(SHAPE, f"""
    %p = stablehlo.constant dense<1.7> : tensor<{SHAPE}xf32>
    %r = stablehlo.power %a, %p : tensor<{SHAPE}xf32>"""), inputs=(POSITIVE,))
CASES["eltwise_reciprocal"] = Case(elementwise_program(SHAPE, f"""
    %one = stablehlo.constant dense<1.0> : tensor<{SHAPE}xf32>
    %r = stablehlo.divide %one, %a : tensor<{SHAPE}xf32>"""), inputs=(POSITIVE,))
CASES["eltwise_relu"] = Case(elementwise_program(SHAPE, f"""
    %zero = stablehlo.constant dense<0.0> : tensor<{SHAPE}xf32>
    %r = stablehlo.maximum %a, %zero : tensor<{SHAPE}xf32>"""))
CASES["eltwise_clamp"] = Case(elementwise_program(SHAPE, f"""
    %lo = stablehlo.constant dense<-0.5> : tensor<{SHAPE}xf32>
    %hi = stablehlo.constant dense<0.75> : tensor<{SHAPE}xf32>
    %r = stablehlo.clamp %lo, %a, %hi : tensor<{SHAPE}xf32>"""))
CASES["eltwise_scalar_forms"] = Case(elementwise_program(SHAPE, f"""
    %c2 = stablehlo.constant dense<2.5> : tensor<{SHAPE}xf32>
    %c3 = stablehlo.constant dense<0.75> : tensor<{SHAPE}xf32>
    %c4 = stablehlo.constant dense<4.0> : tensor<{SHAPE}xf32>
    %s = stablehlo.subtract %a, %c2 : tensor<{SHAPE}xf32>
    %m = stablehlo.multiply %c3, %s : tensor<{SHAPE}xf32>
    %d = stablehlo.divide %m, %c4 : tensor<{SHAPE}xf32>
    %r = stablehlo.add %c2, %d : tensor<{SHAPE}xf32>"""))
CASES["eltwise_linalg_generic"] = Case(mlir("""
    #map = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%a: tensor<40x50xf32>, %b: tensor<40x50xf32>) -> tensor<40x50xf32> {
      %e = tensor.empty() : tensor<40x50xf32>
      %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
          ins(%a, %b : tensor<40x50xf32>, tensor<40x50xf32>) outs(%e : tensor<40x50xf32>) {
        ^bb0(%x: f32, %y: f32, %o: f32):
          %c = arith.constant 0.5 : f32
          %m = arith.mulf %x, %y : f32
          %s = arith.subf %m, %c : f32
          %t = math.tanh %s : f32
          %n = arith.negf %t : f32
          %q = arith.mulf %n, %n : f32
          %r = arith.subf %q, %x : f32
          linalg.yield %r : f32
      } -> tensor<40x50xf32>
      return %r : tensor<40x50xf32>
    }
"""))
# IREE collapses an elementwise-only program to one dim (3500 / 2700 elements).
CASES["eltwise_collapsed_tanh"] = Case(elementwise_program("50x70", """
    %two = stablehlo.constant dense<2.0> : tensor<50x70xf32>
    %m = stablehlo.multiply %a, %b : tensor<50x70xf32>
    %s = stablehlo.add %m, %two : tensor<50x70xf32>
    %r = stablehlo.tanh %s : tensor<50x70xf32>""", ("%a", "%b")))
CASES["eltwise_collapsed_3d"] = Case(elementwise_program("3x20x45", """
    %m = stablehlo.multiply %a, %b : tensor<3x20x45xf32>
    %r = stablehlo.exponential %m : tensor<3x20x45xf32>""", ("%a", "%b")), inputs=(1.0, 0.5))

# -- broadcasts ----------------------------------------------------------------------------------
CASES["broadcast_row_bias"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %b: tensor<70xf32>) -> tensor<50x70xf32> {
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<70xf32>) -> tensor<50x70xf32>
      %r = stablehlo.add %x, %bb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""), inputs=(1.0, 5.0))
CASES["broadcast_row_first_operand"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %b: tensor<70xf32>) -> tensor<50x70xf32> {
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<70xf32>) -> tensor<50x70xf32>
      %r = stablehlo.subtract %bb, %x : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""), inputs=(1.0, 5.0))
CASES["broadcast_column_input"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %c: tensor<50x1xf32>) -> tensor<50x70xf32> {
      %cb = stablehlo.broadcast_in_dim %c, dims = [0, 1] : (tensor<50x1xf32>) -> tensor<50x70xf32>
      %r = stablehlo.multiply %x, %cb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""))
CASES["broadcast_column_keepdims"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>) -> tensor<50x70xf32> {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<50x70xf32>, tensor<f32>) -> tensor<50xf32>
      %k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<50xf32>) -> tensor<50x1xf32>
      %kb = stablehlo.broadcast_in_dim %k, dims = [0, 1] : (tensor<50x1xf32>) -> tensor<50x70xf32>
      %r = stablehlo.subtract %x, %kb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""))
CASES["broadcast_row_keepdims_dim0"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>) -> tensor<50x70xf32> {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0]
          : (tensor<50x70xf32>, tensor<f32>) -> tensor<70xf32>
      %mb = stablehlo.broadcast_in_dim %max, dims = [1] : (tensor<70xf32>) -> tensor<50x70xf32>
      %r = stablehlo.subtract %x, %mb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""))
CASES["broadcast_scalar"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %s: tensor<f32>) -> tensor<50x70xf32> {
      %three = stablehlo.constant dense<3.0> : tensor<50x70xf32>
      %half = stablehlo.constant dense<0.5> : tensor<50x70xf32>
      %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<50x70xf32>
      %m = stablehlo.multiply %x, %three : tensor<50x70xf32>
      %a = stablehlo.add %m, %half : tensor<50x70xf32>
      %r = stablehlo.divide %a, %sb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""), inputs=(1.0, (1.0, 2.0)))
# A 0-d argument next to a row: the loop space stays 2-D (no collapse), the scalar is a
# SCALAR broadcast of the tile grid.
CASES["broadcast_scalar_and_row"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %s: tensor<f32>, %b: tensor<70xf32>) -> tensor<50x70xf32> {
      %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<50x70xf32>
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<70xf32>) -> tensor<50x70xf32>
      %m = stablehlo.multiply %x, %sb : tensor<50x70xf32>
      %r = stablehlo.add %m, %bb : tensor<50x70xf32>
      return %r : tensor<50x70xf32>
    }
"""), inputs=(1.0, (2.0, 3.0), 1.0))
CASES["broadcast_row_3d"] = Case(mlir("""
    func.func @main(%x: tensor<3x64x50xf32>, %b: tensor<50xf32>) -> tensor<3x64x50xf32> {
      %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<50xf32>) -> tensor<3x64x50xf32>
      %r = stablehlo.add %x, %bb : tensor<3x64x50xf32>
      return %r : tensor<3x64x50xf32>
    }
"""), inputs=(1.0, 5.0))
CASES["broadcast_column_3d"] = Case(mlir("""
    func.func @main(%x: tensor<3x32x50xf32>) -> tensor<3x32x50xf32> {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2]
          : (tensor<3x32x50xf32>, tensor<f32>) -> tensor<3x32xf32>
      %mb = stablehlo.broadcast_in_dim %max, dims = [0, 1] : (tensor<3x32xf32>) -> tensor<3x32x50xf32>
      %r = stablehlo.subtract %x, %mb : tensor<3x32x50xf32>
      return %r : tensor<3x32x50xf32>
    }
"""))
# Elementwise over a batch with y broadcast: IREE collapses (40, 50) to 2000.
CASES["broadcast_batch_elementwise"] = Case(mlir("""
    func.func @main(%x: tensor<3x40x50xf32>, %y: tensor<40x50xf32>) -> tensor<3x40x50xf32> {
      %yb = stablehlo.broadcast_in_dim %y, dims = [1, 2] : (tensor<40x50xf32>) -> tensor<3x40x50xf32>
      %r = stablehlo.multiply %x, %yb : tensor<3x40x50xf32>
      return %r : tensor<3x40x50xf32>
    }
"""))

# -- transposes ----------------------------------------------------------------------------------
CASES["transpose_2d"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>) -> tensor<70x50xf32> {
      %r = stablehlo.transpose %x, dims = [1, 0] : (tensor<50x70xf32>) -> tensor<70x50xf32>
      return %r : tensor<70x50xf32>
    }
"""))
CASES["transpose_3d_last_two"] = Case(mlir("""
    func.func @main(%x: tensor<3x40x50xf32>) -> tensor<3x50x40xf32> {
      %r = stablehlo.transpose %x, dims = [0, 2, 1] : (tensor<3x40x50xf32>) -> tensor<3x50x40xf32>
      return %r : tensor<3x50x40xf32>
    }
"""))
CASES["transpose_into_add"] = Case(mlir("""
    func.func @main(%x: tensor<50x70xf32>, %y: tensor<70x50xf32>) -> tensor<70x50xf32> {
      %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<50x70xf32>) -> tensor<70x50xf32>
      %r = stablehlo.add %t, %y : tensor<70x50xf32>
      return %r : tensor<70x50xf32>
    }
"""))

# -- normalisations as JAX writes them -------------------------------------------------------------
# Gathers (tt_hal/kernels/gather.py): data movement the tile kernels cannot do in place.
CASES["transpose_4d_outer"] = Case(mlir("""
    func.func @main(%a: tensor<2x3x4x5xf32>) -> tensor<4x2x5x3xf32> {
      %r = stablehlo.transpose %a, dims = [2, 0, 3, 1] : (tensor<2x3x4x5xf32>) -> tensor<4x2x5x3xf32>
      %e = stablehlo.exponential %r : tensor<4x2x5x3xf32>
      return %e : tensor<4x2x5x3xf32>
    }
"""))
# An attention's heads transposed, as BERT's dispatches do between its projections and its
# batched matmuls: a copy through a permutation of the middle dims.
CASES["transpose_attention_heads"] = Case(mlir("""
    func.func @main(%a: tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32> {
      %r = stablehlo.transpose %a, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
      return %r : tensor<2x16x4x16xf32>
    }
"""))
# The same in bf16 for two projections of one input, as BERT's q and k: IREE makes one
# transpose dispatch of both, each call's source placed in its transient slab by a push constant.
CASES["transpose_attention_heads_bf16_slab"] = Case(mlir("""
    func.func @main(%a: tensor<32x64xbf16>, %wq: tensor<64x64xbf16>, %wk: tensor<64x64xbf16>)
        -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) {
      %q = stablehlo.dot_general %a, %wq, contracting_dims = [1] x [0]
          : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
      %k = stablehlo.dot_general %a, %wk, contracting_dims = [1] x [0]
          : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
      %q4 = stablehlo.reshape %q : (tensor<32x64xbf16>) -> tensor<2x16x4x16xbf16>
      %k4 = stablehlo.reshape %k : (tensor<32x64xbf16>) -> tensor<2x16x4x16xbf16>
      %qt = stablehlo.transpose %q4, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
      %kt = stablehlo.transpose %k4, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xbf16>) -> tensor<2x4x16x16xbf16>
      return %qt, %kt : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>
    }
"""), inputs=(1.0, 0.125, 0.125))
CASES["broadcast_some_batch_dims"] = Case(mlir("""
    func.func @main(%a: tensor<2x3x4x5xf32>, %b: tensor<3x5xf32>) -> tensor<2x3x4x5xf32> {
      %bb = stablehlo.broadcast_in_dim %b, dims = [1, 3] : (tensor<3x5xf32>) -> tensor<2x3x4x5xf32>
      %r = stablehlo.add %a, %bb : tensor<2x3x4x5xf32>
      return %r : tensor<2x3x4x5xf32>
    }
"""))
CASES["conv2d_nhwc_valid"] = Case(convolution_program("1x10x12x3", "3x3x3x8", "1x8x10x8"), inputs=(1.0, W(27)))
CASES["conv2d_nchw_relu"] = Case(mlir(f"""
    func.func @main(%x: tensor<2x3x10x10xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x8x8x8xf32> {{
      {convolution("2x3x10x10", "8x3x3x3", "2x8x8x8", dims=NCHW)}
      %z = stablehlo.constant dense<0.0> : tensor<2x8x8x8xf32>
      %m = stablehlo.maximum %r, %z : tensor<2x8x8x8xf32>
      return %m : tensor<2x8x8x8xf32>
    }}
"""), inputs=(1.0, W(27)))  # the result transposed NHWC -> NCHW through a permuted map: not a last-two swap
CASES["conv2d_depthwise"] = Case(convolution_program("1x8x8x6", "3x3x1x6", "1x6x6x6", groups=6), inputs=(1.0, W(9)))
# Channels last with a full tile of channels (JAX's layout): the result tiled (H * W, C).
CASES["conv2d_depthwise_channels_last"] = Case(convolution_program("1x10x10x32", "3x3x1x32", "1x8x8x32", groups=32),
                                               inputs=(1.0, W(9)))
CASES["max_pool_2x2_stride_2"] = Case(mlir("""
    func.func @main(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
      %z = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %r = "stablehlo.reduce_window"(%x, %z) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %m = stablehlo.maximum %a, %b : tensor<f32>
          stablehlo.return %m : tensor<f32>
      }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}
        : (tensor<1x8x8x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
      return %r : tensor<1x4x4x4xf32>
    }
"""))
CASES["reduce_two_dims_and_an_outer_one"] = Case(mlir("""
    func.func @main(%x: tensor<6x7x9xf32>) -> (tensor<7xf32>, tensor<7x9xf32>) {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2]
          : (tensor<6x7x9xf32>, tensor<f32>) -> tensor<7xf32>
      %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0]
          : (tensor<6x7x9xf32>, tensor<f32>) -> tensor<7x9xf32>
      return %r, %s : tensor<7xf32>, tensor<7x9xf32>
    }
"""))
CASES["gather_embedding_rows"] = Case(mlir("""
    func.func @main(%table: tensor<50x16xf32>, %ids: tensor<3x7xi32>) -> tensor<3x7x16xf32> {
      %r = "stablehlo.gather"(%table, %ids) {
        dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0],
                                              start_index_map = [0], index_vector_dim = 2>,
        slice_sizes = array<i64: 1, 16>, indices_are_sorted = false
      } : (tensor<50x16xf32>, tensor<3x7xi32>) -> tensor<3x7x16xf32>
      return %r : tensor<3x7x16xf32>
    }
"""), inputs=(1.0, (-5, 60)))  # out-of-range ids: clamped, as StableHLO says
CASES["reverse_2d"] = Case(mlir("""
    func.func @main(%x: tensor<5x40xf32>) -> tensor<5x40xf32> {
      %r = stablehlo.reverse %x, dims = [0, 1] : tensor<5x40xf32>
      return %r : tensor<5x40xf32>
    }
"""))
CASES["slices_concatenate_pad"] = Case(mlir("""
    func.func @main(%x: tensor<6x10x12xf32>, %y: tensor<6x10x5xf32>)
        -> (tensor<3x4x5xf32>, tensor<6x10x17xf32>, tensor<8x12x14xf32>) {
      %s = stablehlo.slice %x [1:6:2, 2:10:2, 3:8] : (tensor<6x10x12xf32>) -> tensor<3x4x5xf32>
      %e = stablehlo.exponential %s : tensor<3x4x5xf32>
      %c = stablehlo.concatenate %x, %y, dim = 2 : (tensor<6x10x12xf32>, tensor<6x10x5xf32>) -> tensor<6x10x17xf32>
      %t = stablehlo.tanh %c : tensor<6x10x17xf32>
      %v = stablehlo.constant dense<2.5> : tensor<f32>
      %p = stablehlo.pad %x, %v, low = [1, 0, 2], high = [1, 2, 0], interior = [0, 0, 0]
          : (tensor<6x10x12xf32>, tensor<f32>) -> tensor<8x12x14xf32>
      %q = stablehlo.sine %p : tensor<8x12x14xf32>
      return %e, %t, %q : tensor<3x4x5xf32>, tensor<6x10x17xf32>, tensor<8x12x14xf32>
    }
"""))  # a strided slice loaded by a gather; a padded result stored as one batch of matrices
CASES["conv2d_stride_2_padded"] = Case(convolution_program("2x9x9x4", "3x3x4x6", "2x5x5x6", stride=2,
                                                          pad=((1, 1), (1, 1))), inputs=(1.0, W(36)))
CASES["pack_unpack"] = Case(mlir("""
    func.func @main(%x: tensor<5x7xf32>, %y: tensor<2x4x4x2xf32>) -> (tensor<4x2x2x3xf32>, tensor<5x8xf32>) {
      %pad = arith.constant 9.5 : f32
      %init = tensor.empty() : tensor<4x2x2x3xf32>
      %p = linalg.pack %x padding_value(%pad : f32) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
          inner_tiles = [2, 3] into %init : tensor<5x7xf32> -> tensor<4x2x2x3xf32>
      %init2 = tensor.empty() : tensor<5x8xf32>
      %u = linalg.unpack %y inner_dims_pos = [0, 1] inner_tiles = [4, 2] into %init2
          : tensor<2x4x4x2xf32> -> tensor<5x8xf32>
      return %p, %u : tensor<4x2x2x3xf32>, tensor<5x8xf32>
    }
"""))
CASES["sort_key_and_payload"] = Case(mlir("""
    func.func @main(%k: tensor<3x37xf32>, %v: tensor<3x37xi32>) -> (tensor<3x37xf32>, tensor<3x37xi32>) {
      %r:2 = "stablehlo.sort"(%k, %v) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
          %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %gt : tensor<i1>
      }) {dimension = 1 : i64, is_stable = true} : (tensor<3x37xf32>, tensor<3x37xi32>)
          -> (tensor<3x37xf32>, tensor<3x37xi32>)
      return %r#0, %r#1 : tensor<3x37xf32>, tensor<3x37xi32>
    }
"""), inputs=(1.0, (-1000, 1000)))  # descending, 37 (padded to 64) along dim 1, a payload carried
CASES["sort_int64"] = Case(mlir("""
    func.func @main(%k: tensor<3x37xi64>, %j: tensor<3x37xi64>, %x: tensor<3x37xf32>)
        -> (tensor<3x37xi64>, tensor<3x37xf32>, tensor<3x37xi64>) {
      %big = stablehlo.constant dense<3000000000> : tensor<3x37xi64>
      %scaled = stablehlo.multiply %k, %big : tensor<3x37xi64>
      %key = stablehlo.add %scaled, %j : tensor<3x37xi64>
      %r:2 = "stablehlo.sort"(%key, %x) ({
        ^bb0(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<f32>, %d: tensor<f32>):
          %lt = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
      }) {dimension = 1 : i64, is_stable = true} : (tensor<3x37xi64>, tensor<3x37xf32>)
          -> (tensor<3x37xi64>, tensor<3x37xf32>)
      %iota = stablehlo.iota dim = 1 : tensor<3x37xi64>
      %s:2 = "stablehlo.sort"(%x, %iota) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i64>, %d: tensor<i64>):
          %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %gt : tensor<i1>
      }) {dimension = 1 : i64, is_stable = true} : (tensor<3x37xf32>, tensor<3x37xi64>)
          -> (tensor<3x37xf32>, tensor<3x37xi64>)
      return %r#0, %r#1, %s#1 : tensor<3x37xi64>, tensor<3x37xf32>, tensor<3x37xi64>
    }
"""), inputs=((-4, 4), (-100000, 100000), 1.0))  # i64 keys whose high words differ (distinct: llvm-cpu's
# sort does not keep repeats in order; test_int64_sort_is_stable), and torch.argsort's form: float keys carrying
# int64 positions
CASES["topk_and_arg_compare"] = Case(mlir("""
    func.func @main(%x: tensor<4x50xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>, tensor<4xf32>, tensor<4xi32>) {
      %ninf = arith.constant 0xFF800000 : f32
      %c0 = arith.constant 0 : i32
      %ev = tensor.empty() : tensor<4x5xf32>
      %ei = tensor.empty() : tensor<4x5xi32>
      %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<4x5xf32>) -> tensor<4x5xf32>
      %fi = linalg.fill ins(%c0 : i32) outs(%ei : tensor<4x5xi32>) -> tensor<4x5xi32>
      %t:2 = iree_linalg_ext.topk dimension(1) ins(%x : tensor<4x50xf32>)
          outs(%fv, %fi : tensor<4x5xf32>, tensor<4x5xi32>) {
        ^bb0(%a: f32, %b: f32):
          %gt = arith.cmpf ogt, %a, %b : f32
          iree_linalg_ext.yield %gt : i1
      } -> tensor<4x5xf32>, tensor<4x5xi32>
      %av = tensor.empty() : tensor<4xf32>
      %ai = tensor.empty() : tensor<4xi32>
      %pinf = arith.constant 0x7F800000 : f32
      %gv = linalg.fill ins(%pinf : f32) outs(%av : tensor<4xf32>) -> tensor<4xf32>
      %gi = linalg.fill ins(%c0 : i32) outs(%ai : tensor<4xi32>) -> tensor<4xi32>
      %base = arith.constant 7 : index
      %m:2 = iree_linalg_ext.arg_compare dimension(1) ins(%x : tensor<4x50xf32>)
          outs(%gv, %gi : tensor<4xf32>, tensor<4xi32>) index_base(%base : index) {
        ^bb0(%a: f32, %b: f32):
          %lt = arith.cmpf olt, %a, %b : f32
          iree_linalg_ext.yield %lt : i1
      } -> tensor<4xf32>, tensor<4xi32>
      return %t#0, %t#1, %m#0, %m#1 : tensor<4x5xf32>, tensor<4x5xi32>, tensor<4xf32>, tensor<4xi32>
    }
"""))
# The outs take part (IREE inserts each element into them): where a row has fewer than k
# elements above the fill, the fill's value and index come out.
CASES["topk_into_filled_outs"] = Case(mlir("""
    func.func @main(%x: tensor<4x50xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>) {
      %fill = arith.constant 3.0 : f32
      %c7 = arith.constant 7 : i32
      %ev = tensor.empty() : tensor<4x5xf32>
      %ei = tensor.empty() : tensor<4x5xi32>
      %fv = linalg.fill ins(%fill : f32) outs(%ev : tensor<4x5xf32>) -> tensor<4x5xf32>
      %fi = linalg.fill ins(%c7 : i32) outs(%ei : tensor<4x5xi32>) -> tensor<4x5xi32>
      %t:2 = iree_linalg_ext.topk_v2 dimension(1) is_sorted ins(%x : tensor<4x50xf32>)
          outs(%fv, %fi : tensor<4x5xf32>, tensor<4x5xi32>) {
        ^bb0(%a: f32, %b: f32):
          %gt = arith.cmpf ogt, %a, %b : f32
          iree_linalg_ext.yield %gt : i1
      } -> tensor<4x5xf32>, tensor<4x5xi32>
      return %t#0, %t#1 : tensor<4x5xf32>, tensor<4x5xi32>
    }
"""), inputs=(2.0,))  # N(0, 4): ~3 of a row's 50 above 3.0 (this draw: 3, 8, 3, 5)
CASES["scan_exclusive_with_init"] = Case(mlir("""
    func.func @main(%x: tensor<3x45xf32>, %t0: tensor<3xf32>) -> (tensor<3x45xf32>, tensor<3xf32>) {
      %e = tensor.empty() : tensor<3x45xf32>
      %r:2 = iree_linalg_ext.scan dimension(1) inclusive(false) ins(%x : tensor<3x45xf32>)
          outs(%e, %t0 : tensor<3x45xf32>, tensor<3xf32>) {
        ^bb0(%a: f32, %b: f32):
          %s = arith.addf %a, %b : f32
          iree_linalg_ext.yield %s : f32
      } -> tensor<3x45xf32>, tensor<3xf32>
      return %r#0, %r#1 : tensor<3x45xf32>, tensor<3xf32>
    }
"""))
CASES["scatter_rows_and_elements"] = Case(mlir("""
    func.func @main(%x: tensor<6x5xf32>, %rows: tensor<3x5xf32>,
                    %flat: tensor<300xi32>, %at: tensor<40x1xi32>, %v: tensor<40xi32>)
        -> (tensor<6x5xf32>, tensor<300xi32>) {
      %ids = stablehlo.constant dense<[[4], [0], [2]]> : tensor<3x1xi32>
      %r = "stablehlo.scatter"(%x, %ids, %rows) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = true}
          : (tensor<6x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<6x5xf32>
      %e = "stablehlo.scatter"(%flat, %at, %v) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          stablehlo.return %b : tensor<i32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<300xi32>, tensor<40x1xi32>, tensor<40xi32>) -> tensor<300xi32>
      return %r, %e : tensor<6x5xf32>, tensor<300xi32>
    }
"""), inputs=(1.0, 1.0, (-100, 100), (0, 300), (-100, 100)))  # in range: llvm-cpu's scatter does not check bounds
CASES["scatter_combining_repeated_places"] = Case(mlir("""
    func.func @main(%x: tensor<20x3xf32>, %ids: tensor<30x1xi32>, %rows: tensor<30x3xf32>,
                    %flat: tensor<50xi32>, %at: tensor<40x1xi32>, %v: tensor<40xi32>)
        -> (tensor<20x3xf32>, tensor<20x3xf32>, tensor<50xi32>) {
      %sum = "stablehlo.scatter"(%x, %ids, %rows) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<20x3xf32>, tensor<30x1xi32>, tensor<30x3xf32>) -> tensor<20x3xf32>
      %least = "stablehlo.scatter"(%x, %ids, %rows) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.minimum %b, %a : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<20x3xf32>, tensor<30x1xi32>, tensor<30x3xf32>) -> tensor<20x3xf32>
      %most = "stablehlo.scatter"(%flat, %at, %v) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %s = stablehlo.maximum %a, %b : tensor<i32>
          stablehlo.return %s : tensor<i32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<50xi32>, tensor<40x1xi32>, tensor<40xi32>) -> tensor<50xi32>
      return %sum, %least, %most : tensor<20x3xf32>, tensor<20x3xf32>, tensor<50xi32>
    }
"""), inputs=(1.0, (0, 20), 1.0, (-1000, 1000), (0, 50), (-2000, 2000)))  # 30 rows into 20: repeats
CASES["segment_sums"] = Case(mlir("""
    func.func @main(%messages: tensor<256x32xf32>, %to: tensor<256x1xi32>, %counts: tensor<300x3xi32>,
                    %at: tensor<300x1xi32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x3xi32>) {
      %z = stablehlo.constant dense<0.0> : tensor<64x32xf32>
      %sum = "stablehlo.scatter"(%z, %to, %messages) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<64x32xf32>, tensor<256x1xi32>, tensor<256x32xf32>) -> tensor<64x32xf32>
      %low = stablehlo.constant dense<-1.0> : tensor<64x32xf32>
      %most = "stablehlo.scatter"(%low, %to, %messages) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.maximum %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<64x32xf32>, tensor<256x1xi32>, tensor<256x32xf32>) -> tensor<64x32xf32>
      %seven = stablehlo.constant dense<7> : tensor<64x3xi32>
      %count = "stablehlo.scatter"(%seven, %at, %counts) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %s = stablehlo.add %a, %b : tensor<i32>
          stablehlo.return %s : tensor<i32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
                                                         scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<64x3xi32>, tensor<300x1xi32>, tensor<300x3xi32>) -> tensor<64x3xi32>
      return %sum, %most, %count : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x3xi32>
    }
"""), inputs=(1.0, (0, 64), (-100000, 100000), (0, 64)))  # a graph's messages per node (jax.ops.segment_sum
# and segment_max): 64 x 256 (row, message) pairs, where elements would be 2048 x 8192, over SCATTER_LIMIT; 300
# integer rows, more than an exact integer matmul's K
CASES["scatter_rows_of_a_cache"] = Case(mlir("""
    func.func @main(%cache: tensor<40x30x16xf32>, %at: tensor<500x2xi32>, %new: tensor<500x16xf32>)
        -> tensor<40x30x16xf32> {
      %r = "stablehlo.scatter"(%cache, %at, %new) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          stablehlo.return %b : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 1],
                                                         scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>,
          indices_are_sorted = false, unique_indices = false}
          : (tensor<40x30x16xf32>, tensor<500x2xi32>, tensor<500x16xf32>) -> tensor<40x30x16xf32>
      return %r : tensor<40x30x16xf32>
    }
"""), inputs=(1.0, (0, 30), 1.0))  # rows (0..29, 0..29) of 1200, some repeated: 1200 x 500
# row pairs, where 19200 elements x 8000 update elements would be over SCATTER_LIMIT
CASES["winograd_transforms"] = Case(mlir("""
    func.func @main(%nhwc: tensor<2x14x15x3xf32>, %nchw: tensor<1x2x10x10xf32>, %m: tensor<8x8x2x2x3x3xf32>,
                    %tile: tensor<7x5xf32>, %product: tensor<8x8xf32>)
        -> (tensor<8x8x2x2x3x3xf32>, tensor<8x8x1x2x2x2xf32>, tensor<2x12x18x3xf32>, tensor<2x3x12x18xf32>,
            tensor<8x8xf32>, tensor<6x6xf32>) {
      %e0 = tensor.empty() : tensor<8x8x2x2x3x3xf32>
      %in0 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2])
          ins(%nhwc : tensor<2x14x15x3xf32>) outs(%e0 : tensor<8x8x2x2x3x3xf32>) -> tensor<8x8x2x2x3x3xf32>
      %e1 = tensor.empty() : tensor<8x8x1x2x2x2xf32>
      %in1 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([2, 3])
          ins(%nchw : tensor<1x2x10x10xf32>) outs(%e1 : tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32>
      %e2 = tensor.empty() : tensor<2x12x18x3xf32>
      %out0 = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2])
          ins(%m : tensor<8x8x2x2x3x3xf32>) outs(%e2 : tensor<2x12x18x3xf32>) -> tensor<2x12x18x3xf32>
      %e3 = tensor.empty() : tensor<2x3x12x18xf32>
      %out1 = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([2, 3])
          ins(%m : tensor<8x8x2x2x3x3xf32>) outs(%e3 : tensor<2x3x12x18xf32>) -> tensor<2x3x12x18xf32>
      %e4 = tensor.empty() : tensor<8x8xf32>
      %in2 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1])
          ins(%tile : tensor<7x5xf32>) outs(%e4 : tensor<8x8xf32>) -> tensor<8x8xf32>
      %e5 = tensor.empty() : tensor<6x6xf32>
      %out2 = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1])
          ins(%product : tensor<8x8xf32>) outs(%e5 : tensor<6x6xf32>) -> tensor<6x6xf32>
      return %in0, %in1, %out0, %out1, %in2, %out2 : tensor<8x8x2x2x3x3xf32>, tensor<8x8x1x2x2x2xf32>,
          tensor<2x12x18x3xf32>, tensor<2x3x12x18xf32>, tensor<8x8xf32>, tensor<6x6xf32>
    }
"""))  # several tiles, images padded past their edges (14 rows of tiles reading 14, 15 columns reading 20)
CASES["microscaling_fp4"] = Case(mlir("""
    #map = affine_map<(d0) -> (d0)>
    func.func @main(%codes: tensor<256xi8>, %scales: tensor<256xi8>, %x: tensor<256xf32>, %s: tensor<256xi8>)
        -> (tensor<256xf32>, tensor<256xi8>, tensor<256xi8>) {
      %e0 = tensor.empty() : tensor<256xf32>
      %decoded = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
          ins(%codes, %scales : tensor<256xi8>, tensor<256xi8>) outs(%e0 : tensor<256xf32>) {
        ^bb0(%c: i8, %e: i8, %out: f32):
          %c4 = arith.trunci %c : i8 to i4
          %f4 = arith.bitcast %c4 : i4 to f4E2M1FN
          %scale = arith.bitcast %e : i8 to f8E8M0FNU
          %v = arith.scaling_extf %f4, %scale : f4E2M1FN, f8E8M0FNU to f32
          linalg.yield %v : f32
      } -> tensor<256xf32>
      %e1 = tensor.empty() : tensor<256xi8>
      %encoded, %exponents = linalg.generic {indexing_maps = [#map, #map, #map, #map],
                                             iterator_types = ["parallel"]}
          ins(%x, %s : tensor<256xf32>, tensor<256xi8>) outs(%e1, %e1 : tensor<256xi8>, tensor<256xi8>) {
        ^bb0(%v: f32, %e: i8, %o: i8, %p: i8):
          %scale = arith.bitcast %e : i8 to f8E8M0FNU
          %f4 = arith.scaling_truncf %v, %scale : f32, f8E8M0FNU to f4E2M1FN
          %c4 = arith.bitcast %f4 : f4E2M1FN to i4
          %c = arith.extui %c4 : i4 to i8
          %f8 = arith.truncf %v : f32 to f8E8M0FNU
          %b = arith.bitcast %f8 : f8E8M0FNU to i8
          linalg.yield %c, %b : i8, i8
      } -> (tensor<256xi8>, tensor<256xi8>)
      return %decoded, %encoded, %exponents : tensor<256xf32>, tensor<256xi8>, tensor<256xi8>
    }
"""), inputs=((-128, 128), (120, 135), 4.0, (124, 130)))  # every f4 code, scales near 1; values around +-6
CASES["strided_slices"] = Case(mlir("""
    func.func @main(%x: tensor<1x8x8x16xf32>, %k: tensor<2x2x16x16xf32>, %y: tensor<16x48xf32>)
        -> (tensor<1x17x17x16xf32>, tensor<1x16x16x16xf32>, tensor<8x12xf32>, tensor<1x16x17x17xf32>) {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %spread = stablehlo.pad %x, %z, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 1, 1, 0]
          : (tensor<1x8x8x16xf32>, tensor<f32>) -> tensor<1x17x17x16xf32>
      %up = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
          window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2], rhs_dilate = [1, 1]}
          {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
          : (tensor<1x8x8x16xf32>, tensor<2x2x16x16xf32>) -> tensor<1x16x16x16xf32>
      %every = stablehlo.slice %y [1:16:2, 2:48:4] : (tensor<16x48xf32>) -> tensor<8x12xf32>
      %e = stablehlo.exponential %every : tensor<8x12xf32>
      %nchw = stablehlo.transpose %x, dims = [0, 3, 1, 2] : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
      %columns = stablehlo.pad %nchw, %z, low = [0, 0, 1, 1], high = [0, 0, 1, 1], interior = [0, 0, 1, 1]
          : (tensor<1x16x8x8xf32>, tensor<f32>) -> tensor<1x16x17x17xf32>
      return %spread, %up, %e, %columns
          : tensor<1x17x17x16xf32>, tensor<1x16x16x16xf32>, tensor<8x12xf32>, tensor<1x16x17x17xf32>
    }
"""))  # stores into strided slices (a transposed convolution's input spread into its dilated buffer: IREE's
# slow_memcpy) as windows with gaps between rows, or, every other column (NCHW), the binding merged whole; a
# strided load
CASES["groupnorm_channels_last"] = Case(mlir("""
    func.func @main(%x: tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32> {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %n = stablehlo.constant dense<64.0> : tensor<1x1x1x4x1xf32>
      %g = stablehlo.reshape %x : (tensor<1x16x16x8xf32>) -> tensor<1x16x16x4x2xf32>
      %s = stablehlo.reduce(%g init: %z) applies stablehlo.add across dimensions = [1, 2, 4]
          : (tensor<1x16x16x4x2xf32>, tensor<f32>) -> tensor<1x4xf32>
      %s5 = stablehlo.reshape %s : (tensor<1x4xf32>) -> tensor<1x1x1x4x1xf32>
      %mean = stablehlo.divide %s5, %n : tensor<1x1x1x4x1xf32>
      %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1, 2, 3, 4]
          : (tensor<1x1x1x4x1xf32>) -> tensor<1x16x16x4x2xf32>
      %c = stablehlo.subtract %g, %mb : tensor<1x16x16x4x2xf32>
      %r = stablehlo.reshape %c : (tensor<1x16x16x4x2xf32>) -> tensor<1x16x16x8xf32>
      return %r : tensor<1x16x16x8xf32>
    }
"""))  # a GroupNorm's centring over (H*W, groups, channels per group) = (256, 4, 2)
CASES["attention"] = Case(mlir("""
    #q = affine_map<(b, h, m, n, k1, k2) -> (m, b, h, k1)>
    #k = affine_map<(b, h, m, n, k1, k2) -> (k2, b, h, k1)>
    #v = affine_map<(b, h, m, n, k1, k2) -> (k2, b, h, n)>
    #s = affine_map<(b, h, m, n, k1, k2) -> ()>
    #o = affine_map<(b, h, m, n, k1, k2) -> (b, h, m, n)>
    #plain3 = affine_map<(b, m, n, k1, k2) -> (b, m, k1)>
    #k3 = affine_map<(b, m, n, k1, k2) -> (b, k2, k1)>
    #v3 = affine_map<(b, m, n, k1, k2) -> (b, k2, n)>
    #s3 = affine_map<(b, m, n, k1, k2) -> ()>
    #o3 = affine_map<(b, m, n, k1, k2) -> (b, m, n)>
    func.func @main(%q: tensor<12x2x4x8xf32>, %k: tensor<20x2x4x8xf32>, %v: tensor<20x2x4x16xf32>,
                    %a: tensor<3x40x24xf32>, %b: tensor<3x50x24xf32>, %c: tensor<3x50x8xf32>)
        -> (tensor<2x4x12x16xf32>, tensor<3x40x8xf32>) {
      %scale = arith.constant 0.353553385 : f32
      %e = tensor.empty() : tensor<2x4x12x16xf32>
      %r = iree_linalg_ext.attention <indexing_maps = [#q, #k, #v, #s, #o]>
          ins(%q, %k, %v, %scale : tensor<12x2x4x8xf32>, tensor<20x2x4x8xf32>, tensor<20x2x4x16xf32>, f32)
          outs(%e : tensor<2x4x12x16xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<2x4x12x16xf32>
      %half = arith.constant 0.5 : f32
      %e3 = tensor.empty() : tensor<3x40x8xf32>
      %r3 = iree_linalg_ext.attention <indexing_maps = [#plain3, #k3, #v3, #s3, #o3]>
          ins(%a, %b, %c, %half : tensor<3x40x24xf32>, tensor<3x50x24xf32>, tensor<3x50x8xf32>, f32)
          outs(%e3 : tensor<3x40x8xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<3x40x8xf32>
      return %r, %r3 : tensor<2x4x12x16xf32>, tensor<3x40x8xf32>
    }
"""))  # torch's scaled_dot_product_attention as IREE takes it (sequence-first operands, heads as batch), and
# the plain (batch, m, k) form with sequences that are not whole tiles
CASES["extract_at_int64_indices"] = Case(mlir("""
    #c = affine_map<(d0, d1, d2) -> (d0)>
    #h = affine_map<(d0, d1, d2) -> (d1)>
    #w = affine_map<(d0, d1, d2) -> (d2)>
    #all = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
    func.func @main(%src: tensor<64x4x4xf32>, %bias: tensor<64xf32>, %rows: tensor<8xi64>, %columns: tensor<8xi64>)
        -> tensor<64x8x8xf32> {
      %e = tensor.empty() : tensor<64x8x8xf32>
      %r = linalg.generic {indexing_maps = [#c, #h, #w, #all], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%bias, %rows, %columns : tensor<64xf32>, tensor<8xi64>, tensor<8xi64>) outs(%e : tensor<64x8x8xf32>) {
        ^bb0(%b: f32, %row: i64, %column: i64, %out: f32):
          %zero = arith.constant 0 : i64
          %four = arith.constant 4 : i64
          %c = linalg.index 0 : index
          %h = linalg.index 1 : index
          %rn = arith.cmpi slt, %row, %zero : i64
          %rw = arith.addi %row, %four : i64
          %ri = arith.select %rn, %rw, %row : i64
          %cn = arith.cmpi slt, %column, %zero : i64
          %cw = arith.addi %column, %four : i64
          %ci = arith.select %cn, %cw, %column : i64
          %i = arith.index_cast %ri : i64 to index
          %j = arith.index_cast %ci : i64 to index
          %x = tensor.extract %src[%c, %i, %j] : tensor<64x4x4xf32>
          %hi = arith.index_cast %h : index to i32
          %hf = arith.sitofp %hi : i32 to f32
          %y = arith.addf %x, %b : f32
          %z = arith.addf %y, %hf : f32
          linalg.yield %z : f32
      } -> tensor<64x8x8xf32>
      return %r : tensor<64x8x8xf32>
    }
"""), inputs=(1.0, 1.0, (-4, 4), (-4, 4)))  # torch's interpolate as IREE fuses it: source places from int64
# indices (negative ones wrapped, as torch's indexing does), read by tensor.extract, over (C, H, W) = (64, 8, 8)
# with small trailing dims, beside linalg.index
CASES["interpolate_bilinear_int64"] = Case(mlir("""
    #v = affine_map<(d0) -> (d0)>
    #h = affine_map<(d0, d1, d2) -> (d1)>
    #w = affine_map<(d0, d1, d2) -> (d2)>
    #all = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
    func.func @main(%src: tensor<16x8x8xf32>, %places: tensor<16xf32>, %next: tensor<16xi64>,
                    %fraction: tensor<16xf32>) -> tensor<16x16x16xf32> {
      %e = tensor.empty() : tensor<16x16x16xf32>
      %ei = tensor.empty() : tensor<16xi64>
      %low = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
          ins(%places : tensor<16xf32>) outs(%ei : tensor<16xi64>) {
        ^bb0(%p: f32, %o: i64):
          %i = arith.fptosi %p : f32 to i64
          linalg.yield %i : i64
      } -> tensor<16xi64>
      %r = linalg.generic {indexing_maps = [#h, #w, #w, #w, #h, #h, #all],
                           iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%low, %low, %next, %fraction, %next, %fraction
              : tensor<16xi64>, tensor<16xi64>, tensor<16xi64>, tensor<16xf32>, tensor<16xi64>, tensor<16xf32>)
          outs(%e : tensor<16x16x16xf32>) {
        ^bb0(%row: i64, %column: i64, %column_next: i64, %fx: f32, %row_next: i64, %fy: f32, %out: f32):
          %zero = arith.constant 0 : i64
          %eight = arith.constant 8 : i64
          %sixteen = arith.constant 16 : i64
          %ch = linalg.index 0 : index
          %chi = arith.index_cast %ch : index to i64
          %chn = arith.cmpi slt, %chi, %zero : i64
          %chw = arith.addi %chi, %sixteen : i64
          %chs = arith.select %chn, %chw, %chi : i64
          %c = arith.index_cast %chs : i64 to index
          %rn = arith.cmpi slt, %row, %zero : i64
          %rw = arith.addi %row, %eight : i64
          %rs = arith.select %rn, %rw, %row : i64
          %i = arith.index_cast %rs : i64 to index
          %cn = arith.cmpi slt, %column, %zero : i64
          %cw = arith.addi %column, %eight : i64
          %cs = arith.select %cn, %cw, %column : i64
          %j = arith.index_cast %cs : i64 to index
          %nn = arith.cmpi slt, %column_next, %zero : i64
          %nw = arith.addi %column_next, %eight : i64
          %ns = arith.select %nn, %nw, %column_next : i64
          %j1 = arith.index_cast %ns : i64 to index
          %mn = arith.cmpi slt, %row_next, %zero : i64
          %mw = arith.addi %row_next, %eight : i64
          %ms = arith.select %mn, %mw, %row_next : i64
          %i1 = arith.index_cast %ms : i64 to index
          %a = tensor.extract %src[%c, %i, %j] : tensor<16x8x8xf32>
          %b = tensor.extract %src[%c, %i, %j1] : tensor<16x8x8xf32>
          %d = tensor.extract %src[%c, %i1, %j1] : tensor<16x8x8xf32>
          %g = tensor.extract %src[%c, %i1, %j] : tensor<16x8x8xf32>
          %ba = arith.subf %b, %a : f32
          %bax = arith.mulf %ba, %fx : f32
          %top = arith.addf %a, %bax : f32
          %dg = arith.subf %d, %g : f32
          %dgx = arith.mulf %dg, %fx : f32
          %bottom = arith.addf %g, %dgx : f32
          %bt = arith.subf %bottom, %top : f32
          %bty = arith.mulf %bt, %fy : f32
          %y = arith.addf %top, %bty : f32
          linalg.yield %y : f32
      } -> tensor<16x16x16xf32>
      return %r : tensor<16x16x16xf32>
    }
"""), inputs=(1.0, (0.0, 8.0), (-8, 8), (0.0, 1.0)))  # torch's bilinear interpolate as IREE fuses it (a UNet's
# upsampling): four extracts at int64 indices of one loop each (a row, a column, the next of each), wrapped
# and cast, the channel's from linalg.index
CASES["reduce_product"] = Case(mlir("""
    func.func @main(%x: tensor<2x6x7xf32>, %k: tensor<3x5xi32>) -> (tensor<2x6xf32>, tensor<2x7xf32>, tensor<3xi32>) {
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %onei = stablehlo.constant dense<1> : tensor<i32>
      %p = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [2]
          : (tensor<2x6x7xf32>, tensor<f32>) -> tensor<2x6xf32>
      %q = stablehlo.reduce(%x init: %one) applies stablehlo.multiply across dimensions = [1]
          : (tensor<2x6x7xf32>, tensor<f32>) -> tensor<2x7xf32>
      %r = stablehlo.reduce(%k init: %onei) applies stablehlo.multiply across dimensions = [1]
          : (tensor<3x5xi32>, tensor<i32>) -> tensor<3xi32>
      return %p, %q, %r : tensor<2x6xf32>, tensor<2x7xf32>, tensor<3xi32>
    }
"""), inputs=((0.5, 1.5), (-3, 4)))  # torch.prod and jnp.prod: products over the last dim, a middle dim, and of
# int32 (exact); reduce_tile sums and maxes only
_MASKED_ROWS = np.zeros((4, 16), np.float32)
_MASKED_ROWS[1] = np.finfo(np.float32).min  # a padded query's row, every key masked
_MASKED_ROWS[2, 8:] = np.finfo(np.float32).min  # half the keys masked
_MASKED_ROWS[3] = -1.0e30
CASES["softmax_fully_masked_rows"] = Case(mlir(f"""
    func.func @main(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {{
      %mask = arith.constant dense<{_MASKED_ROWS.tolist()}> : tensor<4x16xf32>
      %m = arith.addf %x, %mask : tensor<4x16xf32>
      %e = tensor.empty() : tensor<4x16xf32>
      %s = linalg.softmax dimension(1) ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %max = stablehlo.reduce(%m init: %ninf) applies stablehlo.maximum across dimensions = [1]
          : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
      %b = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
      %d = stablehlo.subtract %m, %b : tensor<4x16xf32>
      %x2 = stablehlo.exponential %d : tensor<4x16xf32>
      %sum = stablehlo.reduce(%x2 init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
      %bs = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
      %j = stablehlo.divide %x2, %bs : tensor<4x16xf32>
      return %s, %j : tensor<4x16xf32>, tensor<4x16xf32>
    }}
"""))  # softmax (torch's, a named op; JAX's, StableHLO) over rows every element of which is finfo.min or -1e30 (a
# fully masked attention row: GPT-Neo's local attention, Gemma 2's sliding window, for a padded query), half masked,
# and plain: the FPU's truncated row max is above every element, and exp(x - max) must not make 0 / 0
CASES["causal_depthwise_conv1d_twice"] = Case(mlir(f"""
    #x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 + d3)>
    #f = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
    #o = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
    func.func @conv(%x: tensor<2x64x16xf32>, %f: tensor<64x4xf32>) -> tensor<2x64x16xf32> {{
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 0, 3] high[0, 0, 3] {{
        ^bb0(%i: index, %j: index, %k: index):
          tensor.yield %zero : f32
      }} : tensor<2x64x16xf32> to tensor<2x64x22xf32>
      %e = tensor.empty() : tensor<2x64x19xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x19xf32>) -> tensor<2x64x19xf32>
      %r = linalg.generic {{indexing_maps = [#x, #f, #o],
                           iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
          ins(%p, %f : tensor<2x64x22xf32>, tensor<64x4xf32>) outs(%z : tensor<2x64x19xf32>) {{
        ^bb0(%a: f32, %b: f32, %out: f32):
          %m = arith.mulf %a, %b : f32
          %s = arith.addf %out, %m : f32
          linalg.yield %s : f32
      }} -> tensor<2x64x19xf32>
      %c = tensor.extract_slice %r[0, 0, 0] [2, 64, 16] [1, 1, 1] : tensor<2x64x19xf32> to tensor<2x64x16xf32>
      %t = math.tanh %c : tensor<2x64x16xf32>
      return %t : tensor<2x64x16xf32>
    }}
    func.func @main(%x: tensor<2x64x16xf32>) -> tensor<2x64x16xf32> {{
      %f1 = arith.constant dense<{np.round(np.sin(np.arange(256)).reshape(64, 4) / 2, 4).tolist()}> : tensor<64x4xf32>
      %f2 = arith.constant dense<{np.round(np.cos(np.arange(256)).reshape(64, 4) / 2, 4).tolist()}> : tensor<64x4xf32>
      %y = call @conv(%x, %f1) : (tensor<2x64x16xf32>, tensor<64x4xf32>) -> tensor<2x64x16xf32>
      %z = call @conv(%y, %f2) : (tensor<2x64x16xf32>, tensor<64x4xf32>) -> tensor<2x64x16xf32>
      return %z : tensor<2x64x16xf32>
    }}
"""))  # Mamba's causal depthwise conv1d (64 channels, kernel 4), two layers: IREE makes one dispatch of both, its
# bindings' offsets push constants, and its gathers of one matrix each batched into one (once a compiler crash)
CASES["attention_mask_over_heads"] = Case(mlir("""
    #causal = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
    #padding = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
    #all = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
    func.func @main(%causal: tensor<12x12xi64>, %padding: tensor<2x12xi64>) -> tensor<2x4x12x12xi8> {
      %e = tensor.empty() : tensor<2x4x12x12xi1>
      %m = linalg.generic {indexing_maps = [#causal, #padding, #all],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%causal, %padding : tensor<12x12xi64>, tensor<2x12xi64>) outs(%e : tensor<2x4x12x12xi1>) {
        ^bb0(%c: i64, %p: i64, %out: i1):
          %zero = arith.constant 0 : i64
          %product = arith.muli %c, %p : i64
          %kept = arith.cmpi ne, %product, %zero : i64
          linalg.yield %kept : i1
      } -> tensor<2x4x12x12xi1>
      %bytes = arith.extui %m : tensor<2x4x12x12xi1> to tensor<2x4x12x12xi8>
      return %bytes : tensor<2x4x12x12xi8>
    }
"""), inputs=((-2, 3), (-2, 3)))  # torch's attention mask as torch_gpt's export computes it: a causal (query, key)
# mask times a padding (batch, key) mask, in int64, compared with 0 and expanded over the 4 heads
CASES["rotary_half_swap"] = Case(mlir("""
    #q = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
    #t = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
    #o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
    func.func @main(%q: tensor<2x16x2x8xf32>, %cos: tensor<16x8xf32>, %sin: tensor<16x8xf32>)
        -> tensor<2x2x16x8xf32> {
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %halves = tensor.expand_shape %q [[0], [1], [2], [3, 4]] output_shape [2, 16, 2, 2, 4]
          : tensor<2x16x2x8xf32> into tensor<2x16x2x2x4xf32>
      %e = tensor.empty() : tensor<2x2x16x8xf32>
      %r = linalg.generic {indexing_maps = [#q, #t, #t, #o],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%q, %cos, %sin : tensor<2x16x2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>)
          outs(%e : tensor<2x2x16x8xf32>) {
        ^bb0(%x: f32, %c: f32, %s: f32, %out: f32):
          %b = linalg.index 0 : index
          %h = linalg.index 1 : index
          %p = linalg.index 2 : index
          %d = linalg.index 3 : index
          %within = arith.remsi %d, %c4 : index
          %half = arith.divsi %d, %c4 : index
          %other = arith.subi %c1, %half : index
          %v = tensor.extract %halves[%b, %p, %h, %other, %within] : tensor<2x16x2x2x4xf32>
          %n = arith.negf %v : f32
          %first = arith.cmpi eq, %other, %c1 : index
          %rotated = arith.select %first, %n, %v : f32
          %xs = arith.mulf %rotated, %s : f32
          %xc = arith.mulf %x, %c : f32
          %y = arith.addf %xc, %xs : f32
          linalg.yield %y : f32
      } -> tensor<2x2x16x8xf32>
      return %r : tensor<2x2x16x8xf32>
    }
"""))  # a rotary position embedding's half swap as IREE fuses HF Llama's (heads moved before the sequence): the
# extract's indices are functions of the loops alone
CASES["grouped_conv1d_bias"] = Case(mlir("""
    #bias = affine_map<(n, g, o, w) -> (g, o)>
    #all = affine_map<(n, g, o, w) -> (n, g, o, w)>
    #x = affine_map<(n, g, o, w, c, k) -> (n, g, c, w + k)>
    #w = affine_map<(n, g, o, w, c, k) -> (g, o, c, k)>
    #out = affine_map<(n, g, o, w, c, k) -> (n, g, o, w)>
    func.func @main(%x: tensor<2x4x4x30xf32>, %w: tensor<4x4x4x3xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x4x28xf32> {
      %e = tensor.empty() : tensor<2x4x4x28xf32>
      %f = linalg.generic {indexing_maps = [#bias, #all],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%bias : tensor<4x4xf32>) outs(%e : tensor<2x4x4x28xf32>) {
        ^bb0(%in: f32, %out: f32):
          linalg.yield %in : f32
      } -> tensor<2x4x4x28xf32>
      %r = linalg.generic {indexing_maps = [#x, #w, #out],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
          ins(%x, %w : tensor<2x4x4x30xf32>, tensor<4x4x4x3xf32>) outs(%f : tensor<2x4x4x28xf32>) {
        ^bb0(%a: f32, %b: f32, %o: f32):
          %m = arith.mulf %a, %b : f32
          %s = arith.addf %o, %m : f32
          linalg.yield %s : f32
      } -> tensor<2x4x4x28xf32>
      return %r : tensor<2x4x4x28xf32>
    }
"""))  # torch's Conv1d(16, 16, 3, groups=4) as IREE takes it: (N, G, C/G, W) * (G, O/G, C/G, K), its init the bias
# (G, O/G) broadcast over (N, G, O/G, W'), merged as (32, 28) rows: the bias read as a window repeating its 16
# values (a segment stride of 0), which a reader once took as 32 values on
CASES["int64_indices_scatter_gather_and_zero_scan"] = Case(mlir("""
    func.func @main(%x: tensor<4x5xf32>, %ids: tensor<8x2xi64>, %updates: tensor<8xf32>, %rows: tensor<5x1xi64>)
        -> (tensor<4x5xf32>, tensor<5x5xf32>, tensor<4x5xf32>) {
      %s = iree_linalg_ext.scatter dimension_map = [0, 1] unique_indices(false)
          ins(%updates, %ids : tensor<8xf32>, tensor<8x2xi64>) outs(%x : tensor<4x5xf32>) {
        ^bb0(%a: f32, %b: f32):
          iree_linalg_ext.yield %a : f32
      } -> tensor<4x5xf32>
      %e = tensor.empty() : tensor<5x5xf32>
      %g = iree_linalg_ext.gather dimension_map = [0] ins(%x, %rows : tensor<4x5xf32>, tensor<5x1xi64>)
          outs(%e : tensor<5x5xf32>) -> tensor<5x5xf32>
      %zero = arith.constant 0.0 : f32
      %e2 = tensor.empty() : tensor<4x5xf32>
      %t = tensor.empty() : tensor<4xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
      %ft = linalg.fill ins(%zero : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
      %c:2 = iree_linalg_ext.scan dimension(1) inclusive(true) ins(%x : tensor<4x5xf32>)
          outs(%f, %ft : tensor<4x5xf32>, tensor<4xf32>) {
        ^bb0(%a: f32, %b: f32):
          %sum = arith.addf %a, %b : f32
          iree_linalg_ext.yield %sum : f32
      } -> tensor<4x5xf32>, tensor<4xf32>
      return %s, %g, %c#0 : tensor<4x5xf32>, tensor<5x5xf32>, tensor<4x5xf32>
    }
"""), inputs=(1.0, (0, 4), 1.0, (0, 4)))  # torch's x.scatter(1, ids, v), index_select and cumsum as IREE takes them:
# int64 indices (saturated to int32 as an index_cast), an accumulator of zeros (a fill)
CASES["adaptive_average_pool_counts"] = Case(mlir("""
    #mask = affine_map<(d0, d1, d2) -> (d2)>
    #sums = affine_map<(d0, d1, d2) -> (d0, d1)>
    #counts = affine_map<(d0, d1, d2) -> (d1)>
    #column = affine_map<(d0, d1) -> (d1)>
    #plain = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%x: tensor<8x17xf32>) -> tensor<8x5xf32> {
      %zero = arith.constant 0.0 : f32
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %c17 = arith.constant 17 : index
      %m = tensor.empty() : tensor<5xi1>
      %e = tensor.empty() : tensor<8x5xf32>
      %n = tensor.empty() : tensor<5xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
      %r:2 = linalg.generic {indexing_maps = [#mask, #sums, #counts],
                             iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%m : tensor<5xi1>) outs(%f, %n : tensor<8x5xf32>, tensor<5xf32>) {
        ^bb0(%in: i1, %out: f32, %count: f32):
          %row = linalg.index 0 : index
          %i = linalg.index 1 : index
          %k = linalg.index 2 : index
          %a = arith.muli %i, %c17 : index
          %start = arith.floordivsi %a, %c5 : index
          %i1 = arith.addi %i, %c1 : index
          %b = arith.muli %i1, %c17 : index
          %b1 = arith.subi %b, %c1 : index
          %last = arith.floordivsi %b1, %c5 : index
          %end = arith.addi %last, %c1 : index
          %p = arith.addi %start, %k : index
          %v = tensor.extract %x[%row, %p] : tensor<8x17xf32>
          %inside = arith.cmpi ult, %p, %end : index
          %t = arith.select %inside, %v, %zero : f32
          %sum = arith.addf %t, %out : f32
          %w = arith.subi %end, %start : index
          %wi = arith.index_cast %w : index to i64
          %wf = arith.sitofp %wi : i64 to f32
          linalg.yield %sum, %wf : f32, f32
      } -> (tensor<8x5xf32>, tensor<5xf32>)
      %e2 = tensor.empty() : tensor<8x5xf32>
      %avg = linalg.generic {indexing_maps = [#column, #plain, #plain], iterator_types = ["parallel", "parallel"]}
          ins(%r#1, %r#0 : tensor<5xf32>, tensor<8x5xf32>) outs(%e2 : tensor<8x5xf32>) {
        ^bb0(%c: f32, %s: f32, %o: f32):
          %d = arith.divf %s, %c : f32
          linalg.yield %d : f32
      } -> tensor<8x5xf32>
      return %avg : tensor<8x5xf32>
    }
"""))  # torch's adaptive_avg_pool1d(17 -> 5) as IREE fuses it: windows of 4 or 5 (a sum over the widest window,
# masked), and a second result, each window's count, a function of its own loop only (each reduction step writes it)
CASES["max_pool_with_indices"] = Case(mlir("""
    #x = affine_map<(n, c, h, w) -> (n, c, h, w)>
    #out = affine_map<(n, c, h, w, kh, kw) -> (n, c, h, w)>
    #window = affine_map<(n, c, h, w, kh, kw) -> (kh, kw)>
    func.func @main(%x0: tensor<2x3x12x10xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x4xi64>) {
      %ninf = arith.constant 0xFF800000 : f32
      %none = arith.constant -1 : i64
      %c2 = arith.constant 2 : index
      %c10 = arith.constant 10 : index
      %ex = tensor.empty() : tensor<2x3x12x10xf32>
      %x = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%x0 : tensor<2x3x12x10xf32>) outs(%ex : tensor<2x3x12x10xf32>) {
        ^bb0(%a: f32, %o: f32):
          %f = math.floor %a : f32
          linalg.yield %f : f32
      } -> tensor<2x3x12x10xf32>
      %e = tensor.empty() : tensor<2x3x5x4xf32>
      %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
      %w = tensor.empty() : tensor<3x3xf32>
      %m = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
          ins(%x, %w : tensor<2x3x12x10xf32>, tensor<3x3xf32>) outs(%f : tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
      %ei = tensor.empty() : tensor<2x3x5x4xi64>
      %fi = linalg.fill ins(%none : i64) outs(%ei : tensor<2x3x5x4xi64>) -> tensor<2x3x5x4xi64>
      %wi = tensor.empty() : tensor<3x3xi64>
      %i = linalg.generic {indexing_maps = [#out, #window, #out],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
          ins(%m, %wi : tensor<2x3x5x4xf32>, tensor<3x3xi64>) outs(%fi : tensor<2x3x5x4xi64>) {
        ^bb0(%max: f32, %unused: i64, %o: i64):
          %n = linalg.index 0 : index
          %c = linalg.index 1 : index
          %h = linalg.index 2 : index
          %kh = linalg.index 4 : index
          %h2 = arith.muli %h, %c2 : index
          %row = arith.addi %h2, %kh : index
          %wd = linalg.index 3 : index
          %kw = linalg.index 5 : index
          %w2 = arith.muli %wd, %c2 : index
          %col = arith.addi %w2, %kw : index
          %v = tensor.extract %x[%n, %c, %row, %col] : tensor<2x3x12x10xf32>
          %is = arith.cmpf oeq, %v, %max : f32
          %r10 = arith.muli %row, %c10 : index
          %place = arith.addi %col, %r10 : index
          %p = arith.index_cast %place : index to i64
          %found = arith.select %is, %p, %o : i64
          %unset = arith.cmpi eq, %o, %none : i64
          %next = arith.select %unset, %found, %o : i64
          linalg.yield %next : i64
      } -> tensor<2x3x5x4xi64>
      return %m, %i : tensor<2x3x5x4xf32>, tensor<2x3x5x4xi64>
    }
"""), inputs=((0, 4),))  # torch's max_pool2d(x, 3, 2, return_indices=True) as torch-mlir writes it: the first place
# in each window whose element equals the max, an index kept once set (the body depends on the order); floored
# inputs make ties, so the first of equal elements must win
CASES["conv3d_padded"] = Case(mlir("""
    func.func @main(%x: tensor<1x2x5x6x6xf32>, %w: tensor<4x2x3x3x3xf32>) -> tensor<1x4x5x6x6xf32> {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %x low[0, 0, 1, 1, 1] high[0, 0, 1, 1, 1] {
        ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %i4: index):
          tensor.yield %zero : f32
      } : tensor<1x2x5x6x6xf32> to tensor<1x2x7x8x8xf32>
      %e = tensor.empty() : tensor<1x4x5x6x6xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x5x6x6xf32>) -> tensor<1x4x5x6x6xf32>
      %r = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
          ins(%p, %w : tensor<1x2x7x8x8xf32>, tensor<4x2x3x3x3xf32>) outs(%f : tensor<1x4x5x6x6xf32>)
          -> tensor<1x4x5x6x6xf32>
      return %r : tensor<1x4x5x6x6xf32>
    }
"""))  # nn.Conv3d(2, 4, 3, padding=1): the padded copy stores the volume into the interior of its buffer, a slice
# of two batch levels (channel, depth) that no window describes
CASES["attention_qkv_slices"] = Case(mlir("""
    #q = affine_map<(b, h, m, n, k1, k2) -> (m, b, h, k1)>
    #k = affine_map<(b, h, m, n, k1, k2) -> (k2, b, h, k1)>
    #v = affine_map<(b, h, m, n, k1, k2) -> (k2, b, h, n)>
    #s = affine_map<(b, h, m, n, k1, k2) -> ()>
    #o = affine_map<(b, h, m, n, k1, k2) -> (b, h, m, n)>
    #in = affine_map<(b, h, m, n) -> (b, h, m, n)>
    #out = affine_map<(b, h, m, n) -> (m, b, h, n)>
    func.func @main(%qkv: tensor<3x12x2x4x8xf32>) -> tensor<12x2x4x8xf32> {
      %scale = arith.constant 0.353553385 : f32
      %q = tensor.extract_slice %qkv[0, 0, 0, 0, 0] [1, 12, 2, 4, 8] [1, 1, 1, 1, 1]
          : tensor<3x12x2x4x8xf32> to tensor<12x2x4x8xf32>
      %k = tensor.extract_slice %qkv[1, 0, 0, 0, 0] [1, 12, 2, 4, 8] [1, 1, 1, 1, 1]
          : tensor<3x12x2x4x8xf32> to tensor<12x2x4x8xf32>
      %v = tensor.extract_slice %qkv[2, 0, 0, 0, 0] [1, 12, 2, 4, 8] [1, 1, 1, 1, 1]
          : tensor<3x12x2x4x8xf32> to tensor<12x2x4x8xf32>
      %e = tensor.empty() : tensor<2x4x12x8xf32>
      %r = iree_linalg_ext.attention <indexing_maps = [#q, #k, #v, #s, #o]>
          ins(%q, %k, %v, %scale : tensor<12x2x4x8xf32>, tensor<12x2x4x8xf32>, tensor<12x2x4x8xf32>, f32)
          outs(%e : tensor<2x4x12x8xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<2x4x12x8xf32>
      %et = tensor.empty() : tensor<12x2x4x8xf32>
      %t = linalg.generic {indexing_maps = [#in, #out],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%r : tensor<2x4x12x8xf32>) outs(%et : tensor<12x2x4x8xf32>) {
        ^bb0(%x: f32, %o: f32):
          linalg.yield %x : f32
      } -> tensor<12x2x4x8xf32>
      return %t : tensor<12x2x4x8xf32>
    }
"""))  # torch's self-attention as IREE fuses it: q, k and v slices of one binding (the qkv projection), the
# result transposed back to sequence-first
CASES["linear_weight_out_by_in"] = Case(mlir("""
    #x = affine_map<(b, m, n, k) -> (b, m, k)>
    #w = affine_map<(b, m, n, k) -> (n, k)>
    #wb = affine_map<(b, m, n, k) -> (b, n, k)>
    #o = affine_map<(b, m, n, k) -> (b, m, n)>
    func.func @main(%x: tensor<2x40x70xf32>, %w: tensor<300x70xf32>, %v: tensor<2x45x70xf32>)
        -> (tensor<2x40x300xf32>, tensor<2x40x45xf32>) {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x40x300xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x40x300xf32>) -> tensor<2x40x300xf32>
      %r = linalg.generic {indexing_maps = [#x, #w, #o],
                           iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%x, %w : tensor<2x40x70xf32>, tensor<300x70xf32>) outs(%f : tensor<2x40x300xf32>) {
        ^bb0(%a: f32, %b: f32, %o: f32):
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %o, %p : f32
          linalg.yield %s : f32
      } -> tensor<2x40x300xf32>
      %e2 = tensor.empty() : tensor<2x40x45xf32>
      %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x40x45xf32>) -> tensor<2x40x45xf32>
      %r2 = linalg.generic {indexing_maps = [#x, #wb, #o],
                            iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
          ins(%x, %v : tensor<2x40x70xf32>, tensor<2x45x70xf32>) outs(%f2 : tensor<2x40x45xf32>) {
        ^bb0(%a: f32, %b: f32, %o: f32):
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %o, %p : f32
          linalg.yield %s : f32
      } -> tensor<2x40x45xf32>
      return %r, %r2 : tensor<2x40x300xf32>, tensor<2x40x45xf32>
    }
"""))  # torch's Linear (its weight (out, in): x @ w^T) over a batch of sequences, and a batched x @ v^T (attention
# scores as torch's bmm writes them); sizes not whole tiles
CASES["attention_multi_query"] = Case(mlir("""
    #q = affine_map<(b, h, m, n, k1, k2) -> (b, h, m, k1)>
    #k = affine_map<(b, h, m, n, k1, k2) -> (b, k2, k1)>
    #v = affine_map<(b, h, m, n, k1, k2) -> (b, k2, n)>
    #vt = affine_map<(b, h, m, n, k1, k2) -> (b, h, n, k2)>
    #s = affine_map<(b, h, m, n, k1, k2) -> ()>
    #mask = affine_map<(b, h, m, n, k1, k2) -> (b, m, k2)>
    #o = affine_map<(b, h, m, n, k1, k2) -> (b, h, m, n)>
    func.func @main(%q: tensor<2x4x16x8xf32>, %k: tensor<2x20x8xf32>, %v: tensor<2x20x8xf32>,
                    %vt: tensor<2x4x8x20xf32>, %bias: tensor<2x16x20xf32>)
        -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
      %scale = arith.constant 0.353553385 : f32
      %e = tensor.empty() : tensor<2x4x16x8xf32>
      %r = iree_linalg_ext.attention <indexing_maps = [#q, #k, #v, #s, #mask, #o]>
          ins(%q, %k, %v, %scale, %bias : tensor<2x4x16x8xf32>, tensor<2x20x8xf32>, tensor<2x20x8xf32>, f32,
              tensor<2x16x20xf32>) outs(%e : tensor<2x4x16x8xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<2x4x16x8xf32>
      %r2 = iree_linalg_ext.attention <indexing_maps = [#q, #k, #vt, #s, #mask, #o]>
          ins(%q, %k, %vt, %scale, %bias : tensor<2x4x16x8xf32>, tensor<2x20x8xf32>, tensor<2x4x8x20xf32>, f32,
              tensor<2x16x20xf32>) outs(%e : tensor<2x4x16x8xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<2x4x16x8xf32>
      return %r, %r2 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
    }
"""))  # multi-query attention (transformers' Falcon with SDPA): one K (and V) for every head, a float mask shared
# by the heads; the second with per-head V held transposed, as IREE hands Falcon's dispatch
CASES["rms_norm_stored_sequence_first"] = Case(mlir("""
    #x = affine_map<(b, s, d) -> (b, s, d)>
    #row = affine_map<(b, s, d) -> (b, s)>
    #gain = affine_map<(b, s, d) -> (d)>
    #first = affine_map<(b, s, d) -> (s, b, d)>
    func.func @main(%x: tensor<2x12x32xf32>, %g: tensor<32xf32>) -> tensor<12x2x32xf32> {
      %zero = arith.constant 0.0 : f32
      %n = arith.constant 32.0 : f32
      %eps = arith.constant 1.0e-5 : f32
      %e = tensor.empty() : tensor<2x12xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12xf32>) -> tensor<2x12xf32>
      %ss = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<2x12x32xf32>) outs(%f : tensor<2x12xf32>) {
        ^bb0(%a: f32, %o: f32):
          %sq = arith.mulf %a, %a : f32
          %s = arith.addf %sq, %o : f32
          linalg.yield %s : f32
      } -> tensor<2x12xf32>
      %et = tensor.empty() : tensor<12x2x32xf32>
      %y = linalg.generic {indexing_maps = [#x, #row, #gain, #first],
                           iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%x, %ss, %g : tensor<2x12x32xf32>, tensor<2x12xf32>, tensor<32xf32>) outs(%et : tensor<12x2x32xf32>) {
        ^bb0(%a: f32, %sum: f32, %w: f32, %o: f32):
          %mean = arith.divf %sum, %n : f32
          %v = arith.addf %mean, %eps : f32
          %r = math.rsqrt %v : f32
          %t = arith.mulf %a, %r : f32
          %u = arith.mulf %t, %w : f32
          linalg.yield %u : f32
      } -> tensor<12x2x32xf32>
      return %y : tensor<12x2x32xf32>
    }
"""))  # an RMSNorm whose result IREE stores sequence-first (torch's nn.TransformerEncoderLayer without batch_first
# transposes around its norms): computed in the input's order, written through a window of the result
CASES["attention_masked"] = Case(mlir("""
    #q = affine_map<(b, m, n, k1, k2) -> (b, m, k1)>
    #k = affine_map<(b, m, n, k1, k2) -> (b, k2, k1)>
    #v = affine_map<(b, m, n, k1, k2) -> (b, k2, n)>
    #s = affine_map<(b, m, n, k1, k2) -> ()>
    #shared = affine_map<(b, m, n, k1, k2) -> (m, k2)>
    #mask = affine_map<(b, m, n, k1, k2) -> (b, m, k2)>
    #o = affine_map<(b, m, n, k1, k2) -> (b, m, n)>
    func.func @main(%q: tensor<3x40x24xf32>, %k: tensor<3x50x24xf32>, %v: tensor<3x50x8xf32>,
                    %bias: tensor<40x50xf32>, %keep: tensor<3x40x50xi8>) -> (tensor<3x40x8xf32>, tensor<3x40x8xf32>) {
      %scale = arith.constant 0.25 : f32
      %e = tensor.empty() : tensor<3x40x8xf32>
      %r = iree_linalg_ext.attention <indexing_maps = [#q, #k, #v, #s, #shared, #o]>
          ins(%q, %k, %v, %scale, %bias : tensor<3x40x24xf32>, tensor<3x50x24xf32>, tensor<3x50x8xf32>, f32,
              tensor<40x50xf32>) outs(%e : tensor<3x40x8xf32>) {
        ^bb0(%x: f32):
          iree_linalg_ext.yield %x : f32
      } -> tensor<3x40x8xf32>
      %bits = arith.trunci %keep : tensor<3x40x50xi8> to tensor<3x40x50xi1>
      %r2 = iree_linalg_ext.attention <indexing_maps = [#q, #k, #v, #s, #mask, #o]>
          ins(%q, %k, %v, %scale, %bits : tensor<3x40x24xf32>, tensor<3x50x24xf32>, tensor<3x50x8xf32>, f32,
              tensor<3x40x50xi1>) outs(%e : tensor<3x40x8xf32>) {
        ^bb0(%x: f32):
          %cap = arith.constant 2.0 : f32
          %t = arith.divf %x, %cap : f32
          %h = math.tanh %t : f32
          %c = arith.mulf %h, %cap : f32
          iree_linalg_ext.yield %c : f32
      } -> tensor<3x40x8xf32>
      return %r, %r2 : tensor<3x40x8xf32>, tensor<3x40x8xf32>
    }
"""), inputs=(1.0, 1.0, 1.0, 2.0, (0, 4)))  # masks (an additive float one shared by the batch, as an
# attn_mask; an i1 one from i8 whose high bits are set too, as a bool mask or torch's is_causal) and a region
# that modifies the scores (a tanh soft cap)
CASES["float_to_int64"] = Case(mlir("""
    func.func @main(%x: tensor<40xf32>, %y: tensor<40xf32>) -> (tensor<40xi64>, tensor<40xi64>) {
      %xi = stablehlo.convert %x : (tensor<40xf32>) -> tensor<40xi64>
      %yi = stablehlo.convert %y : (tensor<40xf32>) -> tensor<40xi64>
      return %xi, %yi : tensor<40xi64>, tensor<40xi64>
    }
"""), inputs=(1.0e6, 1.0e11))  # fptosi to i64 (torch's interpolate computes its source indices so): below 2^31
# (fractions truncated toward zero) and beyond (up to ~4e11: both words)
CASES["bit_counts"] = Case(mlir("""
    #map = affine_map<(d0, d1) -> (d0, d1)>
    func.func @main(%w: tensor<40x50xi32>, %k: tensor<40x50xi32>, %b: tensor<40x50xi8>)
        -> (tensor<40x50xi32>, tensor<40x50xi32>, tensor<40x50xi8>, tensor<40x50xi8>, tensor<40x50xi32>) {
      %a = stablehlo.shift_right_logical %w, %k : tensor<40x50xi32>
      %p = stablehlo.popcnt %a : tensor<40x50xi32>
      %l = stablehlo.count_leading_zeros %a : tensor<40x50xi32>
      %pb = stablehlo.popcnt %b : tensor<40x50xi8>
      %lb = stablehlo.count_leading_zeros %b : tensor<40x50xi8>
      %e = tensor.empty() : tensor<40x50xi32>
      %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<40x50xi32>) outs(%e : tensor<40x50xi32>) {
        ^bb0(%x: i32, %o: i32):
          %c = math.cttz %x : i32
          linalg.yield %c : i32
      } -> tensor<40x50xi32>
      return %p, %l, %pb, %lb, %t : tensor<40x50xi32>, tensor<40x50xi32>, tensor<40x50xi8>, tensor<40x50xi8>,
          tensor<40x50xi32>
    }
"""), inputs=((-2**31, 2**31), (0, 33), (-128, 128)))  # shifted right 0..32: every width, zeros, negatives
CASES["kv_cache_update_at_run_time"] = Case(mlir("""
    func.func @main(%cache: tensor<16x8xf32>, %new: tensor<1x8xf32>, %pos: tensor<i32>)
        -> (tensor<16x8xf32>, tensor<4x8xf32>) {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r = stablehlo.dynamic_update_slice %cache, %new, %pos, %z
          : (tensor<16x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>
      %d = stablehlo.dynamic_slice %r, %pos, %z, sizes = [4, 8] : (tensor<16x8xf32>, tensor<i32>, tensor<i32>)
          -> tensor<4x8xf32>
      %e = stablehlo.exponential %d : tensor<4x8xf32>
      return %r, %e : tensor<16x8xf32>, tensor<4x8xf32>
    }
"""), inputs=(1.0, 1.0, (13, 14)))  # a place known only at run time; the slice read from 13 clamped to 12
# i64: pairs of int32 words (tt_hal/compiler/int64.py), exact and wrapping as llvm-cpu's. %a spans the
# whole range; %b and %c lie within +-3e9, so their high words are often equal (0 or -1) and the
# compares go to the low words, and sums carry into and borrow from the high word.
INT64 = (-2 ** 63, 2 ** 63)
_I64 = "tensor<8x24xi64>"
CASES["int64_arithmetic"] = Case(mlir(f"""
    func.func @main(%a: {_I64}, %b: {_I64}, %c: {_I64}, %i: tensor<8x24xi32>)
        -> ({_I64}, {_I64}, {_I64}, {_I64}, tensor<8x24xi32>, tensor<8x24xi32>) {{
      %k = stablehlo.constant dense<[-5000000000, 3, 9223372036854775807, -1, 4294967296, 7, 8, -9]> : tensor<8xi64>
      %kb = stablehlo.broadcast_in_dim %k, dims = [0] : (tensor<8xi64>) -> {_I64}
      %s = stablehlo.add %a, %b : {_I64}
      %d = stablehlo.subtract %s, %c : {_I64}
      %m = stablehlo.multiply %d, %b : {_I64}
      %p = stablehlo.multiply %a, %kb : {_I64}
      %x = stablehlo.xor %m, %p : {_I64}
      %n = stablehlo.and %x, %c : {_I64}
      %o = stablehlo.or %n, %kb : {_I64}
      %mx = stablehlo.maximum %b, %c : {_I64}
      %mn = stablehlo.minimum %a, %c : {_I64}
      %lt = stablehlo.compare LT, %b, %c : ({_I64}, {_I64}) -> tensor<8x24xi1>
      %ge = stablehlo.compare GE, %a, %c : ({_I64}, {_I64}) -> tensor<8x24xi1>
      %ult = stablehlo.compare LT, %b, %c, UNSIGNED : ({_I64}, {_I64}) -> tensor<8x24xi1>
      %both = stablehlo.and %lt, %ge : tensor<8x24xi1>
      %either = stablehlo.or %both, %ult : tensor<8x24xi1>
      %sel = stablehlo.select %either, %mx, %mn : tensor<8x24xi1>, {_I64}
      %five = stablehlo.constant dense<5> : {_I64}
      %forty = stablehlo.constant dense<40> : {_I64}
      %three = stablehlo.constant dense<3> : {_I64}
      %l5 = stablehlo.shift_left %a, %five : {_I64}
      %r40 = stablehlo.shift_right_arithmetic %a, %forty : {_I64}
      %u3 = stablehlo.shift_right_logical %b, %three : {_I64}
      %sh = stablehlo.add %l5, %r40 : {_I64}
      %shifts = stablehlo.xor %sh, %u3 : {_I64}
      %w = stablehlo.convert %i : (tensor<8x24xi32>) -> {_I64}
      %ws = stablehlo.add %w, %c : {_I64}
      %t = stablehlo.convert %o : ({_I64}) -> tensor<8x24xi32>
      %eq = stablehlo.compare EQ, %a, %a : ({_I64}, {_I64}) -> tensor<8x24xi1>
      %e = stablehlo.convert %eq : (tensor<8x24xi1>) -> tensor<8x24xi32>
      return %o, %sel, %shifts, %ws, %t, %e : {_I64}, {_I64}, {_I64}, {_I64}, tensor<8x24xi32>, tensor<8x24xi32>
    }}
"""), inputs=(INT64, (-3 * 10 ** 9, 3 * 10 ** 9), (-3 * 10 ** 9, 3 * 10 ** 9), INT32))
CASES["int64_indices_gather_and_dynamic_slice"] = Case(mlir("""
    func.func @main(%table: tensor<30x6xf32>, %ids: tensor<5xi64>, %start: tensor<i64>, %far: tensor<5xi64>)
        -> (tensor<5x6xf32>, tensor<4x6xf32>, tensor<5x6xf32>) {
      %r = "stablehlo.gather"(%table, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
          collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
          slice_sizes = array<i64: 1, 6>} : (tensor<30x6xf32>, tensor<5xi64>) -> tensor<5x6xf32>
      %z = stablehlo.constant dense<0> : tensor<i64>
      %d = stablehlo.dynamic_slice %table, %start, %z, sizes = [4, 6]
          : (tensor<30x6xf32>, tensor<i64>, tensor<i64>) -> tensor<4x6xf32>
      %f = "stablehlo.gather"(%table, %far) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
          collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
          slice_sizes = array<i64: 1, 6>} : (tensor<30x6xf32>, tensor<5xi64>) -> tensor<5x6xf32>
      return %r, %d, %f : tensor<5x6xf32>, tensor<4x6xf32>, tensor<5x6xf32>
    }
"""), inputs=(1.0, (0, 30), (20, 40), INT64))  # ids from the data; a start past the end and ids past int32 clamped
# i4 and i2 (IREE packs them to bytes): f32 -> i4 / i2 stored, loaded back by the next dispatch
# (util.optimization_barrier keeps them apart), sign- and zero-extended. 23 columns: an odd
# count of elements, so the last byte is partly padding.
for _bits in (4, 2):
    _lo, _hi = -(1 << (_bits - 1)), (1 << (_bits - 1)) - 1
    CASES[f"int{_bits}_packed_store_and_load"] = Case(mlir(f"""
        #id = affine_map<(d0, d1) -> (d0, d1)>
        func.func @main(%x: tensor<16x23xf32>) -> (tensor<16x23xf32>, tensor<16x23xi8>) {{
          %e = tensor.empty() : tensor<16x23xi{_bits}>
          %q = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
              ins(%x : tensor<16x23xf32>) outs(%e : tensor<16x23xi{_bits}>) {{
            ^bb0(%in: f32, %out: i{_bits}):
              %lo = arith.constant {float(_lo)} : f32
              %hi = arith.constant {float(_hi)} : f32
              %c = arith.maximumf %in, %lo : f32
              %d = arith.minimumf %c, %hi : f32
              %i = arith.fptosi %d : f32 to i32
              %t = arith.trunci %i : i32 to i{_bits}
              linalg.yield %t : i{_bits}
          }} -> tensor<16x23xi{_bits}>
          %b = util.optimization_barrier %q : tensor<16x23xi{_bits}>
          %ef = tensor.empty() : tensor<16x23xf32>
          %f = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
              ins(%b : tensor<16x23xi{_bits}>) outs(%ef : tensor<16x23xf32>) {{
            ^bb0(%in: i{_bits}, %out: f32):
              %s = arith.sitofp %in : i{_bits} to f32
              linalg.yield %s : f32
          }} -> tensor<16x23xf32>
          %e8 = tensor.empty() : tensor<16x23xi8>
          %u = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
              ins(%b : tensor<16x23xi{_bits}>) outs(%e8 : tensor<16x23xi8>) {{
            ^bb0(%in: i{_bits}, %out: i8):
              %z = arith.extui %in : i{_bits} to i8
              linalg.yield %z : i8
          }} -> tensor<16x23xi8>
          return %f, %u : tensor<16x23xf32>, tensor<16x23xi8>
        }}
    """), inputs=((-10.0, 10.0),))
# bitcast_convert of i32 to f32: the bits of positive normal floats read as f32 and doubled (the
# result is a float the next op computes with); and back (bitcast_f32_to_i32 has both signs).
CASES["bitcast_int32_float32"] = Case(mlir("""
    func.func @main(%i: tensor<40x50xi32>, %x: tensor<40x50xf32>) -> (tensor<40x50xf32>, tensor<40x50xi32>) {
      %f = stablehlo.bitcast_convert %i : (tensor<40x50xi32>) -> tensor<40x50xf32>
      %g = stablehlo.add %f, %f : tensor<40x50xf32>
      %b = stablehlo.bitcast_convert %x : (tensor<40x50xf32>) -> tensor<40x50xi32>
      return %g, %b : tensor<40x50xf32>, tensor<40x50xi32>
    }
"""), inputs=((1 << 23, 0x7E000000), 1.0))
# argmax as JAX writes it: a reduce of (value, iota) pairs whose body keeps the larger value
# and, on a tie, the smaller index; rounded inputs, so that ties are common (a tree reduction).
def argmax_program(index: str, base: bool) -> str:
    """argmax over dim 1 of a rounded (40, 75) input as a reduce of (value, iota) pairs,
    its indices of type `index`, offset by a 0-d argument if `base`."""
    offset = f"""
      %b = stablehlo.broadcast_in_dim %base, dims = [] : (tensor<{index}>) -> tensor<40x75x{index}>
      %index = stablehlo.add %iota, %b : tensor<40x75x{index}>""" if base else f"""
      %index = stablehlo.iota dim = 1 : tensor<40x75x{index}>"""
    return mlir(f"""
    func.func @main(%x: tensor<40x75xf32>{f", %base: tensor<{index}>" if base else ""})
        -> (tensor<40xf32>, tensor<40x{index}>) {{
      %r = stablehlo.round_nearest_even %x : tensor<40x75xf32>
      %iota = stablehlo.iota dim = 1 : tensor<40x75x{index}>{offset}
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %zero = stablehlo.constant dense<0> : tensor<{index}>
      %v, %i = "stablehlo.reduce"(%r, %index, %ninf, %zero) ({{
        ^bb0(%a: tensor<f32>, %ai: tensor<{index}>, %b2: tensor<f32>, %bi: tensor<{index}>):
          %gt = stablehlo.compare GT, %a, %b2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %eq = stablehlo.compare EQ, %a, %b2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %m = stablehlo.select %gt, %a, %b2 : tensor<i1>, tensor<f32>
          %mi = stablehlo.minimum %ai, %bi : tensor<{index}>
          %si = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<{index}>
          %k = stablehlo.select %eq, %mi, %si : tensor<i1>, tensor<{index}>
          stablehlo.return %m, %k : tensor<f32>, tensor<{index}>
      }}) {{dimensions = array<i64: 1>}}
          : (tensor<40x75xf32>, tensor<40x75x{index}>, tensor<f32>, tensor<{index}>)
          -> (tensor<40xf32>, tensor<40x{index}>)
      return %v, %i : tensor<40xf32>, tensor<40x{index}>
    }}
""")


CASES["argmax_multi_result_reduce"] = Case(argmax_program("i32", False), inputs=((0.0, 6.0),))
# The same with i64 indices (torch's max(dim) and argmax give int64), offset past 2^33 so
# that their high words count.
CASES["argmax_int64"] = Case(argmax_program("i64", True), inputs=((0.0, 6.0), (1 << 33, 1 << 34)))
# An RFFT of 64 points over 3 rows: IREE's Cooley-Tukey stages (iree_linalg_ext.fft, its
# coefficients computed in the dispatch or given), each a gather of the partners and fused code.
# IREE writes both parts into one buffer at a push-constant offset: lowered for each call.
CASES["rfft_rows"] = Case(mlir("""
    func.func @main(%x: tensor<3x64xf32>) -> (tensor<3x33xf32>, tensor<3x33xf32>) {
      %0 = stablehlo.fft %x, type = RFFT, length = [64] : (tensor<3x64xf32>) -> tensor<3x33xcomplex<f32>>
      %1 = stablehlo.real %0 : (tensor<3x33xcomplex<f32>>) -> tensor<3x33xf32>
      %2 = stablehlo.imag %0 : (tensor<3x33xcomplex<f32>>) -> tensor<3x33xf32>
      return %1, %2 : tensor<3x33xf32>, tensor<3x33xf32>
    }
"""))
CASES["linalg_ext_gather_rows"] = Case(mlir("""
    func.func @main(%source: tensor<20x6xf32>) -> tensor<5x6xf32> {
      %ids = arith.constant dense<[[3], [19], [0], [7], [3]]> : tensor<5x1xi32>
      %empty = tensor.empty() : tensor<5x6xf32>
      %r = iree_linalg_ext.gather dimension_map = [0] ins(%source, %ids : tensor<20x6xf32>, tensor<5x1xi32>)
          outs(%empty : tensor<5x6xf32>) -> tensor<5x6xf32>
      return %r : tensor<5x6xf32>
    }
"""))
CASES["softmax"] = Case(mlir("""
    func.func @main(%x: tensor<40x70xf32>) -> tensor<40x70xf32> {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
          : (tensor<40x70xf32>, tensor<f32>) -> tensor<40xf32>
      %ninf_b = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<40xf32>
      %max1 = stablehlo.maximum %ninf_b, %max : tensor<40xf32>
      %max_k = stablehlo.broadcast_in_dim %max1, dims = [0] : (tensor<40xf32>) -> tensor<40x1xf32>
      %max_b = stablehlo.broadcast_in_dim %max_k, dims = [0, 1] : (tensor<40x1xf32>) -> tensor<40x70xf32>
      %d = stablehlo.subtract %x, %max_b : tensor<40x70xf32>
      %e = stablehlo.exponential %d : tensor<40x70xf32>
      %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<40x70xf32>, tensor<f32>) -> tensor<40xf32>
      %sum_k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<40xf32>) -> tensor<40x1xf32>
      %sum_b = stablehlo.broadcast_in_dim %sum_k, dims = [0, 1] : (tensor<40x1xf32>) -> tensor<40x70xf32>
      %r = stablehlo.divide %e, %sum_b : tensor<40x70xf32>
      return %r : tensor<40x70xf32>
    }
"""), inputs=(2.0,))
# The same over 16 keys (an attention head's softmax in a short sequence), inputs spread as a
# padding mask spreads scores: a reduction this short is unrolled, and IREE's decomposition
# starts its max from NaN (maxnumf's identity), which must not reach the result.
CASES["softmax_16"] = Case(CASES["softmax"].text.replace("40x70", "40x16"),
                           inputs=((-100.0, 100.0),))
CASES["layernorm"] = Case(mlir("""
    func.func @main(%x: tensor<40x70xf32>, %gamma: tensor<70xf32>, %beta: tensor<70xf32>) -> tensor<40x70xf32> {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %n = stablehlo.constant dense<7.000000e+01> : tensor<f32>
      %eps = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %n_k = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<40x1xf32>
      %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<40x70xf32>, tensor<f32>) -> tensor<40xf32>
      %sum_k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<40xf32>) -> tensor<40x1xf32>
      %mean = stablehlo.divide %sum_k, %n_k : tensor<40x1xf32>
      %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<40x1xf32>) -> tensor<40x70xf32>
      %d = stablehlo.subtract %x, %mean_b : tensor<40x70xf32>
      %d2 = stablehlo.multiply %d, %d : tensor<40x70xf32>
      %vsum = stablehlo.reduce(%d2 init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<40x70xf32>, tensor<f32>) -> tensor<40xf32>
      %vsum_k = stablehlo.broadcast_in_dim %vsum, dims = [0] : (tensor<40xf32>) -> tensor<40x1xf32>
      %var = stablehlo.divide %vsum_k, %n_k : tensor<40x1xf32>
      %eps_k = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<40x1xf32>
      %ve = stablehlo.add %var, %eps_k : tensor<40x1xf32>
      %rs = stablehlo.rsqrt %ve : tensor<40x1xf32>
      %rs_b = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<40x1xf32>) -> tensor<40x70xf32>
      %y = stablehlo.multiply %d, %rs_b : tensor<40x70xf32>
      %g_k = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<70xf32>) -> tensor<1x70xf32>
      %g_b = stablehlo.broadcast_in_dim %g_k, dims = [0, 1] : (tensor<1x70xf32>) -> tensor<40x70xf32>
      %y2 = stablehlo.multiply %y, %g_b : tensor<40x70xf32>
      %b_k = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<70xf32>) -> tensor<1x70xf32>
      %b_b = stablehlo.broadcast_in_dim %b_k, dims = [0, 1] : (tensor<1x70xf32>) -> tensor<40x70xf32>
      %r = stablehlo.add %y2, %b_b : tensor<40x70xf32>
      return %r : tensor<40x70xf32>
    }
"""), inputs=(2.0, (0.5, 1.5), (-0.5, 0.5)))
CASES["rmsnorm"] = Case(mlir("""
    func.func @main(%x: tensor<40x70xf32>, %gamma: tensor<70xf32>) -> tensor<40x70xf32> {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %n = stablehlo.constant dense<7.000000e+01> : tensor<f32>
      %eps = stablehlo.constant dense<9.99999997E-7> : tensor<f32>
      %sq = stablehlo.multiply %x, %x : tensor<40x70xf32>
      %ssum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<40x70xf32>, tensor<f32>) -> tensor<40xf32>
      %ssum_k = stablehlo.broadcast_in_dim %ssum, dims = [0] : (tensor<40xf32>) -> tensor<40x1xf32>
      %n_k = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<40x1xf32>
      %ms = stablehlo.divide %ssum_k, %n_k : tensor<40x1xf32>
      %eps_k = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<40x1xf32>
      %ve = stablehlo.add %ms, %eps_k : tensor<40x1xf32>
      %rs = stablehlo.rsqrt %ve : tensor<40x1xf32>
      %rs_b = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<40x1xf32>) -> tensor<40x70xf32>
      %y = stablehlo.multiply %x, %rs_b : tensor<40x70xf32>
      %g_k = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<70xf32>) -> tensor<1x70xf32>
      %g_b = stablehlo.broadcast_in_dim %g_k, dims = [0, 1] : (tensor<1x70xf32>) -> tensor<40x70xf32>
      %r = stablehlo.multiply %y, %g_b : tensor<40x70xf32>
      return %r : tensor<40x70xf32>
    }
"""), inputs=(2.0, (0.5, 1.5)))

# -- several results, several call sites ---------------------------------------------------------
CASES["two_results_one_generic"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xf32>, %b: tensor<40x50xf32>) -> (tensor<40x50xf32>, tensor<40x50xf32>) {
      %y = stablehlo.tanh %a : tensor<40x50xf32>
      %z = stablehlo.add %y, %b : tensor<40x50xf32>
      return %y, %z : tensor<40x50xf32>, tensor<40x50xf32>
    }
"""))
CASES["several_results"] = Case(mlir(f"""
    func.func @main(%a: tensor<50x100xf32>, %b: tensor<100x70xf32>)
        -> (tensor<50x70xf32>, tensor<50x100xf32>, tensor<100xf32>) {{
      {dot("50x100", "100x70", "50x70", name="%p")}
      %n = stablehlo.negate %a : tensor<50x100xf32>
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %s = stablehlo.reduce(%b init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<100x70xf32>, tensor<f32>) -> tensor<100xf32>
      return %p, %n, %s : tensor<50x70xf32>, tensor<50x100xf32>, tensor<100xf32>
    }}
"""))
# Results that are the inputs transformed: an elementwise result, its reshape to 1-D,
# a (1, N) reshape of a vector input's transform.
CASES["results_input_transforms"] = Case(mlir("""
    func.func @main(%a: tensor<50x70xf32>, %v: tensor<70xf32>)
        -> (tensor<50x70xf32>, tensor<3500xf32>, tensor<1x70xf32>) {
      %n = stablehlo.exponential %a : tensor<50x70xf32>
      %r = stablehlo.reshape %n : (tensor<50x70xf32>) -> tensor<3500xf32>
      %t = stablehlo.tanh %v : tensor<70xf32>
      %t2 = stablehlo.reshape %t : (tensor<70xf32>) -> tensor<1x70xf32>
      return %n, %r, %t2 : tensor<50x70xf32>, tensor<3500xf32>, tensor<1x70xf32>
    }
"""))
CASES["result_is_an_input"] = Case(mlir("""
    func.func @main(%a: tensor<50x70xf32>) -> (tensor<50x70xf32>, tensor<50x70xf32>) {
      %n = stablehlo.negate %a : tensor<50x70xf32>
      return %n, %a : tensor<50x70xf32>, tensor<50x70xf32>
    }
"""))
# One executable, four call sites: IREE passes each result's offset in the slab as a push constant.
PROJECTIONS = "\n".join(dot("40x50", "50x60", "40x60", name=f"%p{i}", lhs="%x", rhs=f"%w{i}") for i in range(4))
PROJECTIONS_ARGS = "%x: tensor<40x50xf32>, " + ", ".join(f"%w{i}: tensor<50x60xf32>" for i in range(4))
CASES["four_projections"] = Case(mlir(f"""
    func.func @main({PROJECTIONS_ARGS})
        -> (tensor<40x60xf32>, tensor<40x60xf32>, tensor<40x60xf32>, tensor<40x60xf32>) {{
{textwrap.indent(PROJECTIONS, " " * 6)}
      return %p0, %p1, %p2, %p3 : tensor<40x60xf32>, tensor<40x60xf32>, tensor<40x60xf32>, tensor<40x60xf32>
    }}
"""))
CASES["four_projections_combined"] = Case(mlir(f"""
    func.func @main({PROJECTIONS_ARGS}) -> tensor<40x60xf32> {{
{textwrap.indent(PROJECTIONS, " " * 6)}
      %t = stablehlo.tanh %p0 : tensor<40x60xf32>
      %m = stablehlo.multiply %t, %p1 : tensor<40x60xf32>
      %s = stablehlo.subtract %p2, %p3 : tensor<40x60xf32>
      %r = stablehlo.add %m, %s : tensor<40x60xf32>
      return %r : tensor<40x60xf32>
    }}
"""), inputs=(1.0, W(50), W(50), W(50), W(50)))


# bf16 (Tenstorrent's native format): loaded and stored as bf16 tiles, computed in float32 in
# Dst (the packer rounds where a dispatch stores), bf16 constants in a dispatch, a matmul of bf16
# operands into f32 (extf in its body) and into bf16, a sum and a broadcast of bf16, and
# convert f32 -> bf16 followed by more math in the same dispatch (arith.truncf: rounded to
# nearest even on the SFPU, as llvm-cpu rounds).
CASES["bf16_layers"] = Case(mlir("""
    func.func @main(%x: tensor<8x40xbf16>, %w: tensor<40x24xbf16>, %b: tensor<24xbf16>, %y: tensor<8x40xf32>)
        -> (tensor<8x24xbf16>, tensor<8x24xf32>, tensor<8xbf16>, tensor<8x40xf32>) {
      %k = stablehlo.constant dense<[[0.5, -1.25, 2.0], [0.75, 3.0, -0.125]]> : tensor<2x3xbf16>
      %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x40xbf16>, tensor<40x24xbf16>)
          -> tensor<8x24xbf16>
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<24xbf16>) -> tensor<8x24xbf16>
      %hb = stablehlo.add %h, %bb : tensor<8x24xbf16>
      %t = stablehlo.tanh %hb : tensor<8x24xbf16>
      %ks = stablehlo.slice %k [0:2, 0:1] : (tensor<2x3xbf16>) -> tensor<2x1xbf16>
      %kr = stablehlo.reshape %ks : (tensor<2x1xbf16>) -> tensor<2xbf16>
      %k0 = stablehlo.slice %kr [1:2] : (tensor<2xbf16>) -> tensor<1xbf16>
      %kk = stablehlo.reshape %k0 : (tensor<1xbf16>) -> tensor<bf16>
      %kb = stablehlo.broadcast_in_dim %kk, dims = [] : (tensor<bf16>) -> tensor<8x24xbf16>
      %scaled = stablehlo.multiply %t, %kb : tensor<8x24xbf16>
      %wide = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x40xbf16>, tensor<40x24xbf16>)
          -> tensor<8x24xf32>
      %z = stablehlo.constant dense<0.0> : tensor<bf16>
      %sum = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1]
          : (tensor<8x40xbf16>, tensor<bf16>) -> tensor<8xbf16>
      %yb = stablehlo.convert %y : (tensor<8x40xf32>) -> tensor<8x40xbf16>
      %ye = stablehlo.convert %yb : (tensor<8x40xbf16>) -> tensor<8x40xf32>
      %err = stablehlo.subtract %y, %ye : tensor<8x40xf32>
      return %scaled, %wide, %sum, %err : tensor<8x24xbf16>, tensor<8x24xf32>, tensor<8xbf16>, tensor<8x40xf32>
    }
"""), inputs=(1.0, W(40), 1.0, 1.0))
# f16 (torch's .half()): computed as float32, its patterns converted where loaded and stored (see
# test_f16_conversions_are_ieee_bit_for_bit); a matmul, a softmax and f16 constants.
CASES["f16_layers"] = Case(mlir("""
    func.func @main(%x: tensor<8x40xf16>, %w: tensor<40x24xf16>) -> (tensor<8x24xf16>, tensor<8x24xf32>) {
      %k = stablehlo.constant dense<[0.5, -1.25, 2.0, 0.75]> : tensor<4xf16>
      %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x40xf16>, tensor<40x24xf16>)
          -> tensor<8x24xf16>
      %k1 = stablehlo.slice %k [2:3] : (tensor<4xf16>) -> tensor<1xf16>
      %kk = stablehlo.reshape %k1 : (tensor<1xf16>) -> tensor<f16>
      %kb = stablehlo.broadcast_in_dim %kk, dims = [] : (tensor<f16>) -> tensor<8x24xf16>
      %s = stablehlo.multiply %h, %kb : tensor<8x24xf16>
      %e = stablehlo.exponential %s : tensor<8x24xf16>
      %z = stablehlo.constant dense<0.0> : tensor<f16>
      %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1]
          : (tensor<8x24xf16>, tensor<f16>) -> tensor<8xf16>
      %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<8xf16>) -> tensor<8x24xf16>
      %p = stablehlo.divide %e, %sb : tensor<8x24xf16>
      %pf = stablehlo.convert %p : (tensor<8x24xf16>) -> tensor<8x24xf32>
      return %h, %pf : tensor<8x24xf16>, tensor<8x24xf32>
    }
"""), inputs=(1.0, W(40)))
# i64 to float (torch's mask and id casts): exactly rounded where the value fits 32 bits, and within
# an ulp beyond (two roundings); signed and unsigned.
CASES["int64_division_by_constants"] = Case(mlir(f"""
    func.func @main(%a: {_I64}) -> ({_I64}, {_I64}, {_I64}, {_I64}, {_I64}) {{
      %seven = stablehlo.constant dense<7> : {_I64}
      %minus = stablehlo.constant dense<-1000003> : {_I64}
      %q = stablehlo.divide %a, %seven : {_I64}
      %r = stablehlo.remainder %a, %seven : {_I64}
      %q2 = stablehlo.divide %a, %minus : {_I64}
      %r2 = stablehlo.remainder %a, %minus : {_I64}
      %m = stablehlo.abs %a : {_I64}
      return %q, %r, %q2, %r2, %m : {_I64}, {_I64}, {_I64}, {_I64}, {_I64}
    }}
"""), inputs=((-(1 << 62), 1 << 62),))  # torch's `ids % n`, `ids // n` on int64: long division by constants
# (a divisor below 2^15 in 16-bit limbs, a larger negative one in 8-bit limbs) over the whole range, and abs
CASES["floor_division_by_a_constant"] = Case(mlir("""
    func.func @main(%a: tensor<40x50xi32>) -> (tensor<40x50xi32>, tensor<40x50xf32>) {
      %x = stablehlo.convert %a : (tensor<40x50xi32>) -> tensor<40x50xf32>
      %seven = stablehlo.constant dense<7.0> : tensor<40x50xf32>
      %q = stablehlo.divide %x, %seven : tensor<40x50xf32>
      %f = stablehlo.floor %q : tensor<40x50xf32>
      %i = stablehlo.convert %f : (tensor<40x50xf32>) -> tensor<40x50xi32>
      %half = stablehlo.constant dense<0.5> : tensor<40x50xf32>
      %h = stablehlo.divide %x, %half : tensor<40x50xf32>
      return %i, %h : tensor<40x50xi32>, tensor<40x50xf32>
    }
"""), inputs=((-100000, 100000),))  # torch's floor_divide of int64 by 7 as its frontend writes it, floor(float(a)
# / 7.0): compared exactly, so x / 7 must be a division (x * (1/7) makes -889 / 7 -127.00001, floored -128);
# by a power of two the reciprocal's product is exact
CASES["int64_reductions_and_scan"] = Case(mlir(f"""
    func.func @main(%a: {_I64}) -> (tensor<8xi64>, tensor<24xi64>, {_I64}) {{
      %zero = stablehlo.constant dense<0> : tensor<i64>
      %low = stablehlo.constant dense<-9223372036854775808> : tensor<i64>
      %s = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1]
          : ({_I64}, tensor<i64>) -> tensor<8xi64>
      %m = stablehlo.reduce(%a init: %low) applies stablehlo.maximum across dimensions = [0]
          : ({_I64}, tensor<i64>) -> tensor<24xi64>
      %e = tensor.empty() : {_I64}
      %t = tensor.empty() : tensor<8xi64>
      %z = arith.constant 0 : i64
      %ez = linalg.fill ins(%z : i64) outs(%e : {_I64}) -> {_I64}
      %tz = linalg.fill ins(%z : i64) outs(%t : tensor<8xi64>) -> tensor<8xi64>
      %c:2 = iree_linalg_ext.scan dimension(1) inclusive(true) ins(%a : {_I64})
          outs(%ez, %tz : {_I64}, tensor<8xi64>) {{
        ^bb0(%x: i64, %y: i64):
          %sum = arith.addi %x, %y : i64
          iree_linalg_ext.yield %sum : i64
      }} -> {_I64}, tensor<8xi64>
      return %s, %m, %c#0 : tensor<8xi64>, tensor<24xi64>, {_I64}
    }}
"""), inputs=((-(1 << 40), 1 << 40),))  # torch's int64 sum, max(dim) values and cumsum: a tree of the body and
# a doubling scan on word pairs, their carries between the words
CASES["variance_flag_push_constant"] = Case(mlir("""
    func.func @main(%x: tensor<81x4xf32>) -> tensor<81xf32> {
      %ddof = stablehlo.constant dense<0> : tensor<i32>
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<81x4xf32>, tensor<f32>) -> tensor<81xf32>
      %s1 = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<81xf32>) -> tensor<81x1xf32>
      %four = stablehlo.constant dense<4.000000e+00> : tensor<f32>
      %f1 = stablehlo.broadcast_in_dim %four, dims = [] : (tensor<f32>) -> tensor<81x1xf32>
      %mean = stablehlo.divide %s1, %f1 : tensor<81x1xf32>
      %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<81x1xf32>) -> tensor<81x4xf32>
      %d = stablehlo.subtract %x, %mb : tensor<81x4xf32>
      %sq = stablehlo.multiply %d, %d : tensor<81x4xf32>
      %df = stablehlo.convert %ddof : (tensor<i32>) -> tensor<f32>
      %n = stablehlo.subtract %four, %df : tensor<f32>
      %ss = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1]
          : (tensor<81x4xf32>, tensor<f32>) -> tensor<81xf32>
      %nb = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<81xf32>
      %var = stablehlo.divide %ss, %nb : tensor<81xf32>
      %ok = stablehlo.compare GT, %n, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %nanb = stablehlo.broadcast_in_dim %nan, dims = [] : (tensor<f32>) -> tensor<81xf32>
      %r = stablehlo.select %ok, %var, %nanb : tensor<i1>, tensor<81xf32>
      return %r : tensor<81xf32>
    }
"""))  # jnp.var as JAX writes it: IREE passes the flag n - ddof > 0 to the dispatch as a push constant truncated
# to i1 (computed where the select uses it)
CASES["all_and_any"] = Case(mlir("""
    func.func @main(%x: tensor<40x30xf32>) -> (tensor<40xi1>, tensor<30xi1>) {
      %lo = stablehlo.constant dense<-2.0> : tensor<40x30xf32>
      %hi = stablehlo.constant dense<2.0> : tensor<40x30xf32>
      %above = stablehlo.compare GT, %x, %lo : (tensor<40x30xf32>, tensor<40x30xf32>) -> tensor<40x30xi1>
      %beyond = stablehlo.compare GT, %x, %hi : (tensor<40x30xf32>, tensor<40x30xf32>) -> tensor<40x30xi1>
      %t = stablehlo.constant dense<true> : tensor<i1>
      %f = stablehlo.constant dense<false> : tensor<i1>
      %all = stablehlo.reduce(%above init: %t) applies stablehlo.and across dimensions = [1]
          : (tensor<40x30xi1>, tensor<i1>) -> tensor<40xi1>
      %any = stablehlo.reduce(%beyond init: %f) applies stablehlo.or across dimensions = [0]
          : (tensor<40x30xi1>, tensor<i1>) -> tensor<30xi1>
      return %all, %any : tensor<40xi1>, tensor<30xi1>
    }
"""))  # jnp.all and jnp.any (also as JAX's nanmax checks for NaN): and/or reductions of i1, some rows all true,
# some columns with none above 2
CASES["int64_to_float"] = Case(mlir(f"""
    func.func @main(%a: {_I64}, %b: {_I64}) -> (tensor<8x24xf32>, tensor<8x24xf32>, tensor<8x24xf32>) {{
      %fa = stablehlo.convert %a : ({_I64}) -> tensor<8x24xf32>
      %fb = stablehlo.convert %b : ({_I64}) -> tensor<8x24xf32>
      %u = stablehlo.convert %a : ({_I64}) -> tensor<8x24xui64>
      %fu = stablehlo.convert %u : (tensor<8x24xui64>) -> tensor<8x24xf32>
      return %fa, %fb, %fu : tensor<8x24xf32>, tensor<8x24xf32>, tensor<8x24xf32>
    }}
"""), inputs=(INT64, (-3 * 10 ** 9, 3 * 10 ** 9)))
# A depthwise convolution in NCHW (torch's layout): the result map permutes the parallel loops of
# a reduction, numbered in the result's order.
CASES["conv_depthwise_nchw"] = Case(convolution_program("1x8x10x10", "8x1x3x3", "1x8x8x8", dims=NCHW, groups=8),
                                    inputs=(1.0, W(9)))
# The same with its weights and a per-channel bias constants of the dispatch (as an exported
# model's are, each a few hundred bytes): their gathers into the tiling they are read in are
# known when the dispatch is lowered.
CASES["conv_depthwise_constant_weights"] = Case(mlir(f"""
    func.func @main(%x: tensor<1x6x8x8xf32>) -> tensor<1x6x6x6xf32> {{
      %w = stablehlo.constant dense<{np.round(np.sin(np.arange(54)).reshape(6, 1, 3, 3) / 3, 4).tolist()}>
          : tensor<6x1x3x3xf32>
      %b = stablehlo.constant dense<[0.1, -0.2, 0.3, 0.4, -0.5, 0.6]> : tensor<6xf32>
      {convolution("1x6x8x8", "6x1x3x3", "1x6x6x6", dims=NCHW, groups=6)}
      %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<6xf32>) -> tensor<1x6x6x6xf32>
      %s = stablehlo.add %r, %bb : tensor<1x6x6x6xf32>
      return %s : tensor<1x6x6x6xf32>
    }}
"""))
# A depthwise convolution followed by its BatchNorm (a per-channel scale read from a binding, a
# constant shift) and ReLU6, in one dispatch, as in a MobileNetV2 block: in NCHW (torch's) and
# channels last (JAX's).
def depthwise_batchnorm_relu6(x: str, w: str, out: str, dims: str, channel: int) -> Case:
    """A depthwise convolution of x by w with `dims`, its channels dim `channel` of `out`."""
    c = int(out.split("x")[channel])
    return Case(mlir(f"""
        func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>, %s: tensor<{c}xf32>) -> tensor<{out}xf32> {{
          %t = stablehlo.constant dense<{np.round(np.cos(np.arange(c)), 3).tolist()}> : tensor<{c}xf32>
          {convolution(x, w, out, dims=dims, groups=c)}
          %sb = stablehlo.broadcast_in_dim %s, dims = [{channel}] : (tensor<{c}xf32>) -> tensor<{out}xf32>
          %tb = stablehlo.broadcast_in_dim %t, dims = [{channel}] : (tensor<{c}xf32>) -> tensor<{out}xf32>
          %m = stablehlo.multiply %r, %sb : tensor<{out}xf32>
          %a = stablehlo.add %m, %tb : tensor<{out}xf32>
          %lo = stablehlo.constant dense<0.0> : tensor<{out}xf32>
          %hi = stablehlo.constant dense<6.0> : tensor<{out}xf32>
          %y = stablehlo.clamp %lo, %a, %hi : (tensor<{out}xf32>, tensor<{out}xf32>, tensor<{out}xf32>)
              -> tensor<{out}xf32>
          return %y : tensor<{out}xf32>
        }}
    """), inputs=(1.0, 3 * W(9), POSITIVE))


# (IREE's generics read it as H W C and write C H W: a consumer through a permuted map.)
CASES["conv_depthwise_nchw_batchnorm_relu6"] = depthwise_batchnorm_relu6(
    "1x8x10x10", "8x1x3x3", "1x8x8x8", NCHW, 1)
# The same as torch-mlir gives it (linalg's NCHW depthwise convolution): generics over C H W.
CASES["linalg_depthwise_nchw_batchnorm_relu6"] = Case(mlir("""
    #nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
    #channel = affine_map<(n, c, h, w) -> (c)>
    func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<8x3x3xf32>, %s: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
      %zero = arith.constant 0.0 : f32
      %six = arith.constant 6.0 : f32
      %t = arith.constant dense<[0.5, -0.25, 1.0, 0.0, -1.5, 2.0, 0.75, -0.5]> : tensor<8xf32>
      %e = tensor.empty() : tensor<1x8x8x8xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
      %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x8x10x10xf32>, tensor<8x3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
      %y = linalg.generic {indexing_maps = [#nchw, #channel, #channel, #nchw],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%r, %s, %t : tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
        ^bb0(%v: f32, %scale: f32, %shift: f32, %out: f32):
          %m = arith.mulf %v, %scale : f32
          %a = arith.addf %m, %shift : f32
          %lo = arith.maximumf %a, %zero : f32
          %hi = arith.minimumf %lo, %six : f32
          linalg.yield %hi : f32
      } -> tensor<1x8x8x8xf32>
      return %y : tensor<1x8x8x8xf32>
    }
"""), inputs=(1.0, 3 * W(9), POSITIVE))
CASES["conv2d_depthwise_channels_last_batchnorm_relu6"] = depthwise_batchnorm_relu6(
    "1x10x10x32", "3x3x1x32", "1x8x8x32", NHWC, 3)
# A 3x3 convolution in NCHW as torch-mlir gives it, and its BatchNorm and ReLU: one image's
# product (C x H*W) is the result with its last two dims merged. With `residual`, a residual
# input is added, as in a ResNet block's second convolution: the residual (a whole binding) is
# read in the tiling the product is held in, not gathered into it.
def conv_nchw_batchnorm_relu(residual: bool) -> Case:
    """linalg's NCHW convolution, a per-channel scale, an optional residual add, and ReLU."""
    y = "tensor<1x16x8x8xf32>"
    arg, ins, types, maps, block, last = "", "", "", "", "", "%m"
    if residual:
        arg, ins, types, maps = f", %skip: {y}", ", %skip", f", {y}", ", #nchw"
        block, last = ", %k: f32", "%a"
    add = "%a = arith.addf %m, %k : f32" if residual else ""
    return Case(mlir(f"""
        #nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
        #channel = affine_map<(n, c, h, w) -> (c)>
        func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %s: tensor<16xf32>{arg})
            -> {y} {{
          %zero = arith.constant 0.0 : f32
          %e = tensor.empty() : {y}
          %f = linalg.fill ins(%zero : f32) outs(%e : {y}) -> {y}
          %r = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
              ins(%x, %w : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%f : {y}) -> {y}
          %y = linalg.generic {{indexing_maps = [#nchw, #channel{maps}, #nchw],
                               iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
              ins(%r, %s{ins} : {y}, tensor<16xf32>{types}) outs(%e : {y}) {{
            ^bb0(%v: f32, %scale: f32{block}, %out: f32):
              %m = arith.mulf %v, %scale : f32
              {add}
              %lo = arith.maximumf {last}, %zero : f32
              linalg.yield %lo : f32
          }} -> {y}
          return %y : {y}
        }}
    """), inputs=(1.0, W(72), POSITIVE) + ((1.0,) if residual else ()))


CASES["linalg_conv_nchw_batchnorm_relu"] = conv_nchw_batchnorm_relu(residual=False)
CASES["linalg_conv_nchw_batchnorm_residual_relu"] = conv_nchw_batchnorm_relu(residual=True)
# A contraction over two reduction loops, one of which b does not read (b broadcast over it):
# regrouping keeps each operand's own order of its dims, over the dims it reads.
CASES["linalg_contraction_b_broadcast_over_a_reduction"] = Case(mlir("""
    #a = affine_map<(m, n, i, j) -> (m, i, j)>
    #b = affine_map<(m, n, i, j) -> (i, n)>
    #o = affine_map<(m, n, i, j) -> (m, n)>
    func.func @main(%a: tensor<8x4x3xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
      %r = linalg.generic {indexing_maps = [#a, #b, #o],
                           iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
          ins(%a, %b : tensor<8x4x3xf32>, tensor<4x16xf32>) outs(%f : tensor<8x16xf32>) {
        ^bb0(%x: f32, %y: f32, %acc: f32):
          %p = arith.mulf %x, %y : f32
          %s = arith.addf %acc, %p : f32
          linalg.yield %s : f32
      } -> tensor<8x16xf32>
      return %r : tensor<8x16xf32>
    }
"""))
# Contractions with a splat constant operand (IREE hands the dispatch the splat, not its
# values): a convolution by a constant weight, and a matmul by a constant matrix.
CASES["conv2d_nchw_splat_weight"] = Case(mlir(f"""
    func.func @main(%x: tensor<1x8x10x10xf32>) -> tensor<1x16x8x8xf32> {{
      %w = stablehlo.constant dense<0.125> : tensor<16x8x3x3xf32>
      {convolution("1x8x10x10", "16x8x3x3", "1x16x8x8", dims=NCHW)}
      return %r : tensor<1x16x8x8xf32>
    }}
"""))
CASES["matmul_splat_rhs"] = Case(mlir(f"""
    func.func @main(%a: tensor<8x40xf32>) -> tensor<8x24xf32> {{
      %b = stablehlo.constant dense<-0.25> : tensor<40x24xf32>
      {dot("8x40", "40x24", "8x24")}
      return %r : tensor<8x24xf32>
    }}
"""))
# A 1x1 convolution in NCHW as torch-mlir gives it, its ReLU6, and a padded depthwise convolution
# of that, as in a MobileNetV2 block: IREE stores the first dispatch's result into the padded
# window of the second's input (a 16 x 16 image at [1, 1] of an 18 x 18 one).
CASES["linalg_conv1x1_relu6_padded_depthwise"] = Case(mlir("""
    #nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
    func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %d: tensor<32x3x3xf32>)
        -> tensor<1x32x16x16xf32> {
      %zero = arith.constant 0.0 : f32
      %six = arith.constant 6.0 : f32
      %e = tensor.empty() : tensor<1x32x16x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
      %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%f : tensor<1x32x16x16xf32>)
          -> tensor<1x32x16x16xf32>
      %y = linalg.generic {indexing_maps = [#nchw, #nchw],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%r : tensor<1x32x16x16xf32>) outs(%e : tensor<1x32x16x16xf32>) {
        ^bb0(%v: f32, %out: f32):
          %lo = arith.maximumf %v, %zero : f32
          %hi = arith.minimumf %lo, %six : f32
          linalg.yield %hi : f32
      } -> tensor<1x32x16x16xf32>
      %p = tensor.pad %y low[0, 0, 1, 1] high[0, 0, 1, 1] {
        ^bb0(%i: index, %j: index, %k: index, %l: index):
          tensor.yield %zero : f32
      } : tensor<1x32x16x16xf32> to tensor<1x32x18x18xf32>
      %o = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p, %d : tensor<1x32x18x18xf32>, tensor<32x3x3xf32>) outs(%f : tensor<1x32x16x16xf32>)
          -> tensor<1x32x16x16xf32>
      return %o : tensor<1x32x16x16xf32>
    }
"""), inputs=(1.0, W(8), W(9)))
# The same in channels-last, as JAX's MobileNetV2 has it: the 1x1 convolution is a matmul of
# the image's 256 pixels, stored into the padded buffer as 16 groups of 16 rows of channels.
CASES["linalg_conv1x1_relu6_padded_depthwise_nhwc"] = Case(mlir("""
    #nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
    func.func @main(%x: tensor<1x16x16x8xf32>, %w: tensor<1x1x8x32xf32>, %d: tensor<3x3x32xf32>)
        -> tensor<1x16x16x32xf32> {
      %zero = arith.constant 0.0 : f32
      %six = arith.constant 6.0 : f32
      %e = tensor.empty() : tensor<1x16x16x32xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
      %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x16x16x8xf32>, tensor<1x1x8x32xf32>) outs(%f : tensor<1x16x16x32xf32>)
          -> tensor<1x16x16x32xf32>
      %y = linalg.generic {indexing_maps = [#nhwc, #nhwc],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
          ins(%r : tensor<1x16x16x32xf32>) outs(%e : tensor<1x16x16x32xf32>) {
        ^bb0(%v: f32, %out: f32):
          %lo = arith.maximumf %v, %zero : f32
          %hi = arith.minimumf %lo, %six : f32
          linalg.yield %hi : f32
      } -> tensor<1x16x16x32xf32>
      %p = tensor.pad %y low[0, 1, 1, 0] high[0, 1, 1, 0] {
        ^bb0(%i: index, %j: index, %k: index, %l: index):
          tensor.yield %zero : f32
      } : tensor<1x16x16x32xf32> to tensor<1x18x18x32xf32>
      %o = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
          ins(%p, %d : tensor<1x18x18x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x16x16x32xf32>)
          -> tensor<1x16x16x32xf32>
      return %o : tensor<1x16x16x32xf32>
    }
"""), inputs=(1.0, W(8), W(9)))
# A strided convolution of a channels-last image padded on one side, as JAX's SAME padding
# gives it: IREE copies the image into the padded buffer in a dispatch of its own (a load of
# the whole input and a store into a slice of the padded one: slow_memcpy).
CASES["conv2d_channels_last_stride_2_same"] = Case(convolution_program("1x32x32x3", "3x3x3x16", "1x16x16x16", stride=2,
                                                                      pad=((0, 1), (0, 1))), inputs=(1.0, W(27)))
# A 1x1 convolution in NCHW with a stride (torch's projection shortcut): out[n, o, h, w] = sum_c
# w[o, c] x[n, c, 2h, 2w], a contraction whose columns span n, h and w.
CASES["conv2d_nchw_1x1_stride_2"] = Case(convolution_program("2x16x8x8", "32x16x1x1", "2x32x4x4", dims=NCHW, stride=2),
                                         inputs=(1.0, W(16)))
# complex<f32> as pairs of float32 words (real, imaginary), as i64 is pairs of int32 ones: complex
# tensors at dispatch boundaries (interleaved words gathered apart and back), complex.re/im/conj/
# create and extracts; an FFT of a complex input, and an inverse real FFT of rows, whose
# conjugate-symmetric half is stored into a slice of a complex binding.
CASES["complex_fft"] = Case(mlir("""
    func.func @main(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>)
        -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
      %c = stablehlo.complex %a, %b : tensor<4x16xcomplex<f32>>
      %f = stablehlo.fft %c, type = FFT, length = [16] : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
      %r = stablehlo.real %f : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xf32>
      %i = stablehlo.imag %f : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xf32>
      %h = stablehlo.slice %c [0:4, 0:9] : (tensor<4x16xcomplex<f32>>) -> tensor<4x9xcomplex<f32>>
      %ir = stablehlo.fft %h, type = IRFFT, length = [16] : (tensor<4x9xcomplex<f32>>) -> tensor<4x16xf32>
      return %r, %i, %ir : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
    }
"""))
# A generic with two results, one a constant every iteration writes (torch's adaptive average
# pooling yields its divisor beside the sum): the constant is a fill, the other result a reduction.
CASES["generic_constant_result"] = Case(mlir("""
    #in = affine_map<(d0, d1) -> (d0, d1)>
    #row = affine_map<(d0, d1) -> (d0)>
    #none = affine_map<(d0, d1) -> ()>
    func.func @main(%x: tensor<32x64xf32>) -> (tensor<32xf32>, tensor<f32>) {
      %zero = arith.constant 0.0 : f32
      %count = arith.constant 64.0 : f32
      %e = tensor.empty() : tensor<32xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
      %s = tensor.empty() : tensor<f32>
      %r:2 = linalg.generic {indexing_maps = [#in, #row, #none], iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<32x64xf32>) outs(%z, %s : tensor<32xf32>, tensor<f32>) {
        ^bb0(%v: f32, %acc: f32, %n: f32):
          %sum = arith.addf %v, %acc : f32
          linalg.yield %sum, %count : f32, f32
      } -> (tensor<32xf32>, tensor<f32>)
      return %r#0, %r#1 : tensor<32xf32>, tensor<f32>
    }
"""))


# ---- compiling, inputs and references, each once ------------------------------------------------

@functools.cache
def vmfb(name: str) -> bytes:
    return compiler.compile_vmfb(CASES[name].text)


def compute_kernels(exports) -> list[str]:
    """The compute kernels of the exports' stages, in order (not their data movers)."""
    return [kernel.name for export in exports for stage in export.stages for kernel in stage.program.kernels
            if kernel.name not in ("reader", "gather_reader", "writer")]


@functools.cache
def inputs(name: str) -> tuple[np.ndarray, ...]:
    case = CASES[name]
    rng = np.random.default_rng(SEED)
    arguments, _ = function_signatures(case.text)["main"]
    arrays = []
    for i, t in enumerate(arguments):
        spec = case.inputs[i] if i < len(case.inputs) else 1.0
        value = rng.uniform(*spec, t.shape) if isinstance(spec, tuple) else rng.standard_normal(t.shape) * spec
        if t.dtype == np.bool_:
            value = rng.integers(0, 2, t.shape)
        elif np.issubdtype(t.dtype, np.integer) and isinstance(spec, tuple):
            value = rng.integers(*spec, t.shape, dtype=np.int64)
        arrays.append(np.asarray(value, t.dtype))
    return tuple(arrays)


def as_function(name: str, text: str) -> str:
    """`text` with @main renamed @name and its attribute aliases (#map) prefixed by name."""
    for alias in re.findall(r"^#(\w+)\s*=", text, re.MULTILINE):
        text = re.sub(rf"#{alias}\b", f"#{name}_{alias}", text)
    return text.replace("func.func @main(", f"func.func @{name}(")


@functools.cache
def combined_text() -> str:
    """Every case as one function of one module: one llvm-cpu compile for all references."""
    return "\n".join(as_function(name, case.text) for name, case in CASES.items())


@functools.cache
def reference(name: str) -> tuple[np.ndarray, ...]:
    """The llvm-cpu results of the case's @main, run as @name of combined_text()."""
    try:
        return tuple(run_llvm_cpu(combined_text(), name, list(inputs(name))))
    except HalError:  # IREE rejects the combination: each case on its own
        return tuple(run_llvm_cpu(CASES[name].text, "main", list(inputs(name))))


@functools.cache
def load(name: str):
    """The case's program on a tenstorrent device, loaded once."""
    return runtime.load_vm_flatbuffer(vmfb(name), driver="tenstorrent")


def check_case(name: str):
    outputs = load(name).main(*inputs(name))
    tolerance.check(outputs, list(reference(name)), "float32")
    return outputs


# ---- patterns against llvm-cpu ------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    check_case(name)


def test_int64_sort_is_stable():
    """sort_int64 with repeated i64 keys keeps their payloads in their original order, as
    the op's is_stable asks (llvm-cpu's own sort does not here: numpy's stable sort is
    the reference)."""
    rng = np.random.default_rng(SEED)
    k, j = (rng.integers(-n, n, (3, 37)) for n in (4, 2))
    x = rng.standard_normal((3, 37)).astype(np.float32)
    key = k * 3000000000 + j
    assert len(np.unique(key[0])) < 30  # many repeats
    keys, payload, _ = load("sort_int64").main(k, j, x)
    order = np.argsort(key, axis=1, kind="stable")
    np.testing.assert_array_equal(np.asarray(keys), np.take_along_axis(key, order, 1))
    np.testing.assert_array_equal(np.asarray(payload), np.take_along_axis(x, order, 1))


def test_combined_reference_is_standalone():
    """The references taken from the combined module are those of the case compiled alone."""
    name = "softmax"
    alone = run_llvm_cpu(CASES[name].text, "main", list(inputs(name)))
    assert len(alone) == len(reference(name)) == 1
    np.testing.assert_array_equal(alone[0], reference(name)[0])


def test_call_sites_share_one_executable():
    """four_projections: one dispatch function whose output offset is a push constant, run
    at four call sites by one export, with four distinct outputs, each its own projection."""
    text = CASES["four_projections"].text
    sources = frontend.compile_to_sources(text)
    assert len(re.findall(r"func\.func @main_dispatch_\w+\(\)", sources)) == 1
    assert "hal.interface.constant.load" in sources
    (export,) = read_executable(embedded_executable(vmfb("four_projections")))
    assert export.constant_count >= 1
    # The stage writing the result takes its byte offset from the dispatch's push constants.
    (untilize,) = [s for s in export.stages if s.bindings[-1][0] is BindingSource.DISPATCH and
                   s.bindings[-1][1] == export.binding_count - 1]
    assert any(c.kind is ArgKind.CONSTANT for c in untilize.constants)
    outputs = check_case("four_projections")
    x, *ws = inputs("four_projections")
    for out, w in zip(outputs, ws):  # each result is its own projection, not a neighbour's
        assert tolerance.max_error(out, x.astype(np.float64) @ w) <= tolerance.TOLERANCE["float32"]


def test_two_results_are_one_generic():
    """two_results_one_generic is the linalg.generic with two results it is meant to test."""
    sources = frontend.compile_to_sources(CASES["two_results_one_generic"].text)
    assert re.search(r"linalg\.generic .*outs\(%\w+, %\w+ : tensor<2000xf32>, tensor<2000xf32>\)", sources)


@pytest.mark.parametrize("name, size", [("eltwise_collapsed_tanh", 3500), ("eltwise_collapsed_3d", 2700)])
def test_collapsed_to_one_dim(name, size):
    """The eltwise_collapsed_* cases are the 1-D dispatches they are meant to test."""
    sources = frontend.compile_to_sources(CASES[name].text)
    assert re.findall(r"func\.func @(main_dispatch_\w+)\(\)", sources) == [f"main_dispatch_0_elementwise_{size}_f32"]
    assert re.search(r'iterator_types = \["parallel"\]\} ins\(%\d+, %\d+ : tensor<' + str(size), sources)


@pytest.mark.parametrize("name", ["eltwise_add", "eltwise_collapsed_tanh", "int32_push_constant_in_body",
                                  "bf16_layers"])
def test_an_elementwise_dispatch_over_whole_bindings_is_one_stage(name, monkeypatch):
    """A dispatch of one fused elementwise body from whole bindings into a whole binding,
    all of one shape, is one stage (rowmajor.eltwise_fused_untilized reading its inputs
    as rows: tilized and untilized inside it), and its results are bit for bit those of
    the staged lowering (a tilize launch per input, the fused kernel, an untilize
    launch): two inputs, a 1-D dispatch folded to a matrix, a push constant in the body
    after the binding offsets, bfloat16 bindings."""
    exports = read_executable(embedded_executable(vmfb(name)))
    assert any(len(export.stages) == 1 and export.stages[0].program.kernels[1].name == "eltwise_fused_untilized"
               for export in exports), [[s.program.kernels[1].name for s in e.stages] for e in exports]
    assert_staged_bits(name, monkeypatch, "_untilized_output", "eltwise_fused_untilized")


def assert_staged_bits(name: str, monkeypatch, step: str, kernel: str | None, off=None) -> None:
    """The case's results are bit for bit those of its lowering without `step` (a
    function of tt_hal.compiler.dispatch, returning `off` instead), which uses no `kernel`."""
    fused = load(name).main(*inputs(name))
    monkeypatch.setattr(dispatch, step, lambda *arguments: off)
    staged_vmfb = compiler.compile_vmfb(CASES[name].text)
    assert not any(k.name == kernel for export in read_executable(embedded_executable(staged_vmfb))
                   for stage in export.stages for k in stage.program.kernels)
    assert_same_bits(fused, runtime.load_vm_flatbuffer(staged_vmfb, driver="tenstorrent").main(*inputs(name)))


def assert_same_bits(results, others) -> None:
    results, others = ([r] if isinstance(r, np.ndarray) else list(r) for r in (results, others))
    assert len(results) == len(others)
    for a, b in zip(results, others):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("name", ["broadcast_row_bias", "batch_matmul_bias_over_batch", "concatenate_last_dim",
                                  "pad_both_dims", "int32_sum_dim0_runtime_init", "matmul_chained_exp"])
def test_a_last_fused_kernel_writes_its_output_row_major(name, monkeypatch):
    """A dispatch whose last launch is a fused elementwise kernel writing an output ends
    with rowmajor.eltwise_fused_untilized (its result untilized in compute), not the
    kernel and an untilize stage, with the same bits: broadcast inputs, a batch
    broadcast, outputs into windows of a binding (concatenation, padding), a push
    constant in the body, a chain of launches before it."""
    exports = read_executable(embedded_executable(vmfb(name)))
    assert any(export.stages[-1].program.kernels[1].name == "eltwise_fused_untilized" for export in exports)
    assert_staged_bits(name, monkeypatch, "_untilized_output", "eltwise_fused_untilized")


def stages_named(exports, kernel: str) -> int:
    return sum(stage.program.kernels[1].name == kernel for export in exports for stage in export.stages)


@pytest.mark.parametrize("name, tilizes, untilizes", [
    ("matmul_50x100_100x70", 1, 1), ("matmul_k_20", 2, 1), ("batch_matmul_linalg", 2, 1),
    ("batch_matmul_shared_rhs_einsum_m40", 2, 1), ("matmul_chained_exp", 5, 1), ("matmul_transposed_rhs", 1, 1),
    ("four_projections", 2, 1), ("bf16_layers", 5, 1), ("reduce_sum_last_2d", 1, 1),
    ("reduce_max_dim0_negative", 1, 1), ("reduce_sum_exp_minus_max", 3, 2), ("transpose_2d", 1, 1),
    ("int32_transpose", 1, 0), ("slice_last_dim", 1, 0), ("concatenate_last_dim", 2, 0), ("pad_both_dims", 1, 0),
    ("broadcast_column_input", 1, 0), ("eltwise_ten_inputs_split", 5, 0), ("cmpf_uno", 2, 0),
    ("int8_int16_wrap_and_widen", 3, 1)])
def test_launches_read_and_write_small_bindings_as_rows(name, tilizes, untilizes, monkeypatch):
    """Matmul, fused elementwise, transpose and reduce launches read the small bindings
    only they load (dispatch.ROW_TILE_READS) as tiles of their rows (rowmajor.read_row_tiles)
    and write the small outputs only they write as rows (write_row_tiles), without their
    tilize and untilize stages, and the results are bit for bit those of the lowering
    with them: shapes not multiples of 32 (a (50 x 100) @ (100 x 70) reads b's 12 tiles
    twice: b tilized), K of 20, a batch, a b shared by the batch, two matmul dispatches
    in a chain, a transposed operand, one executable at four call sites, bfloat16
    bindings (bf16_layers' x, broadcast over 24 columns and read 16 times, is tilized),
    reductions along rows and columns (a softmax's), transposes of float and int32, a
    slice (a window of a binding), a concatenation, padding, a broadcast column, a fused
    kernel split in two, NaN compares, narrow integers; outputs at an offset from a push
    constant (four call sites)."""
    results = load(name).main(*inputs(name))
    exports = read_executable(embedded_executable(vmfb(name)))
    monkeypatch.setattr(dispatch, "_row_major_operands", lambda *arguments: {})
    monkeypatch.setattr(dispatch, "_row_major_outputs", lambda *arguments: {})
    staged_vmfb = compiler.compile_vmfb(CASES[name].text)
    staged = read_executable(embedded_executable(staged_vmfb))
    assert stages_named(staged, "tilize") - stages_named(exports, "tilize") == tilizes
    assert stages_named(staged, "untilize") - stages_named(exports, "untilize") == untilizes
    assert_same_bits(results, runtime.load_vm_flatbuffer(staged_vmfb, driver="tenstorrent").main(*inputs(name)))


def test_a_matmul_tilizes_an_operand_it_would_read_many_times():
    """(128 x 64) @ (64 x 64): b's 4 tiles are read once per output tile row, 16 reads in
    all, more than dispatch.ROW_TILE_READS: tilized once by a tilize stage; a's 8 tiles,
    read once each, from its rows."""
    text = dot_program("128x64", "64x64", "128x64")
    (export,) = [e for e in read_executable(embedded_executable(compiler.compile_vmfb(text)))
                 if any(s.program.kernels[1].name == "matmul" for s in e.stages)]
    (matmul,) = [s for s in export.stages if s.program.kernels[1].name == "matmul"]
    assert stages_named([export], "tilize") == 1
    assert [source for source, _ in matmul.bindings[:2]] == [BindingSource.DISPATCH, BindingSource.TENSOR]


@pytest.mark.parametrize("name", ["conv2d_nchw_relu", "conv2d_nchw_1x1_stride_2"])
def test_nchw_convolutions_are_matmuls(name):
    """A convolution in NCHW is a contraction whose rows or columns span several dims: it
    runs as the matmul kernel over gathered operands, not as products over the whole loop
    space reduced after (which pads its last two dims to tiles: many times the work)."""
    exports = read_executable(embedded_executable(vmfb(name)))
    kernels = {kernel.name for export in exports for stage in export.stages for kernel in stage.program.kernels}
    assert any("matmul" in kernel for kernel in kernels), kernels
    assert not any(kernel.startswith("reduce") for kernel in kernels), kernels


@pytest.mark.parametrize("name", ["conv2d_depthwise", "conv_depthwise_nchw", "max_pool_2x2_stride_2"])
def test_small_window_reductions_are_unrolled(name):
    """A float reduction over a few elements per result that is not a contraction (a
    depthwise window, a pooling window) runs over the result's shape: each window position
    gathered (and its element computed) there, then fused combines. No reduce kernel,
    whose tiles would pad the window's 4 or 9 elements to 32."""
    exports = read_executable(embedded_executable(vmfb(name)))
    kernels = [kernel.name for export in exports for stage in export.stages for kernel in stage.program.kernels]
    assert not any(kernel.startswith("reduce") for kernel in kernels), kernels
    assert {"eltwise_fused", "eltwise_fused_untilized"} & set(kernels), kernels


# A kernel's inputs: fused.FUSED_INPUTS, or FUSED_ROW_TILE_INPUTS where it may read loaded
# bindings (the weights' windows) as row tiles (at most dispatch.ROW_TILE_READS tiles).
@pytest.mark.parametrize("name, positions, inputs, gathered, tiles, room", [
    ("conv2d_depthwise", 9, 2, 1, 2, FUSED_ROW_TILE_INPUTS),  # 6x6x6 as 6 x 36; the weights' rows are windows
    ("conv_depthwise_nchw", 9, 2, 2, 2, FUSED_INPUTS),  # 8x8x8 as 8 x 64
    # 8x8x32 as 64 x 32; each tap a window of the padded image: 8 groups of 8 rows
    ("conv2d_depthwise_channels_last", 9, 2, 0, 2, FUSED_ROW_TILE_INPUTS),
    ("max_pool_2x2_stride_2", 4, 1, 1, 1, FUSED_INPUTS)])  # 4x4x4 as 4 x 16: one kernel, its output untilized
def test_window_positions_are_computed_in_the_kernels_that_combine_them(name, positions, inputs, gathered, tiles,
                                                                        room):
    """Each window position's element (its window times its weight) is computed by the fused
    kernel that adds it to the total, as many positions a kernel as its inputs hold
    (the total so far one of them): no scratch tensor and launch per position. Each
    position's operands are read once, straight into the tiling the kernel reads them in
    (a per-channel weight as a column): gathered (`gathered` of a position's `inputs`,
    every position's in one gather launch of a batch of them), or loaded as a window of
    their binding where they are one (a weight's contiguous row of channels; a
    channels-last tap of a padded image, its rows in groups of a row of pixels), not
    gathered, untilized and gathered again. The result's dims are tiled
    merged as the fewest tiles hold them: rows shorter than a tile merged with the dim
    before them (a tile holds several rows, not one padded to 32), or an image's
    positions merged into rows of channels."""
    exports = read_executable(embedded_executable(vmfb(name)))
    stages = [stage for export in exports for stage in export.stages]
    kernels = [[kernel.name for kernel in stage.program.kernels] for stage in stages]
    fused = [i for i, names in enumerate(kernels) if {"eltwise_fused", "eltwise_fused_untilized"} & set(names)]
    assert all(stages[i].workgroup_count == (tiles, 1, 1) for i in fused[:-1]), [s.workgroup_count for s in stages]
    reduction = kernels[:fused[-1] + 1]
    expected, left = 0, positions
    while left:  # after the first kernel, the total so far is one of a kernel's inputs
        left, expected = max(0, left - (room if expected == 0 else room - 1) // inputs), expected + 1
    assert len(fused) == expected, kernels
    assert sum("gather" in names for names in reduction) == gathered, kernels
    assert not any("untilize" in names for names in reduction), kernels


@pytest.mark.parametrize("name, after", [
    # the per-channel scale, a whole binding, tilized as a column (not a row then transposed)
    ("linalg_depthwise_nchw_batchnorm_relu6", ["eltwise_fused"] * 4 + ["eltwise_fused_untilized"]),
    ("conv2d_depthwise_channels_last_batchnorm_relu6", ["eltwise_fused"] * 4 + ["eltwise_fused_untilized"]),
    # the per-channel scale and the residual, whole bindings, tilized as the product is held
    ("linalg_conv_nchw_batchnorm_relu", ["matmul", "eltwise_fused_untilized"]),
    ("linalg_conv_nchw_batchnorm_residual_relu", ["matmul", "eltwise_fused_untilized"])])
def test_elementwise_consumers_of_convolutions_run_in_their_tiling(name, after):
    """A convolution's BatchNorm and ReLU run in the tiling its result is held in (its
    dims merged: 8 x 64, not 8 tiles of 8x8; one image's product C x H*W as it is), a
    per-channel vector as a column or a row of it: after the first product no untilize
    and no retiling gather of the result, no vector gathered into a tensor of the
    result's shape (in MobileNetV2's 16x16 images, 64 tiles a quarter full instead of 16
    whole ones)."""
    computes = compute_kernels(read_executable(embedded_executable(vmfb(name))))
    first = min(computes.index(k) for k in ("matmul", "eltwise_fused") if k in computes)
    assert computes[first:] == after, computes


def test_small_trailing_dims_are_merged_into_whole_tiles():
    """A channels-last GroupNorm's centring over (256, 4, 2) runs with the last two loops
    merged, (256, 8) in 8 tiles, the (4,) group means gathered into a row of 8, not over
    256 tiles of (4, 2) each almost all padding."""
    exports = read_executable(embedded_executable(vmfb("groupnorm_channels_last")))
    fused = [stage for export in exports for stage in export.stages
             if any(kernel.name.startswith("eltwise_fused") for kernel in stage.program.kernels)]
    tiles = [stage.constants[0].value for stage in fused if stage.constants and stage.constants[0].value]
    assert fused and max(tiles) <= 8, tiles


def test_loops_with_indices_and_extracts_are_merged_into_whole_tiles():
    """extract_at_int64_indices's (64, 8, 8) loops run as (64, 64) in 4 tiles, not 64
    almost empty ones: linalg.index reads its loop's place in the merged one, and the
    extract's index table is computed over the merged loops."""
    exports = read_executable(embedded_executable(vmfb("extract_at_int64_indices")))
    fused = [stage for export in exports for stage in export.stages
             if any(kernel.name.startswith("eltwise_fused") for kernel in stage.program.kernels)]
    tiles = [stage.constants[0].value for stage in fused if stage.constants and stage.constants[0].value]
    assert fused and max(tiles) <= 4, tiles


def test_index_arithmetic_of_some_loops_runs_over_their_tiles(monkeypatch):
    """interpolate_bilinear_int64's four extracts take five distinct indices, each a
    function of one loop in some 20 instructions of int64 arithmetic (a wrap, a saturating
    cast): the four read from inputs are each computed once, over that loop's one tile
    (the channel's, of linalg.index alone, is known when lowering), and the extracts'
    index tables over the (16, 16, 16) loops only add them up (strided): no int64
    arithmetic runs over their 8 tiles."""
    fused = []
    original = lowering.DispatchLowering._fused

    def recording(self, op, code, inputs, out):
        fused.append((op.name, code, tile_count((1, *out.device_shape))))
        return original(self, op, code, inputs, out)

    monkeypatch.setattr(lowering.DispatchLowering, "_fused", recording)
    compiler.compile_vmfb(CASES["interpolate_bilinear_int64"].text)
    tables = [code for name, code, _ in fused if name == "tensor.extract"]
    assert len(tables) == 4 and all(isinstance(i, (Input, Constant)) or i.op in (SfpuOp.ADD_INT, SfpuOp.MUL_INT)
                                    for code in tables for i in code), tables
    wide = [tiles for _, code, tiles in fused if any(getattr(i, "op", None) is SfpuOp.LT_UINT for i in code)]
    assert 4 <= len(wide) <= 5 and set(wide) == {1}, wide  # (5 if the channel's were computed on the chip)


def test_a_value_of_some_loops_is_computed_over_their_tiles(monkeypatch):
    """attention_mask_over_heads's int64 product (some 37 instructions on word pairs) is a
    function of (batch, query, key): it is computed over those loops' 2 tiles, then
    broadcast over the heads, not computed for each of the 4 heads' 8 tiles; the generic
    is then that broadcast (no kernel copying it and reading the masks as well)."""
    fused = []
    original = lowering.DispatchLowering._fused

    def recording(self, op, code, inputs, out):
        fused.append((code, len(inputs), out.device_shape))
        return original(self, op, code, inputs, out)

    monkeypatch.setattr(lowering.DispatchLowering, "_fused", recording)
    compiler.compile_vmfb(CASES["attention_mask_over_heads"].text)
    multiplies = {shape for code, _, shape in fused if any(getattr(i, "op", None) is SfpuOp.MUL_INT for i in code)}
    assert multiplies == {(2, 12, 12)}, multiplies
    # over the heads, only the broadcast product's conversions to bytes: no kernel reading the
    # masks' words for nothing
    assert all(n == 1 for _, n, shape in fused if shape == (2, 4, 12, 12)), fused


def test_an_attention_mask_in_the_scores_order_is_read_as_it_lies():
    """attention_masked's second attention takes an i1 mask (a uint8 binding) in the
    scores' own order: the masking kernel reads the binding's tiles, no copy to int32,
    untilize and identity gather first; its kernels are the first attention's, whose
    float bias is read so."""
    biased, _, masked = (compute_kernels([export])
                         for export in read_executable(embedded_executable(vmfb("attention_masked"))))
    assert masked == biased, masked


def test_an_extract_at_indices_of_the_loops_alone_is_known_when_lowering():
    """rotary_half_swap's extract takes indices that are functions of the loops alone
    (linalg.index, remsi, divsi, subi): their flat places are computed when lowering, and
    the extract is a gather with a constant table, no kernel computing the table (nor
    untilizing it) on the chip."""
    (export,) = read_executable(embedded_executable(vmfb("rotary_half_swap")))
    computes = compute_kernels([export])
    assert computes[-1].startswith("eltwise_fused") and set(computes[:-1]) == {"gather"}, computes


def test_integer_identities_leave_the_code():
    """_Code drops an integer op whose constant operand decides it (x + 0, x & 0, x <u 0,
    a select on a constant) and keeps x | 0 of a float x, which is how its bits become an
    integer."""
    inputs = [(None, FusedInput(DataFormat.int32)), (None, FusedInput(DataFormat.float32))]
    code = lowering._Code({}, inputs, lambda value: None)
    x, f, zero, one = (code.emit(i) for i in (Input(0), Input(1), Constant(0, True), Constant(1, True)))
    assert code.binary(SfpuOp.ADD_INT, x, zero) == x and code.binary(SfpuOp.ADD_INT, zero, x) == x
    assert code.binary(SfpuOp.AND, x, zero) == zero and code.binary(SfpuOp.MUL_INT, one, x) == x
    assert code.binary(SfpuOp.LT_UINT, x, zero) == zero
    assert code.emit(Ternary(SfpuOp.WHERE_INT, one, x, zero)) == x
    kept = len(code.code)
    assert code.binary(SfpuOp.LT_UINT, zero, x) == kept  # 0 <u x depends on x
    assert code.as_bits(f) == kept + 2 and code.integer[kept + 2]  # (after its constant 0)


def test_gathers_read_windows_of_bindings_and_compose():
    """attention_qkv_slices gathers q, k and v straight from the slices of their binding
    (no tilize, then untilize of each); the result's gather into the attention's dims and
    the transpose after it are one gather (a gather of a gather takes from the first's
    source; the first, unread, is dropped), and that gather, whose elements lie as a
    window of the output binding, is no launch either: the last kernel writes the
    attention's result through the window."""
    (export,) = read_executable(embedded_executable(vmfb("attention_qkv_slices")))
    computes = compute_kernels([export])
    last_matmul = len(computes) - 1 - computes[::-1].index("matmul")
    assert "tilize" not in computes and computes[:3] == ["gather", "gather", "matmul"], computes
    assert computes[last_matmul:] == ["matmul", "eltwise_fused_untilized"], computes


def test_a_transposed_weight_is_read_as_it_is():
    """linear_weight_out_by_in's products read their (N, K) operands as they lie, each
    tile transposed as the matmul unpacks it: no transpose launch before the matmul."""
    computes = compute_kernels(read_executable(embedded_executable(vmfb("linear_weight_out_by_in"))))
    assert computes.count("matmul") == 2 and "transpose_wh" not in computes, computes


def test_a_permuted_result_is_stored_through_a_window():
    """rms_norm_stored_sequence_first computes its (2, 12, 32) result in its inputs'
    order and writes it sequence-first through a window of the binding: no transpose,
    untilize or gather of its inputs or of its result."""
    computes = compute_kernels(read_executable(embedded_executable(vmfb("rms_norm_stored_sequence_first"))))
    assert not {"transpose_wh", "untilize", "gather"} & set(computes), computes


@pytest.mark.parametrize("name, gathers", [
    ("linalg_conv_nchw_batchnorm_relu", 1), ("linalg_conv_nchw_batchnorm_residual_relu", 1),
    ("conv2d_channels_last_stride_2_same", 0)])  # its windows a window of the padded image
def test_a_convolution_reads_its_operands_once_as_the_matmul_takes_them(name, gathers):
    """im2col in one gather at most: a convolution's input windows are gathered straight
    into the matmul's (C*KH*KW, H*W) operand from the input binding (NCHW), and its weights
    read as they lie, a window of their binding ((O, C*KH*KW) in torch's OIHW, (KH*KW*C, O)
    in JAX's HWIO): not regrouped first into the loop space, then untilized and gathered
    again, nor gathered as (O, K) and transposed."""
    computes = compute_kernels(read_executable(embedded_executable(vmfb(name))))
    before = computes[:computes.index("matmul")]
    assert before.count("gather") == gathers and not {"untilize", "transpose_wh"} & set(before), computes


PADDED_DEPTHWISE = ["linalg_conv1x1_relu6_padded_depthwise", "linalg_conv1x1_relu6_padded_depthwise_nhwc"]


def _gather(source, offset: int, target: lowering.Tensor, first: int) -> lowering.Launch:
    """A gather launch of an (8, 40) scratch matrix from `source` at byte `offset`, its
    table the flat indices from `first` on."""
    table = np.arange(first, first + 320, dtype=np.int32)
    constants = rowmajor.push_constants(8, 40, [offset, 0], 1)
    return lowering.Launch(("gather", DataFormat.float32, 0), constants, [
        source, lowering.Tensor(table.shape, ref=("constant", table), data_format=DataFormat.int32, row_major=True),
        target], constants[0])


def test_gathers_of_one_source_into_scratch_matrices_are_one_gather_of_a_batch():
    """Gathers of one source into scratch matrices alike are one gather of the batch of
    them, where the first was, its table theirs in order; not where a launch between
    writes the source, a result has another writer, the offsets differ, or the tables
    are read from a binding (indices the dispatch is given)."""
    temps = iter(range(100))

    def scratch():
        return lowering.Tensor((8, 40), ref=("temp", next(temps)))
    rows = ("rows", (0, 0, None))
    other = lowering.Launch(("eltwise_fused",), [1], [scratch(), scratch()], 1)
    a, b, c = scratch(), scratch(), scratch()
    launches = [_gather(rows, 0, a, 0), other, _gather(rows, 0, b, 1000), _gather(rows, 0, c, 2000)]
    merged, batched = dispatch._gather_batches(launches, temps)
    assert [launch.kernel[0] for launch in merged] == ["gather", "eltwise_fused"] and merged[1] is other
    [(target, gathered)] = batched
    assert gathered == [a, b, c] and merged[0].operands[-1] is target and target.device_shape == (3, 8, 40)
    assert merged[0].constants == rowmajor.push_constants(8, 40, [0, 0], 3)
    tables = [np.arange(k, k + 320) for k in (0, 1000, 2000)]
    assert np.array_equal(merged[0].operands[1].ref[1], np.concatenate(tables))
    source = scratch()  # a scratch source written between the gathers
    writes = lowering.Launch(("eltwise_fused",), [1], [scratch(), source], 1)
    twice = lowering.Launch(("eltwise_fused",), [1], [scratch(), b], 1)
    bound = [_gather(rows, 0, t, 0) for t in (a, b)]
    for launch in bound:
        launch.operands[1] = ("rows", (1, 0, None))
    for launches in ([_gather(source, 0, a, 0), writes, _gather(source, 0, b, 1000)],
                     [_gather(rows, 0, a, 0), _gather(rows, 0, b, 1000), twice],
                     [_gather(rows, 0, a, 0), _gather(rows, 64, b, 1000)], bound):
        assert dispatch._gather_batches(launches, temps) == (launches, [])


@pytest.mark.parametrize("name", PADDED_DEPTHWISE)
def test_a_merged_result_is_stored_into_a_padded_window_as_it_is_held(name):
    """A 1x1 convolution's result, held as C x H*W tiles, stored into the padded window of
    the next convolution's input: its last launch writes each row of H*W as H runs of W
    (a segmented window), no untilize, 64-core retiling gather and windowed untilize
    after it (~0.9 of MobileNetV2's 1.5 ms 1x1 dispatches); held as H*W x C tiles
    (channels-last), each H*W rows as H groups of W rows."""
    exports = read_executable(embedded_executable(vmfb(name)))
    [kernels] = [compute_kernels([export]) for export in exports if "matmul" in export.name]
    assert kernels[kernels.index("matmul"):] == ["matmul", "eltwise_fused_untilized"], kernels


@pytest.mark.parametrize("name, tiles", [
    ("linalg_conv1x1_relu6_padded_depthwise_nhwc", 8),  # (16, 16, 8) x (8, 32): 256 rows, not 16 x 32
    ("conv2d_nhwc_valid", 3),  # 3x3 windows of a (10, 12, 3) image, (8, 10, 27) x (27, 8): 80 rows, not 8 x 32
    ("conv2d_channels_last_stride_2_same", 8)])  # stride 2: (16, 16, 27) windows, 256 rows, not 16 x 32
def test_a_batch_sharing_its_b_is_one_matmul_of_its_rows_stacked(name, tiles):
    """A batched matmul whose b the batch shares, its rows not whole tiles, its a a loaded
    binding or a window of one (a channels-last 1x1 convolution stored into a padded
    buffer, which IREE leaves as 16 rows of 16 pixels; a channels-last convolution's
    windows, an output row's pixels a matrix): one matmul of the batch's rows stacked, a
    loaded in that tiling at once (a window's rows in groups of an output row's pixels),
    the tiles as many as the rows fill (not each matrix's rows padded to 32), no gather."""
    [export] = [export for export in read_executable(embedded_executable(vmfb(name)))
                if "matmul" in [kernel.name for stage in export.stages for kernel in stage.program.kernels]]
    kernels = [[kernel.name for kernel in stage.program.kernels] for stage in export.stages]
    [matmul] = [stage for stage, names in zip(export.stages, kernels) if "matmul" in names]
    assert matmul.workgroup_count[0] == tiles and not any("gather" in names for names in kernels), kernels


def test_an_image_copied_into_its_padded_buffer_moves_as_the_fewest_rows():
    """IREE's slow_memcpy of a (32, 32, 3) image into a (33, 33, 3) buffer: the image is
    loaded and stored as 32 rows of 96 elements (one block, one stage that reads and
    writes rows), not as 32 matrices of (32, 3) (a 32-core tilize and a 32-core untilize:
    1.4 ms of jax_mobilenetv2's 10 a call)."""
    exports = read_executable(embedded_executable(vmfb("conv2d_channels_last_stride_2_same")))
    [copy] = [export for export in exports if "memcpy" in export.name]
    assert [[kernel.name for kernel in stage.program.kernels] for stage in copy.stages] == \
        [["reader", "eltwise_fused_untilized", "writer"]]
    assert copy.stages[0].workgroup_count == (1, 1, 1)


@pytest.mark.parametrize("name", PADDED_DEPTHWISE)
def test_taps_of_a_padded_input_are_windows_of_its_binding(name):
    """A depthwise convolution of a padded input reads each of its 9 taps as a window of
    the binding (NCHW: each channel's H rows of W elements, runs W + 2 apart; NHWC: H
    groups of W rows of channels, (W + 2) C apart), the 3 taps of each kernel row (their
    windows evenly spaced) tilized by one stage as a batch of 3 matrices, each tap a view
    of its matrix (was a tilize stage each); and the weights' per-channel columns or rows
    as windows too: no gather (was one a tap and, in NCHW, one a weight)."""
    exports = read_executable(embedded_executable(vmfb(name)))
    [export] = [export for export in exports if "conv" in export.name and "matmul" not in export.name]
    kernels = compute_kernels([export])
    assert kernels.count("tilize") == 3 and "gather" not in kernels, kernels
    tilized = [stage.bindings[1][1] for stage in export.stages if stage.program.kernels[1].name == "tilize"]
    views = [tensor for tensor in export.tensors if tensor.base is not None]
    assert [export.tensors[t].shape[0] for t in tilized] == [3, 3, 3] and len(views) == 9
    assert all(view.first_page % view.tiles == 0 for view in views)  # each starts at a matrix of its base
    assert sorted((view.base, view.first_page // view.tiles) for view in views) == \
        [(t, b) for t in sorted(tilized) for b in range(3)]  # each tap one matrix of its row's batch
    assert all(export.tensors[view.base].shape[1:] == view.shape for view in views)


def _window_indices(window: lowering.Window, shape) -> np.ndarray:
    """The flat indices of the elements of a (batch, rows, columns) tensor in the window
    (the test's own, apart from lowering._window_indices)."""
    batch, rows, columns = shape
    segment, group = window.segment or columns, window.row_group or rows
    column, row = np.arange(columns), np.arange(rows)
    return (window.start + np.arange(batch)[:, None, None] * window.batch_stride
            + (row // group * (window.row_group_stride or 0) + row % group * window.row_stride)[:, None]
            + column // segment * (window.segment_stride or segment) + column % segment)


@settings(max_examples=300, deadline=None)
@given(batch=st.integers(1, 4), rows=st.integers(1, 40), columns=st.integers(1, 300), start=st.integers(0, 50),
       segment=st.integers(1, 64), gap=st.integers(0, 5), row_gap=st.integers(0, 40), batch_gap=st.integers(0, 9),
       group=st.integers(1, 40), group_gap=st.integers(0, 3), shuffle=st.booleans())
def test_strided_window_finds_exactly_the_windows(batch, rows, columns, start, segment, gap, row_gap, batch_gap,
                                                   group, group_gap, shuffle):
    """_strided_window gives a window holding exactly the table's elements, in order, where
    they are one with runs of WINDOW_RUN or more (rows evenly spaced or in groups of
    evenly spaced rows); None for other tables (runs too short, elements shuffled)."""
    segment, group = min(segment, columns), min(group, rows)
    runs = -(-columns // segment)
    row_stride = runs * (segment + gap) + row_gap
    group_stride = (group + group_gap) * row_stride
    made = lowering.Window(start, row_stride, -(-rows // group) * group_stride + batch_gap, segment, segment + gap,
                           group, group_stride)
    table = _window_indices(made, (batch, rows, columns))
    if shuffle:
        table = np.random.default_rng(columns).permutation(table.reshape(-1)).reshape(table.shape)
    found = lowering._strided_window(table.reshape(-1), (batch, rows, columns))
    if found is not None:
        assert np.array_equal(_window_indices(found, (batch, rows, columns)), table)
        assert found.segment is None or lowering.WINDOW_RUN <= found.segment < columns
        assert found.row_group is None or 2 <= found.row_group < rows
    elif not shuffle:
        assert segment < lowering.WINDOW_RUN and gap > 0 and columns > segment


def test_a_permuted_copy_of_a_binding_is_a_window_of_it_in_a_merged_tiling():
    """A (2, 4, 16, 16) tensor's heads transposed, (2, 16, 4, 16): as (2, 64, 16) its
    rows are a window of the input binding, 4 rows 256 elements apart in groups 16
    elements apart; tilized so (4 tiles) and written out by the last kernel, not gathered
    into 32 quarter-full tiles of (4, 16) and untilized from them."""
    [export] = read_executable(embedded_executable(vmfb("transpose_attention_heads")))
    kernels = [[kernel.name for kernel in stage.program.kernels] for stage in export.stages]
    assert kernels == [["reader", "tilize", "writer"], ["reader", "eltwise_fused_untilized", "writer"]], kernels
    assert [stage.workgroup_count[0] for stage in export.stages] == [4, 4]


def test_a_bf16_permuted_copy_at_a_push_constant_offset_is_a_window_of_its_binding():
    """The same in bf16, its source at the byte offset IREE passes as a push constant
    (one dispatch for two projections): the window starts where the binding's range
    does, so the tilize stage's offset constant is that push constant; bf16 tiles, no
    conversion to float32, no gather (it was 5 launches: tilize 32 quarter-full tiles,
    convert, untilize, gather, write)."""
    [export] = [e for e in read_executable(embedded_executable(vmfb("transpose_attention_heads_bf16_slab")))
                if "transpose" in e.name]
    kernels = [[kernel.name for kernel in stage.program.kernels] for stage in export.stages]
    assert kernels == [["reader", "tilize", "writer"], ["reader", "eltwise_fused_untilized", "writer"]], kernels
    assert [stage.workgroup_count[0] for stage in export.stages] == [4, 4]
    tilize = export.stages[0]
    assert tilize.constants[-1].kind is ArgKind.CONSTANT and export.constant_count == 1  # the offset
    assert export.tensors[tilize.bindings[1][1]].data_format is DataFormat.bfloat16


def test_gathers_of_constants_are_done_when_the_dispatch_is_lowered():
    """A gather (or a retiling) of a constant of the dispatch (a per-channel bias, an FFT's
    twiddles) gives a constant: no launch gathers an export tensor whose values are known."""
    for name in CASES:
        for export in read_executable(embedded_executable(vmfb(name))):
            for stage in export.stages:
                if "gather" in [kernel.name for kernel in stage.program.kernels]:
                    source, index = stage.bindings[0]
                    assert source is not BindingSource.TENSOR or export.tensors[index].values is None, \
                        (name, export.name)


def test_short_axis_reductions_use_the_reduce_kernel():
    """A softmax over 16 keys reduces along an axis: a reduce kernel per reduction, not a
    gather and a combine per element (which made a BERT softmax dispatch 61 launches)."""
    exports = read_executable(embedded_executable(vmfb("softmax_16")))
    kernels = [kernel.name for export in exports for stage in export.stages for kernel in stage.program.kernels]
    assert sum(kernel.startswith("reduce") for kernel in kernels) == 2, kernels
    assert sum(len(export.stages) for export in exports) <= 8, [len(export.stages) for export in exports]


def test_repeated_calls_fresh_inputs():
    """A program called again with other inputs gives their results (no state, no stale padding)."""
    name = "matmul_chained_both_operands"
    module = load(name)
    first = module.main(*inputs(name))
    other = [np.asarray(x[::-1] * 0.5, np.float32) for x in inputs(name)]
    second = module.main(*other)
    tolerance.check(second, run_llvm_cpu(combined_text(), name, other), "float32")
    np.testing.assert_array_equal(module.main(*inputs(name)), first)


TWO_FUNCTIONS = mlir("""
    func.func private @gelu_tanh(%x: tensor<20x45xf32>) -> tensor<20x45xf32> {
      %c = stablehlo.constant dense<0.797884583> : tensor<20x45xf32>
      %k = stablehlo.constant dense<4.471500e-02> : tensor<20x45xf32>
      %one = stablehlo.constant dense<1.0> : tensor<20x45xf32>
      %half = stablehlo.constant dense<0.5> : tensor<20x45xf32>
      %x2 = stablehlo.multiply %x, %x : tensor<20x45xf32>
      %x3 = stablehlo.multiply %x2, %x : tensor<20x45xf32>
      %kx3 = stablehlo.multiply %k, %x3 : tensor<20x45xf32>
      %in = stablehlo.add %x, %kx3 : tensor<20x45xf32>
      %s = stablehlo.multiply %c, %in : tensor<20x45xf32>
      %t = stablehlo.tanh %s : tensor<20x45xf32>
      %t1 = stablehlo.add %one, %t : tensor<20x45xf32>
      %h = stablehlo.multiply %half, %x : tensor<20x45xf32>
      %r = stablehlo.multiply %h, %t1 : tensor<20x45xf32>
      return %r : tensor<20x45xf32>
    }
    func.func @main(%x: tensor<20x30xf32>, %w: tensor<30x45xf32>) -> tensor<20x45xf32> {
      %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
          : (tensor<20x30xf32>, tensor<30x45xf32>) -> tensor<20x45xf32>
      %r = func.call @gelu_tanh(%h) : (tensor<20x45xf32>) -> tensor<20x45xf32>
      return %r : tensor<20x45xf32>
    }
    func.func @second(%x: tensor<20x45xf32>) -> tensor<45xf32> {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %r = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0]
          : (tensor<20x45xf32>, tensor<f32>) -> tensor<45xf32>
      return %r : tensor<45xf32>
    }
""")


def test_two_public_functions_and_a_private_helper():
    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(TWO_FUNCTIONS), driver="tenstorrent")
    assert sorted(module.function_names) == ["main", "second"]
    signatures = function_signatures(TWO_FUNCTIONS)
    rng = np.random.default_rng(SEED)
    for name in ("main", "second"):
        function = module[name]
        assert (function.inputs, function.results) == signatures[name]
        args = [(rng.standard_normal(t.shape) * 0.5).astype(t.dtype) for t in function.inputs]
        tolerance.check(function(*args), run_llvm_cpu(TWO_FUNCTIONS, name, args), "float32")


# ---- errors: the compiler -------------------------------------------------------------------------

def line_of(text: str, needle: str) -> int:
    """The 1-based line of `text` that holds `needle` (once)."""
    lines = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


def compile_error(text: str, code: StatusCode) -> HalError:
    with pytest.raises(HalError) as info:
        compiler.compile_vmfb(text)
    assert info.value.code == code, str(info.value)
    return info.value


SYNTAX_ERROR = mlir("""
    func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %0 = stablehlo.add %a, %a : tensor<4x4xf32>
      %1 = stablehlo.add %0 %a : tensor<4x4xf32>
      return %1 : tensor<4x4xf32>
    }
""")
UNKNOWN_OP = mlir("""
    func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %0 = stablehlo.add %a, %a : tensor<4x4xf32>
      %1 = "foo.bar"(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      return %1 : tensor<4x4xf32>
    }
""")


@pytest.mark.parametrize("text, needle", [(SYNTAX_ERROR, "%0 %a"), (UNKNOWN_OP, "foo.bar")],
                         ids=["syntax_error", "unknown_op"])
def test_does_not_parse(text, needle):
    error = compile_error(text, StatusCode.INVALID_ARGUMENT)
    assert isinstance(error, ValueError)
    where = f"input.mlir:{line_of(text, needle)}:"
    assert where in error.message
    assert error.diagnostics and all(severity == "error" for severity, _ in error.diagnostics)
    assert any(message.startswith(where) for _, message in error.diagnostics), error.diagnostics


def test_iree_rejects_custom_call():
    text = mlir("""
        func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
          %0 = stablehlo.add %a, %a : tensor<4x4xf32>
          %1 = stablehlo.custom_call @my_kernel(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
          return %1 : tensor<4x4xf32>
        }
    """)
    error = compile_error(text, StatusCode.INVALID_ARGUMENT)
    where = f"input.mlir:{line_of(text, 'custom_call')}:"
    errors = [message for severity, message in error.diagnostics if severity == "error"]
    assert any(m.startswith(where) and "stablehlo.custom_call" in m for m in errors), error.diagnostics
    assert where in error.message and "stablehlo.custom_call" in error.message


UNLOWERED = {
    "i64_division": (mlir("""
        func.func @main(%a: tensor<40x50xi64>) -> tensor<40x50xi64> {
          %1 = stablehlo.divide %a, %a : tensor<40x50xi64>
          return %1 : tensor<40x50xi64>
        }
    """), "stablehlo.divide", r"arith.divsi on i64 by a divisor that is not a constant"),
    "integer_matmul_long_k": (mlir("""
        func.func @main(%a: tensor<8x300xi32>, %b: tensor<300x4xi32>) -> tensor<8x4xi32> {
          %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
              : (tensor<8x300xi32>, tensor<300x4xi32>) -> tensor<8x4xi32>
          return %r : tensor<8x4xi32>
        }
    """), "stablehlo.dot_general", r"an integer matmul over K = 300"),
    "division_reduce": (mlir("""
        func.func @main(%a: tensor<40x50xf32>) -> tensor<40xf32> {
          %one = arith.constant 1.0 : f32
          %e = tensor.empty() : tensor<40xf32>
          %i = linalg.fill ins(%one : f32) outs(%e : tensor<40xf32>) -> tensor<40xf32>
          %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                               iterator_types = ["parallel", "reduction"]}
              ins(%a : tensor<40x50xf32>) outs(%i : tensor<40xf32>) {
            ^bb0(%x: f32, %o: f32):
              %m = arith.divf %o, %x : f32
              linalg.yield %m : f32
          } -> tensor<40xf32>
          return %r : tensor<40xf32>
        }
    """), "linalg.generic", r"a reduction combining with arith.divf"),
    "scatter_subtracting_repeated_places": (mlir("""
        func.func @main(%x: tensor<50xf32>, %at: tensor<40x1xi32>, %v: tensor<40xf32>) -> tensor<50xf32> {
          %r = "stablehlo.scatter"(%x, %at, %v) ({
            ^bb0(%a: tensor<f32>, %b: tensor<f32>):
              %s = stablehlo.subtract %a, %b : tensor<f32>
              stablehlo.return %s : tensor<f32>
          }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0],
                                                             scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
              indices_are_sorted = false, unique_indices = false}
              : (tensor<50xf32>, tensor<40x1xi32>, tensor<40xf32>) -> tensor<50xf32>
          return %r : tensor<50xf32>
        }
    """), '"stablehlo.scatter"(', r"combines repeated indices \(unique_indices false\) by arith.subf"),
}


@pytest.mark.parametrize("name", list(UNLOWERED))
def test_no_tensix_lowering(name):
    text, needle, op = UNLOWERED[name]
    error = compile_error(text, StatusCode.UNIMPLEMENTED)
    assert re.search(rf"^input\.mlir:{line_of(text, needle)}:\d+: .*{op}", error.message), error.message


# Dynamic shapes: each dispatch is lowered for the dims of the call (tt_hal/compiler/specialize.py).
DYNAMIC = mlir("""
    func.func @main(%a: tensor<?x70xf32>, %w: tensor<70x40xf32>) -> (tensor<?x40xf32>, tensor<?x70xf32>) {
      %h = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0]
          : (tensor<?x70xf32>, tensor<70x40xf32>) -> tensor<?x40xf32>
      %t = stablehlo.tanh %h : tensor<?x40xf32>
      %z = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %m = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [0]
          : (tensor<?x70xf32>, tensor<f32>) -> tensor<70xf32>
      %c = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x70xf32>) -> tensor<i32>
      %n = stablehlo.reshape %c : (tensor<i32>) -> tensor<1xi32>
      %k = stablehlo.constant dense<70> : tensor<1xi32>
      %shape = stablehlo.concatenate %n, %k, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
      %mb = stablehlo.dynamic_broadcast_in_dim %m, %shape, dims = [1]
          : (tensor<70xf32>, tensor<2xi32>) -> tensor<?x70xf32>
      %d = stablehlo.add %a, %mb : tensor<?x70xf32>
      return %t, %d : tensor<?x40xf32>, tensor<?x70xf32>
    }
""")  # a matmul over a dynamic M, and a max over the dynamic dim (padding rows masked) broadcast back


@pytest.mark.parametrize("rows", [[1, 33, 64, 33], [5, 100]], ids=["1-33-64-33", "5-100"])
def test_dynamic_shapes_lower_for_each_call(rows, monkeypatch):
    import tt_hal.compiler.specialize as specialize

    module = runtime.load_vm_flatbuffer(compiler.compile_vmfb(DYNAMIC), driver="tenstorrent")
    lowered = []
    original = specialize.specialize
    monkeypatch.setattr(specialize, "specialize", lambda export, constants: lowered.append(list(constants)) or
                        original(export, constants))
    cpu = llvm_cpu.load_module(DYNAMIC)
    rng = np.random.default_rng(SEED)
    w = (rng.standard_normal((70, 40)) / np.sqrt(70)).astype(np.float32)
    for n in rows:
        a = rng.standard_normal((n, 70)).astype(np.float32)
        tolerance.check(llvm_cpu.host_results(module.main(a, w)), llvm_cpu.host_results(cpu.main(a, w)), "float32")
    # Each dynamic dispatch is lowered once per distinct shape, not again for a shape seen before.
    dispatches, remainder = divmod(len(lowered), len(set(rows)))
    assert dispatches >= 1 and remainder == 0 and len({tuple(c) for c in lowered}) == len(lowered), lowered


def test_scatter_skips_updates_out_of_range():
    """StableHLO drops a scatter's out-of-range updates (llvm-cpu does not check, so numpy
    is the reference here); repeated places take the last update."""
    rng = np.random.default_rng(SEED)
    x, rows = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    flat = rng.integers(-100, 100, 300).astype(np.int32)
    at = rng.integers(-50, 350, (40, 1)).astype(np.int32)
    values = rng.integers(-100, 100, 40).astype(np.int32)
    _, scattered = (np.asarray(r) for r in load("scatter_rows_and_elements").main(x, rows, flat, at, values))
    expected = flat.copy()
    for place, value in zip(at[:, 0], values):
        if 0 <= place < 300:
            expected[place] = value
    assert np.array_equal(scattered, expected)


def test_microscaling_conversions_match_llvm_cpu_bit_for_bit():
    """f4E2M1FN and f8E8M0FNU (OCP MX formats) decode and encode as MLIR's expansions on
    llvm-cpu do, bit for bit, at every f4 code under scales 0, 1, 2^-1, 2^1 and NaN and
    at the values where the rounding and clamping decide: ties between f4 values, the
    subnormal range, signed zeros, beyond +-6, infinities and NaN."""
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    specials = [0.0, -0.0, 0.2, 0.3, 0.26, 0.24, 1e-30, 6.5, 7.0, 100.0, 1e30, np.inf, np.nan, 0.49, 0.51, 5.9, 6.0]
    values = np.array(ties + specials + [-v for v in ties + specials] +
                      list(np.random.default_rng(SEED).standard_normal(256 - 2 * (len(ties) + len(specials))) * 4),
                      np.float32)
    codes = np.arange(256).astype(np.int8)  # every i4 code under 16 scales each
    scales = np.array([0, 127, 126, 128, 255, 1, 254, 140] * 32, np.uint8).astype(np.int8)
    text = CASES["microscaling_fp4"].text
    args = [codes, scales, values, scales[::-1].copy()]
    ours = [np.asarray(r) for r in load("microscaling_fp4").main(*args)]
    theirs = run_llvm_cpu(text, "main", args)
    assert np.array_equal(ours[0].view(np.uint32), theirs[0].view(np.uint32)) or \
        np.array_equal(ours[0], theirs[0], equal_nan=True), (ours[0], theirs[0])
    for got, want in zip(ours[1:], theirs[1:]):
        assert np.array_equal(got, want), np.flatnonzero(got != want)


def test_run_time_positions_lower_for_each_call():
    """dynamic_update_slice at positions the host reads from a tensor: the dispatch is
    lowered per position (push constants), one loaded module serving every call."""
    module = load("kv_cache_update_at_run_time")
    rng = np.random.default_rng(SEED)
    cache, new = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((1, 8)).astype(np.float32)
    for position in (0, 5, 15, 5, 40):
        updated, window = (np.asarray(r) for r in module.main(cache, new, np.array(position, np.int32)))
        row = min(position, 15)  # StableHLO clamps the start so the slice fits
        expected = cache.copy()
        expected[row] = new[0]
        assert np.array_equal(updated, expected), position
        start = min(position, 12)
        tolerance.check([window], [np.exp(expected[start:start + 4])], "float32")


def test_dynamic_shape_unlowered_op_fails_the_compile():
    """A dispatch with dynamic shapes is lowered once at compile time for trial dims,
    so an op without a lowering is an error of the compile, naming its line."""
    text = mlir("""
        func.func @main(%a: tensor<?x64xi64>) -> tensor<?x64xi64> {
          %0 = stablehlo.divide %a, %a : tensor<?x64xi64>
          return %0 : tensor<?x64xi64>
        }
    """)
    error = compile_error(text, StatusCode.UNIMPLEMENTED)
    assert re.search(rf"^input\.mlir:{line_of(text, 'stablehlo.divide')}:\d+: ", error.message), error.message


def test_i64_op_without_a_lowering_names_the_ones_there_are():
    text = mlir("""
        func.func @main(%a: tensor<4x64xi64>) -> tensor<4x64xi64> {
          %0 = stablehlo.popcnt %a : tensor<4x64xi64>
          return %0 : tensor<4x64xi64>
        }
    """)
    error = compile_error(text, StatusCode.UNIMPLEMENTED)
    assert "math.ctpop on i64: the bridge's i64 ops are addi, subi, muli" in error.message, error.message


def test_compile_arguments(tmp_path):
    with pytest.raises(HalError) as info:
        compiler.compile_vmfb(str(tmp_path / "missing.mlir"))
    assert info.value.code == StatusCode.NOT_FOUND
    path = tmp_path / "add.mlir"
    path.write_text(CASES["eltwise_add"].text)
    assert compiler.compile_vmfb(path) == vmfb("eltwise_add")


def test_errors_from_a_path_name_the_file(tmp_path):
    for text, needle, code in ((SYNTAX_ERROR, "%0 %a", StatusCode.INVALID_ARGUMENT),
                               (UNLOWERED["i64_division"][0], "stablehlo.divide", StatusCode.UNIMPLEMENTED)):
        path = tmp_path / "model.mlir"
        path.write_text(text)
        with pytest.raises(HalError) as info:
            compiler.compile_vmfb(str(path))
        assert info.value.code == code
        assert f"{path}:{line_of(text, needle)}:" in info.value.message and "input.mlir" not in info.value.message


def test_a_lowering_bug_is_an_internal_error_naming_the_dispatch(monkeypatch):
    """A Python exception inside the lowering (a bug of ours, not the program's) reaches
    the user as INTERNAL, naming the dispatch and its line, the exception chained: not a
    bare traceback from inside the compiler."""
    def broken(self, bound):
        raise ValueError("not enough values to unpack")
    monkeypatch.setattr(lowering.DispatchLowering, "run", broken)
    error = compile_error(CASES["eltwise_add"].text, StatusCode.INTERNAL)
    assert "ValueError: not enough values to unpack" in error.message and "dispatch @main_dispatch_0" in error.message
    assert "input.mlir:" in error.message and isinstance(error.__cause__, ValueError)


def test_compile_is_deterministic():
    name = "layernorm"
    assert compiler.compile_vmfb(CASES[name].text) == vmfb(name)


# ---- errors and reflection: loading and calling ------------------------------------------------------

# f16 has no tile format on this path: loads widen its bit patterns and stores narrow float32 to
# them on the SFPU (tt_hal/compiler/float16.py). Both must be IEEE's conversions bit for bit:
# every one of the 65536 patterns widened, and float32 values across f16's range narrowed
# (subnormals, ties, the overflow threshold 65520, infinities, -0) stored and rounded inside a
# body (truncf then more math), against numpy's float16.
F16_CONVERSIONS = mlir("""
    func.func @main(%h: tensor<256x256xf16>, %x: tensor<64x128xf32>)
        -> (tensor<256x256xf32>, tensor<64x128xf16>, tensor<64x128xf32>) {
      %w = stablehlo.convert %h : (tensor<256x256xf16>) -> tensor<256x256xf32>
      %n = stablehlo.convert %x : (tensor<64x128xf32>) -> tensor<64x128xf16>
      %e = stablehlo.convert %n : (tensor<64x128xf16>) -> tensor<64x128xf32>
      %z = stablehlo.constant dense<0.0> : tensor<64x128xf32>
      %back = stablehlo.add %e, %z : tensor<64x128xf32>
      return %w, %n, %back : tensor<256x256xf32>, tensor<64x128xf16>, tensor<64x128xf32>
    }
""")


def f16_test_values() -> np.ndarray:
    """float32 values across f16's range and at its rounding edges."""
    rng = np.random.default_rng(SEED)
    spread = rng.standard_normal(6000) * 2.0 ** rng.integers(-30, 18, 6000)
    ulp_ties = np.float16(rng.uniform(-60000, 60000, 600)).astype(np.float64)  # f16 values, then +- half an ulp
    ulps = np.spacing(np.abs(np.float16(ulp_ties))).astype(np.float64)
    subnormal_ties = rng.integers(0, 1024, 400) * 2.0 ** -24 + 2.0 ** -25
    edges = [0.0, -0.0, 65504, 65519.99, 65520, -65520, 1e6, np.inf, -np.inf, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25,
             3 * 2.0 ** -26, 2.0 ** -26, -(2.0 ** -24) * 1.5, 1e-30, -1e-45]
    values = np.concatenate([spread, ulp_ties + ulps / 2, ulp_ties - ulps / 2, subnormal_ties,
                             -subnormal_ties, edges]).astype(np.float32)
    return np.resize(values, (64, 128))


def test_f16_conversions_are_ieee_bit_for_bit():
    program = runtime.load_vm_flatbuffer(compiler.compile_vmfb(F16_CONVERSIONS), driver="tenstorrent")
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
    x = f16_test_values()
    widened, narrowed, rounded = (np.asarray(r) for r in program.main(patterns.view(np.float16), x))
    want = patterns.view(np.float16).astype(np.float32)
    assert np.array_equal(widened.view(np.uint32), want.view(np.uint32))
    with np.errstate(over="ignore"):  # the values past f16's range become its infinities
        want_narrowed = x.astype(np.float16)
    assert np.array_equal(narrowed.view(np.uint16), want_narrowed.view(np.uint16))
    back = want_narrowed.astype(np.float32) + np.float32(0)  # (-0 + 0 is +0, as in the program)
    assert np.array_equal(rounded.view(np.uint32), back.view(np.uint32))


@pytest.mark.parametrize("name", ["matmul_50x100_100x70", "several_results", "reduce_sum_middle_3d", "broadcast_scalar",
                                  "vecmat"])
def test_reflection_matches_signature(name):
    module = load(name)
    assert module.function_names == ["main"]
    inputs_, outputs = function_signatures(CASES[name].text)["main"]
    assert module.main.inputs == inputs_
    assert module.main.results == outputs
    results = module.main(*inputs(name))
    results = results if isinstance(results, tuple) else (results,)
    assert [(r.shape, r.dtype) for r in results] == [(t.shape, t.dtype) for t in outputs]


def test_load_errors(tmp_path):
    with pytest.raises(ValueError) as info:
        runtime.load_vm_flatbuffer(b"not a program", driver="tenstorrent")
    assert info.value.code == StatusCode.INVALID_ARGUMENT and ".vmfb" in info.value.message
    with pytest.raises(ValueError) as info:  # a .vmfb for IREE's CPU, not this device
        runtime.load_vm_flatbuffer(llvm_cpu.compiled(CASES["eltwise_add"].text), driver="tenstorrent")
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "not compiled for the tenstorrent" in info.value.message
    with pytest.raises(HalError) as info:
        runtime.load_vm_flatbuffer_file(tmp_path / "missing.vmfb", driver="tenstorrent")
    assert info.value.code == StatusCode.NOT_FOUND
    with pytest.raises(ValueError) as info:
        runtime.load_vm_flatbuffer(vmfb("eltwise_add"), driver="local-task")
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "tenstorrent" in info.value.message


def test_load_from_path(tmp_path):
    name = "eltwise_add"
    path = tmp_path / "add.vmfb"
    path.write_bytes(vmfb(name))
    module = runtime.load_vm_flatbuffer_file(path, driver="tenstorrent")
    tolerance.check(module.main(*inputs(name)), list(reference(name)), "float32")


def test_call_errors():
    name = "matmul_50x100_100x70"
    main = load(name).main
    a, b = inputs(name)
    bad_calls = {
        "too few arguments": (a,),
        "too many arguments": (a, b, b),
        "wrong shape": (a[:, :99], b),
        "transposed": (b, a),
        "float64": (a.astype(np.float64), b),
        "int32": (a, b.astype(np.int32)),
    }
    for what, args in bad_calls.items():
        with pytest.raises(ValueError) as info:
            main(*args)
        assert isinstance(info.value, HalError) and info.value.code == StatusCode.INVALID_ARGUMENT, what
    tolerance.check(main(a, b), list(reference(name)), "float32")  # the program still works


def test_unknown_function():
    module = load("eltwise_add")
    with pytest.raises(HalError) as info:
        module["nope"]
    assert info.value.code == StatusCode.NOT_FOUND and "main" in info.value.message
    with pytest.raises(AttributeError):
        module.nope  # noqa: B018
