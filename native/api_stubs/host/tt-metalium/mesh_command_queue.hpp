// Stub of tt_metal/api/tt-metalium/mesh_command_queue.hpp (tt-metal v0.81.1). Replaces CommandQueue and the
// EnqueueWriteBuffer/EnqueueReadBuffer/EnqueueRecordEvent/EnqueueWaitForEvent/Finish free functions.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_set>
#include <vector>
#include <tt_stl/span.hpp>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/mesh_event.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal {
class DistributedHostBuffer;  // distributed_host_buffer.hpp
class WorkerConfigBufferMgr;  // impl/dispatch/worker_config_buffer.hpp
namespace experimental {
class PinnedMemory;  // experimental/pinned_memory.hpp
}  // namespace experimental
}  // namespace tt::tt_metal

namespace tt::tt_metal::distributed {
class MeshDevice;
// mesh_trace_id.hpp: using MeshTraceId = ttsl::StrongType<uint32_t, struct MeshTraceIdTag>;
using MeshTraceId = ttsl::StrongType<uint32_t, struct MeshTraceIdTag>;

// mesh_command_queue.hpp: class ShardDataTransfer (builder-style: ShardDataTransfer{coord}.host_data(ptr).region(r)).
// Inline in 0.81.1 (libtt_metal.so exports none of its methods): the members and bodies are the real header's.
class ShardDataTransfer {
private:
    MeshCoordinate shard_coord_;
    void* host_data_ = nullptr;
    std::optional<BufferRegion> region_;
    std::shared_ptr<experimental::PinnedMemory> pinned_memory_ = nullptr;

public:
    explicit ShardDataTransfer(const MeshCoordinate& shard_coord) : shard_coord_(shard_coord) {}
    MeshCoordinate shard_coord() const { return shard_coord_; }
    void* host_data() const { return host_data_; }
    std::optional<BufferRegion> region() const { return region_; }
    ShardDataTransfer& shard_coord(const MeshCoordinate& shard_coord) {
        shard_coord_ = shard_coord;
        return *this;
    }
    ShardDataTransfer& host_data(void* host_data) {
        host_data_ = host_data;
        return *this;
    }
    ShardDataTransfer& region(std::optional<BufferRegion> region) {
        region_ = region;
        return *this;
    }
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
    // The virtual functions in 0.81.1's order (the vtables of FDMeshCommandQueue, SDMeshCommandQueue and
    // MeshCommandQueueBase in libtt_metal.so; tests/test_ttmetal_binding.py compares the slots): a call through this
    // class uses the slot of its declaration, so every virtual function is declared, in place, used or not.
    // slot 2: virtual std::optional<MeshTraceId> trace_id() const = 0;
    virtual std::optional<MeshTraceId> trace_id() const = 0;
    // slot 3: virtual WorkerConfigBufferMgr& get_config_buffer_mgr(uint32_t index) = 0;
    virtual WorkerConfigBufferMgr& get_config_buffer_mgr(uint32_t index) = 0;
    // slot 4
    virtual void enqueue_mesh_workload(MeshWorkload& mesh_workload, bool blocking) = 0;
    // slot 5
    virtual void enqueue_write_shard_to_sub_grid(
        const MeshBuffer& buffer,
        const void* host_data,
        const MeshCoordinateRange& device_range,
        bool blocking,
        std::optional<BufferRegion> region = std::nullopt) = 0;
    // slot 6: whole buffer (the replacement for EnqueueWriteBuffer(cq, buffer, src, blocking))
    virtual void enqueue_write_mesh_buffer(
        const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool blocking) = 0;
    // slot 7
    virtual void enqueue_write(
        const std::shared_ptr<MeshBuffer>& mesh_buffer, const DistributedHostBuffer& host_buffer, bool blocking) = 0;
    // slot 8
    virtual void enqueue_write_shards(
        const std::shared_ptr<MeshBuffer>& mesh_buffer,
        const std::vector<ShardDataTransfer>& shard_data_transfers,
        bool blocking) = 0;
    // slot 9: whole buffer (the replacement for EnqueueReadBuffer(cq, buffer, dst, blocking))
    virtual void enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool blocking) = 0;
    // slot 10
    virtual void enqueue_read_shards(
        const std::vector<ShardDataTransfer>& shard_data_transfers,
        const std::shared_ptr<MeshBuffer>& mesh_buffer,
        bool blocking) = 0;
    // slot 11
    virtual void enqueue_read(
        const std::shared_ptr<MeshBuffer>& mesh_buffer,
        DistributedHostBuffer& host_buffer,
        const std::optional<std::unordered_set<MeshCoordinate>>& shards,
        bool blocking) = 0;
    // slot 12: device-side only
    virtual MeshEvent enqueue_record_event(
        ttsl::Span<const SubDeviceId> sub_device_ids = {},
        const std::optional<MeshCoordinateRange>& device_range = std::nullopt) = 0;
    // slot 13: the host can query and synchronize it
    virtual MeshEvent enqueue_record_event_to_host(
        ttsl::Span<const SubDeviceId> sub_device_ids = {},
        const std::optional<MeshCoordinateRange>& device_range = std::nullopt) = 0;
    // slot 14: a device-side wait
    virtual void enqueue_wait_for_event(const MeshEvent& sync_event) = 0;
    // slot 15
    virtual void finish(ttsl::Span<const SubDeviceId> sub_device_ids = {}) = 0;

protected:
    MeshCommandQueue(MeshDevice* mesh_device, uint32_t id);
};
}  // namespace tt::tt_metal::distributed
