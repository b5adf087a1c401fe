// Stub of tt_metal/api/tt-metalium/mesh_command_queue.hpp (tt-metal v0.81.1). Replaces CommandQueue and the
// EnqueueWriteBuffer/EnqueueReadBuffer/EnqueueRecordEvent/EnqueueWaitForEvent/Finish free functions.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include <tt_stl/span.hpp>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/mesh_event.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal::distributed {
class MeshDevice;

// mesh_command_queue.hpp: class ShardDataTransfer (builder-style: ShardDataTransfer{coord}.host_data(ptr).region(r))
class ShardDataTransfer {
public:
    explicit ShardDataTransfer(const MeshCoordinate& shard_coord);
    ShardDataTransfer& shard_coord(const MeshCoordinate& shard_coord);
    ShardDataTransfer& host_data(void* host_data);
    ShardDataTransfer& region(std::optional<BufferRegion> region);
    void* host_data() const;
};

// mesh_command_queue.hpp: class MeshCommandQueue   (THREAD SAFETY: all methods are thread safe)
class MeshCommandQueue {
public:
    MeshCommandQueue(const MeshCommandQueue&) = delete;
    MeshCommandQueue& operator=(const MeshCommandQueue&) = delete;
    virtual ~MeshCommandQueue() = default;
    // mesh_command_queue.hpp: MeshDevice* device() const;   uint32_t id() const;
    MeshDevice* device() const;
    uint32_t id() const;
    // mesh_command_queue.hpp: virtual void enqueue_mesh_workload(MeshWorkload& mesh_workload, bool blocking) = 0;
    virtual void enqueue_mesh_workload(MeshWorkload& mesh_workload, bool blocking) = 0;
    // The buffer I/O virtuals below are in v0.81.1's MeshCommandQueue vtable in this order (slots 8, 10, 11, 12 of
    // libtt_metal.so's FDMeshCommandQueue/MeshCommandQueueBase vtables, before enqueue_record_event), so they are
    // declared by the public class; the newest main-branch header has dropped some of them.
    // mesh_command_queue.hpp: virtual void enqueue_write_mesh_buffer(const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool blocking) = 0;
    //   (whole buffer; the replacement for EnqueueWriteBuffer(cq, buffer, src, blocking))
    virtual void enqueue_write_mesh_buffer(
        const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool blocking) = 0;
    // mesh_command_queue.hpp: virtual void enqueue_write_shards(const std::shared_ptr<MeshBuffer>& mesh_buffer,
    //                         const std::vector<ShardDataTransfer>& shard_data_transfers, bool blocking) = 0;
    virtual void enqueue_write_shards(
        const std::shared_ptr<MeshBuffer>& mesh_buffer,
        const std::vector<ShardDataTransfer>& shard_data_transfers,
        bool blocking) = 0;
    // mesh_command_queue.hpp: virtual void enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool blocking) = 0;
    //   (whole buffer; the replacement for EnqueueReadBuffer(cq, buffer, dst, blocking))
    virtual void enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool blocking) = 0;
    // mesh_command_queue.hpp: virtual void enqueue_read_shards(const std::vector<ShardDataTransfer>& shard_data_transfers,
    //                         const std::shared_ptr<MeshBuffer>& mesh_buffer, bool blocking) = 0;
    virtual void enqueue_read_shards(
        const std::vector<ShardDataTransfer>& shard_data_transfers,
        const std::shared_ptr<MeshBuffer>& mesh_buffer,
        bool blocking) = 0;
    // mesh_command_queue.hpp: virtual MeshEvent enqueue_record_event(ttsl::Span<const SubDeviceId> sub_device_ids = {},
    //                         const std::optional<MeshCoordinateRange>& device_range = std::nullopt) = 0;   (device-side only)
    virtual MeshEvent enqueue_record_event(
        ttsl::Span<const SubDeviceId> sub_device_ids = {},
        const std::optional<MeshCoordinateRange>& device_range = std::nullopt) = 0;
    // mesh_command_queue.hpp: virtual MeshEvent enqueue_record_event_to_host(...same...) = 0;   (host can query/synchronize)
    virtual MeshEvent enqueue_record_event_to_host(
        ttsl::Span<const SubDeviceId> sub_device_ids = {},
        const std::optional<MeshCoordinateRange>& device_range = std::nullopt) = 0;
    // mesh_command_queue.hpp: virtual void enqueue_wait_for_event(const MeshEvent& sync_event) = 0;   (device-side wait)
    virtual void enqueue_wait_for_event(const MeshEvent& sync_event) = 0;
    // mesh_command_queue.hpp: virtual void finish(ttsl::Span<const SubDeviceId> sub_device_ids = {}) = 0;
    virtual void finish(ttsl::Span<const SubDeviceId> sub_device_ids = {}) = 0;

protected:
    MeshCommandQueue(MeshDevice* mesh_device, uint32_t id);
};
}  // namespace tt::tt_metal::distributed
