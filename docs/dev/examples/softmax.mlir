// Row softmax with the named linalg.softmax op.
func.func @softmax(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %e = tensor.empty() : tensor<64x512xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<64x512xf32>) outs(%e : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}
