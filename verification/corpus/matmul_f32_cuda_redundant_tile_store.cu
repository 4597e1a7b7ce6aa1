// Shared-memory race (write-write): a tiled matmul whose B tile is loaded by every row of the
// block instead of being split among them: each thread (ty, tx) stores the whole column
// b_tile[0..15][tx], so sixteen threads store every element between the same two barriers. They
// store equal values, so the results are right on the CPU execution layer in both schedules (and
// usually on a GPU), but concurrent plain stores to one shared location are a data race in CUDA's
// memory model (undefined behaviour, and sixteen times the shared-memory traffic); compute-sanitizer's
// racecheck reports it as a write-after-write hazard. Only opgen's race check sees it.
// Expected: racecheck, "shared-memory data race".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    a_tile[ty][tx] = (row < m && t + tx < k) ? a[z * m * k + (long long)row * k + t + tx] : 0.0f;
    for (int i = 0; i < TILE; ++i)  // the race: every ty stores the whole column, not just b_tile[ty][tx]
      b_tile[i][tx] = (t + i < k && col < n) ? b[z * k * n + (long long)(t + i) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}
