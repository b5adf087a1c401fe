// Single layer matmul + bias + relu in TOSA (tosa.matmul is batched: 1x64x512 @ 1x512x512).
func.func @layer(%x: tensor<1x64x512xf32>, %w: tensor<1x512x512xf32>, %b: tensor<1x1x512xf32>) -> tensor<1x64x512xf32> {
  %azp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %x, %w, %azp, %azp : (tensor<1x64x512xf32>, tensor<1x512x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x512xf32>
  %s = tosa.add %mm, %b : (tensor<1x64x512xf32>, tensor<1x1x512xf32>) -> tensor<1x64x512xf32>
  %r = "tosa.clamp"(%s) <{min_val = 0.0 : f32, max_val = 3.4028235e+38 : f32}> : (tensor<1x64x512xf32>) -> tensor<1x64x512xf32>
  return %r : tensor<1x64x512xf32>
}
