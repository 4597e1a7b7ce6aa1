// Average pooling, one thread per output element: the window's sum (padding adds zeros) over kh * kw.
// The grid is flat over (plane, row, column) of the output, so any number of planes fits.
// @launch grid=(ceil_div(batch * out_h * out_w, 256)) block=(256)

__global__ void torch_nn_functional_avg_pool2d__f32(
    const float* __restrict__ input,
    float* __restrict__ out,
    int batch,
    int in_h,
    int in_w,
    int out_h,
    int out_w,
    int64_t kernel_h,
    int64_t kernel_w,
    int64_t stride_h,
    int64_t stride_w,
    int64_t pad_h,
    int64_t pad_w) {
  const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= (long long)batch * out_h * out_w) return;
  const int x = (int)(index % out_w);
  const int y = (int)((index / out_w) % out_h);
  const long long plane = index / ((long long)out_w * out_h);
  const int y0 = (int)(y * stride_h - pad_h), x0 = (int)(x * stride_w - pad_w);
  const int ya = max(y0, 0), yb = min(y0 + (int)kernel_h, in_h);
  const int xa = max(x0, 0), xb = min(x0 + (int)kernel_w, in_w);
  const float* p = input + plane * in_h * in_w;
  float acc = 0.0f;
  for (int i = ya; i < yb; ++i)
    for (int j = xa; j < xb; ++j) {
      const float v = p[(long long)i * in_w + j];
      acc += v;
    }
  out[index] = acc / (float)(kernel_h * kernel_w);
}
