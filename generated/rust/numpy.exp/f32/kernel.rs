// numpy.exp, overload f32: out[i] = exp(x[i]) elementwise for float32 tensors.
//
// Each element is evaluated in double precision and rounded once to float32, so the result
// is within about 0.5 ulp of the true value: x = k*ln2 + r with |r| <= ln2/2, exp(r) by its
// degree-8 Taylor polynomial (truncation below 3e-10 relative), 2**k built in the exponent
// bits. The function has no branches (the clamps are selects), so LLVM vectorises the loop
// over a contiguous run. Clamping x to [-110, 89] keeps 2**k a normal double and still
// rounds to 0 (exp(-110) < 2**-150) and to inf (exp(89) > FLT_MAX) in float32; a nan fails
// both comparisons, stays nan and makes the result nan. exp(inf) = inf, exp(-inf) = 0,
// exp(-0.0) = 1. `x` may be strided (any strides, including 0 and negative), 0-d or
// empty; `out` is contiguous with x's shape.
use opgen::{Result, TensorMut, TensorRef};

const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2**52: adding it rounds to an integer in the low bits
const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471803691238; // ln2 split so that k * LN2_HI is exact
const LN2_LO: f64 = 1.9082149292705877e-10;

#[inline(always)]
fn exp1(xf: f32) -> f32 {
    let mut x = xf as f64;
    x = if x < -110.0 { -110.0 } else { x };
    x = if x > 89.0 { 89.0 } else { x };
    let kd = x.mul_add(LOG2E, SHIFT);
    let kbits = kd.to_bits();
    let k = kd - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // k is in [-159, 129]: the low 12 bits of kbits hold it in two's complement, so
    // (kbits + 1023) << 52 is 2**k (everything above those bits is shifted out).
    let scale = f64::from_bits(kbits.wrapping_add(1023) << 52);
    (p * scale) as f32
}

fn exp_run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = exp1(s);
    }
}

pub fn numpy_exp__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let dst = out.as_mut_slice();
    if let Some(src) = x.as_slice() {
        exp_run(src, dst);
        return Ok(());
    }
    // Strided: lane by lane along the last dim (each a contiguous run of out).
    let last = x.ndim() - 1; // a 0-d view is always contiguous
    let len = x.size(last);
    if len == 0 {
        return Ok(());
    }
    let mut buf = vec![0.0f32; len];
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {
        match lane.as_slice() {
            Some(s) => exp_run(s, d),
            None => {
                lane.copy_to(&mut buf);
                exp_run(&buf, d);
            }
        }
    }
    Ok(())
}
