// Honest (CUDA): masked mean pooling with a block-stride loop and a shared-memory tree. A
// block of 8 x 128 threads handles 8 columns of one batch element; thread row ty sums
// positions ty, ty + 128, ... of the whole sequence (hidden * mask, masked positions
// multiplied by 0 so nan spreads as in the reference) and their mask, then the 128
// partial sums and counts are combined by a tree with a barrier per level. The fixed
// counterpart of corpus/masked_mean_pool_f32_cuda_one_position_per_thread.cu: the same
// reduction, right at every sequence length. Must be admitted by every stage, the scale
// stage's s = 512 (EmbeddingGemma) included.
// @launch grid=(ceil_div(d, 8), batch) block=(8, 128)

__global__ void opgen_nn_masked_mean_pool__f32(
    const float* __restrict__ hidden,
    const int64_t* __restrict__ mask,
    float* __restrict__ out,
    int batch,
    int s,
    int d) {
  __shared__ float sums[128][8];
  __shared__ float counts[128][8];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * 8 + tx;
  const long long z = blockIdx.y;
  float sum = 0.0f, count = 0.0f;
  if (col < d) {
    for (int i = ty; i < s; i += 128) {  // block-stride over the whole sequence
      const float w = (float)mask[z * s + i];
      sum += hidden[(z * s + i) * d + col] * w;
      count += w;
    }
  }
  sums[ty][tx] = sum;
  counts[ty][tx] = count;
  __syncthreads();
  for (int stride = 64; stride > 0; stride /= 2) {
    if (ty < stride) {
      sums[ty][tx] += sums[ty + stride][tx];
      counts[ty][tx] += counts[ty + stride][tx];
    }
    __syncthreads();
  }
  if (ty == 0 && col < d) out[z * d + col] = sums[0][tx] / fmaxf(counts[0][tx], 1e-9f);
}
