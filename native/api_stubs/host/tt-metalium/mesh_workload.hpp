// Stub of tt_metal/api/tt-metalium/mesh_workload.hpp (tt-metal v0.81.1). Replaces EnqueueProgram: wrap the
// Program in a MeshWorkload for a device range (the whole 1x1 mesh for one chip) and EnqueueMeshWorkload it.
#pragma once
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/program.hpp>

namespace tt::tt_metal::distributed {
// mesh_workload.hpp: class MeshWorkload
class MeshWorkload {
public:
    MeshWorkload();
    ~MeshWorkload();
    MeshWorkload(MeshWorkload&& other) noexcept;
    MeshWorkload& operator=(MeshWorkload&& other) noexcept;
    // mesh_workload.hpp: void add_program(const MeshCoordinateRange& device_range, Program&& program);
    void add_program(const MeshCoordinateRange& device_range, Program&& program);
};
}  // namespace tt::tt_metal::distributed
