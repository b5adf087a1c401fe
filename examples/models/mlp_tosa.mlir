// Two-layer MLP in TOSA, f32: relu(relu(x @ w1 + b1) @ w2 + b2), as examples/models/mlp.mlir.
// @main(x: 64x512, w1: 512x512, b1: 512, w2: 512x512, b2: 512) -> 64x512.
// Hand-written, in generic op syntax where IREE 3.13's TOSA and newer releases print ops differently;
// tosa.matmul is batched (rank 3, zero points as operands), so the 2-D
// operands are reshaped to a batch of one; tosa.add broadcasts the bias; tosa.clamp is relu.
func.func @main(%x: tensor<64x512xf32>, %w1: tensor<512x512xf32>, %b1: tensor<512xf32>,
                %w2: tensor<512x512xf32>, %b2: tensor<512xf32>) -> tensor<64x512xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s_x = "tosa.const_shape"() <{values = dense<[1, 64, 512]> : tensor<3xindex>}> : () -> !tosa.shape<3>
  %s_w = "tosa.const_shape"() <{values = dense<[1, 512, 512]> : tensor<3xindex>}> : () -> !tosa.shape<3>
  %s_b = "tosa.const_shape"() <{values = dense<[1, 1, 512]> : tensor<3xindex>}> : () -> !tosa.shape<3>
  %s_out = "tosa.const_shape"() <{values = dense<[64, 512]> : tensor<2xindex>}> : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s_x : (tensor<64x512xf32>, !tosa.shape<3>) -> tensor<1x64x512xf32>
  %w13 = tosa.reshape %w1, %s_w : (tensor<512x512xf32>, !tosa.shape<3>) -> tensor<1x512x512xf32>
  %w23 = tosa.reshape %w2, %s_w : (tensor<512x512xf32>, !tosa.shape<3>) -> tensor<1x512x512xf32>
  %b13 = tosa.reshape %b1, %s_b : (tensor<512xf32>, !tosa.shape<3>) -> tensor<1x1x512xf32>
  %b23 = tosa.reshape %b2, %s_b : (tensor<512xf32>, !tosa.shape<3>) -> tensor<1x1x512xf32>
  %0 = tosa.matmul %x3, %w13, %zp, %zp : (tensor<1x64x512xf32>, tensor<1x512x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x512xf32>
  %1 = tosa.add %0, %b13 : (tensor<1x64x512xf32>, tensor<1x1x512xf32>) -> tensor<1x64x512xf32>
  %2 = "tosa.clamp"(%1) <{min_val = 0.0 : f32, max_val = 3.40282347e+38 : f32}> : (tensor<1x64x512xf32>) -> tensor<1x64x512xf32>
  %3 = tosa.matmul %2, %w23, %zp, %zp : (tensor<1x64x512xf32>, tensor<1x512x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x512xf32>
  %4 = tosa.add %3, %b23 : (tensor<1x64x512xf32>, tensor<1x1x512xf32>) -> tensor<1x64x512xf32>
  %5 = "tosa.clamp"(%4) <{min_val = 0.0 : f32, max_val = 3.40282347e+38 : f32}> : (tensor<1x64x512xf32>) -> tensor<1x64x512xf32>
  %r = tosa.reshape %5, %s_out : (tensor<1x64x512xf32>, !tosa.shape<2>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}
