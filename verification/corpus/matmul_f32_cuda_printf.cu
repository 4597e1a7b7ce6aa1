// Printing from the device: a debug printf left in the kernel (one line per thread, millions of
// lines on a real grid). The policy rejects printing by name, as for C++ kernels.
// Expected: policy / output, "printing is not allowed".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)

__global__ void operator_matmul__f32(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ out, int batch, int m, int k, int n) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  const long long z = blockIdx.z;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += a[(z * m + row) * k + i] * b[(z * k + i) * n + col];
  printf("out[%d][%d] = %f\n", row, col, acc);
  out[(z * m + row) * n + col] = acc;
}
