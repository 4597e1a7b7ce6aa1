// What generated host code needs to run a GPU kernel on the CPU execution layer.
// Hand-written, versioned with opgen.
#ifndef OPGEN_GPU_EMU_HOST_HPP
#define OPGEN_GPU_EMU_HOST_HPP

#include "opgen_emu_metal_types.hpp"
#include "opgen_emu_runtime.hpp"
#include "opgen_gpu_host.hpp"

namespace opgen::gpu {

template <class T>
using Buffer = opgen_emu::Buffer<T>;

template <class Body>
void emu_launch(const Launch& l, Body&& body) {
  check_grid(l);
  opgen_emu::Geometry g{{unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2])},
                        {unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2])}};
  opgen_emu::launch(g, static_cast<Body&&>(body));
}

// Metal's thread-position arguments, from the running fiber's indices.
inline uint3 metal_local_pos() {
  const auto& s = opgen_emu::state;
  return uint3(s.thread_idx.x, s.thread_idx.y, s.thread_idx.z);
}
inline uint3 metal_group_pos() {
  const auto& s = opgen_emu::state;
  return uint3(s.block_idx.x, s.block_idx.y, s.block_idx.z);
}
inline uint3 metal_group_size() {
  const auto& s = opgen_emu::state;
  return uint3(s.block_dim.x, s.block_dim.y, s.block_dim.z);
}
inline uint3 metal_grid_groups() {
  const auto& s = opgen_emu::state;
  return uint3(s.grid_dim.x, s.grid_dim.y, s.grid_dim.z);
}
inline uint3 metal_thread_pos() { return metal_group_pos() * metal_group_size() + metal_local_pos(); }

}  // namespace opgen::gpu

#endif
