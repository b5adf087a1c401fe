// Stub of tt_metal/api/tt-metalium/program.hpp (tt-metal v0.81.1).
#pragma once
#include <memory>

namespace tt::tt_metal {
namespace detail {
class ProgramImpl;
}  // namespace detail

// program.hpp: class Program (move-only handle; build with CreateProgram())
class Program {
public:
    Program();
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    Program(Program&& other) noexcept;
    Program& operator=(Program&& other) noexcept;
    ~Program();

private:
    // A handle to its implementation, not an empty type (libtt_metal.so exports Program(shared_ptr<ProgramImpl>)).
    std::shared_ptr<detail::ProgramImpl> internal_;
};
}  // namespace tt::tt_metal
