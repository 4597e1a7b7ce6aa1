// Out-of-bounds shared-memory write: each thread stages its result in a __shared__ array at
// index threadIdx.x + 1, so the last thread of a block writes one element past the array's
// end. The results are right (the element past the end is never read back), so no comparison
// of outputs can see it; on a GPU it silently corrupts whatever lies next in shared memory.
// The sanitizer run on the CPU execution layer sees it: UBSan checks the constant-size array's
// bound, and ASan puts redzones around every shared array.
// Expected: sanitizer / sanitizer, "index 256 out of bounds" (UBSan) or "global-buffer-overflow" (ASan).
// @launch grid=(ceil_div(batch * out_h * out_w, 256)) block=(256)

__global__ void torch_nn_functional_avg_pool2d__f32(const float* __restrict__ input, float* __restrict__ out,
                                                    int batch, int in_h, int in_w, int out_h, int out_w,
                                                    int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
                                                    int64_t stride_w, int64_t pad_h, int64_t pad_w) {
  __shared__ float staged[256];
  const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const bool inside = index < (long long)batch * out_h * out_w;
  float acc = 0.0f;
  if (inside) {
    const int x = (int)(index % out_w), y = (int)((index / out_w) % out_h);
    const long long plane = index / ((long long)out_w * out_h);
    const int y0 = (int)(y * stride_h - pad_h), x0 = (int)(x * stride_w - pad_w);
    for (int i = max(y0, 0); i < min(y0 + (int)kernel_h, in_h); ++i)
      for (int j = max(x0, 0); j < min(x0 + (int)kernel_w, in_w); ++j)
        acc += input[(plane * in_h + i) * in_w + j];
  }
  staged[threadIdx.x + 1] = acc / (float)(kernel_h * kernel_w);  // the bug: index 256 for the last thread
  __syncthreads();
  if (inside) out[index] = staged[threadIdx.x + 1];
}
