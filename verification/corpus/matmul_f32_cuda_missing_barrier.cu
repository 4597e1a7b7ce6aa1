// Missing barrier: the tiled matmul without the __syncthreads() after the inner product, so a
// fast thread overwrites its element of the shared tile with the next tile while slower
// threads still read the current one. On a GPU it passes most runs (warps happen to stay in
// step) and fails now and then. The CPU execution layer runs each thread up to its next
// barrier before the next thread starts, so with k > 16 the first thread's overwrite always
// lands before the others read: wrong values, different in the reverse-order second call.
// Expected: verify or admission, any kind (value or nondeterministic).
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
    b_tile[ty][tx] = (t + ty < k && col < n) ? b[z * k * n + (long long)(t + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    // the bug: no __syncthreads() here before the next tile overwrites a_tile and b_tile
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}
