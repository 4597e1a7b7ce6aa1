// Shared-memory race (a tree reduction missing one barrier): one block of 16 threads per output
// element, thread t summing sequence positions 4t .. 4t + 3 of every 64, then a shared-memory tree
// reduction, sums[t] += sums[t + step] for step 8, 4, 2, 1, with a __syncthreads() after every
// level but the first. At the level 4, thread t reads sums[t + 4] while thread t + 4 may still be
// adding sums[t + 12] into it. The gate's sequences have at most 40 positions (max_side), so
// threads 10..15 (positions 40..63) hold zeros and that addition never changes what is read: right
// on the CPU execution layer in both schedules, wrong on a GPU (and on the layer) once a sequence
// is longer than 48. Only the race check sees thread t + 4 write what thread t reads in the same
// barrier interval.
// Expected: racecheck, "shared-memory data race".
// @launch grid=(d, batch) block=(16)

__global__ void opgen_nn_masked_mean_pool__f32(
    const float* __restrict__ hidden,
    const int64_t* __restrict__ mask,
    float* __restrict__ out,
    int batch,
    int s,
    int d) {
  __shared__ float sums[16];
  __shared__ float counts[16];
  const int t = threadIdx.x;
  const int col = blockIdx.x;
  const long long z = blockIdx.y;
  float sum = 0.0f, count = 0.0f;
  for (int base = 0; base < s; base += 64) {
    for (int j = 0; j < 4; ++j) {
      const int i = base + 4 * t + j;
      if (i < s) {
        const float w = (float)mask[z * s + i];
        sum += hidden[(z * s + i) * d + col] * w;
        count += w;
      }
    }
  }
  sums[t] = sum;
  counts[t] = count;
  __syncthreads();
  for (int step = 8; step > 0; step >>= 1) {
    if (t < step) {
      sums[t] += sums[t + step];
      counts[t] += counts[t + step];
    }
    if (step != 8) __syncthreads();  // the bug: no barrier after the first level
  }
  if (t == 0) out[z * d + col] = sums[0] / fmaxf(counts[0], 1e-9f);
}
