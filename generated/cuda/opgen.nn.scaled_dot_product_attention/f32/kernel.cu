// Attention, one thread per query row: an online softmax over the keys (running maximum and
// sum, the output row rescaled when the maximum grows), accumulated in the thread's own row of
// `out`. The threads of a block share their batch element and head, so they read the same key
// and value rows at the same time (broadcast loads). Grouped-query heads: query head hh reads
// key/value head hh / (h / g). A query that sees no key keeps the zeros written first.
// Heads and query tiles share the grid's x extent (up to 2^31 - 1 blocks): y and z stop at
// 65535, which a batch of many heads folded together passes.
// @launch grid=(ceil_div(s, 64) * h, 1, batch) block=(64)

__global__ void opgen_nn_scaled_dot_product_attention__f32(
    const float* __restrict__ q,
    const float* __restrict__ k,
    const float* __restrict__ v,
    const int64_t* __restrict__ key_mask,
    float* __restrict__ out,
    int batch,
    int h,
    int s,
    int d,
    int g,
    int t,
    int e,
    int64_t window,
    float scale) {
  const int tiles = (s + 63) / 64;  // query tiles per head
  const int head = blockIdx.x / tiles;
  const int i = (blockIdx.x % tiles) * blockDim.x + threadIdx.x;  // query
  const long long z = blockIdx.z;
  if (i >= s) return;  // no barriers in this kernel: an early return is safe
  const int kv = head / (h / g);
  const float* q_row = q + ((z * h + head) * s + i) * (long long)d;
  const float* k_head = k + (z * g + kv) * (long long)t * d;
  const float* v_head = v + (z * g + kv) * (long long)t * e;
  const int64_t* mask = key_mask + z * t;
  float* o = out + ((z * h + head) * s + i) * (long long)e;
  for (int c = 0; c < e; ++c) o[c] = 0.0f;
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int j = 0; j < t; ++j) {
    const long long dist = (long long)i - j;
    if (mask[j] == 0 || (window > 0 && (dist < 0 ? -dist : dist) >= window)) continue;
    const float* k_row = k_head + (long long)j * d;
    float dot = 0.0f;
    for (int x = 0; x < d; ++x) dot = fmaf(q_row[x], k_row[x], dot);
    const float score = dot * scale;
    const float new_max = fmaxf(running_max, score);
    const float rescale = expf(running_max - new_max);  // 0 for the first visible key
    const float p = expf(score - new_max);
    running_sum = running_sum * rescale + p;
    running_max = new_max;
    const float* v_row = v_head + (long long)j * e;
    for (int c = 0; c < e; ++c) o[c] = fmaf(o[c], rescale, p * v_row[c]);
  }
  if (running_sum > 0.0f) {
    const float inv = 1.0f / running_sum;
    for (int c = 0; c < e; ++c) o[c] *= inv;
  }
}
