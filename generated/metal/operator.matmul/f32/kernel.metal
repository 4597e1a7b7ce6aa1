// Tiled single-precision GEMM: each 16x16 threadgroup computes a 16x16 tile of one batch
// element's output, staging 16x16 tiles of a and b through threadgroup memory.
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
  const int row = int(group_pos.y) * TILE + ty;
  const int col = int(group_pos.x) * TILE + tx;
  const long z = long(group_pos.z);
  device const float* a_batch = a + z * m * k;
  device const float* b_batch = b + z * k * n;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    // Every thread loads one element of each tile (zero outside the matrices) and every
    // thread reaches both barriers, inside the matrix or not.
    a_tile[ty][tx] = (row < m && t + tx < k) ? a_batch[long(row) * k + t + tx] : 0.0f;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b_batch[long(t + ty) * n + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const int steps = min(TILE, k - t);
    for (int i = 0; i < steps; ++i) acc = fma(a_tile[ty][i], b_tile[i][tx], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < m && col < n) out[z * m * n + long(row) * n + col] = acc;
}
