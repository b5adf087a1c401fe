// Two-layer MLP in linalg on tensors, f32: relu(relu(x @ w1 + b1) @ w2 + b2).
// @main(x: 64x512, w1: 512x512, b1: 512, w2: 512x512, b2: 512) -> 64x512.
// Origin: docs/dev/examples/mlp.mlir (hand-written), entry point renamed to @main.
#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<64x512xf32>, %w1: tensor<512x512xf32>, %b1: tensor<512xf32>,
                %w2: tensor<512x512xf32>, %b2: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x512xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %mm0 = linalg.matmul ins(%x, %w1 : tensor<64x512xf32>, tensor<512x512xf32>)
                       outs(%acc0 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %h0 = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%mm0, %b1 : tensor<64x512xf32>, tensor<512xf32>) outs(%e0 : tensor<64x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x512xf32>
  %e1 = tensor.empty() : tensor<64x512xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %mm1 = linalg.matmul ins(%h0, %w2 : tensor<64x512xf32>, tensor<512x512xf32>)
                       outs(%acc1 : tensor<64x512xf32>) -> tensor<64x512xf32>
  %h1 = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %b2 : tensor<64x512xf32>, tensor<512xf32>) outs(%e1 : tensor<64x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x512xf32>
  return %h1 : tensor<64x512xf32>
}
