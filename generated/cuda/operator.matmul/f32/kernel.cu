// Tiled single-precision GEMM: each 16x16 block computes a 16x16 tile of one batch
// element's output, staging 16x16 tiles of a and b through shared memory.
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

__global__ void operator_matmul__f32(
    const float* __restrict__ a,
    const float* __restrict__ b,
    float* __restrict__ out,
    int batch,
    int m,
    int k,
    int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  const float* a_batch = a + z * m * k;
  const float* b_batch = b + z * k * n;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    // Every thread loads one element of each tile (zero outside the matrices) and every
    // thread reaches both barriers, inside the matrix or not.
    a_tile[ty][tx] = (row < m && t + tx < k) ? a_batch[(long long)row * k + t + tx] : 0.0f;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b_batch[(long long)(t + ty) * n + col] : 0.0f;
    __syncthreads();
    const int steps = min(TILE, k - t);
    for (int i = 0; i < steps; ++i) acc = fmaf(a_tile[ty][i], b_tile[i][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}
