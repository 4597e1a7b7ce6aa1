// A one-tile kernel: the whole problem is assumed to fit one 64 x 64 tile. One block per batch
// element, 16 x 16 threads, each computing a 4 x 4 patch of the output from the full rows of a and
// columns of b staged in shared memory, k at most 64 wide; nothing loops over further tiles. The
// gate's matmul examples have every side at most 48 (max_side), so every output is right on the
// CPU execution layer, under the sanitizer and the race check; a model-sized matmul (m, n or
// k above 64) leaves outputs unwritten and drops the terms past k = 64. Only inputs above the
// drawn sizes (the scale stage) can show it.
// Expected: scale, value.
// @launch grid=(1, 1, batch) block=(16, 16)
#define SIDE 64

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  __shared__ float a_s[SIDE][SIDE + 1];
  __shared__ float b_s[SIDE][SIDE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long z = blockIdx.z;
  const int kk = min(k, SIDE);  // the bug: one tile of k, rows and columns; nothing beyond it
  for (int r = ty; r < SIDE; r += 16)
    for (int c = tx; c < SIDE; c += 16) {
      a_s[r][c] = (r < m && c < kk) ? a[z * m * k + (long long)r * k + c] : 0.0f;
      b_s[r][c] = (r < kk && c < n) ? b[z * k * n + (long long)r * n + c] : 0.0f;
    }
  __syncthreads();
  for (int r = ty; r < SIDE; r += 16)
    for (int c = tx; c < SIDE; c += 16) {
      if (r >= m || c >= n) continue;
      float acc = 0.0f;
      for (int i = 0; i < kk; ++i) acc += a_s[r][i] * b_s[i][c];
      out[z * m * n + (long long)r * n + c] = acc;
    }
}
