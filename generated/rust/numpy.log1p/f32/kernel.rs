// numpy.log1p, overload f32: out[i] = log(1 + x[i]) elementwise for float32 tensors.
//
// Each element is widened to double and evaluated there, branch-free so that LLVM
// vectorises the loop (the division overlaps the multiply-adds), then rounded once to float32
// (within about 0.5 float32 ulp + 2^-45 of the true value):
//   |x| < 2^-29: log1p(x) = x (1 - x/2) (the rest is below 2^-58 relative; the product form keeps
//                log1p(-0.0) = -0.0 and gives x itself for float32 subnormals);
//   otherwise:   y = 1 + x, exact in double for every float32 x with 2^-29 <= |x| < 2^29 (and for
//                larger x its rounding is far below float32's ulp of the log); y = 2^k m with
//                m in [sqrt(1/2), sqrt(2)) read from y's bits, log(m) = 2 atanh(s) with
//                s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^21 (truncation below
//                1e-17), log1p(x) = k ln2 + log(m).
// y = 0 (x = -1) gives -inf, y < 0 (x < -1, -inf) and nan give nan, y = inf gives inf: selected
// at the end. `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. A strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
const LN2: f64 = f64::from_bits(0x3fe6_2e42_fefa_39ef);
// 1/(2n+1) for n = 0..10
const INV_ODD: [f64; 11] = [
    1.0,
    f64::from_bits(0x3fd5_5555_5555_5555),
    f64::from_bits(0x3fc9_9999_9999_999a),
    f64::from_bits(0x3fc2_4924_9249_2492),
    f64::from_bits(0x3fbc_71c7_1c71_c71c),
    f64::from_bits(0x3fb7_45d1_745d_1746),
    f64::from_bits(0x3fb3_b13b_13b1_3b14),
    f64::from_bits(0x3fb1_1111_1111_1111),
    f64::from_bits(0x3fae_1e1e_1e1e_1e1e),
    f64::from_bits(0x3faa_f286_bca1_af28),
    f64::from_bits(0x3fa8_6186_1861_8618),
];

#[inline(always)]
fn op1(x32: f32) -> f32 {
    let x = x32 as f64;
    let small = x * (1.0 - 0.5 * x);
    let y = 1.0 + x;
    let u = y.to_bits().wrapping_sub(SQRT_HALF_BITS);
    let k = (u as i64) >> 52; // y's exponent, shifted so that m straddles 1
    let m = f64::from_bits(y.to_bits().wrapping_sub((k as u64) << 52));
    let f = m - 1.0;
    let s = f / (f + 2.0);
    let z = s * s;
    let mut t = INV_ODD[10];
    for n in (0..10).rev() {
        t = t * z + INV_ODD[n];
    }
    let mut big = (k as f64) * LN2 + (s + s) * t;
    if y == f64::INFINITY {
        big = y;
    }
    if y == 0.0 {
        big = f64::NEG_INFINITY;
    }
    if !(y >= 0.0) {
        big = f64::NAN; // y < 0 and nan
    }
    let v = if x.abs() < 1.862645149230957e-9 { small } else { big }; // 2^-29
    v as f32
}

fn op_run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = op1(s);
    }
}

pub fn numpy_log1p__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
    let dst = out.as_mut_slice();
    if let Some(src) = x.as_slice() {
        op_run(src, dst);
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
            Some(s) => op_run(s, d),
            None => {
                lane.copy_to(&mut buf);
                op_run(&buf, d);
            }
        }
    }
    Ok(())
}
