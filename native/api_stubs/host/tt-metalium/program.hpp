// Stub of tt_metal/api/tt-metalium/program.hpp (tt-metal v0.81.1).
#pragma once

namespace tt::tt_metal {
// program.hpp: class Program (move-only handle; build with CreateProgram())
class Program {
public:
    Program();
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    Program(Program&& other) noexcept;
    Program& operator=(Program&& other) noexcept;
    ~Program();
};
}  // namespace tt::tt_metal
