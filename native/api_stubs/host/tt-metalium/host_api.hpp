// Stub of tt_metal/api/tt-metalium/host_api.hpp (tt-metal v0.81.1). Signatures as exported by libtt_metal.so 0.81.1.
// Gone from v0.81.1: CreateDevice, CloseDevice, CreateBuffer, EnqueueWriteBuffer, EnqueueReadBuffer, EnqueueProgram,
// EnqueueRecordEvent, EnqueueWaitForEvent, Finish(CommandQueue&) -> see mesh_device.hpp, mesh_buffer.hpp,
// mesh_command_queue.hpp, distributed.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>
#include <tt_stl/span.hpp>
#include <tt-metalium/circular_buffer_config.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/kernel_types.hpp>
#include <tt-metalium/program.hpp>

namespace tt::tt_metal {
// circular_buffer.hpp / host_api.hpp: using CBHandle = uintptr_t;
using CBHandle = uintptr_t;

// host_api.hpp: size_t GetNumAvailableDevices();
size_t GetNumAvailableDevices();
// host_api.hpp: size_t GetNumPCIeDevices();
size_t GetNumPCIeDevices();

// host_api.hpp: Program CreateProgram();
Program CreateProgram();

// host_api.hpp: KernelHandle CreateKernel(Program& program, const std::string& file_name,
//     const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec, const std::variant<DataMovementConfig, ComputeConfig>& config);
//   (v0.81.1 also has overloads taking EthernetConfig and DramConfig; not stubbed)
KernelHandle CreateKernel(
    Program& program,
    const std::string& file_name,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const std::variant<DataMovementConfig, ComputeConfig>& config);
// host_api.hpp: KernelHandle CreateKernelFromString(Program& program, const std::string& kernel_src_code,
//     const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec, const std::variant<DataMovementConfig, ComputeConfig>& config);
KernelHandle CreateKernelFromString(
    Program& program,
    const std::string& kernel_src_code,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const std::variant<DataMovementConfig, ComputeConfig>& config);

// host_api.hpp: CBHandle CreateCircularBuffer(Program& program, const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
//     const CircularBufferConfig& config);
CBHandle CreateCircularBuffer(
    Program& program,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const CircularBufferConfig& config);

// host_api.hpp: uint32_t CreateSemaphore(Program& program, const std::variant<CoreRange, CoreRangeSet>& core_spec, uint32_t initial_value);
uint32_t CreateSemaphore(
    Program& program, const std::variant<CoreRange, CoreRangeSet>& core_spec, uint32_t initial_value);

// host_api.hpp: void SetRuntimeArgs(const Program& program, KernelHandle kernel,
//     const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec, ttsl::Span<const uint32_t> runtime_args);
//   (a std::vector<uint32_t> converts to the span; max 341 args per core, unique + common)
void SetRuntimeArgs(
    const Program& program,
    KernelHandle kernel,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    ttsl::Span<const uint32_t> runtime_args);
// host_api.hpp: same, with std::initializer_list<uint32_t> runtime_args
void SetRuntimeArgs(
    const Program& program,
    KernelHandle kernel,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    std::initializer_list<uint32_t> runtime_args);
// host_api.hpp: void SetRuntimeArgs(const Program& program, KernelHandle kernel, const std::vector<CoreCoord>& core_spec,
//     const std::vector<std::vector<uint32_t>>& runtime_args);
void SetRuntimeArgs(
    const Program& program,
    KernelHandle kernel,
    const std::vector<CoreCoord>& core_spec,
    const std::vector<std::vector<uint32_t>>& runtime_args);
// host_api.hpp: void SetCommonRuntimeArgs(const Program& program, KernelHandle kernel_id, ttsl::Span<const uint32_t> runtime_args);
void SetCommonRuntimeArgs(const Program& program, KernelHandle kernel_id, ttsl::Span<const uint32_t> runtime_args);
}  // namespace tt::tt_metal
