// numpy.sin, overload f32: out[i] = sin(x[i]) (radians) elementwise for float32 tensors.
//
// Each element is widened to f64 and evaluated there, branch-free so that LLVM vectorises the
// loop, then rounded once to float32 (within about 0.5 float32 ulp + 2^-40 of the true value):
//   k = nearest integer to x * 2/pi (by the 1.5 * 2^52 shift; the quadrant is k's low bits),
//   r = x - k pi/2 by a three-part Cody-Waite reduction: pi/2 = P1 + P2 + P3 with P1 and P2 of
//       33 significant bits, so k P1 and k P2 are exact for |k| < 2^20 and x - k P1 is exact
//       (Sterbenz): 119 bits of pi/2 in all, so r keeps its relative accuracy even for the float32
//       inputs closest to a multiple of pi/2 (for |x| <= 1e6);
//   sin(r) = r (1 + z S(z)), cos(r) = 1 + z C(z), z = r^2, |r| <= pi/4, by their Taylor series
//       to r^17 and r^18 (truncation below 1e-16 relative); the quadrant picks sin or cos of r
//       and the sign.
// Elements with |x| > 1e6, inf or nan (the comparison fails for nan) are redone in a second pass
// with std's f64::sin (libm, which reduces exactly): sin(+-inf) = nan, sin(nan) = nan.
// sin(-0.0) = -0.0, and tiny |x| (float32 subnormals included) gives x itself.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape: a strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

const LIMIT: f64 = 1e6;
const TWO_OVER_PI: f64 = 0.63661977236758138; // 0x1.45f306dc9c883p-1
const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const P1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000); // 33 significant bits of pi/2
const P2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000); // the next 33
const P3: f64 = f64::from_bits(0x3ba3_198a_2e03_7073); // the rest
const S: [f64; 8] = [
    f64::from_bits(0xbfc5_5555_5555_5555), // -1/3!
    f64::from_bits(0x3f81_1111_1111_1111), // 1/5!
    f64::from_bits(0xbf2a_01a0_1a01_a01a), // -1/7!
    f64::from_bits(0x3ec7_1de3_a556_c734), // 1/9!
    f64::from_bits(0xbe5a_e645_67f5_44e4), // -1/11!
    f64::from_bits(0x3de6_1246_13a8_6d09), // 1/13!
    f64::from_bits(0xbd6a_e7f3_e733_b81f), // -1/15!
    f64::from_bits(0x3ce9_52c7_7030_ad4a), // 1/17!
];
const C: [f64; 9] = [
    -0.5,
    f64::from_bits(0x3fa5_5555_5555_5555), // 1/4!
    f64::from_bits(0xbf56_c16c_16c1_6c17), // -1/6!
    f64::from_bits(0x3efa_01a0_1a01_a01a), // 1/8!
    f64::from_bits(0xbe92_7e4f_b778_9f5c), // -1/10!
    f64::from_bits(0x3e21_eed8_eff8_d898), // 1/12!
    f64::from_bits(0xbda9_3974_a8c0_7c9d), // -1/14!
    f64::from_bits(0x3d2a_e7f3_e733_b81f), // 1/16!
    f64::from_bits(0xbca6_8278_63b9_7d97), // -1/18!
];

#[inline(always)]
fn op1(x32: f32) -> f32 {
    let x = x32 as f64;
    let kd0 = x * TWO_OVER_PI + SHIFT;
    let q = kd0.to_bits();
    let kd = kd0 - SHIFT;
    let r = x - kd * P1;
    let r = r - kd * P2;
    let r = r - kd * P3;
    let z = r * r;
    let mut s = S[7];
    s = s * z + S[6];
    s = s * z + S[5];
    s = s * z + S[4];
    s = s * z + S[3];
    s = s * z + S[2];
    s = s * z + S[1];
    s = s * z + S[0];
    let s = r * (s * z + 1.0); // r (1 + ...) keeps sin(-0.0) = -0.0
    let mut c = C[8];
    c = c * z + C[7];
    c = c * z + C[6];
    c = c * z + C[5];
    c = c * z + C[4];
    c = c * z + C[3];
    c = c * z + C[2];
    c = c * z + C[1];
    c = c * z + C[0];
    let c = c * z + 1.0;
    // quadrant k mod 4: sin(x) = s, c, -s, -c
    let v = if q & 1 != 0 { c } else { s };
    let v = if q & 2 != 0 { -v } else { v };
    v as f32
}

fn op_run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = op1(s);
    }
    // The rare lanes out of the vector path's range, found by a search (an early-exit loop, so
    // that the libm call is not vectorised and run on every lane).
    let mut i = 0;
    while let Some(j) = src[i..].iter().position(|&s| !((s as f64).abs() <= LIMIT)) {
        let k = i + j;
        dst[k] = (src[k] as f64).sin() as f32;
        i = k + 1;
    }
}

pub fn numpy_sin__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
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
