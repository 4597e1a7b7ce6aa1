// Shared-memory race (read-modify-write), in Metal: four threads share each output element, each
// taking every fourth row of its window, and fold their values into one threadgroup slot with
// `if (v > best[o] || isnan(v)) best[o] = v`, no barrier or atomic between them. On a GPU the
// four compare-and-store sequences interleave and a larger value can be overwritten by a smaller
// one. The CPU execution layer runs each thread to its next barrier before the next one starts,
// so every fold sees the others' result, and a maximum (nan sticking) does not depend on the
// order: right in both schedules. Only the race check sees the four threads write one slot.
// Expected: racecheck, "shared-memory data race".
// @launch grid=(ceil_div(batch * out_h * out_w, 64)) block=(256)
#include <metal_stdlib>
using namespace metal;

kernel void torch_nn_functional_max_pool2d__f32(
    device const float* input [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant int& batch [[buffer(2)]],
    constant int& in_h [[buffer(3)]],
    constant int& in_w [[buffer(4)]],
    constant int& out_h [[buffer(5)]],
    constant int& out_w [[buffer(6)]],
    constant long& kernel_h [[buffer(7)]],
    constant long& kernel_w [[buffer(8)]],
    constant long& stride_h [[buffer(9)]],
    constant long& stride_w [[buffer(10)]],
    constant long& pad_h [[buffer(11)]],
    constant long& pad_w [[buffer(12)]],
    uint3 thread_pos [[thread_position_in_grid]],
    uint3 local_pos [[thread_position_in_threadgroup]],
    uint3 group_pos [[threadgroup_position_in_grid]],
    uint3 group_size [[threads_per_threadgroup]],
    uint3 grid_groups [[threadgroups_per_grid]]) {
  threadgroup float best[64];
  const int o = int(local_pos.x) / 4;  // the output element among the group's 64
  const int q = int(local_pos.x) % 4;  // which quarter of its window rows
  const long index = long(group_pos.x) * 64 + o;
  const bool live = index < long(batch) * out_h * out_w;
  if (q == 0) best[o] = -INFINITY;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (live) {
    const int x = int(index % out_w);
    const int y = int((index / out_w) % out_h);
    const long plane = index / (long(out_w) * out_h);
    const int y0 = int(y * stride_h - pad_h);
    const int x0 = int(x * stride_w - pad_w);
    const int ya = max(y0, 0), yb = min(y0 + int(kernel_h), in_h);
    const int xa = max(x0, 0), xb = min(x0 + int(kernel_w), in_w);
    device const float* p = input + plane * in_h * in_w;
    for (int i = ya + q; i < yb; i += 4) {
      for (int j = xa; j < xb; ++j) {
        const float v = p[long(i) * in_w + j];
        if (v > best[o] || isnan(v)) best[o] = v;  // the race: four threads, one slot (a nan sticks)
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (live && q == 0) out[index] = best[o];
}
