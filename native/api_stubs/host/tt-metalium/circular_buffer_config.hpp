// Stub of tt_metal/api/tt-metalium/circular_buffer_config.hpp (tt-metal v0.81.1; members checked against libtt_metal.so).
#pragma once
#include <cstdint>
#include <map>
#include <tt-metalium/tt_backend_api_types.hpp>

namespace tt::tt_metal {
class Buffer;

// circular_buffer_config.hpp: class CircularBufferConfig
class CircularBufferConfig {
public:
    // CircularBufferConfig(uint32_t total_size)
    CircularBufferConfig(uint32_t total_size);
    // CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec)
    CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec);
    // CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec, const Buffer& buffer)
    CircularBufferConfig(
        uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec, const Buffer& buffer);
    // CircularBufferConfig& set_page_size(uint8_t buffer_index, uint32_t page_size)
    CircularBufferConfig& set_page_size(uint8_t buffer_index, uint32_t page_size);
    // CircularBufferConfig& set_total_size(uint32_t total_size)
    CircularBufferConfig& set_total_size(uint32_t total_size);
    // CircularBufferConfig& set_globally_allocated_address(const Buffer& buffer)
    CircularBufferConfig& set_globally_allocated_address(const Buffer& buffer);
    // uint32_t total_size() const
    uint32_t total_size() const;
};
}  // namespace tt::tt_metal
