// Outside the emulated subset: a warp-shuffle reduction (__shfl_down_sync). Correct on a GPU,
// but the CPU execution layer runs each thread to its next barrier and cannot emulate lanes
// exchanging registers, so it could not check it. The policy rejects it with the reason
// instead of running it.
// Expected: policy / warp, "warp-level intrinsics".
// @launch grid=(n, m, batch) block=(32)

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  const int col = blockIdx.x, row = blockIdx.y, lane = threadIdx.x;
  const long long z = blockIdx.z;
  float acc = 0.0f;
  for (int i = lane; i < k; i += 32) acc += a[(z * m + row) * k + i] * b[(z * k + i) * n + col];
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0) out[(z * m + row) * n + col] = acc;
}
