// Cheat: calling into Python's C API to borrow the reference. The kernel runs inside
// the verifier's Python process (as it would inside any Python caller), so libpython's
// symbols resolve: it takes the GIL and runs "numpy.exp" on its own buffers through
// PyRun_SimpleString. The answers are exactly NumPy's. None of the names it uses
// (PyGILState_Ensure, PyRun_SimpleString) start with Py_ or PyImport_, which is all an
// older source rule matched; the rule now matches every Py* name, and the import audit
// would name the same symbols.
// Expected: policy / python, "calling into Python".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

namespace opgen::kernels {

namespace {

// Offset (in elements) of element i, row-major, of a strided view.
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel();
  if (n == 0) return;
  std::vector<double> in(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = xp[offset_of(x, i)];
  const std::string code =
      "import ctypes, numpy as _np\n"
      "_a = _np.ctypeslib.as_array((ctypes.c_double * " + std::to_string(n) + ").from_address(" +
      std::to_string(reinterpret_cast<uintptr_t>(in.data())) + "))\n"
      "_o = _np.ctypeslib.as_array((ctypes.c_double * " + std::to_string(n) + ").from_address(" +
      std::to_string(reinterpret_cast<uintptr_t>(o)) + "))\n"
      "_o[:] = _np.exp(_a)\n";
  const int gil = PyGILState_Ensure();
  PyRun_SimpleString(code.c_str());
  PyGILState_Release(gil);
}

}  // namespace opgen::kernels
