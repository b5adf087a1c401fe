// Exercises the host schedule: two independent matmuls (concurrency), a transpose,
// a batch_matmul, a constant weight, and a dynamic batch dimension (push constants).
func.func @mixed(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>, %c: tensor<128x64xf32>,
                 %q: tensor<4x32x16xf32>, %k: tensor<4x16x32xf32>, %d: tensor<?x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x32x32xf32>, tensor<?x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<2.0> : tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m0 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m1 = linalg.matmul ins(%a, %c : tensor<64x128xf32>, tensor<128x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = linalg.transpose ins(%m1 : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) permutation = [1, 0]
  %s = linalg.elementwise <add> ins(%t, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eb = tensor.empty() : tensor<4x32x32xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %bm = linalg.batch_matmul ins(%q, %k : tensor<4x32x16xf32>, tensor<4x16x32xf32>) outs(%fb : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?x64xf32>
  %ed = tensor.empty(%n) : tensor<?x64xf32>
  %x = linalg.elementwise <exp> ins(%d : tensor<?x64xf32>) outs(%ed : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %m0, %s, %bm, %x : tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x32x32xf32>, tensor<?x64xf32>
}
