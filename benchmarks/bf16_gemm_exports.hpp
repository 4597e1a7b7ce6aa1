// C entry points for a bfloat16 matmul or linear answer, for tests/test_dpbf16.py and
// benchmarks/bf16_gemm_cpu_time.py (ctypes): a unit includes the answer, defines
// OPGEN_EXPORT_MATMUL or OPGEN_EXPORT_LINEAR, then includes this. Arrays are row-major bfloat16,
// presented to the kernel as opgen's shim presents them. (No #include "opgen_kernel.hpp": the
// answer included it, and part of that header is not guarded against a second inclusion.)

namespace {
opgen::Tensor bf16_view(void* p, int nd, int64_t* shape, int64_t* strides) {
  opgen_tensor raw{};
  raw.data = p;
  raw.device = opgen_device{1, 0};
  raw.ndim = nd;
  raw.dtype = opgen_dtype{4, 16, 1};  // kDLBfloat
  raw.shape = shape;
  raw.strides = strides;
  return opgen::Tensor(raw);
}
}  // namespace

#ifdef OPGEN_EXPORT_MATMUL
// out (m, n) = a (m, k) @ b (k, n), b's strides (sbk, sbn) in elements.
extern "C" void bf16_matmul(void* a, void* b, int64_t sbk, int64_t sbn, void* out, int64_t m, int64_t k, int64_t n) {
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, tb[2] = {sbk, sbn}, so[2] = {m, n};
  opgen::Tensor o = bf16_view(out, 2, so, nullptr);
  opgen::kernels::operator_matmul__bf16(bf16_view(a, 2, sa, nullptr), bf16_view(b, 2, sb, tb), o);
}
#endif

#ifdef OPGEN_EXPORT_LINEAR
// out (m, n) = x (m, k) @ weight (n, k)^T + bias (n,); weight and bias with x's leading dim in
// front at stride 0, as the shim passes them.
extern "C" void bf16_linear(void* x, void* w, void* bias, void* out, int64_t m, int64_t k, int64_t n) {
  int64_t sx[2] = {m, k}, sw[3] = {m, n, k}, tw[3] = {0, k, 1}, sb[2] = {m, n}, tb[2] = {0, 1}, so[2] = {m, n};
  opgen::Tensor o = bf16_view(out, 2, so, nullptr);
  opgen::kernels::torch_nn_functional_linear__bf16_bias(bf16_view(x, 2, sx, nullptr), bf16_view(w, 3, sw, tw),
                                                        bf16_view(bias, 2, sb, tb), o);
}
#endif
