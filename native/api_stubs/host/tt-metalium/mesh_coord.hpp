// Stub of tt_metal/api/tt-metalium/mesh_coord.hpp (tt-metal v0.81.1; constructors checked against libtt_metal.so;
// `explicit` could not be checked from symbols, so none is declared).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>

namespace tt::tt_metal::distributed {
// mesh_coord.hpp: class MeshShape
class MeshShape {
public:
    MeshShape(uint32_t s0);
    MeshShape(uint32_t s0, uint32_t s1);
    MeshShape(uint32_t s0, uint32_t s1, uint32_t s2);
    MeshShape(std::initializer_list<uint32_t> shape);
    MeshShape(std::span<const uint32_t> shape);
};

// mesh_coord.hpp: class MeshCoordinate
class MeshCoordinate {
public:
    MeshCoordinate(uint32_t c0);
    MeshCoordinate(uint32_t c0, uint32_t c1);
    MeshCoordinate(uint32_t c0, uint32_t c1, uint32_t c2);
    MeshCoordinate(std::span<const uint32_t> coords);
};

// mesh_coord.hpp: class MeshCoordinateRange (inclusive start..end)
class MeshCoordinateRange {
public:
    MeshCoordinateRange(const MeshCoordinate& start, const MeshCoordinate& end);
    MeshCoordinateRange(const MeshCoordinate& coord);
    // MeshCoordinateRange(const MeshShape& shape): the whole mesh
    MeshCoordinateRange(const MeshShape& shape);
};
}  // namespace tt::tt_metal::distributed
