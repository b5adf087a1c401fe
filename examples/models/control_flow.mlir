// Host control flow and a mutable global, run by IREE's VM: a loop whose trip count is
// an argument, a branch on it, and a running total kept across calls.
util.global private mutable @total = dense<0.0> : tensor<16x64xf32>
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>, %n: i32) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %steps = arith.index_cast %n : i32 to index
  %h = scf.for %i = %c0 to %steps step %c1 iter_args(%a = %x) -> tensor<16x64xf32> {
    %p = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
    %t = stablehlo.tanh %p : tensor<16x64xf32>
    scf.yield %t : tensor<16x64xf32>
  }
  %c2 = arith.constant 2 : i32
  %even = arith.remui %n, %c2 : i32
  %zero = arith.constant 0 : i32
  %odd = arith.cmpi ne, %even, %zero : i32
  %y = scf.if %odd -> tensor<16x64xf32> {
    %e = stablehlo.negate %h : tensor<16x64xf32>
    scf.yield %e : tensor<16x64xf32>
  } else {
    scf.yield %h : tensor<16x64xf32>
  }
  %old = util.global.load @total : tensor<16x64xf32>
  %new = stablehlo.add %old, %y : tensor<16x64xf32>
  util.global.store %new, @total : tensor<16x64xf32>
  return %y, %new : tensor<16x64xf32>, tensor<16x64xf32>
}
