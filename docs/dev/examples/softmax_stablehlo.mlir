// Numerically stable row softmax in StableHLO (as jax.nn.softmax lowers it).
func.func @softmax(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x512xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x512xf32>
  %ex = stablehlo.exponential %d : tensor<64x512xf32>
  %s = stablehlo.reduce(%ex init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x512xf32>
  %r = stablehlo.divide %ex, %sb : tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}
