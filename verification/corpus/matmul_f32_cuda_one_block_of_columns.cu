// Wrong CUDA kernel: one block covers the columns. Each block is 64 x 4 threads, one
// thread per (row, column) of a 4-row strip, and the grid has a single block along x
// ("the row fits in one block": the launch line never divides n by 64), so columns 64 and
// beyond are never written (the layer fills outputs with NaN first). Each thread's dot
// product runs over all of k with fmaf in the order the shipped kernel uses; every output
// it writes is right. Hypothesis draws sides of at most 48, so n <= 64 on every drawn
// example and the kernel is admitted; the scale stage (bench shapes with n = 1024, 1536,
// 384; model dims 64 +- 1, 128, ...) must reject it with "got nan". On a GPU the same
// launch leaves the columns as whatever the buffer held.
// Expected: scale / value, "got nan"
// @launch grid=(1, ceil_div(m, 4), batch) block=(64, 4)

__global__ void operator_matmul__f32(
    const float* __restrict__ a,
    const float* __restrict__ b,
    float* __restrict__ out,
    int batch,
    int m,
    int k,
    int n) {
  const int col = threadIdx.x;  // the bug: no blockIdx.x * blockDim.x
  const int row = blockIdx.y * 4 + threadIdx.y;
  const long long z = blockIdx.z;
  if (row >= m || col >= n) return;  // no barriers in this kernel: an early return is safe
  const float* a_row = a + z * m * k + (long long)row * k;
  const float* b_col = b + z * k * n + col;
  float acc = 0.0f;
  for (int p = 0; p < k; ++p) acc = fmaf(a_row[p], b_col[(long long)p * n], acc);
  out[z * m * n + (long long)row * n + col] = acc;
}

// Expected: scale / value, "got nan"
