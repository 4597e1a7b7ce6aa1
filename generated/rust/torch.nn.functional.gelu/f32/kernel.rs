// torch.nn.functional.gelu, overload f32: GELU, exact ("none") or tanh-approximated ("tanh").
//
//   none: y = x * 0.5 * (1 + erf(x / sqrt(2))) = 0.5 * x * erfc(-x / sqrt(2))
//   tanh: y = 0.5 * x * (1 + tanh(u)) = x / (1 + exp(-2u)),  u = sqrt(2/pi) * (x + 0.044715 x^3)
//
// Both evaluated in double and rounded once to float32, in forms without cancellation:
//   - erfc by the Chebyshev fit of Numerical Recipes (erfcc: relative error below 1.2e-7
//     for every argument), so negative x keep a small relative error where 1 + erf would
//     cancel (results too small for float32 become -0.0, as in PyTorch);
//   - the tanh form as the logistic of 2u (the same function);
//   - exp by range reduction (x = k ln2 + r, |r| <= ln2/2), a degree-8 polynomial (relative
//     error ~2e-10) and 2**k built in the exponent bits, the argument clamped to [-700, 700]
//     (the tanh form's exp(-2u) is taken as infinite past 700).
// No branches (selects only), so LLVM vectorises the loop. -inf gives nan (-inf * 0) in both
// forms, nan stays nan, -0.0 gives -0.0, +inf gives inf. Any other `approximate` is a
// ValueError. `out` is contiguous with x's shape; x may be strided (rows gathered into a
// buffer). Large tensors are split over scoped threads.
use opgen::{Error, Result, TensorMut, TensorRef};

const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2**52
const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
const PER_THREAD_MIN: usize = 1 << 14;

#[inline(always)]
fn exp(x: f64) -> f64 {
    let x = if x < -700.0 { -700.0 } else { x };
    let x = if x > 700.0 { 700.0 } else { x };
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
    // k is in [-1010, 1010]: k + 1023 fits the exponent field.
    p * f64::from_bits(kbits.wrapping_add(1023) << 52)
}

#[inline(always)]
fn erfc(z: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * z.abs());
    let poly = -1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let ans = t * exp(-z * z + poly);
    if z >= 0.0 { ans } else { 2.0 - ans }
}

#[inline(always)]
fn gelu_erf(x: f32) -> f32 {
    let x = x as f64;
    (0.5 * x * erfc(-x * std::f64::consts::FRAC_1_SQRT_2)) as f32
}

#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    let x = x as f64;
    let u = 0.7978845608028654 * (x + 0.044715 * (x * x * x));
    // exp(-2u) overflows for very negative x: infinite there, so -inf gives -inf / inf = nan
    // and large finite x give -0.0, as in PyTorch.
    let e = if -2.0 * u > 700.0 { f64::INFINITY } else { exp(-2.0 * u) };
    (x / (1.0 + e)) as f32
}

fn run(src: &[f32], dst: &mut [f32], tanh: bool) {
    if tanh {
        dst.iter_mut().zip(src).for_each(|(d, &x)| *d = gelu_tanh(x));
    } else {
        dst.iter_mut().zip(src).for_each(|(d, &x)| *d = gelu_erf(x));
    }
}

pub fn torch_nn_functional_gelu__f32(input: &TensorRef<f32>, approximate: &str, out: &mut TensorMut<f32>) -> Result<()> {
    let tanh = match approximate {
        "tanh" => true,
        "none" => false,
        _ => return Err(Error::value(format!("approximate argument must be either none or tanh, not {:?}", approximate))),
    };
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        let per = n.div_ceil(threads);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y, tanh));
            }
            if let Some((x, y)) = mine {
                run(x, y, tanh);
            }
        });
        return Ok(());
    }
    // Strided: row by row along the last dim (a 0-d view is always contiguous).
    let last = input.ndim() - 1;
    let len = input.size(last);
    let rows: Vec<_> = input.lanes(last).collect();
    let per = rows.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (group, block) in rows.chunks(per).zip(dst.chunks_mut(per * len)) {
            s.spawn(move || {
                let mut buf = vec![0.0f32; len];
                for (row, y) in group.iter().zip(block.chunks_exact_mut(len)) {
                    match row.as_slice() {
                        Some(x) => run(x, y, tanh),
                        None => {
                            row.copy_to(&mut buf);
                            run(&buf, y, tanh);
                        }
                    }
                }
            });
        }
    });
    Ok(())
}
