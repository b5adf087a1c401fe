// Stub of tt_metal/api/tt-metalium/mesh_event.hpp (tt-metal v0.81.1). Returned by
// MeshCommandQueue::enqueue_record_event[_to_host]; copyable handle.
#pragma once
#include <cstdint>

namespace tt::tt_metal::distributed {
class MeshDevice;

// mesh_event.hpp: class MeshEvent
class MeshEvent {
public:
    MeshEvent(const MeshEvent& other);
    MeshEvent(MeshEvent&& other);
    MeshEvent& operator=(const MeshEvent& other);
    MeshEvent& operator=(MeshEvent&& other);
    ~MeshEvent();
    // mesh_event.hpp: MeshDevice* device() const;
    MeshDevice* device() const;
};
}  // namespace tt::tt_metal::distributed
