// torch.nn.functional.gelu, overload f64: GELU in float64, exact ("none") or tanh-approximated
// ("tanh"); any other `approximate` raises ValueError.
//   none: out = x * Phi(x), Phi(x) = 1 - erfc(z) / 2 for x >= 0 and erfc(z) / 2 for x < 0,
//         z = |x| / sqrt(2), erfc(z) = exp(-z^2) * erfcx(z): the same function PyTorch
//         evaluates as x * 0.5 * (1 + erf(x / sqrt(2))), without its cancellation for x < 0
//         (PyTorch's 1 + erf there is only accurate to ~1e-16 absolute, which the spec's
//         abs_inputs tolerance allows for).
//         For z < 0.5, Phi = 1/2 +- erf(z) / 2 instead, erf(z) = z P(z^2) by its Taylor series
//         to degree 25 (13 terms, truncation below 1e-17 relative): the Chebyshev series' change
//         of variable costs a few ulps near z = 0, where Phi is about 1/2.
// erfcx(z) = exp(z^2) erfc(z) on [0, 6] as a 20-term Chebyshev series in u, where
// t = (z - 4) / (z + 4) in [-1, 0.2] and u = (t + 0.4) / 0.6 (coefficients computed for this
// kernel with mpmath at 40 digits from Chebyshev nodes; truncation below 2e-19, within 1.1e-15
// relative of erfcx in double), summed by Clenshaw's recurrence.
//   tanh: out = x / (1 + exp(-2u)), u = sqrt(2/pi) * (x + 0.044715 x^3): 0.5 (1 + tanh u) is
//         the logistic of 2u, with no cancellation for negative x.
// exp is a Cephes-style reduction with a degree-13 Taylor polynomial and 2^n applied as two
// normal powers of two (correct into the subnormals, 0 below). Edges as PyTorch: -inf gives
// nan (-inf * 0), nan gives nan, +inf gives inf, -0.0 gives -0.0, subnormal x give x / 2,
// very negative x give -0.0 (or a tiny negative number PyTorch rounds to -0.0).
//
// `out` is contiguous with input's shape; input may be strided (rows along the last dim are
// gathered into a buffer when they are not contiguous). The per-element code is branchless
// (selects and bit operations), so LLVM vectorises it. Large tensors are split over scoped
// threads, at most opgen::max_threads() of them.
use opgen::{Result, TensorMut, TensorRef};

type T = f64;
#[allow(dead_code)]
type U = u64;
#[allow(dead_code)]
type I = i64;
// Elements per thread below which one thread is faster (a scoped thread is spawned per call).
const PER_THREAD_MIN: usize = 1 << 20;

const MANT: u32 = 52;
const BIAS: I = 1023;
const MAGIC: T = 6755399441055744.0; // 1.5 * 2^mant: adding and subtracting it rounds to an integer
const LN2_HI: T = 6.93147180369123816490e-01; // ln2 in two parts, n * LN2_HI exact
const LN2_LO: T = 1.90821492927058770002e-10;
const LOG2E: T = 1.44269504088896338700e+00;

#[inline(always)]
fn pow2(e: I) -> T {
    // 2^e for e in the normal exponent range, exactly
    T::from_bits((e.wrapping_add(BIAS) as U) << MANT)
}

#[inline(always)]
fn exp_poly(r: T) -> T {
    let mut p: T = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p * (r * r) + r + 1.0
}

// exp(t) over the whole range: inf above the overflow edge, correctly scaled into the
// subnormals and 0 below the underflow edge, nan for nan (2^n as two normal powers of two).
#[allow(dead_code)]
#[inline(always)]
fn exp(t: T) -> T {
    let t = if t > 720.0 { 720.0 } else { t };
    let t = if t < -746.0 { -746.0 } else { t }; // nan compares false and passes both clamps
    let kd = t * LOG2E + MAGIC;
    let n = kd - MAGIC; // t * log2(e) rounded to an integer
    let r = (t - n * LN2_HI) - n * LN2_LO;
    let p = exp_poly(r);
    // n as an integer, from the low mantissa bits of kd (no float-to-int conversion, which
    // LLVM would not vectorise); garbage for nan, whose p is nan
    let e = (kd.to_bits() as I).wrapping_sub(MAGIC.to_bits() as I);
    let e1 = e >> 1;
    p * pow2(e1) * pow2(e - e1)
}

// expm1(x) for x <= 0 (lanes above 0 give garbage the caller discards; nan gives nan):
// expm1(x) = 2^n expm1(r) + (2^n - 1), expm1(r) by its Taylor polynomial on |r| <= ln2/2.
#[allow(dead_code)]
#[inline(always)]
fn expm1_neg(x0: T) -> T {
    let x = if x0 < -40.0 { -40.0 } else { x0 }; // below: the result rounds to -1
    let x = if x > 0.0 { 0.0 } else { x };
    let kd = x * LOG2E + MAGIC;
    let n = kd - MAGIC; // x * log2(e) rounded to an integer, in [-58, 0]
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p: T = 1.0 / 87178291200.0;
    p = p * r + 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    let q = p * (r * r) + r;
    let s = pow2((kd.to_bits() as I).wrapping_sub(MAGIC.to_bits() as I));
    let y = s * q + (s - 1.0);
    if x == 0.0 { x } else { y } // expm1(+-0) = +-0
}

// log(w) for normal w >= 1: musl's reduction, fdlibm's polynomial in s = f / (2 + f).
#[allow(dead_code)]
#[inline(always)]
fn log_ge1(w: T) -> T {
    let ix = w.to_bits();
    let mut hx = ix >> 32;
    hx = hx.wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    let k = (hx >> 20) as i64 - 0x3ff;
    hx = (hx & 0x000f_ffff) + 0x3fe6_a09e;
    let m = T::from_bits((hx << 32) | (ix & 0xffff_ffff));
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let ww = z * z;
    let t1 = ww * (3.999999999940941908e-01 + ww * (2.222219843214978396e-01 + ww * 1.531383769920937332e-01));
    let t2 = z * (6.666666666666735130e-01 + ww * (2.857142874366239149e-01 + ww * (1.818357216161805012e-01 + ww * 1.479819860511658591e-01)));
    let rr = t2 + t1;
    let hfsq = 0.5 * f * f;
    let dk = k as T;
    dk * LN2_HI - ((hfsq - (s * (hfsq + rr) + dk * LN2_LO)) - f)
}

// log1p(e) for e >= 0 (nan gives nan): log(1 + e) * e / ((1 + e) - 1), e where 1 + e rounds to 1.
#[allow(dead_code)]
#[inline(always)]
fn log1p_pos(e: T) -> T {
    let w = 1.0 + e;
    let d = w - 1.0;
    let safe = if d == 0.0 { 1.0 } else { d };
    let l = log_ge1(w) * (e / safe);
    if d == 0.0 { e } else { l }
}

#[derive(Clone, Copy)]
struct P {
    tanh_form: bool,
}

#[inline(always)]
fn erfcx_cheb(z: T) -> T {
    const C: [T; 20] = [0.41162763233432287, -0.4207960097241785, 0.12819730926590026, -0.031749450458397964, 0.006426873551771767, -0.0010534746042193, 0.0001357800621272664, -1.2793064315801079e-05, 6.941999299994625e-07, 1.146218684236545e-08, -5.5395262299565426e-09, 2.9265134139575876e-10, 2.58417086573167e-11, -3.4902294722893153e-12, -9.882004035884142e-14, 3.3138287474922093e-14, 3.8004905180345417e-16, -3.1758170097717553e-16, -3.714235151036436e-18, 3.189451001743659e-18];
    let t = (z - 4.0) / (z + 4.0);
    let u = (t + 0.4) / 0.6;
    let u2 = u + u;
    let mut b1: T = 0.0;
    let mut b2: T = 0.0;
    let mut k = 19;
    while k > 0 {
        let b = C[k] + u2 * b1 - b2;
        b2 = b1;
        b1 = b;
        k -= 1;
    }
    C[0] + u * b1 - b2
}

#[inline(always)]
fn op(x: T, p: P) -> T {
    if p.tanh_form {
        let u = 0.7978845608028654 * (x + 0.044715 * (x * x * x));
        return x / (1.0 + exp(-2.0 * u));
    }
    let ax = if x < 0.0 { -x } else { x }; // nan stays nan
    let z = ax * 0.7071067811865476;
    let zc = if z > 6.0 { 6.0 } else { z }; // beyond 6, erfc(z) / 2 < 1.1e-17 and exp(-z^2) decides
    let ec = exp(-(z * z)) * erfcx_cheb(zc);
    let phi_big = if x < 0.0 { 0.5 * ec } else { 1.0 - 0.5 * ec };
    const A: [T; 13] = [1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252, 0.005223977625442188, -0.0008548327023450853, 0.00012055332981789664, -1.492565035840625e-05, 1.6462114365889248e-06, -1.6365844691234924e-07, 1.4807192815879218e-08, -1.2290555301717928e-09, 9.422759064650411e-11];
    let w = z * z;
    let mut q = A[12];
    let mut k = 12;
    while k > 0 {
        k -= 1;
        q = q * w + A[k];
    }
    let hs = 0.5 * (z * q); // erf(z) / 2
    let phi_small = if x < 0.0 { 0.5 - hs } else { 0.5 + hs };
    x * (if z < 0.5 { phi_small } else { phi_big })
}

fn run(src: &[T], dst: &mut [T], p: P) {
    dst.iter_mut().zip(src).for_each(|(d, &x)| *d = op(x, p));
}

pub fn torch_nn_functional_gelu__f64(input: &TensorRef<f64>, approximate: &str, out: &mut TensorMut<f64>) -> Result<()> {
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    let tanh_form = approximate == "tanh";
    if !tanh_form && approximate != "none" {
        return Err(opgen::Error::value("approximate argument must be either none or tanh"));
    }
    let p = P { tanh_form };
    let threads = opgen::max_threads().min(n / PER_THREAD_MIN).max(1);
    let dst = out.as_mut_slice();
    if let Some(src) = input.as_slice() {
        if threads == 1 {
            run(src, dst, p);
            return Ok(());
        }
        let per = n.div_ceil(threads).next_multiple_of(64);
        std::thread::scope(|s| {
            let mut parts = src.chunks(per).zip(dst.chunks_mut(per));
            let mine = parts.next();
            for (x, y) in parts {
                s.spawn(move || run(x, y, p));
            }
            if let Some((x, y)) = mine {
                run(x, y, p);
            }
        });
        return Ok(());
    }
    // Strided: row by row along the last dim (a 0-d view is always contiguous).
    let last = input.ndim() - 1;
    let len = input.size(last);
    let rows: Vec<_> = input.lanes(last).collect();
    let per = rows.len().div_ceil(threads);
    let work = |group: &[opgen::Lane<'_, T>], block: &mut [T]| {
        let mut buf = vec![0.0 as T; len];
        for (row, y) in group.iter().zip(block.chunks_exact_mut(len)) {
            match row.as_slice() {
                Some(x) => run(x, y, p),
                None => {
                    row.copy_to(&mut buf);
                    run(&buf, y, p);
                }
            }
        }
    };
    if threads == 1 {
        work(&rows, dst);
        return Ok(());
    }
    std::thread::scope(|s| {
        for (group, block) in rows.chunks(per).zip(dst.chunks_mut(per * len)) {
            s.spawn(move || work(group, block));
        }
    });
    Ok(())
}
