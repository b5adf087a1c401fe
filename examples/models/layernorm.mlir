// LayerNorm over the last dim in StableHLO, f32, eps = 1e-5:
// (x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta.
// @main(x: 64x512, gamma: 512, beta: 512) -> 64x512.
// Origin: hand-written after what jax 0.10.2 emits for that expression with
// x.mean(-1, keepdims=True) (keepdims broadcasts through 64x1; x - mean is computed twice).
func.func @main(%x: tensor<64x512xf32>, %gamma: tensor<512xf32>, %beta: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %n = stablehlo.constant dense<5.120000e+02> : tensor<f32>
  %eps = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
  %n_k = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<64x1xf32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %sum_k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %mean = stablehlo.divide %sum_k, %n_k : tensor<64x1xf32>
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x512xf32>
  %d = stablehlo.subtract %x, %mean_b : tensor<64x512xf32>
  %d2 = stablehlo.multiply %d, %d : tensor<64x512xf32>
  %vsum = stablehlo.reduce(%d2 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64xf32>
  %vsum_k = stablehlo.broadcast_in_dim %vsum, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %var = stablehlo.divide %vsum_k, %n_k : tensor<64x1xf32>
  %mean_b2 = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x512xf32>
  %d_again = stablehlo.subtract %x, %mean_b2 : tensor<64x512xf32>
  %eps_k = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<64x1xf32>
  %ve = stablehlo.add %var, %eps_k : tensor<64x1xf32>
  %rs = stablehlo.rsqrt %ve : tensor<64x1xf32>
  %rs_b = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x512xf32>
  %y = stablehlo.multiply %d_again, %rs_b : tensor<64x512xf32>
  %g_k = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<512xf32>) -> tensor<1x512xf32>
  %g_b = stablehlo.broadcast_in_dim %g_k, dims = [0, 1] : (tensor<1x512xf32>) -> tensor<64x512xf32>
  %y2 = stablehlo.multiply %y, %g_b : tensor<64x512xf32>
  %b_k = stablehlo.broadcast_in_dim %beta, dims = [1] : (tensor<512xf32>) -> tensor<1x512xf32>
  %b_b = stablehlo.broadcast_in_dim %b_k, dims = [0, 1] : (tensor<1x512xf32>) -> tensor<64x512xf32>
  %y3 = stablehlo.add %y2, %b_b : tensor<64x512xf32>
  return %y3 : tensor<64x512xf32>
}
