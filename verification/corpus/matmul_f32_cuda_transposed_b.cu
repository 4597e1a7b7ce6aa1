// Wrong CUDA kernel: a tiled matmul that reads b transposed (b[col][t] instead of b[t][col]).
// It compiles with nvcc and passes any test with square symmetric b; on the CPU execution layer
// the differential test against numpy.matmul gives a counterexample at once.
// Expected: verify / value, "first mismatch".
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
    b_tile[ty][tx] = (t + ty < k && col < n) ? b[z * k * n + (long long)col * k + t + ty] : 0.0f;  // the bug
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}
