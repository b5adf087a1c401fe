"""numpy twins of the bit-exact FPU datapath (sim/numerics.py fpu_*), written from the
same facts (tt-isa-documentation MVMUL.md / ELWADD.md / ELWMUL.md, ttsim's datapath,
tt-llk's instruction order; docs/fidelity.md#fpu-numerics) on whole arrays of float32
bit patterns (int64): tests/test_fpu_datapath.py checks each fpu_* function against its
twin, and the matmul and reduce tests of the library use them as the exact numerics'
references."""

import numpy as np

from tt_hal.sim.numerics import FpuModel
from tt_hal.target.isa import ReduceKind

SRC_BF16 = 0xFFFF0000


def twin_product(a, b, phase):
    a, b = a & 0xFFFF0000, b & 0xFFFF0000
    live = ((a & 0x7F800000) != 0) & ((b & 0x7F800000) != 0)
    man_a, man_b = ((a >> 13) & 0x3FF) | 0x400, ((b >> 13) & 0x3FF) | 0x400
    slice_a = (man_a >> 1) & 31 if phase & 1 else man_a >> 6
    slice_b = (man_b & 15) << 3 if phase & 2 else man_b >> 4
    exponent = ((a >> 23) & 0xFF) + ((b >> 23) & 0xFF) - 127 - 5 * (phase & 1) - 7 * (phase >> 1 & 1)
    return np.where(live, ((a ^ b) >> 31) & 1, 0), np.where(live, exponent, 0), np.where(live, slice_a * slice_b, 0)


def twin_group_sum(signs, exponents, mantissas):
    """Rows of 8 lanes -> (sign, exponent, mantissa << 13) per row."""
    top = exponents.max(axis=-1)
    shift = np.minimum(top[..., None] - exponents, 30)
    aligned = (2 * mantissas + (1 << shift)) >> (shift + 1)  # half up
    total = np.where(signs == 1, -aligned, aligned).sum(axis=-1)
    live = top > 0
    return np.where(live & (total < 0), 1, 0), np.where(live, top, 0), np.where(live, np.abs(total) << 13, 0)


def twin_accumulate(terms, dst, fp32_dest, model):
    sign = (dst >> 31) & 1
    dst_exponent = (dst >> 23) & 0xFF
    dst_man = np.where(dst_exponent > 0, (dst & 0x7FFFFF) | 0x800000, 0)
    top = np.maximum(np.maximum(terms[0][1], terms[1][1]), dst_exponent)
    total = np.zeros_like(dst)
    for s, e, m in terms:
        shift = np.minimum(top - e, 40)
        m = np.where(shift >= 31, 0, np.where(shift > 0, (m + (1 << np.maximum(shift - 1, 0)) - s) >> shift, m))
        if not fp32_dest:
            m = (m + 4096 - s) & ~0x1FFF
        total += np.where(s == sign, m, -m)
    shift = np.minimum(top - dst_exponent, 40)
    dst_man = np.where(shift >= 31, 0, np.where(shift > 0, (dst_man + (1 << np.maximum(shift - 1, 0))) >> shift,
                                                dst_man))
    if not fp32_dest:
        dst_man = (dst_man + 4096) & ~0x1FFF
    total += dst_man
    sign = np.where(total < 0, sign ^ 1, sign)
    man = np.abs(total)
    length = np.array([int(x).bit_length() for x in man.ravel()], np.int64).reshape(man.shape)
    shift = 24 - length
    if model == FpuModel.WORMHOLE:
        shift = np.where((sign == 1) & (man == 1), shift - 27, shift)
    exponent = top - shift
    if not fp32_dest:
        shift = shift - 16
    right = np.maximum(-shift, 0)
    man = np.where(shift < 0, (man + (1 << np.maximum(right - 1, 0))) >> right, man << np.maximum(shift, 0))
    if not fp32_dest:
        man = man << 16
    exponent = exponent + ((man >> 24) & 1)
    result = np.where(exponent >= 255, (sign << 31) | (255 << 23), (sign << 31) | (exponent << 23) | (man & 0x7FFFFF))
    return np.where((top <= 0) | (total == 0) | (exponent <= 0), 0, result)


def twin_add(a, b, fp32_dest, model):
    a, b = a & 0xFFFF0000, b & 0xFFFF0000
    a, b = np.where(a & 0x7F800000, a, 0), np.where(b & 0x7F800000, b, 0)
    swap = (a & 0x7FFFFFFF) < (b & 0x7FFFFFFF)
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    man_a = np.where(a != 0, ((a >> 13) & 0x3FF) | 0x400, 0)
    man_b = np.where(b != 0, ((b >> 13) & 0x3FF) | 0x400, 0)
    shift = ((a >> 23) & 0xFF) - ((b >> 23) & 0xFF)
    man_b = np.where(shift >= 12, 0, np.where(shift > 0, (man_b + (1 << np.maximum(shift - 1, 0))) >> np.minimum(
        shift, 12), man_b))
    sign = (a >> 31) & 1
    man = np.where(sign == ((b >> 31) & 1), man_a + man_b, man_a - man_b)
    zero = np.zeros_like(a)
    return twin_accumulate([(sign, (a >> 23) & 0xFF, man << 13), (zero, zero, zero)], zero, fp32_dest, model)


def twin_mul(a, b, dst, fidelity, fp32_dest, model):
    """mul_tiles: one ELWMUL per fidelity phase, each accumulating its product into Dst
    (a product whose exponent underflows adds nothing)."""
    dst = np.asarray(dst, np.int64) & (0xFFFFFFFF if fp32_dest else SRC_BF16)
    zero = np.zeros_like(dst)
    for phase in range(max(fidelity, 1)):
        signs, exponents, mantissas = twin_product(a, b, phase)
        live = exponents > 0
        term = (np.where(live, signs, 0), np.where(live, exponents, 0), np.where(live, mantissas << 13, 0))
        dst = twin_accumulate([term, (zero, zero, zero)], dst, fp32_dest, model)
    return dst


# ---- the LLK's sequences ----

def twin_matmul_tiles(in0, in1, fidelity, fp32_dest, model, dst=None):
    """Dst bits (32, 32) after matmul_tiles over K tiles: in0 (K, 32, 32) bits feeds SrcB,
    in1 SrcA; per fidelity phase, each element takes the MVMUL of k = 0..15, then 16..31."""
    out = np.zeros((32, 32), np.int64) if dst is None else np.asarray(dst, np.int64) & (
        0xFFFFFFFF if fp32_dest else SRC_BF16)
    for b, a in zip(np.asarray(in0, np.int64), np.asarray(in1, np.int64)):
        for phase in range(max(fidelity, 1)):
            for k in (slice(0, 16), slice(16, 32)):
                signs, exponents, mantissas = twin_product(a[k, :].T[np.newaxis], b[:, k][:, np.newaxis], phase)
                groups = [twin_group_sum(signs[..., g], exponents[..., g], mantissas[..., g])
                          for g in (slice(0, 8), slice(8, 16))]
                out = twin_accumulate(groups, out, fp32_dest, model)
    return out


def twin_gapool(a, b, dst, fidelity, fp32_dest, model):
    """A face's GAPOOLs (one per phase) into Dst values dst (...): lanes a, b (..., 16)."""
    dst = np.asarray(dst, np.int64) & (0xFFFFFFFF if fp32_dest else SRC_BF16)
    for phase in range(max(fidelity, 1)):
        signs, exponents, mantissas = twin_product(a, b, phase)
        groups = [twin_group_sum(signs[..., g], exponents[..., g], mantissas[..., g])
                  for g in (slice(0, 8), slice(8, 16))]
        dst = twin_accumulate(groups, dst, fp32_dest, model)
    return dst


def _pool_order(sign, exponent, man):
    magnitude = (exponent << 10) + man
    return np.where(sign == 1, -magnitude, magnitude)


def twin_gmpool(a, b, dst, fp32_dest):
    """A face's GMPOOL into Dst values dst (...): the largest of Dst and the lanes a (..., 16)
    scaled by b's exponents, on (sign, 9-bit exponent, 10-bit mantissa)."""
    kept = 0x3FF if fp32_dest else 0x3F8
    a, b, dst = np.asarray(a, np.int64), np.asarray(b, np.int64), np.asarray(dst, np.int64)
    a_exponent, b_exponent = (a >> 23) & 0xFF, (b >> 23) & 0xFF
    lanes = [np.where(b_exponent == 0, minus, np.where(a_exponent == 0, 0, value)) for minus, value in (
        (1, (a >> 31) & 1), (0x1FF, a_exponent + b_exponent), (0x3FF, (a >> 13) & 0x3F8))]
    best = _pool_order(*lanes).argmax(axis=-1)[..., np.newaxis]
    lane = [np.take_along_axis(x, best, axis=-1)[..., 0] for x in lanes]
    held = [(dst >> 31) & 1, ((dst >> 23) & 0xFF) + 127, (dst >> 13) & kept]
    win = _pool_order(*lane) >= _pool_order(*held)  # equal orders are equal values
    sign, exponent, man = (np.where(win, x, y) for x, y in zip(lane, held))
    return np.where(exponent == 0, 0, (sign << 31) | (((exponent - 127) & 0xFF) << 23) | ((man & kept) << 13))


def twin_pool(is_max, a, b, dst, fidelity, fp32_dest, model):
    return twin_gmpool(a, b, dst, fp32_dest) if is_max else twin_gapool(a, b, dst, fidelity, fp32_dest, model)


def twin_reduce_lines(is_max, row, lines, scaler, dst, fidelity, fp32_dest, model):
    """One reduce_tile on each line (n, 32) of a tile (ROW: its rows, COL: its columns)
    with a scaler tile of one value `scaler` (bits): Dst values dst (n,) after the two
    faces' pools; ROW's MOVD2B / transpose / ELWADD round trip keeps bf16 of a 32-bit Dst."""
    lines, scaler = np.asarray(lines, np.int64), np.full(16, scaler, np.int64)
    for half in (slice(0, 16), slice(16, 32)):
        dst = twin_pool(is_max, lines[:, half], scaler, dst, fidelity, fp32_dest, model)
    return twin_add(np.zeros_like(dst), dst, fp32_dest, model) if row else dst


def twin_reduce_tile(kind, tile, scaler, dst, fidelity, fp32_dest, model):
    """Dst bits (32, 32) after one reduce_tile<kind> of `tile` (bits, (32, 32)) with a
    scaler tile of one value (bits) into `dst`: the result (ROW: column 0, COL: row 0,
    SCALAR: (0, 0)) and zeros elsewhere. SCALAR pools each face's columns into a cleared
    scratch row (faces 0..3), then that row once more into (0, 0)."""
    is_max, dim = kind >= ReduceKind.MAX_ROW, kind & 3
    tile, dst = np.asarray(tile, np.int64), np.asarray(dst, np.int64)
    out = np.zeros((32, 32), np.int64)
    if dim == ReduceKind.SUM_ROW:
        out[:, 0] = twin_reduce_lines(is_max, True, tile, scaler, dst[:, 0], fidelity, fp32_dest, model)
    elif dim == ReduceKind.SUM_COL:
        out[0, :] = twin_reduce_lines(is_max, False, tile.T, scaler, dst[0, :], fidelity, fp32_dest, model)
    else:
        scratch = np.full(16, 0xFFFFFFFF if is_max else 0, np.int64)  # cleared: GMPOOL reads all ones
        for face in range(4):
            rows, columns = slice(16 * (face // 2), 16 * (face // 2) + 16), slice(16 * (face % 2), 16 * (face % 2) + 16)
            scratch = twin_pool(is_max, tile[rows, columns].T, np.full(16, scaler), scratch, fidelity, fp32_dest,
                                model)
        out[0, 0] = twin_pool(is_max, scratch, np.full(16, scaler), dst[0, 0], fidelity, fp32_dest, model)
    return out


def is_exact(device) -> bool:
    """Does a simulated device compute the FPU bit for bit (numerics=exact), so that these
    twins are its references?"""
    return device.backend.fpu_model != FpuModel.FAST
