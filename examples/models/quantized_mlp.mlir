// An int8-quantized MLP as a quantizing compiler writes it: int8 activations and
// weights, int32 accumulation (exact on the Tensix: integer matmuls run bytewise through
// the FPU), a float rescale and relu, requantization to int8 (round, clamp, convert),
// and a second int8 layer.
func.func @main(%x: tensor<64x256xi8>, %w1: tensor<256x128xi8>, %w2: tensor<128x10xi8>) -> tensor<64x10xf32> {
  %acc1 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<64x256xi8>, tensor<256x128xi8>) -> tensor<64x128xi32>
  %f1 = stablehlo.convert %acc1 : (tensor<64x128xi32>) -> tensor<64x128xf32>
  %s1 = stablehlo.constant dense<0.125> : tensor<64x128xf32>
  %h = stablehlo.multiply %f1, %s1 : tensor<64x128xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<64x128xf32>
  %relu = stablehlo.maximum %h, %zero : tensor<64x128xf32>
  %rounded = stablehlo.round_nearest_even %relu : tensor<64x128xf32>
  %lo = stablehlo.constant dense<-128.0> : tensor<64x128xf32>
  %hi = stablehlo.constant dense<127.0> : tensor<64x128xf32>
  %clamped = stablehlo.clamp %lo, %rounded, %hi : tensor<64x128xf32>
  %q = stablehlo.convert %clamped : (tensor<64x128xf32>) -> tensor<64x128xi8>
  %acc2 = stablehlo.dot_general %q, %w2, contracting_dims = [1] x [0]
      : (tensor<64x128xi8>, tensor<128x10xi8>) -> tensor<64x10xi32>
  %f2 = stablehlo.convert %acc2 : (tensor<64x10xi32>) -> tensor<64x10xf32>
  %s2 = stablehlo.constant dense<0.0625> : tensor<64x10xf32>
  %y = stablehlo.multiply %f2, %s2 : tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}
