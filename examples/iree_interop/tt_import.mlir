// A program that runs on the CPU (iree.runtime local-task) and calls a matmul on
// the tenstorrent device through the VM module `tt` (hal/vm_module.py).
// Compiled and run by run_tt_import.py.
//
// An external function named `<module>.<function>` is an import: IREE's ABI pass
// turns its tensors into !hal.buffer_view and the call site into hal.tensor.export
// / hal.tensor.import around the call, so no ABI ops are written here.

// Sync form: the runtime waits until %a and %b are computed, calls tt.matmul,
// and uses the result at once.
func.func private @tt.matmul(tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>

// Coarse-fences form: two more arguments, a fence the callee waits on before it
// reads the inputs and one it signals when the result is ready. It is declared as
// util.func because iree-import-public (func.func -> util.func) drops the
// iree.abi.model attribute in iree-base-compiler 3.13: a func.func declaration
// would silently become a sync import. A util.func is called with util.call.
// `nosideeffects`: the program does not wait on the host for the signal fence;
// the work after the call is queued behind it instead.
util.func private @"tt.matmul$async"(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32>
    attributes {iree.abi.model = "coarse-fences", nosideeffects}

// relu(2 * x @ w + bias): 2 * x and the bias on the CPU, the matmul on tenstorrent.
func.func @linear(%x: tensor<64x128xf32>, %w: tensor<128x32xf32>, %bias: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %x2 = arith.addf %x, %x : tensor<64x128xf32>
  %y = call @tt.matmul(%x2, %w) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  %z = arith.addf %y, %bias : tensor<64x32xf32>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %r = arith.maximumf %z, %zero : tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// The same through the coarse-fences import.
func.func @linear_async(%x: tensor<64x128xf32>, %w: tensor<128x32xf32>, %bias: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %x2 = arith.addf %x, %x : tensor<64x128xf32>
  %y = util.call @"tt.matmul$async"(%x2, %w) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  %z = arith.addf %y, %bias : tensor<64x32xf32>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %r = arith.maximumf %z, %zero : tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
