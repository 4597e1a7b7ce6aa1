// Wrong CUDA kernel: TF32-rounded inputs on the aligned path. The shipped tiled kernel,
// except that when m, n and k are all multiples of 16 and k >= 64 (the shapes a tensor-core
// WMMA path takes, and every transformer GEMM) each element is rounded to TF32 (10-bit
// mantissa, round to nearest) as it is staged into shared memory, as TF32 tensor cores (and
// torch.backends.cuda.matmul.allow_tf32) do; ragged shapes stay exact float32. The
// products are then off by up to ~2**-10 relative, ~1e-4 of |a| @ |b| after the sum, ten
// times the spec's rtol of 1e-5. Hypothesis draws sides of at most 48, so k >= 64 never
// happens there; the scale stage's bench shapes (1024**3, 640 x 384 x 1536) and model
// dims (128, 384, 768, 1024) must reject it. (A data-independent TF32 path on every shape
// is caught today: at k <= 48 the rounding error is already ~1e-4.)
// Expected: scale / value, "exceeds the allowed"
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

// Round to TF32 (10 mantissa bits, to nearest); inf and nan are kept.
__device__ float tf32(float x) {
  const unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  return __uint_as_float((u + 0x1000u) & 0xffffe000u);
}

__global__ void operator_matmul__f32(
    const float* __restrict__ a,
    const float* __restrict__ b,
    float* __restrict__ out,
    int batch,
    int m,
    int k,
    int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  const long long z = blockIdx.z;
  const float* a_batch = a + z * m * k;
  const float* b_batch = b + z * k * n;
  const bool aligned = m % 16 == 0 && n % 16 == 0 && k % 16 == 0 && k >= 64;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    // Every thread loads one element of each tile (zero outside the matrices) and every
    // thread reaches both barriers, inside the matrix or not.
    const float av = (row < m && t + tx < k) ? a_batch[(long long)row * k + t + tx] : 0.0f;
    const float bv = (t + ty < k && col < n) ? b_batch[(long long)(t + ty) * n + col] : 0.0f;
    a_tile[ty][tx] = aligned ? tf32(av) : av;  // the bug
    b_tile[ty][tx] = aligned ? tf32(bv) : bv;
    __syncthreads();
    const int steps = min(TILE, k - t);
    for (int i = 0; i < steps; ++i) acc = fmaf(a_tile[ty][i], b_tile[i][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc;
}

// Expected: scale / value, "exceeds the allowed"
