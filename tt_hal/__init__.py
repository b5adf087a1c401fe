"""tt-hal beyond the HAL: everything that is not `hal` (the IREE HAL mirror), the
simulator (`tt_hal.sim`, the repository's sim/) or the native layer
(`tt_hal.native`, native/). Subpackages, bottom up:

- `target`: what a Tensix chip and its programs are (arch presets, data formats,
  tile layout and host conversions, the ISA, kernel builder, programs, .ttx);
- `kernels`: the kernel library (parameterised programs);
- `ops`: device tensors' eager TTNN-style ops over `hal`;
- `runtime`: IREE `.vmfb` programs run by iree.runtime's VM, its `hal` imports served
  by `hal`;
- `compiler`: the IREE bridge (MLIR -> a `.vmfb` whose dispatches are Tensix programs);
- `tools`: the `tt-hal` command line, the pytest plugin, testing helpers, pictures.

Nothing is imported here: `import tt_hal.target.isa` loads the ISA alone.
"""
