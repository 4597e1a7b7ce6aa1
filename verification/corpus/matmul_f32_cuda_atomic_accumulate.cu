// Outside the emulated subset: split-k with atomicAdd into the output. On a GPU the float
// additions land in whatever order the blocks finish (results differ from run to run); the
// CPU execution layer runs blocks in a fixed order and could not show that. Rejected by the
// policy with the reason.
// Expected: policy / atomics, "atomics are outside the emulated subset".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch * ceil_div(k, 64)) block=(16, 16)

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  const int splits = (k + 63) / 64;
  const long long z = blockIdx.z / splits;
  const int k0 = (blockIdx.z % splits) * 64;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int i = k0; i < min(k0 + 64, k); ++i) acc += a[(z * m + row) * k + i] * b[(z * k + i) * n + col];
  atomicAdd(&out[(z * m + row) * n + col], acc);
}
