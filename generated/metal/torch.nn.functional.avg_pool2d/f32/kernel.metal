// Average pooling, one thread per output element: the window's sum (padding adds zeros) over kh * kw.
// The grid is flat over (plane, row, column) of the output, so any number of planes fits.
// @launch grid=(ceil_div(batch * out_h * out_w, 256)) block=(256)
#include <metal_stdlib>
using namespace metal;

kernel void torch_nn_functional_avg_pool2d__f32(
    device const float* input [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant int& batch [[buffer(2)]],
    constant int& in_h [[buffer(3)]],
    constant int& in_w [[buffer(4)]],
    constant int& out_h [[buffer(5)]],
    constant int& out_w [[buffer(6)]],
    constant long& kernel_h [[buffer(7)]],
    constant long& kernel_w [[buffer(8)]],
    constant long& stride_h [[buffer(9)]],
    constant long& stride_w [[buffer(10)]],
    constant long& pad_h [[buffer(11)]],
    constant long& pad_w [[buffer(12)]],
    uint3 thread_pos [[thread_position_in_grid]],
    uint3 local_pos [[thread_position_in_threadgroup]],
    uint3 group_pos [[threadgroup_position_in_grid]],
    uint3 group_size [[threads_per_threadgroup]],
    uint3 grid_groups [[threadgroups_per_grid]]) {
  const long index = long(thread_pos.x);
  if (index >= long(batch) * out_h * out_w) return;
  const int x = int(index % out_w);
  const int y = int((index / out_w) % out_h);
  const long plane = index / (long(out_w) * out_h);
  const int y0 = int(y * stride_h - pad_h);
  const int x0 = int(x * stride_w - pad_w);
  const int ya = max(y0, 0), yb = min(y0 + int(kernel_h), in_h);
  const int xa = max(x0, 0), xb = min(x0 + int(kernel_w), in_w);
  device const float* p = input + plane * in_h * in_w;
  float acc = 0.0f;
  for (int i = ya; i < yb; ++i) {
    for (int j = xa; j < xb; ++j) {
      const float v = p[long(i) * in_w + j];
      acc += v;
    }
  }
  out[index] = acc / float(kernel_h * kernel_w);
}
