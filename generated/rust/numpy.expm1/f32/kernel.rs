// numpy.expm1, overload f32: out[i] = e^x[i] - 1 elementwise for float32 tensors.
//
// Each element is widened to double and evaluated there, branch-free so that LLVM
// vectorises the loop, then rounded once to float32 (within about 0.5 float32 ulp + 2^-45 of
// the true value):
//   |x| < 0.5:  expm1(x) = x * (1 + x/2! + x^2/3! + ... + x^12/13!) (truncation below 1e-13
//               relative; the product form keeps expm1(-0.0) = -0.0 and gives x itself for tiny x,
//               float32 subnormals included);
//   otherwise:  x clamped to [-104, 89] (past float32's saturation to -1 and its overflow; a nan
//               fails both comparisons and stays nan), x = k ln2 + r with k the nearest integer to
//               x / ln2 (by the 1.5 * 2^52 shift), ln2 in two parts (k ln2_hi exact), |r| <= ln2/2,
//               e^r by its Taylor series to r^12, 2^k from k's bits, expm1 = 2^k e^r - 1, which
//               loses nothing because |expm1(x)| >= 0.39 there.
// expm1(inf) = inf (89 overflows float32), expm1(-inf) = -1, expm1(nan) = nan.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous
// with x's shape. A strided lane is copied to a buffer first.
use opgen::{Result, TensorMut, TensorRef};

const INV_LN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const SHIFT_BITS: u64 = 0x4338_0000_0000_0000;
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 32 significant bits
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
// 1/n! for n = 0..13
const F: [f64; 14] = [
    1.0,
    1.0,
    0.5,
    f64::from_bits(0x3fc5_5555_5555_5555),
    f64::from_bits(0x3fa5_5555_5555_5555),
    f64::from_bits(0x3f81_1111_1111_1111),
    f64::from_bits(0x3f56_c16c_16c1_6c17),
    f64::from_bits(0x3f2a_01a0_1a01_a01a),
    f64::from_bits(0x3efa_01a0_1a01_a01a),
    f64::from_bits(0x3ec7_1de3_a556_c734),
    f64::from_bits(0x3e92_7e4f_b778_9f5c),
    f64::from_bits(0x3e5a_e645_67f5_44e4),
    f64::from_bits(0x3e21_eed8_eff8_d898),
    f64::from_bits(0x3de6_1246_13a8_6d09),
];

#[inline(always)]
fn op1(x32: f32) -> f32 {
    let x = x32 as f64;
    let mut p = F[13];
    for n in (1..13).rev() {
        p = p * x + F[n];
    }
    let small = x * p;
    let xc = if x > 89.0 { 89.0 } else { x }; // a nan fails both comparisons and stays nan
    let xc = if xc < -104.0 { -104.0 } else { xc };
    let kd0 = xc * INV_LN2 + SHIFT;
    let k = kd0.to_bits().wrapping_sub(SHIFT_BITS);
    let kd = kd0 - SHIFT;
    let r = xc - kd * LN2_HI;
    let r = r - kd * LN2_LO;
    let mut e = F[12];
    for n in (0..12).rev() {
        e = e * r + F[n];
    }
    let scale = f64::from_bits(k.wrapping_add(1023) << 52);
    let big = scale * e - 1.0;
    let v = if x.abs() < 0.5 { small } else { big };
    v as f32
}

fn op_run(src: &[f32], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = op1(s);
    }
}

pub fn numpy_expm1__f32(x: &TensorRef<f32>, out: &mut TensorMut<f32>) -> Result<()> {
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
