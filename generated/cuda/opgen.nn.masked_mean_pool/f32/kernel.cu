// Masked mean pooling: a block of 32 x 8 threads per (batch element, 32 columns). The 8 rows
// of threads split the sequence, each summing hidden * mask for its column and the mask itself
// (masked positions multiplied by 0, not skipped, so a nan there still spreads as in the
// reference); the partial sums are combined in shared memory after a barrier.
// @launch grid=(ceil_div(d, 32), batch) block=(32, 8)

__global__ void opgen_nn_masked_mean_pool__f32(
    const float* __restrict__ hidden,
    const int64_t* __restrict__ mask,
    float* __restrict__ out,
    int batch,
    int s,
    int d) {
  __shared__ float sums[8][32];
  __shared__ float counts[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * 32 + tx;
  const long long z = blockIdx.y;
  float sum = 0.0f, count = 0.0f;
  if (col < d) {
    for (int i = ty; i < s; i += 8) {
      const float w = (float)mask[z * s + i];
      sum += hidden[(z * s + i) * d + col] * w;
      count += w;
    }
  }
  sums[ty][tx] = sum;
  counts[ty][tx] = count;
  __syncthreads();
  if (ty == 0 && col < d) {
    float total = 0.0f, n = 0.0f;
    for (int r = 0; r < 8; ++r) {
      total += sums[r][tx];
      n += counts[r][tx];
    }
    out[z * d + col] = total / fmaxf(n, 1e-9f);
  }
}
