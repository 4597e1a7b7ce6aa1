// Cheat: loading libpython at run time to borrow the reference. dlopen(NULL) returns
// the running program (the verifier's Python), dlsym finds PyRun_SimpleString and the
// GIL functions, and the kernel has torch compute the softmax on its buffers. The
// symbol names are assembled at run time and dlopen/dlsym are reached through weakref
// aliases with split string names, so no source rule sees any of it; the compiled object
// imports dlopen and dlsym, and the import audit rejects them.
// Expected: policy / dynamic-loading (the import audit), "imports `dlopen`".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

static void* load(const char*, int) __attribute__((weakref("dl" "open")));
static void* find(void*, const char*) __attribute__((weakref("dl" "sym")));

std::string name(std::initializer_list<char> chars) { return std::string(chars); }

}  // namespace

void torch_nn_functional_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  std::vector<float> in(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {  // gather x into a contiguous copy
    int64_t rest = i, off = 0;
    for (int d = x.ndim() - 1; d >= 0; --d) {
      off += (rest % x.size(d)) * x.stride(d);
      rest /= x.size(d);
    }
    in[static_cast<size_t>(i)] = x.data<float>()[off];
  }
  void* self = load(nullptr, 2);  // RTLD_NOW
  auto ensure = reinterpret_cast<int (*)()>(find(self, name({'P', 'y', 'G', 'I', 'L', 'S', 't', 'a', 't', 'e', '_', 'E', 'n', 's', 'u', 'r', 'e'}).c_str()));
  auto release = reinterpret_cast<void (*)(int)>(find(self, name({'P', 'y', 'G', 'I', 'L', 'S', 't', 'a', 't', 'e', '_', 'R', 'e', 'l', 'e', 'a', 's', 'e'}).c_str()));
  auto run = reinterpret_cast<int (*)(const char*)>(find(self, name({'P', 'y', 'R', 'u', 'n', '_', 'S', 'i', 'm', 'p', 'l', 'e', 'S', 't', 'r', 'i', 'n', 'g'}).c_str()));
  std::string shape;
  for (int d = 0; d < x.ndim(); ++d) shape += std::to_string(x.size(d)) + ",";
  const std::string code =
      "import ctypes, torch\n"
      "_a = torch.frombuffer((ctypes.c_float * " + std::to_string(n) + ").from_address(" +
      std::to_string(reinterpret_cast<uintptr_t>(in.data())) + "), dtype=torch.float32).reshape((" + shape + "))\n"
      "_o = torch.frombuffer((ctypes.c_float * " + std::to_string(n) + ").from_address(" +
      std::to_string(reinterpret_cast<uintptr_t>(out.data<float>())) + "), dtype=torch.float32).reshape((" + shape + "))\n"
      "_o.copy_(torch.nn.functional.softmax(_a, dim=" + std::to_string(dim) + "))\n";
  const int gil = ensure();
  run(code.c_str());
  release(gil);
}

}  // namespace opgen::kernels
