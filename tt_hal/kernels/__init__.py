"""The kernel library: parameterised Tensix programs as TTNN users know them, one
module per kernel family."""
