// Outside the emulated subset: a SIMD-group reduction (simd_sum) in Metal. Correct on an Apple
// GPU, but the CPU execution layer cannot emulate SIMD-group functions, so the policy rejects
// it with the reason instead of running it unchecked.
// Expected: policy / simdgroup, "SIMD-group".
// @launch grid=(n, m, batch) block=(32)
#include <metal_stdlib>
using namespace metal;

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
  const int col = int(group_pos.x), row = int(group_pos.y), lane = int(local_pos.x);
  const long z = long(group_pos.z);
  float acc = 0.0f;
  for (int i = lane; i < k; i += 32) acc += a[(z * m + row) * k + i] * b[(z * k + i) * n + col];
  acc = simd_sum(acc);
  if (lane == 0) out[(z * m + row) * n + col] = acc;
}
