// LayerNorm over the last dim (eps = 1e-5) in linalg on tensors: reductions + elementwise.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @layernorm(%x: tensor<64x512xf32>, %g: tensor<512xf32>, %b: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 512.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %er = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x512xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %var = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %sum : tensor<64x512xf32>, tensor<64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32, %acc: f32):
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %a, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %d2, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<64x512xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %var, %g, %b : tensor<64x512xf32>, tensor<64xf32>, tensor<64xf32>, tensor<512xf32>, tensor<512xf32>)
      outs(%e : tensor<64x512xf32>) {
  ^bb0(%a: f32, %s: f32, %v: f32, %gg: f32, %bb: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %vv = arith.divf %v, %n : f32
    %ve = arith.addf %vv, %eps : f32
    %rs = math.rsqrt %ve : f32
    %d = arith.subf %a, %mean : f32
    %t = arith.mulf %d, %rs : f32
    %t2 = arith.mulf %t, %gg : f32
    %t3 = arith.addf %t2, %bb : f32
    linalg.yield %t3 : f32
  } -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}
