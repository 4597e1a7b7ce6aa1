// opgen CPU execution layer for GPU kernels: what the device code and the host code share.
// Hand-written, versioned with opgen.
//
// A launch runs on one OS thread. Blocks (threadgroups) run one after another; the
// threads of a block run as fibers, each until it reaches a barrier or returns, and a
// barrier is released when every thread of the block waits at it (opgen_emu_runtime.hpp).
// `state` holds the indices of the fiber that runs now; the CUDA and Metal name
// headers read them (threadIdx, blockIdx, thread_position_in_grid, ...).
#ifndef OPGEN_EMU_HPP
#define OPGEN_EMU_HPP

namespace opgen_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct State {
  Dim3 thread_idx{0, 0, 0};  // in the block
  Dim3 block_idx{0, 0, 0};   // in the grid
  Dim3 block_dim{};          // threads per block
  Dim3 grid_dim{};           // blocks per grid
};

// Constant-initialized (no code runs when the library loads). One OS thread runs every
// fiber of a launch, so one instance is the running thread's.
inline State state{};

// Every thread of the block must call it from the same place (the scheduler checks): `site`
// is the call's own number (__COUNTER__: two barriers on one line differ); `spelling` (what the
// kernel wrote: __syncthreads(), threadgroup_barrier(...)), `file` and `line` are for messages.
__attribute__((visibility("hidden"))) void barrier(const char* spelling, const char* file, int line, int site);

}  // namespace opgen_emu

#endif
