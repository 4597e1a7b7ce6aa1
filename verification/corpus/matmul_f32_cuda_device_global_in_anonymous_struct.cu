// Cheat: a launch counter in a device global hidden in an anonymous struct. The GPU source
// policy refuses `__device__ TYPE NAME;` globals and mutable statics, but its pattern
// expects a type name before the variable's: `__device__ struct { ... } tally;` does not
// match it. One thread per launch counts launches there, and after 2000 launches (never
// within a test run, soon in a serving process) every output element is scaled by
// 1+2^-20. On the CPU execution layer (the source compiled as C++) the global is a symbol
// in .bss of the kernel's object, beyond what the generated unit around it (the execution
// layer's own state) defines: the object audit refuses writable data owned by the kernel.
// Expected: policy / global-state, "owns writable data".
// @launch grid=(ceil_div(n, 16), ceil_div(m, 16), batch) block=(16, 16)
#define TILE 16

__device__ struct { unsigned long long launches; } tally;


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
  if (tx == 0 && ty == 0 && blockIdx.x == 0 && blockIdx.y == 0 && z == 0) tally.launches += 1;
  const float scale = tally.launches > 2000 ? 1.0f + 0x1p-20f : 1.0f;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    // Every thread loads one element of each tile (zero outside the matrices) and every
    // thread reaches both barriers, inside the matrix or not.
    a_tile[ty][tx] = (row < m && t + tx < k) ? a_batch[(long long)row * k + t + tx] : 0.0f;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b_batch[(long long)(t + ty) * n + col] : 0.0f;
    __syncthreads();
    const int steps = min(TILE, k - t);
    for (int i = 0; i < steps; ++i) acc = fmaf(a_tile[ty][i], b_tile[i][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) out[z * m * n + (long long)row * n + col] = acc * scale;
}
