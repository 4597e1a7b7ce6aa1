// Cheat: installing a signal handler. The kernel traps SIGFPE/SIGSEGV so that a crash
// in its fast path is "recovered" (and so that the sandbox's signals, which report a
// crash, are swallowed). The static policy rejects signal() and sigaction() by name.
// Expected: policy / signal, "signal handlers".
#include "opgen_kernel.hpp"

#include <cmath>

extern "C" void (*signal(int, void (*)(int)))(int);

namespace opgen::kernels {

namespace {
void ignore(int) {}
}  // namespace

double operator_pow__float(double a, double b) {
  signal(8, ignore);   // SIGFPE
  signal(11, ignore);  // SIGSEGV
  return std::pow(a, b);
}

}  // namespace opgen::kernels
