// Wrong Metal kernel: a tiled matmul whose loop over k stops at the last full tile, so a
// k that is not a multiple of 16 loses its tail. Right for every k the author tried (16, 32,
// 64); the differential test on the CPU execution layer finds a k like 3 and shows it.
// Expected: verify / value, "first mismatch".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#include <metal_stdlib>
using namespace metal;

#define TILE 16

kernel void operator_matmul__f32(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant int& batch [[buffer(3)]],
    constant int& m [[buffer(4)]],
    constant int& k [[buffer(5)]],
    constant int& n [[buffer(6)]],
    uint3 thread_pos [[thread_position_in_grid]],
    uint3 local_pos [[thread_position_in_threadgroup]],
    uint3 group_pos [[threadgroup_position_in_grid]],
    uint3 group_size [[threads_per_threadgroup]],
    uint3 grid_groups [[threadgroups_per_grid]]) {
  threadgroup float a_tile[TILE][TILE];
  threadgroup float b_tile[TILE][TILE];
  const int tx = int(local_pos.x), ty = int(local_pos.y);
  const int row = int(group_pos.y) * TILE + ty, col = int(group_pos.x) * TILE + tx;
  const long z = long(group_pos.z);
  float acc = 0.0f;
  for (int t = 0; t + TILE <= k; t += TILE) {  // the bug: the partial last tile is skipped
    a_tile[ty][tx] = row < m ? a[z * m * k + long(row) * k + t + tx] : 0.0f;
    b_tile[ty][tx] = col < n ? b[z * k * n + long(t + ty) * n + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < m && col < n) out[z * m * n + long(row) * n + col] = acc;
}
