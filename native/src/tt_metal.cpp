// tt_hal.native._tt_metal: a thin pybind11 binding of tt-metalium's host API (v0.81.1, the
// Mesh forms; docs/dev/tt-metal-api.md), one call per host API function. The
// protocol logic (waves of workgroups, runtime args, events and their callbacks)
// is in native/device.py. Built only against a TT-Metal install (native/CMakeLists.txt).
//
// A device is a 1x1 MeshDevice (create_unit_mesh); buffers are replicated
// MeshBuffers on it; reads and writes take a BufferRegion, so partial transfers
// need no staging on the device side. Blocking calls release the GIL.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tt-metalium/circular_buffer_config.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_device.hpp>

#include <array>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace tt_metal = tt::tt_metal;
namespace distributed = tt::tt_metal::distributed;

namespace {

using Cores = std::vector<std::pair<uint32_t, uint32_t>>;

tt_metal::CoreRangeSet core_set(const Cores& cores) {
  std::vector<tt_metal::CoreRange> ranges;
  for (const auto& [x, y] : cores) ranges.emplace_back(tt_metal::CoreCoord(x, y));
  return tt_metal::CoreRangeSet(std::move(ranges));
}

tt::DataFormat data_format(const std::string& name) {
  static const std::map<std::string, tt::DataFormat> formats = {
      {"Float32", tt::DataFormat::Float32}, {"Float16_b", tt::DataFormat::Float16_b},
      {"Bfp8_b", tt::DataFormat::Bfp8_b},   {"Bfp4_b", tt::DataFormat::Bfp4_b},
      {"UInt32", tt::DataFormat::UInt32},   {"Int32", tt::DataFormat::Int32},
      {"UInt16", tt::DataFormat::UInt16},   {"UInt8", tt::DataFormat::UInt8}};
  const auto found = formats.find(name);
  if (found == formats.end()) throw py::value_error("unknown tt::DataFormat " + name);
  return found->second;
}

tt_metal::MathFidelity math_fidelity(const std::string& name) {
  if (name == "LoFi") return tt_metal::MathFidelity::LoFi;
  if (name == "HiFi2") return tt_metal::MathFidelity::HiFi2;
  if (name == "HiFi3") return tt_metal::MathFidelity::HiFi3;
  if (name == "HiFi4") return tt_metal::MathFidelity::HiFi4;
  throw py::value_error("unknown MathFidelity " + name);
}

// One program under construction: CreateProgram, then CBs, kernels, runtime args.
class Program {
 public:
  Program() : program_(tt_metal::CreateProgram()) {}

  void add_circular_buffer(const Cores& cores, uint8_t index, const std::string& format, uint32_t page_size,
                           uint32_t num_pages) {
    const auto config = tt_metal::CircularBufferConfig(page_size * num_pages, {{index, data_format(format)}})
                            .set_page_size(index, page_size);
    tt_metal::CreateCircularBuffer(program_, core_set(cores), config);
  }

  // processor: 0 = RISCV_0 (writer), 1 = RISCV_1 (reader), 2 = compute (tt_hal.target.isa.Processor).
  uint32_t add_kernel(const std::string& source, int processor, const Cores& cores,
                      const std::vector<uint32_t>& compile_args, const std::string& fidelity, bool fp32_dest_acc_en,
                      bool math_approx_mode, bool dst_full_sync_en) {
    if (processor == 2) {
      tt_metal::ComputeConfig config;
      config.math_fidelity = math_fidelity(fidelity);
      config.fp32_dest_acc_en = fp32_dest_acc_en;
      config.dst_full_sync_en = dst_full_sync_en;
      config.math_approx_mode = math_approx_mode;
      config.compile_args = compile_args;
      return tt_metal::CreateKernelFromString(program_, source, core_set(cores), config);
    }
    tt_metal::DataMovementConfig config;
    config.processor = processor == 0 ? tt_metal::DataMovementProcessor::RISCV_0 : tt_metal::DataMovementProcessor::RISCV_1;
    config.noc = processor == 0 ? tt_metal::NOC::RISCV_0_default : tt_metal::NOC::RISCV_1_default;
    config.compile_args = compile_args;
    return tt_metal::CreateKernelFromString(program_, source, core_set(cores), config);
  }

  void set_runtime_args(uint32_t kernel, std::pair<uint32_t, uint32_t> core, const std::vector<uint32_t>& args) {
    tt_metal::SetRuntimeArgs(program_, kernel, tt_metal::CoreCoord(core.first, core.second), args);
  }

  tt_metal::Program take() { return std::move(program_); }

 private:
  tt_metal::Program program_;
};

class Buffer {
 public:
  explicit Buffer(std::shared_ptr<distributed::MeshBuffer> buffer) : buffer_(std::move(buffer)) {}
  // MeshBuffer::address() is inline in 0.81.1 (a member the stubs do not lay out); the reference buffer, whose
  // allocation every device mirrors, exports its address.
  uint64_t address() const { return buffer_->get_reference_buffer()->address(); }
  void deallocate() { buffer_->deallocate(); }
  const std::shared_ptr<distributed::MeshBuffer>& get() const { return buffer_; }

 private:
  std::shared_ptr<distributed::MeshBuffer> buffer_;
};

class Event {
 public:
  explicit Event(distributed::MeshEvent event) : event_(std::move(event)) {}
  const distributed::MeshEvent& get() const { return event_; }

 private:
  distributed::MeshEvent event_;
};

class Device {
 public:
  Device(int device_id, size_t num_hw_cqs)
      : device_(distributed::MeshDevice::create_unit_mesh(device_id, DEFAULT_L1_SMALL_SIZE,
                                                          DEFAULT_TRACE_REGION_SIZE, num_hw_cqs)) {}

  std::string arch_name() const {
    switch (device_->arch()) {
      case tt::ARCH::WORMHOLE_B0: return "wormhole_b0";
      case tt::ARCH::BLACKHOLE: return "blackhole";
      default: return "unknown";
    }
  }
  std::pair<uint32_t, uint32_t> grid_size() const {
    const auto grid = device_->compute_with_storage_grid_size();
    return {static_cast<uint32_t>(grid.x), static_cast<uint32_t>(grid.y)};
  }
  uint32_t l1_size_per_core() const { return device_->l1_size_per_core(); }
  int num_dram_channels() const { return device_->num_dram_channels(); }
  uint32_t dram_size_per_channel() const { return device_->dram_size_per_channel(); }

  Buffer create_buffer(uint64_t size, uint64_t page_size, bool is_dram) {
    const distributed::DeviceLocalBufferConfig local{.page_size = page_size, .buffer_type = buffer_type(is_dram)};
    return Buffer(distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{.size = size}, local,
                                                  device_.get()));
  }

  // Shards of shard_shape pages over cores (row-major), page_grid pages in all. Page
  // shapes are counted in pages (page_shape 1x1), since tt_hal.target.placement.ShardedPages
  // already speaks in pages.
  Buffer create_sharded_buffer(uint64_t size, uint64_t page_size, bool is_dram, const Cores& cores,
                               std::array<uint32_t, 2> shard_shape, std::array<uint32_t, 2> page_grid) {
    const auto layout = shard_shape[1] == page_grid[1]   ? tt_metal::TensorMemoryLayout::HEIGHT_SHARDED
                        : shard_shape[0] == page_grid[0] ? tt_metal::TensorMemoryLayout::WIDTH_SHARDED
                                                         : tt_metal::TensorMemoryLayout::BLOCK_SHARDED;
    const tt_metal::ShardSpecBuffer spec(core_set(cores), shard_shape, tt_metal::ShardOrientation::ROW_MAJOR, {1, 1},
                                         page_grid);
    const distributed::DeviceLocalBufferConfig local{.page_size = page_size, .buffer_type = buffer_type(is_dram),
                                                     .sharding_args = tt_metal::BufferShardingArgs(spec, layout)};
    return Buffer(distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{.size = size}, local,
                                                  device_.get()));
  }

  void write_buffer(uint8_t cq, const Buffer& buffer, py::array_t<uint8_t, py::array::c_style> data, uint64_t offset,
                    bool blocking) {
    auto transfer = shard(const_cast<uint8_t*>(data.data()), offset, data.size());
    py::gil_scoped_release release;
    queue(cq).enqueue_write_shards(buffer.get(), {transfer}, blocking);
  }

  void read_buffer(uint8_t cq, const Buffer& buffer, py::array_t<uint8_t, py::array::c_style> out, uint64_t offset,
                   bool blocking) {
    auto transfer = shard(out.mutable_data(), offset, out.size());
    py::gil_scoped_release release;
    queue(cq).enqueue_read_shards({transfer}, buffer.get(), blocking);
  }

  Program create_program() { return Program(); }

  void enqueue_program(uint8_t cq, Program& program, bool blocking) {
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(distributed::MeshCoordinate(0, 0)), program.take());
    py::gil_scoped_release release;
    distributed::EnqueueMeshWorkload(queue(cq), workload, blocking);
  }

  Event record_event(uint8_t cq) { return Event(queue(cq).enqueue_record_event_to_host()); }
  void wait_for_event(uint8_t cq, const Event& event) { queue(cq).enqueue_wait_for_event(event.get()); }
  bool event_query(const Event& event) { return distributed::EventQuery(event.get()); }
  void event_synchronize(const Event& event) {
    py::gil_scoped_release release;
    distributed::EventSynchronize(event.get());
  }
  void finish(uint8_t cq) {
    py::gil_scoped_release release;
    distributed::Finish(queue(cq));
  }
  void close() { device_->close(); }

 private:
  static tt_metal::BufferType buffer_type(bool is_dram) {
    return is_dram ? tt_metal::BufferType::DRAM : tt_metal::BufferType::L1;
  }
  static distributed::ShardDataTransfer shard(void* host, uint64_t offset, uint64_t size) {
    distributed::ShardDataTransfer transfer(distributed::MeshCoordinate(0, 0));
    transfer.host_data(host).region(tt_metal::BufferRegion(offset, size));
    return transfer;
  }
  distributed::MeshCommandQueue& queue(uint8_t cq) { return device_->mesh_command_queue(cq); }

  std::shared_ptr<distributed::MeshDevice> device_;
};

}  // namespace

PYBIND11_MODULE(_tt_metal, m) {
  m.doc() = "tt-hal's binding of tt-metalium's host API (native/device.py drives it)";
  m.def("get_num_available_devices", &tt_metal::GetNumAvailableDevices);
  py::class_<Buffer>(m, "Buffer")
      .def_property_readonly("address", &Buffer::address)
      .def("deallocate", &Buffer::deallocate);
  py::class_<Event>(m, "Event");
  py::class_<Program>(m, "Program")
      .def("add_circular_buffer", &Program::add_circular_buffer)
      .def("add_kernel", &Program::add_kernel)
      .def("set_runtime_args", &Program::set_runtime_args);
  py::class_<Device>(m, "Device")
      .def(py::init<int, size_t>(), py::arg("device_id"), py::arg("num_hw_cqs"))
      .def_property_readonly("arch_name", &Device::arch_name)
      .def_property_readonly("grid_size", &Device::grid_size)
      .def_property_readonly("l1_size_per_core", &Device::l1_size_per_core)
      .def_property_readonly("num_dram_channels", &Device::num_dram_channels)
      .def_property_readonly("dram_size_per_channel", &Device::dram_size_per_channel)
      .def("create_buffer", &Device::create_buffer)
      .def("create_sharded_buffer", &Device::create_sharded_buffer)
      .def("write_buffer", &Device::write_buffer)
      .def("read_buffer", &Device::read_buffer)
      .def("create_program", &Device::create_program)
      .def("enqueue_program", &Device::enqueue_program)
      .def("record_event", &Device::record_event)
      .def("wait_for_event", &Device::wait_for_event)
      .def("event_query", &Device::event_query)
      .def("event_synchronize", &Device::event_synchronize)
      .def("finish", &Device::finish)
      .def("close", &Device::close);
}
