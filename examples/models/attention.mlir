// Single-head attention block in StableHLO, f32:
// q = x@wq, k = x@wk, v = x@wv; p = softmax(q @ k^T * (1/sqrt(64)), last dim); out = (p @ v) @ wo.
// @main(x: 128x64 [S=128, D=64], wq: 64x64, wk: 64x64, wv: 64x64, wo: 64x64) -> 128x64.
// Origin: hand-written in the form jax 0.10.2 emits (k^T as stablehlo.transpose, then
// dot_general contracting [1] x [0]; softmax as in softmax.mlir but without JAX's extra
// maximum(-inf, max)); attention_jax.mlir is the generated one.
func.func @main(%x: tensor<128x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
                %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<128x64xf32> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %kt = stablehlo.transpose %k, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %qk = stablehlo.dot_general %q, %kt, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %scale = stablehlo.constant dense<1.250000e-01> : tensor<f32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<128x128xf32>
  %s = stablehlo.multiply %qk, %scale_b : tensor<128x128xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %max = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<128x128xf32>, tensor<f32>) -> tensor<128xf32>
  %max_k = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
  %max_b = stablehlo.broadcast_in_dim %max_k, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x128xf32>
  %d = stablehlo.subtract %s, %max_b : tensor<128x128xf32>
  %e = stablehlo.exponential %d : tensor<128x128xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<128x128xf32>, tensor<f32>) -> tensor<128xf32>
  %sum_k = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
  %sum_b = stablehlo.broadcast_in_dim %sum_k, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x128xf32>
  %p = stablehlo.divide %e, %sum_b : tensor<128x128xf32>
  %pv = stablehlo.dot_general %p, %v, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %out = stablehlo.dot_general %pv, %wo, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  return %out : tensor<128x64xf32>
}
