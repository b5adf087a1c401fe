// Stub of tt_metal/api/tt-metalium/distributed.hpp (tt-metal v0.81.1). Remaining free functions; signatures are
// those exported by libtt_metal.so 0.81.1. EnqueueRecordEvent/EnqueueWaitForEvent were moved to MeshCommandQueue
// members (tt-metal PRs #29461, #29678, #29725, 2025-09).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include <tt_stl/span.hpp>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_command_queue.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/mesh_event.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal::distributed {
// distributed.hpp: void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking);
void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking);
// distributed.hpp: void EventSynchronize(const MeshEvent& event);   (host blocks; event must be recorded *_to_host)
void EventSynchronize(const MeshEvent& event);
// distributed.hpp: bool EventQuery(const MeshEvent& event);   (exported by 0.81.1; absent from the newest main headers)
bool EventQuery(const MeshEvent& event);
// distributed.hpp: void Finish(MeshCommandQueue& mesh_cq, ttsl::Span<const SubDeviceId> sub_device_ids = {});
void Finish(MeshCommandQueue& mesh_cq, ttsl::Span<const SubDeviceId> sub_device_ids = {});
// distributed.hpp: template <typename DType> void WriteShard(MeshCommandQueue& mesh_cq, const std::shared_ptr<MeshBuffer>& mesh_buffer,
//     std::vector<DType>& src, const MeshCoordinate& coord, bool blocking = false);   (instantiated in libtt_metal.so 0.81.1)
template <typename DType>
void WriteShard(
    MeshCommandQueue& mesh_cq,
    const std::shared_ptr<MeshBuffer>& mesh_buffer,
    std::vector<DType>& src,
    const MeshCoordinate& coord,
    bool blocking = false);
// distributed.hpp: void Synchronize(MeshDevice* device, std::optional<uint8_t> cq_id, ttsl::Span<const SubDeviceId> sub_device_ids = {});
void Synchronize(MeshDevice* device, std::optional<uint8_t> cq_id, ttsl::Span<const SubDeviceId> sub_device_ids = {});
}  // namespace tt::tt_metal::distributed
