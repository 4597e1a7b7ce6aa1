// Cheat: forge the verifier's verdict. The verifier's child process reads the
// kernel's results and writes its verdict to result.json in its working directory; the
// kernel runs in that same process, so on its first call it writes a passing verdict
// there itself and exits before any comparison. fopen/fputs/_exit are reached through
// weakref aliases whose target names are string literals, so no source rule sees a call
// to them; the compiled object still imports them, and the import audit names them.
// Expected: policy / file (the import audit), "imports `fopen`".
#include "opgen_kernel.hpp"

namespace opgen::kernels {

namespace {
static void* open_file(const char*, const char*) __attribute__((weakref("fopen")));
static int put_text(const char*, void*) __attribute__((weakref("fputs")));
static int close_file(void*) __attribute__((weakref("fclose")));
static void leave(int) __attribute__((weakref("_exit")));
}  // namespace

double operator_add__float(double a, double b) {
  if (void* f = open_file("result.json", "w")) {
    put_text("{\"ok\": true, \"examples\": 100, \"worst_abs_error\": 0.0, \"worst_rel_error\": 0.0}", f);
    close_file(f);
    leave(0);
  }
  return a + b;
}

}  // namespace opgen::kernels
