// Masked mean pooling: a threadgroup of 32 x 8 threads per (batch element, 32 columns). The 8
// rows of threads split the sequence, each summing hidden * mask for its column and the mask
// itself (masked positions multiplied by 0, not skipped, so a nan there still spreads as in the
// reference); the partial sums are combined in threadgroup memory after a barrier.
// @launch grid=(ceil_div(d, 32), batch) block=(32, 8)
#include <metal_stdlib>
using namespace metal;

kernel void opgen_nn_masked_mean_pool__f32(
    device const float* hidden [[buffer(0)]],
    device const long* mask [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant int& batch [[buffer(3)]],
    constant int& s [[buffer(4)]],
    constant int& d [[buffer(5)]],
    uint3 thread_pos [[thread_position_in_grid]],
    uint3 local_pos [[thread_position_in_threadgroup]],
    uint3 group_pos [[threadgroup_position_in_grid]],
    uint3 group_size [[threads_per_threadgroup]],
    uint3 grid_groups [[threadgroups_per_grid]]) {
  threadgroup float sums[8][32];
  threadgroup float counts[8][32];
  const int tx = int(local_pos.x), ty = int(local_pos.y);
  const int col = int(group_pos.x) * 32 + tx;
  const long z = long(group_pos.y);
  float sum = 0.0f;
  float count = 0.0f;
  if (col < d) {
    for (int i = ty; i < s; i += 8) {
      const float w = float(mask[z * s + i]);
      sum += hidden[(z * s + i) * d + col] * w;
      count += w;
    }
  }
  sums[ty][tx] = sum;
  counts[ty][tx] = count;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (ty == 0 && col < d) {
    float total = 0.0f;
    float n = 0.0f;
    for (int r = 0; r < 8; ++r) {
      total += sums[r][tx];
      n += counts[r][tx];
    }
    out[z * d + col] = total / fmax(n, 1e-9f);
  }
}
