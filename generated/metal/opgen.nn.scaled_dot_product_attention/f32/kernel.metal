// Attention, one thread per query row: an online softmax over the keys (running maximum and
// sum, the output row rescaled when the maximum grows), accumulated in the thread's own row of
// `out`. Grouped-query heads: query head hh reads key/value head hh / (h / g). A query that
// sees no key keeps the zeros written first. Heads and query tiles share the grid's x extent
// (y and z stop at 65535, which a batch of many heads folded together passes).
// @launch grid=(ceil_div(s, 64) * h, 1, batch) block=(64)
#include <metal_stdlib>
using namespace metal;

kernel void opgen_nn_scaled_dot_product_attention__f32(
    device const float* q [[buffer(0)]],
    device const float* k [[buffer(1)]],
    device const float* v [[buffer(2)]],
    device const long* key_mask [[buffer(3)]],
    device float* out [[buffer(4)]],
    constant int& batch [[buffer(5)]],
    constant int& h [[buffer(6)]],
    constant int& s [[buffer(7)]],
    constant int& d [[buffer(8)]],
    constant int& g [[buffer(9)]],
    constant int& t [[buffer(10)]],
    constant int& e [[buffer(11)]],
    constant long& window [[buffer(12)]],
    constant float& scale [[buffer(13)]],
    uint3 thread_pos [[thread_position_in_grid]],
    uint3 local_pos [[thread_position_in_threadgroup]],
    uint3 group_pos [[threadgroup_position_in_grid]],
    uint3 group_size [[threads_per_threadgroup]],
    uint3 grid_groups [[threadgroups_per_grid]]) {
  const int tiles = (s + 63) / 64;  // query tiles per head
  const int head = int(group_pos.x) / tiles;
  const int i = (int(group_pos.x) % tiles) * int(group_size.x) + int(local_pos.x);  // query
  const long z = long(group_pos.z);
  if (i >= s) return;  // no barriers in this kernel: an early return is safe
  const int kv = head / (h / g);
  device const float* q_row = q + ((z * h + head) * s + i) * long(d);
  device const float* k_head = k + (z * g + kv) * long(t) * d;
  device const float* v_head = v + (z * g + kv) * long(t) * e;
  device const long* mask = key_mask + z * t;
  device float* o = out + ((z * h + head) * s + i) * long(e);
  for (int c = 0; c < e; ++c) o[c] = 0.0f;
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int j = 0; j < t; ++j) {
    const long dist = long(i) - j;
    if (mask[j] == 0 || (window > 0 && (dist < 0 ? -dist : dist) >= window)) continue;
    device const float* k_row = k_head + long(j) * d;
    float dot = 0.0f;
    for (int x = 0; x < d; ++x) dot = fma(q_row[x], k_row[x], dot);
    const float score = dot * scale;
    const float new_max = fmax(running_max, score);
    const float rescale = exp(running_max - new_max);  // 0 for the first visible key
    const float p = exp(score - new_max);
    running_sum = running_sum * rescale + p;
    running_max = new_max;
    device const float* v_row = v_head + long(j) * e;
    for (int c = 0; c < e; ++c) o[c] = fma(o[c], rescale, p * v_row[c]);
  }
  if (running_sum > 0.0f) {
    const float inv = 1.0f / running_sum;
    for (int c = 0; c < e; ++c) o[c] *= inv;
  }
}
