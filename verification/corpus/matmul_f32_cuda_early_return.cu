// Barrier misuse: threads outside the matrix return before the tile loop's barriers. On a GPU
// the block's remaining threads wait at __syncthreads() for threads that have left: a hang or
// corrupted tiles, depending on the architecture. The CPU execution layer sees threads waiting
// at a barrier while others have returned and says so, with the block, the threads and the line.
// Expected: verify / error, "barrier misuse".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  if (row >= m || col >= n) return;  // the bug: these threads never reach the barriers below
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    a_tile[ty][tx] = t + tx < k ? a[z * m * k + (long long)row * k + t + tx] : 0.0f;
    b_tile[ty][tx] = t + ty < k ? b[z * k * n + (long long)(t + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();
  }
  out[z * m * n + (long long)row * n + col] = acc;
}
