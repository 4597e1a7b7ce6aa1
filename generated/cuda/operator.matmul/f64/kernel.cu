// Tiled double-precision GEMM: each 16x16 block computes a 16x16 tile of one batch
// element's output, staging 16x16 tiles of a and b through shared memory.
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

__global__ void operator_matmul__f64(
    const double* __restrict__ a,
    const double* __restrict__ b,
    double* __restrict__ out,
    int batch,
    int m,
    int k,
    int n) {
  __shared__ double a_tile[TILE][TILE];
  __shared__ double b_tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  const double* a_batch = a + z * m * k;
  const double* b_batch = b + z * k * n;
  double acc = 0.0;
  for (int t = 0; t < k; t += TILE) {
    // Every thread loads one element of each tile (zero outside the matrices) and every
    // thread reaches both barriers, inside the matrix or not.
    a_tile[ty][tx] = (row < m && t + tx < k) ? a_batch[(long long)row * k + t + tx] : 0.0;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b_batch[(long long)(t + ty) * n + col] : 0.0;
    __syncthreads();
    const int steps = min(TILE, k - t);
    for (int i = 0; i < steps; ++i) acc = fma(a_tile[ty][i], b_tile[i][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}
