// Softmax over the last dim in StableHLO, f32: exp(x - max(x)) / sum(exp(x - max(x))).
// @main(x: 64x256) -> 64x256.
// Origin: hand-written after what jax 0.10.2 emits for jax.nn.softmax(x, axis=-1)
// (reduce max, the max with -inf, keepdims broadcasts through 64x1, sub, exp, reduce add, div).
func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x256xf32>, tensor<f32>) -> tensor<64xf32>
  %ninf_b = stablehlo.broadcast_in_dim %ninf, dims = [] : (tensor<f32>) -> tensor<64xf32>
  %max1 = stablehlo.maximum %ninf_b, %max : tensor<64xf32>
  %max_k = stablehlo.broadcast_in_dim %max1, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %max_b = stablehlo.broadcast_in_dim %max_k, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x256xf32>
  %d = stablehlo.subtract %x, %max_b : tensor<64x256xf32>
  %e = stablehlo.exponential %d : tensor<64x256xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x256xf32>, tensor<f32>) -> tensor<64xf32>
  %sum_k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %sum_b = stablehlo.broadcast_in_dim %sum_k, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x256xf32>
  %r = stablehlo.divide %e, %sum_b : tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
