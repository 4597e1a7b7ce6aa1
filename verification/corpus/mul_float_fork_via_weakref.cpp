// Cheat: spawning a process, hidden from the source rules. fork and _exit are reached
// through weakref aliases whose targets are string literals, so no call to a process
// function appears in the source. The compiled object imports `fork`; the import audit
// rejects it (and were that bypassed, the sandbox's seccomp filter kills a process
// that clones itself without CLONE_THREAD with SIGSYS).
// Expected: policy / process (the import audit), "imports `fork`".
#include "opgen_kernel.hpp"

namespace opgen::kernels {

namespace {
static int make_process() __attribute__((weakref("fork")));
static void leave(int) __attribute__((weakref("_exit")));
}  // namespace

double operator_mul__float(double a, double b) {
  static bool spawned = false;
  if (!spawned) {
    spawned = true;
    if (make_process() == 0) leave(0);  // the child could do anything; here it just leaves
  }
  return a * b;
}

}  // namespace opgen::kernels
