// Shared-memory race (read-modify-write): the tiled masked mean pool keeps per-row partial sums
// of hidden * mask, but "saves a reduction" for the mask count: the eight rows of threads of a
// column add their mask weights straight into one shared counter, `counts[tx] += w`, with no
// barrier or atomic. On a GPU the eight threads' loads and stores interleave and increments are
// lost, so the divisor comes out too small. The CPU execution layer runs each thread to its next
// barrier before the next one starts, so every increment lands and, the weights being small
// integers, the total is exact in either schedule: the results are right, and only the race
// check (two threads, one shared byte, one barrier interval, a write) sees it.
// Expected: racecheck, "shared-memory data race".
// @launch grid=(ceil_div(d, 32), batch) block=(32, 8)

__global__ void opgen_nn_masked_mean_pool__f32(
    const float* __restrict__ hidden,
    const int64_t* __restrict__ mask,
    float* __restrict__ out,
    int batch,
    int s,
    int d) {
  __shared__ float sums[8][32];
  __shared__ float counts[32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * 32 + tx;
  const long long z = blockIdx.y;
  if (ty == 0) counts[tx] = 0.0f;
  __syncthreads();
  float sum = 0.0f;
  if (col < d) {
    for (int i = ty; i < s; i += 8) {
      const float w = (float)mask[z * s + i];
      sum += hidden[(z * s + i) * d + col] * w;
      counts[tx] += w;  // the race: eight threads read-modify-write one shared counter
    }
  }
  sums[ty][tx] = sum;
  __syncthreads();
  if (ty == 0 && col < d) {
    float total = 0.0f;
    for (int r = 0; r < 8; ++r) total += sums[r][tx];
    out[z * d + col] = total / fmaxf(counts[tx], 1e-9f);
  }
}
