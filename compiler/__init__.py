"""The compiler bridge: MLIR (StableHLO, linalg, TOSA) -> IREE front end -> Tensix
programs and a host program, in one module file that `hal.load_module` runs."""
