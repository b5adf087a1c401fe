// Host-side tensor conversions in C++: tilize/untilize fused with the bf16 and
// block-float (bfp8_b, bfp4_b) packers. A line-by-line twin of the numba kernels in
// tt_hal/target/tiles.py and tt_hal/target/formats.py, with the same names and arguments, and
// byte-identical output (tests/test_native_conversions.py checks it). The
// algorithms are tt-metal's host packer (tilize_utils, blockfloat_common.cpp); the
// layout and numerics are described in tt_hal/target/formats.py and docs/layouts.md.
//
// Arrays are written in place, so they must be C-contiguous and of the exact
// width; sizes are checked before any write (a bad call raises ValueError and
// touches nothing). The GIL is released while converting, so that
// tt_hal.target.tiles.run_by_tile_rows can split a large tensor across host threads.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

constexpr int64_t kTile = 32;
constexpr int64_t kFace = 16;
constexpr int64_t kTileElements = kTile * kTile;
constexpr int64_t kFaceElements = kFace * kFace;
constexpr int64_t kExponentBytes = 64;  // one shared exponent per face row

enum Rounding : int { kNearestEven = 0, kNearestAway = 1, kTruncate = 2 };
enum Conversion : int { kCopy = 0, kBf16 = 1 };
constexpr int kBfp8MagnitudeBits = 7;
constexpr uint32_t kBf16QuietNan = 0x7FC0;

// The kernels are compiled twice, for x86-64 and for AVX2 (variable per-lane shifts
// let the block-float packer vectorize), and the loader picks one for the CPU: fast
// where AVX2 exists, portable where it does not.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TT_HAL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TT_HAL_CLONES
#endif

// --- formats (tt_hal/target/formats.py) ---------------------------------------------------

inline uint32_t bf16_from_f32_bits(uint64_t bits, int rounding) {
  uint64_t rounded = bits;
  if (rounding == kNearestEven) {
    rounded = bits + 0x7FFF + ((bits >> 16) & 1);
  } else if (rounding == kNearestAway) {
    rounded = bits + 0x8000;  // sign-magnitude: half up in magnitude is away from zero
  }
  uint32_t half = static_cast<uint32_t>((rounded >> 16) & 0xFFFF);
  if (rounding != kNearestEven && (bits & 0x7F800000) == 0) half = 0;  // the packer flushes denormals, -0
  return (bits & 0x7FFFFFFF) > 0x7F800000 ? kBf16QuietNan : half;
}

// Block floats work on 32-bit lanes, with selects instead of branches, so that
// the compiler vectorizes a face row (as numba does for the twin).
inline uint32_t bfp_shared_exponent(const uint32_t* row) {
  uint32_t shared = 0;
  for (int64_t k = 0; k < kFace; ++k) shared = std::max<uint32_t>(shared, (row[k] >> 23) & 0xFF);
  return shared;
}

template <int magnitude_bits, int rounding>
inline uint32_t bfp_code(uint32_t bits, uint32_t shared) {
  const uint32_t exponent = (bits >> 23) & 0xFF;
  const uint32_t mantissa = ((bits & 0x7FFFFF) | 0x800000) >> std::min<uint32_t>(shared - exponent, 31);
  const int shift = 24 - magnitude_bits;
  uint32_t kept = mantissa >> shift;
  const uint32_t dropped = mantissa - (kept << shift);
  const uint32_t tie = uint32_t{1} << (shift - 1);
  if (rounding == kNearestEven) {
    kept += (dropped > tie) | ((dropped == tie) & (kept & 1));
  } else if (rounding == kNearestAway) {
    kept += dropped >= tie;
  }
  kept = std::min<uint32_t>(kept, (uint32_t{1} << magnitude_bits) - 1);  // saturate
  const uint32_t code = ((bits >> 31) << magnitude_bits) | kept;
  return (kept == 0 || exponent == 0) ? 0 : code;
}

inline int highest_bit(uint32_t magnitude) { return magnitude == 0 ? 0 : 31 - __builtin_clz(magnitude); }

inline uint32_t bfp_bits(uint32_t code, uint32_t shared, int magnitude_bits) {
  const uint32_t sign = ((code >> magnitude_bits) & 1) << 31;
  const uint32_t magnitude = code & ((uint32_t{1} << magnitude_bits) - 1);
  const int shifts = magnitude_bits - 1 - highest_bit(magnitude);
  const int exponent = static_cast<int>(shared) - shifts;
  const uint32_t fraction = ((magnitude << (shifts + 1)) & ((uint32_t{1} << magnitude_bits) - 1))
                            << (23 - magnitude_bits);
  return (magnitude == 0 || exponent < 0) ? sign : (sign | (static_cast<uint32_t>(exponent) << 23) | fraction);
}

template <int magnitude_bits, int rounding>
inline void bfp_encode_row(const uint32_t* row, uint8_t* out, int64_t exponent_at, int64_t codes_at) {
  const uint32_t shared = bfp_shared_exponent(row);
  out[exponent_at] = static_cast<uint8_t>(shared);
  uint32_t codes[kFace];  // computed first, in a loop of its own that vectorizes, then packed
  for (int64_t k = 0; k < kFace; ++k) codes[k] = bfp_code<magnitude_bits, rounding>(row[k], shared);
  if (magnitude_bits == kBfp8MagnitudeBits) {
    for (int64_t k = 0; k < kFace; ++k) out[codes_at + k] = static_cast<uint8_t>(codes[k]);
  } else {
    for (int64_t k = 0; k < kFace; k += 2) out[codes_at + k / 2] = static_cast<uint8_t>(codes[k] | (codes[k + 1] << 4));
  }
}

inline uint32_t bfp_decode_code(const uint8_t* data, int64_t codes_at, int64_t k, int magnitude_bits) {
  if (magnitude_bits == kBfp8MagnitudeBits) return data[codes_at + k];
  return (static_cast<uint32_t>(data[codes_at + k / 2]) >> (4 * (k & 1))) & 0xF;
}

// --- tile walk (tt_hal/target/tiles.py) ---------------------------------------------------

struct Shape {
  int64_t batch, height, width;
  int64_t padded_height() const { return (height + kTile - 1) / kTile * kTile; }
  int64_t tile_cols() const { return (width + kTile - 1) / kTile; }
  int64_t tile_rows() const { return batch * padded_height() / kTile; }
};

struct RunSource {
  int64_t h, w, dh, dw;
};

// Where the 16 values stored in (face, row) of the tile at (top, left) come from.
inline RunSource face_row_source(int64_t top, int64_t left, int face, int64_t row, bool within_face, bool of_faces) {
  if (of_faces && (face == 1 || face == 2)) face = 3 - face;
  const int64_t h = top + (face >> 1) * kFace;
  const int64_t w = left + (face & 1) * kFace;
  if (within_face) return {h, w + row, 1, 0};
  return {h + row, w, 0, 1};
}

inline bool run_inside(const RunSource& s, const Shape& shape) {
  return s.dw == 1 && s.h < shape.height && s.w + kFace <= shape.width;
}

template <typename T, typename RunT>
inline void gather_run(const T* tensor, const Shape& shape, int64_t b, RunSource s, uint64_t pad, RunT* run) {
  for (int64_t col = 0; col < kFace; ++col) {
    run[col] = (s.h < shape.height && s.w < shape.width)
                   ? static_cast<RunT>(tensor[(b * shape.height + s.h) * shape.width + s.w])
                   : static_cast<RunT>(pad);
    s.h += s.dh;
    s.w += s.dw;
  }
}

template <typename T, typename RunT>
inline void scatter_run(const RunT* run, T* tensor, const Shape& shape, int64_t b, RunSource s) {
  for (int64_t col = 0; col < kFace; ++col) {
    if (s.h < shape.height && s.w < shape.width)
      tensor[(b * shape.height + s.h) * shape.width + s.w] = static_cast<T>(run[col]);
    s.h += s.dh;
    s.w += s.dw;
  }
}

// Calls visit(b, source, stored_index) for every stored face row of tile rows
// [first_row, end_row), in stored order; stored_index counts face rows.
template <typename Visit>
inline void walk_face_rows(const Shape& shape, int64_t first_row, int64_t end_row, bool within_face, bool of_faces,
                           Visit visit) {
  const int64_t padded_height = shape.padded_height();
  int64_t stored = first_row * shape.tile_cols() * 4 * kFace;
  for (int64_t tile_row = first_row; tile_row < end_row; ++tile_row) {
    const int64_t b = tile_row * kTile / padded_height, top = tile_row * kTile % padded_height;
    for (int64_t tile_col = 0; tile_col < shape.tile_cols(); ++tile_col)
      for (int face = 0; face < 4; ++face)
        for (int64_t row = 0; row < kFace; ++row)
          visit(b, face_row_source(top, tile_col * kTile, face, row, within_face, of_faces), stored++);
  }
}

template <typename TensorT, typename TileT>
TT_HAL_CLONES void tilize_kernel(const TensorT* tensor, const Shape& shape, TileT* tiles, int conversion, int rounding, uint64_t pad,
                   bool within_face, bool of_faces, int64_t first_row, int64_t end_row) {
  uint64_t run[kFace];
  walk_face_rows(shape, first_row, end_row, within_face, of_faces, [&](int64_t b, RunSource s, int64_t stored) {
    TileT* out = tiles + stored * kFace;
    if (run_inside(s, shape)) {  // the hot path: a whole run inside the tensor
      const TensorT* in = tensor + (b * shape.height + s.h) * shape.width + s.w;
      for (int64_t col = 0; col < kFace; ++col)
        out[col] = static_cast<TileT>(conversion == kBf16 ? bf16_from_f32_bits(in[col], rounding) : in[col]);
    } else {
      gather_run(tensor, shape, b, s, pad, run);
      for (int64_t col = 0; col < kFace; ++col)
        out[col] = static_cast<TileT>(conversion == kBf16 ? bf16_from_f32_bits(run[col], rounding) : run[col]);
    }
  });
}

template <typename TileT, typename TensorT>
TT_HAL_CLONES void untilize_kernel(const TileT* tiles, TensorT* tensor, const Shape& shape, int conversion, bool within_face,
                     bool of_faces, int64_t first_row, int64_t end_row) {
  const int shift = conversion == kBf16 ? 16 : 0;
  uint64_t run[kFace];
  walk_face_rows(shape, first_row, end_row, within_face, of_faces, [&](int64_t b, RunSource s, int64_t stored) {
    const TileT* in = tiles + stored * kFace;
    if (run_inside(s, shape)) {
      TensorT* out = tensor + (b * shape.height + s.h) * shape.width + s.w;
      for (int64_t col = 0; col < kFace; ++col) out[col] = static_cast<TensorT>(static_cast<uint64_t>(in[col]) << shift);
    } else {
      for (int64_t col = 0; col < kFace; ++col) run[col] = static_cast<uint64_t>(in[col]) << shift;
      scatter_run(run, tensor, shape, b, s);
    }
  });
}

inline int64_t block_float_tile_bytes(int magnitude_bits) {
  return kExponentBytes + kTileElements / (8 / (magnitude_bits + 1));
}

// Byte offsets of a stored face row inside its block-float tile: (exponent, codes).
inline void block_float_row_at(int64_t stored, int magnitude_bits, int64_t* exponent_at, int64_t* codes_at) {
  const int64_t per_byte = 8 / (magnitude_bits + 1);
  const int64_t tile = stored / (4 * kFace), face_row = stored % (4 * kFace);  // face * 16 + row
  const int64_t base = tile * block_float_tile_bytes(magnitude_bits);
  *exponent_at = base + face_row;
  *codes_at = base + kExponentBytes + face_row * kFace / per_byte;
}

// The code width and rounding are template arguments, so that each variant's loops vectorize.
template <int magnitude_bits, int rounding>
TT_HAL_CLONES void tilize_block_float_kernel(const uint32_t* tensor, const Shape& shape, uint8_t* tiles, uint64_t pad,
                               bool within_face, bool of_faces, int64_t first_row, int64_t end_row) {
  uint32_t run[kFace];
  walk_face_rows(shape, first_row, end_row, within_face, of_faces, [&](int64_t b, RunSource s, int64_t stored) {
    if (run_inside(s, shape)) {
      const uint32_t* in = tensor + (b * shape.height + s.h) * shape.width + s.w;
      for (int64_t col = 0; col < kFace; ++col) run[col] = in[col];
    } else {
      gather_run(tensor, shape, b, s, pad, run);
    }
    int64_t exponent_at, codes_at;
    block_float_row_at(stored, magnitude_bits, &exponent_at, &codes_at);
    bfp_encode_row<magnitude_bits, rounding>(run, tiles, exponent_at, codes_at);
  });
}

template <int magnitude_bits>
TT_HAL_CLONES void untilize_block_float_kernel(const uint8_t* tiles, uint32_t* tensor, const Shape& shape, bool within_face, bool of_faces, int64_t first_row, int64_t end_row) {
  uint32_t run[kFace];
  walk_face_rows(shape, first_row, end_row, within_face, of_faces, [&](int64_t b, RunSource s, int64_t stored) {
    int64_t exponent_at, codes_at;
    block_float_row_at(stored, magnitude_bits, &exponent_at, &codes_at);
    const uint32_t shared = tiles[exponent_at];
    const bool inside = run_inside(s, shape);  // the hot path: decode straight into the tensor
    uint32_t* out = inside ? tensor + (b * shape.height + s.h) * shape.width + s.w : run;
    for (int64_t col = 0; col < kFace; ++col)
      out[col] = bfp_bits(bfp_decode_code(tiles, codes_at, col, magnitude_bits), shared, magnitude_bits);
    if (!inside) scatter_run(run, tensor, shape, b, s);
  });
}

using BlockFloatEncoder = void (*)(const uint32_t*, const Shape&, uint8_t*, uint64_t, bool, bool, int64_t, int64_t);

template <int magnitude_bits>
BlockFloatEncoder block_float_encoder_for(int rounding) {
  if (rounding == kNearestEven) return &tilize_block_float_kernel<magnitude_bits, kNearestEven>;
  if (rounding == kNearestAway) return &tilize_block_float_kernel<magnitude_bits, kNearestAway>;
  return &tilize_block_float_kernel<magnitude_bits, kTruncate>;  // as the twin: any other mode truncates
}

BlockFloatEncoder block_float_encoder(int magnitude_bits, int rounding) {
  return magnitude_bits == kBfp8MagnitudeBits ? block_float_encoder_for<7>(rounding) : block_float_encoder_for<3>(rounding);
}

// --- argument checks ------------------------------------------------------------

py::buffer_info contiguous(const py::array& array, const char* what, bool writable) {
  if (!(array.flags() & py::array::c_style)) throw py::value_error(std::string(what) + " must be C-contiguous");
  if (writable && !array.writeable()) throw py::value_error(std::string(what) + " must be writable");
  if (array.dtype().kind() != 'u') throw py::value_error(std::string(what) + " must hold unsigned integers (bit patterns)");
  return array.request(writable);
}

Shape tensor_shape(const py::buffer_info& info) {
  if (info.ndim != 3) throw py::value_error("tensor must be 3-D (batch, height, width)");
  return {info.shape[0], info.shape[1], info.shape[2]};
}

// Resolves end_row = -1 and checks the tile-row range and the tiles' size.
void check_rows(const Shape& shape, int64_t first_row, int64_t* end_row, const py::buffer_info& tiles,
                int64_t bytes_per_tile) {
  if (*end_row < 0) *end_row = shape.tile_rows();
  if (first_row < 0 || first_row > *end_row || *end_row > shape.tile_rows())
    throw py::value_error("tile rows [" + std::to_string(first_row) + ", " + std::to_string(*end_row) +
                          ") outside the tensor's " + std::to_string(shape.tile_rows()));
  const int64_t needed = *end_row * shape.tile_cols() * bytes_per_tile;
  if (tiles.size * tiles.itemsize < needed)
    throw py::value_error("tiles hold " + std::to_string(tiles.size * tiles.itemsize) + " bytes; the tile rows need " +
                          std::to_string(needed));
}

int check_magnitude_bits(int magnitude_bits) {
  if (magnitude_bits != 7 && magnitude_bits != 3) throw py::value_error("magnitude_bits must be 7 (bfp8_b) or 3 (bfp4_b)");
  return magnitude_bits;
}

template <typename Fn>
void with_copy_types(int64_t itemsize, Fn fn) {
  switch (itemsize) {
    case 1: fn(uint8_t{}); break;
    case 2: fn(uint16_t{}); break;
    case 4: fn(uint32_t{}); break;
    default: throw py::value_error("element width must be 1, 2 or 4 bytes");
  }
}

void check_conversion(int conversion, const py::buffer_info& wide, const py::buffer_info& narrow) {
  if (conversion == kBf16) {
    if (wide.itemsize != 4 || narrow.itemsize != 2)
      throw py::value_error("BF16 conversion needs a uint32 tensor and uint16 tiles");
  } else if (conversion == kCopy) {
    if (wide.itemsize != narrow.itemsize) throw py::value_error("COPY needs tensor and tiles of one element width");
  } else {
    throw py::value_error("conversion must be 0 (COPY) or 1 (BF16)");
  }
}

// --- bindings (the numba kernels' signatures) -----------------------------------

void tilize(const py::array& tensor, const py::array& tiles, int conversion, int rounding, uint64_t pad,
            bool within_face, bool of_faces, int64_t first_row, int64_t end_row) {
  const auto in = contiguous(tensor, "tensor", false), out = contiguous(tiles, "tiles", true);
  const Shape shape = tensor_shape(in);
  check_conversion(conversion, in, out);
  check_rows(shape, first_row, &end_row, out, kTileElements * out.itemsize);
  py::gil_scoped_release release;
  if (conversion == kBf16) {
    tilize_kernel(static_cast<const uint32_t*>(in.ptr), shape, static_cast<uint16_t*>(out.ptr), conversion, rounding,
                  pad, within_face, of_faces, first_row, end_row);
    return;
  }
  with_copy_types(in.itemsize, [&](auto zero) {
    using T = decltype(zero);
    tilize_kernel(static_cast<const T*>(in.ptr), shape, static_cast<T*>(out.ptr), conversion, rounding, pad,
                  within_face, of_faces, first_row, end_row);
  });
}

void untilize(const py::array& tiles, const py::array& tensor, int conversion, bool within_face, bool of_faces,
              int64_t first_row, int64_t end_row) {
  const auto in = contiguous(tiles, "tiles", false), out = contiguous(tensor, "tensor", true);
  const Shape shape = tensor_shape(out);
  check_conversion(conversion, out, in);
  check_rows(shape, first_row, &end_row, in, kTileElements * in.itemsize);
  py::gil_scoped_release release;
  if (conversion == kBf16) {
    untilize_kernel(static_cast<const uint16_t*>(in.ptr), static_cast<uint32_t*>(out.ptr), shape, conversion,
                    within_face, of_faces, first_row, end_row);
    return;
  }
  with_copy_types(in.itemsize, [&](auto zero) {
    using T = decltype(zero);
    untilize_kernel(static_cast<const T*>(in.ptr), static_cast<T*>(out.ptr), shape, conversion, within_face,
                    of_faces, first_row, end_row);
  });
}

void tilize_block_float(const py::array& tensor, const py::array& tiles, int magnitude_bits, int rounding,
                        uint64_t pad, bool within_face, bool of_faces, int64_t first_row, int64_t end_row) {
  const auto in = contiguous(tensor, "tensor", false), out = contiguous(tiles, "tiles", true);
  const Shape shape = tensor_shape(in);
  if (in.itemsize != 4 || out.itemsize != 1) throw py::value_error("block floats need a uint32 tensor and uint8 tiles");
  check_rows(shape, first_row, &end_row, out, block_float_tile_bytes(check_magnitude_bits(magnitude_bits)));
  py::gil_scoped_release release;
  const auto* src = static_cast<const uint32_t*>(in.ptr);
  auto* dst = static_cast<uint8_t*>(out.ptr);
  const auto kernel = block_float_encoder(magnitude_bits, rounding);
  kernel(src, shape, dst, pad, within_face, of_faces, first_row, end_row);
}

void untilize_block_float(const py::array& tiles, const py::array& tensor, int magnitude_bits, bool within_face,
                          bool of_faces, int64_t first_row, int64_t end_row) {
  const auto in = contiguous(tiles, "tiles", false), out = contiguous(tensor, "tensor", true);
  const Shape shape = tensor_shape(out);
  if (out.itemsize != 4 || in.itemsize != 1) throw py::value_error("block floats need uint8 tiles and a uint32 tensor");
  check_rows(shape, first_row, &end_row, in, block_float_tile_bytes(check_magnitude_bits(magnitude_bits)));
  py::gil_scoped_release release;
  const auto* src = static_cast<const uint8_t*>(in.ptr);
  auto* dst = static_cast<uint32_t*>(out.ptr);
  if (magnitude_bits == kBfp8MagnitudeBits)
    untilize_block_float_kernel<7>(src, dst, shape, within_face, of_faces, first_row, end_row);
  else
    untilize_block_float_kernel<3>(src, dst, shape, within_face, of_faces, first_row, end_row);
}

void bf16_encode(const py::array& bits, const py::array& out, int rounding) {
  const auto in = contiguous(bits, "bits", false), halves = contiguous(out, "out", true);
  if (in.itemsize != 4 || halves.itemsize != 2 || halves.size < in.size)
    throw py::value_error("bf16_encode needs uint32 bits and a uint16 out at least as long");
  const auto* src = static_cast<const uint32_t*>(in.ptr);
  auto* dst = static_cast<uint16_t*>(halves.ptr);
  py::gil_scoped_release release;
  for (int64_t i = 0; i < in.size; ++i) dst[i] = static_cast<uint16_t>(bf16_from_f32_bits(src[i], rounding));
}

void bf16_decode(const py::array& halves, const py::array& out) {
  const auto in = contiguous(halves, "halves", false), bits = contiguous(out, "out", true);
  if (in.itemsize != 2 || bits.itemsize != 4 || bits.size < in.size)
    throw py::value_error("bf16_decode needs uint16 halves and a uint32 out at least as long");
  const auto* src = static_cast<const uint16_t*>(in.ptr);
  auto* dst = static_cast<uint32_t*>(bits.ptr);
  py::gil_scoped_release release;
  for (int64_t i = 0; i < in.size; ++i) dst[i] = static_cast<uint32_t>(src[i]) << 16;
}

}  // namespace

PYBIND11_MODULE(_conversions, m) {
  m.doc() = "tt-hal's C++ host conversions: byte-identical twins of tt_hal/target/tiles.py and tt_hal/target/formats.py";
  m.def("tilize", &tilize, py::arg("tensor"), py::arg("tiles"), py::arg("conversion"), py::arg("rounding"),
        py::arg("pad"), py::arg("within_face"), py::arg("of_faces"), py::arg("first_row") = 0,
        py::arg("end_row") = -1);
  m.def("untilize", &untilize, py::arg("tiles"), py::arg("tensor"), py::arg("conversion"), py::arg("within_face"),
        py::arg("of_faces"), py::arg("first_row") = 0, py::arg("end_row") = -1);
  m.def("tilize_block_float", &tilize_block_float, py::arg("tensor"), py::arg("tiles"), py::arg("magnitude_bits"),
        py::arg("rounding"), py::arg("pad"), py::arg("within_face"), py::arg("of_faces"), py::arg("first_row") = 0,
        py::arg("end_row") = -1);
  m.def("untilize_block_float", &untilize_block_float, py::arg("tiles"), py::arg("tensor"), py::arg("magnitude_bits"),
        py::arg("within_face"), py::arg("of_faces"), py::arg("first_row") = 0, py::arg("end_row") = -1);
  m.def("bf16_encode", &bf16_encode, py::arg("bits"), py::arg("out"), py::arg("rounding"));
  m.def("bf16_decode", &bf16_decode, py::arg("halves"), py::arg("out"));
}
