// LayerNorm over the last dim (eps = 1e-5) in StableHLO.
func.func @layernorm(%x: tensor<64x512xf32>, %g: tensor<512xf32>, %b: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<512.0> : tensor<64xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<64xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %mean = stablehlo.divide %s, %n : tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<64xf32>) -> tensor<64x512xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x512xf32>
  %d2 = stablehlo.multiply %d, %d : tensor<64x512xf32>
  %vs = stablehlo.reduce(%d2 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %var = stablehlo.divide %vs, %n : tensor<64xf32>
  %ve = stablehlo.add %var, %eps : tensor<64xf32>
  %rs = stablehlo.rsqrt %ve : tensor<64xf32>
  %rb = stablehlo.broadcast_in_dim %rs, dims = [0] : (tensor<64xf32>) -> tensor<64x512xf32>
  %y = stablehlo.multiply %d, %rb : tensor<64x512xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<512xf32>) -> tensor<64x512xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<64x512xf32>
  %y2 = stablehlo.multiply %y, %gb : tensor<64x512xf32>
  %y3 = stablehlo.add %y2, %bb : tensor<64x512xf32>
  return %y3 : tensor<64x512xf32>
}
