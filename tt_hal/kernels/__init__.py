"""The kernel library: parameterised Tensix programs as TTNN users know them, built
with tt_hal.target.kernel_builder.KernelBuilder, one module per kernel family:

- `eltwise`: eltwise binary (add, sub, mul; with row, column or scalar broadcast of
  B) and eltwise unary (the SFPU ops);
- `matmul`: batched matmul;
- `reduce`: sum and max over rows or columns;
- `transpose`: the last two dimensions;
- `normalization`: the row-wise softmax, layernorm and rmsnorm;
- `fused`: fused elementwise, straight-line SFPU code over broadcast inputs;
- `rowmajor`: row-major tensors at any byte of IREE's buffers, read and written a row
  at a time and tilized and untilized in compute (tilize, untilize, eltwise binary,
  copy);
- `common`: what the families share (tile ranges, readers and writers, Dst stages,
  circular buffers, masking of padding).

Every program is multi-core: workgroup w of n takes the tiles [w * T // n,
(w + 1) * T // n) of the T tiles named by push constant 0 (`rowmajor`'s: blocks of up
to 8 tiles of a tile row).
"""
