// Wrong CUDA kernel: a reduction correct only while one block covers the sequence. A block
// of 8 x 64 threads handles 8 columns of one batch element; thread row ty takes sequence
// position ty, and only that one (no `for (i = ty; i < s; i += 64)` loop), then the 64
// partial sums and counts are combined by a tree in shared memory. For s <= 64 every
// position is counted and the result is right to float32 rounding (masked positions are
// multiplied by 0, not skipped, so nan spreads as in the reference); positions 64 and
// beyond are silently dropped from both the sum and the count, so longer sequences get
// the mean of their first 64 tokens. Hypothesis draws sequences of at most 40 (the
// spec's max_side); MiniLM's and EmbeddingGemma's bench shapes (sequences 128 and 512) and
// any s > 64 at the scale stage must reject it. (64 rows, not 128: a block of 1024 threads is
// slow enough on the CPU execution layer to hit the corpus's CPU limit before the scale stage.)
// Expected: scale / value, "exceeds the allowed"
// @launch grid=(ceil_div(d, 8), batch) block=(8, 64)

__global__ void opgen_nn_masked_mean_pool__f32(
    const float* __restrict__ hidden,
    const int64_t* __restrict__ mask,
    float* __restrict__ out,
    int batch,
    int s,
    int d) {
  __shared__ float sums[64][8];
  __shared__ float counts[64][8];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * 8 + tx;
  const long long z = blockIdx.y;
  float sum = 0.0f, count = 0.0f;
  if (col < d && ty < s) {  // the bug: position ty only, the rest of the sequence never read
    const float w = (float)mask[z * s + ty];
    sum = hidden[(z * s + ty) * d + col] * w;
    count = w;
  }
  sums[ty][tx] = sum;
  counts[ty][tx] = count;
  __syncthreads();
  for (int stride = 32; stride > 0; stride /= 2) {
    if (ty < stride) {
      sums[ty][tx] += sums[ty + stride][tx];
      counts[ty][tx] += counts[ty + stride][tx];
    }
    __syncthreads();
  }
  if (ty == 0 && col < d) out[z * d + col] = sums[0][tx] / fmaxf(counts[0][tx], 1e-9f);
}

// Expected: scale / value, "exceeds the allowed"
