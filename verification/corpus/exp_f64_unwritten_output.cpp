// Cheat: output left unwritten. The kernel returns at once and leaves `out` as the
// caller allocated it, hoping the buffer already holds the answer (a harness that
// reuses the reference's output memory, or hands over zeroed memory for an op whose
// results are near zero, is fooled). opgen poisons every output with NaN before the
// call, so the untouched buffer reads back as NaN.
// Expected: verify / value, "got nan".
#include "opgen_kernel.hpp"

namespace opgen::kernels {

void numpy_exp__f64(const opgen::Tensor& x, opgen::Tensor& out) {
  (void)x;
  (void)out;  // "the caller's buffer already has it"
}

}  // namespace opgen::kernels
