"""The FPU results a Tensix computes, from wolfpine's datapath (PyPI `wolfpine`, whose
FPU is a port of Tenstorrent's ttsim), driven in the order TT-Metal's LLK issues the
instructions. The differential tests (tests/test_fpu_wolfpine.py) and
bench/fpu_agreement.py compare the simulator against these.

What is wolfpine's here: the datapath of one instruction (MatrixUnit's batched group
sums, products, sums and accumulate into Dst). What is ours: which operands and which
Dst values each instruction gets, in the LLK's order (tt-llk's llk_math_matmul.h and
llk_math_eltwise_binary.h):
- matmul_tiles: per fidelity phase (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4 phases, outer), the
  MOP's 16 MVMULs; each Dst element gets the k = 0..15 MVMUL, then k = 16..31;
- add/sub_tiles: one ELWADD/ELWSUB (phase 0, no accumulation into Dst);
- mul_tiles: one ELWMUL per fidelity phase, each accumulating into Dst;
- reduce_tile (tt-llk's llk_math_reduce.h, Wormhole): see `reduce_tiles`.
Src holds BF16-style values (Wormhole with ALU_FORMAT_SPEC_REG0_SrcA = Float32 or
Float16_b, tt-isa-documentation MVMUL.md): the Src value's low 16 bits are dropped.

Values are float32 bit patterns (int64 arrays), tiles (32, 32) row-major. The
simulator's side (`simulate_*`) runs sim/numerics.py's functions on the same tiles.
"""

from __future__ import annotations

import numpy as np
from framework.pe.tensix.backends.backend_base import DataFormat as WolfpineFormat  # wolfpine
from framework.pe.tensix.backends.matrix import MatrixUnit
from framework.pe.tensix.util import DataFormatConversions

from tt_hal.sim import numerics
from tt_hal.sim.numerics import FACE_INDEX, FpuModel
from tt_hal.target.isa import Broadcast, Op, ReduceKind
from tt_hal.target.layout import DataFormat

_OPS = {"add": int(Op.ADD_TILES), "sub": int(Op.SUB_TILES), "mul": int(Op.MUL_TILES)}

PHASES = {0: 1, 2: 2, 3: 3, 4: 4}  # MathFidelity value -> phases the LLK runs
SRC_BF16 = 0xFFFF0000


def exp_adjust(phase: int) -> int:
    """The product exponent's rebias for a phase's mantissa slices (ttsim fpu_exp_prod_adj)."""
    return -127 - (5 if phase & 1 else 0) - (7 if phase & 2 else 0)


def _src(bits) -> np.ndarray:
    return np.asarray(bits, np.int64) & SRC_BF16


def matmul_tiles(in0, in1, fidelity: int, fp32_dest: bool, dst=None, blackhole: bool = False) -> np.ndarray:
    """Dst (bits) after matmul_tiles over K tiles: in0 (K, 32, 32) feeds SrcB, in1
    (K, 32, 32) SrcA, one pair per K tile; Dst starts at `dst` (zeros)."""
    in0, in1 = _src(in0), _src(in1)
    out = np.zeros((32, 32), np.int64) if dst is None else np.asarray(dst, np.int64).copy()
    for t in range(in0.shape[0]):
        for phase in range(PHASES[fidelity]):
            for half in (0, 1):
                k = slice(16 * half, 16 * half + 16)
                a = in1[t, k, :][:, np.newaxis, :]  # lanes, 1, columns j
                b = np.ascontiguousarray(in0[t, :, k].T)[:, :, np.newaxis]  # lanes, rows i, 1
                sums = MatrixUnit._fpu_group_sums_batch(a, b, phase, exp_adjust(phase))
                out = MatrixUnit._fpu_accumulate_batch(sums, out, fp32_dest, not blackhole)
    return out


def eltwise(op: str, a, b, fidelity: int, fp32_dest: bool, dst=None, blackhole: bool = False) -> np.ndarray:
    """Dst (bits) after add/sub/mul_tiles of SrcA = a and SrcB = b (same shapes)."""
    a, b = _src(a), _src(b)
    out = np.zeros(a.shape, np.int64) if dst is None else np.asarray(dst, np.int64).copy()
    if op == "mul":
        for phase in range(PHASES[fidelity]):
            terms = MatrixUnit._fpu_product_batch(a, b, phase, exp_adjust(phase))
            out = MatrixUnit._fpu_accumulate_batch(terms, out, fp32_dest, not blackhole)
        return out
    if op == "sub":
        b = b ^ 0x80000000
    terms = MatrixUnit._fpu_sum_batch(a, b)
    return MatrixUnit._fpu_accumulate_batch(terms, np.zeros_like(out), fp32_dest, not blackhole)


def _gapool(a, b, dst, fidelity: int, fp32_dest: bool, blackhole: bool) -> np.ndarray:
    """A face's GAPOOLs (one per fidelity phase): Dst row `dst` (16,) += SrcB's row 0
    `b` (16 lanes) @ SrcA `a` (16 lanes, 16 columns), through MVMUL's datapath."""
    for phase in range(PHASES[fidelity]):
        sums = MatrixUnit._fpu_group_sums_batch(_src(a)[:, np.newaxis, :], _src(b)[:, np.newaxis, np.newaxis], phase,
                                                exp_adjust(phase))
        dst = MatrixUnit._fpu_accumulate_batch(sums, dst[np.newaxis, :], fp32_dest, not blackhole)[0]
    return dst


def _gmpool(a, b, dst, fp32_dest: bool, cleared: bool = False) -> np.ndarray:
    """A face's GMPOOL: Dst row `dst` (16,) maxed with each column of SrcA `a` (16 lanes,
    16 columns), lane k scaled by SrcB's b[k], in wolfpine's Src and Dst encodings; a
    `cleared` (ZEROACC'd) Dst row reads as all ones."""
    convert = DataFormatConversions
    style = WolfpineFormat.TF32 if fp32_dest else WolfpineFormat.BF16
    out = np.empty(16, np.int64)
    for j in range(16):
        if cleared:
            value = 0xFFFFFFFF if fp32_dest else 0xFFFF0000
        else:
            value = convert.FP32ToDstFormatFP32(int(dst[j])) if fp32_dest else \
                convert.BF16ToDstFormatBF16(int(dst[j]) >> 16) << 16
        best = MatrixUnit._gmpool_read_dst(value, style)
        for lane in range(16):
            k = lane ^ 4 if lane < 8 else lane  # the hardware's visiting order (ties)
            x = MatrixUnit._gmpool_read_and_scale_src(convert.BF16ToSrcBF16(int(a[k, j]) >> 16),
                                                      WolfpineFormat.BF16, convert.BF16ToSrcBF16(int(b[k]) >> 16))
            if MatrixUnit._gmpool_as_comparable(x) >= MatrixUnit._gmpool_as_comparable(best):
                best = x
        value = MatrixUnit._gmpool_write_dst(best, style)
        out[j] = convert.FP32InDstToFP32(value) if fp32_dest else convert.BF16InDstToBF16(value >> 16) << 16
    return out


def _movd2b(dst, fp32_dest: bool) -> np.ndarray:
    """Dst values moved to SrcB (Wormhole, SrcA format Float32: BF16-style), as IEEE bits."""
    convert = DataFormatConversions
    moved = [convert.ShuffleBF16((convert.FP32ToDstFormatFP32(int(x)) if fp32_dest else
                                  convert.BF16ToDstFormatBF16(int(x) >> 16) << 16) >> 16) for x in dst]
    return np.array([convert.BF16InSrcToFP32(x) for x in moved], np.int64)


def reduce_results(kind: ReduceKind) -> np.ndarray:
    """Where reduce_tile<kind>'s results are in its Dst tile: ROW column 0, COL row 0,
    SCALAR (0, 0)."""
    where = np.zeros((32, 32), bool)
    where[{ReduceKind.SUM_ROW: (slice(None), 0), ReduceKind.SUM_COL: (0, slice(None))}.get(kind & 3, (0, 0))] = True
    return where


def reduce_tiles(kind: ReduceKind, tiles, scaler, fidelity: int, fp32_dest: bool, dst, blackhole: bool = False):
    """Dst (bits, (32, 32)) after reduce_tile<kind> of each tile (K, 32, 32) in turn,
    Dst starting at `dst`, in tt-llk's _llk_math_reduce_ order. SrcB holds the scaler
    tile's face (row 0 used; GAPOOL's 3 further Dst rows are not followed). Per face:
    GAPOOLs (one per fidelity phase) or a GMPOOL. ROW: SrcA is the face transposed (by
    the unpacker), each face row's pooled Dst row goes MOVD2B, TRNSPSRCB, ELWADD (SrcA
    zeroed) back into Dst: the row again in row 0, transposed in column 0. COL: pool
    into Dst row 0. SCALAR: pool into Dst row 4, MOVD2B, TRNSPSRCB, MOVB2A to SrcA's
    column 0 (denormals flushed), ZEROACC row 4, pool into Dst row 0 with face 3's SrcB.
    Only ROW's column 0, COL's row 0 and SCALAR's (0, 0) are results."""
    is_max, dim = kind >= ReduceKind.MAX_ROW, ReduceKind(kind & 3)
    out = np.asarray(dst, np.int64).copy()
    scaler = np.asarray(scaler, np.int64)
    row4_cleared = False

    def pool(a, b, row, cleared=False):
        return _gmpool(a, b, row, fp32_dest, cleared) if is_max else _gapool(a, b, row, fidelity, fp32_dest, blackhole)

    for tile in np.asarray(tiles, np.int64):
        faces = [tile[16 * (f // 2):16 * (f // 2) + 16, 16 * (f % 2):16 * (f % 2) + 16] for f in range(4)]
        b_rows = [scaler[16 * (f // 2), 16 * (f % 2):16 * (f % 2) + 16] for f in range(4)]
        if dim == ReduceKind.SUM_ROW:
            for half in (0, 1):
                top = 16 * half
                for f in (2 * half, 2 * half + 1):
                    out[top, :16] = pool(faces[f].T, b_rows[f], out[top, :16])
                moved = _movd2b(out[top, :16], fp32_dest)
                written = eltwise("add", np.zeros(16, np.int64), moved, 0, fp32_dest, None, blackhole)
                out[top, :16] = written
                out[top:top + 16, 0] = written
        elif dim == ReduceKind.SUM_COL:
            for f in range(4):
                columns = slice(16 * (f % 2), 16 * (f % 2) + 16)
                out[0, columns] = pool(faces[f], b_rows[f], out[0, columns])
        else:
            for f in range(4):
                out[4, :16] = pool(faces[f], b_rows[f], out[4, :16], row4_cleared and f == 0)
            src_a = np.zeros((16, 16), np.int64)
            column = _movd2b(out[4, :16], fp32_dest)
            src_a[:, 0] = np.where(column & 0x7F800000, column, 0)  # MOVB2A flushes denormals
            out[4, :16] = 0
            row4_cleared = True
            out[0, :16] = pool(src_a, b_rows[3], out[0, :16])
    return out


# ---- Data sets: float32 operands (n, 32, 32), as the unpacker hands them to Src ----

def _wide(rng, shape, low, high):
    """Random signs and mantissas at exponents spread over [low, high)."""
    magnitude = np.ldexp(rng.uniform(1, 2, shape), rng.integers(low, high, shape))
    return (magnitude * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


def _sprinkle(rng, x, fraction, values):
    x = x.copy()
    where = rng.random(x.shape) < fraction
    x[where] = rng.choice(np.asarray(values, np.float32), int(where.sum()))
    return x


def _denormals(rng, x, fraction):
    """Some entries replaced by float32 denormals (exponent field 0), either sign."""
    bits = rng.integers(1, 0x800000, x.shape, dtype=np.uint32) | (rng.integers(0, 2, x.shape, dtype=np.uint32) << 31)
    return np.where(rng.random(x.shape) < fraction, bits.view(np.float32), x)


def _ties(rng, shape):
    """Small integers at nearby powers of two: products and sums land exactly on the
    halfway points of the alignment grids and of bf16."""
    return np.ldexp(rng.integers(-255, 256, shape).astype(np.float64), rng.integers(-9, -3, shape)).astype(np.float32)


DATA_SETS = {
    "normal": lambda rng, shape: rng.standard_normal(shape).astype(np.float32),
    "uniform": lambda rng, shape: rng.uniform(-1, 1, shape).astype(np.float32),
    "wide": lambda rng, shape: _wide(rng, shape, -40, 40),
    "huge": lambda rng, shape: _wide(rng, shape, 40, 127),  # products overflow: Dst saturates
    "tiny": lambda rng, shape: _wide(rng, shape, -126, -40),  # products underflow to zero
    "zeros": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape).astype(np.float32), 0.5, [0.0]),
    "negative_zero": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape).astype(np.float32), 0.5,
                                                  [-0.0, 0.0]),
    "denormals": lambda rng, shape: _denormals(rng, rng.standard_normal(shape).astype(np.float32), 0.4),
    "ties": _ties,
    "cancel": lambda rng, shape: _sprinkle(rng, _ties(rng, shape), 0.3, [1.0, -1.0]),
}
KS = (1, 2, 5)  # K tiles of a matmul


# ---- The packer (fp32 or bf16 Dst -> a bf16 tile), wolfpine's ttsim-following conversion ----

def pack_bf16(dst, fp32_dest: bool) -> np.ndarray:
    """bf16 bits the packer writes for Dst `dst` (float32 bits)."""
    flat = np.asarray(dst, np.int64).ravel()
    if fp32_dest:
        to_dst = DataFormatConversions.FP32ToDstFormatFP32
        packed = [DataFormatConversions.FP32InDstToBF16(to_dst(int(x))) for x in flat]
    else:
        to_dst = DataFormatConversions.FP32ToDstFormatBF16
        packed = [DataFormatConversions.BF16InDstToBF16(to_dst(int(x))) for x in flat]
    return np.array(packed, np.int64).reshape(np.shape(dst))


# ---- The simulator on the same tiles ----

def to_faces(tile) -> np.ndarray:
    """A (32, 32) tile in stored (face) order, float32."""
    faces = np.empty(1024, np.float32)
    faces[FACE_INDEX.ravel()] = np.asarray(tile, np.float32).ravel()
    return faces


def simulate_matmul(in0, in1, fidelity: int, fp32_dest: bool, model: FpuModel, dst=None) -> np.ndarray:
    """Dst bits (32, 32) after the simulator's matmul_tiles over the K tiles; Dst starts
    at `dst` (bits; zeros)."""
    out = to_faces(np.zeros((32, 32), np.uint32).view(np.float32) if dst is None else
                   np.asarray(dst, np.uint32).view(np.float32))
    for a, b in zip(in0, in1):
        if model == FpuModel.FAST:
            numerics.matmul_tile_fast(to_faces(a), to_faces(b), False, out, fidelity, fp32_dest,
                                      np.empty((numerics.OPERAND_ROWS, 1024), np.uint32))
        else:
            numerics.fpu_matmul_tile(to_faces(a), to_faces(b), False, out, fidelity, fp32_dest, int(model))
    return out[FACE_INDEX].view(np.uint32).astype(np.int64)


def simulate_pack_bf16(dst) -> np.ndarray:
    """bf16 bits the simulator's packer writes for Dst `dst` (float32 bits, (32, 32))."""
    row = np.zeros(2048, np.uint8)
    numerics.pack_tile(to_faces(np.asarray(dst, np.uint32).view(np.float32)), row, 0, int(DataFormat.bfloat16))
    return row.view(np.uint16)[FACE_INDEX].astype(np.int64)


def simulate_reduce(kind: ReduceKind, tiles, scaler, fidelity: int, fp32_dest: bool, model: FpuModel, dst):
    """Dst bits (32, 32) after the simulator's reduce_tile<kind> of each tile (float32) in
    turn; scaler and dst are bits."""
    out = to_faces(np.asarray(dst, np.uint32).view(np.float32))
    scaler = np.asarray(scaler, np.uint32).view(np.float32)
    is_max, dim = kind >= ReduceKind.MAX_ROW, kind & 3
    for tile in tiles:
        if model == FpuModel.FAST:
            numerics.reduce_tile_fast(to_faces(tile), to_faces(scaler), out, np.empty(1024, np.float32), is_max, dim,
                                      fidelity, fp32_dest)
        else:
            numerics.fpu_reduce_tile(to_faces(tile), to_faces(scaler), out, is_max, dim, fidelity, fp32_dest,
                                     int(model))
    return out[FACE_INDEX].view(np.uint32).astype(np.int64)


def simulate_eltwise(op: str, a, b, fidelity: int, fp32_dest: bool, model: FpuModel, dst=None) -> np.ndarray:
    """Dst bits after the simulator's add/sub/mul_tiles of tiles a (SrcA) and b (SrcB)."""
    if model == FpuModel.FAST:
        out = np.zeros(1024, np.float32)
        numerics.eltwise_tile_fast(_OPS[op], Broadcast.NONE, to_faces(a), to_faces(b), out, fidelity, fp32_dest)
        return out[FACE_INDEX].view(np.uint32).astype(np.int64)
    a, b = np.asarray(a, np.float32).view(np.uint32), np.asarray(b, np.float32).view(np.uint32)
    out = np.zeros(a.shape, np.int64) if dst is None else np.asarray(dst, np.int64)
    return np.array([numerics.fpu_eltwise(op != "mul", op == "sub", int(x), int(y), int(d), fidelity, fp32_dest,
                                          int(model)) for x, y, d in zip(a.ravel(), b.ravel(), out.ravel())],
                    np.int64).reshape(a.shape)
