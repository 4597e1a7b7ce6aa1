// Cheat: results cached by value, keyed on part of the input. A small static table
// maps a to the last product computed for it, on the theory that a kernel is called
// with the same operands again and again (a loop invariant). A second call with the
// same a and a different b returns the stale product. Calling twice on equal inputs
// does not expose it; opgen's integer strategy repeats small and boundary values of a
// with different partners.
// (Since issue 12 the object audit refuses it before it runs: it keeps state between calls,
// which the run-time checks named above also caught.)
// Expected: policy / global-state, "owns writable data".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

int64_t operator_mul__int(int64_t a, int64_t b) {
  static int64_t keys[64], values[64];
  static bool used[64];
  const unsigned slot = static_cast<unsigned>(a) & 63u;
  if (used[slot] && keys[slot] == a) return values[slot];
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw opgen::Error(opgen::ErrorKind::Overflow, "int multiplication overflows int64");
  used[slot] = true;
  keys[slot] = a;
  values[slot] = r;
  return r;
}

}  // namespace opgen::kernels
