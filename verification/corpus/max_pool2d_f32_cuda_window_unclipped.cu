// Missing bounds check on global memory: the window is clipped at the top and left but not at
// the bottom and right, so windows that overhang the input read the next row, the next plane,
// and past the end of the input buffer. The CPU execution layer's device buffers end in NaN
// filler and a guard page: the overhang reads give nan (or fault), never plausible numbers.
// Expected: verify or admission, any kind (value or crash).
// @launch grid=(ceil_div(batch * out_h * out_w, 256)) block=(256)

__global__ void torch_nn_functional_max_pool2d__f32(const float* __restrict__ input, float* __restrict__ out,
                                                    int batch, int in_h, int in_w, int out_h, int out_w,
                                                    int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
                                                    int64_t stride_w, int64_t pad_h, int64_t pad_w) {
  const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= (long long)batch * out_h * out_w) return;
  const int x = (int)(index % out_w), y = (int)((index / out_w) % out_h);
  const long long plane = index / ((long long)out_w * out_h);
  const int y0 = (int)(y * stride_h - pad_h), x0 = (int)(x * stride_w - pad_w);
  float best = -INFINITY;
  for (int i = max(y0, 0); i < y0 + (int)kernel_h; ++i)      // the bug: no min(.., in_h)
    for (int j = max(x0, 0); j < x0 + (int)kernel_w; ++j) {  // the bug: no min(.., in_w)
      const float v = input[(plane * in_h + i) * in_w + j];
      if (v > best || isnan(v)) best = v;
    }
  out[index] = best;
}
