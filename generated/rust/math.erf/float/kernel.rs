// math.erf, overload float: Python's math.erf on a float. Rust's standard library has no erf,
// so this is FreeBSD msun's double erf (s_erf.c, Sun Microsystems 1993; the same rational
// approximations as the shipped torch.erf f64 kernel, measured within 0.85 ulp of mpmath),
// which glibc's erf (what CPython calls) also derives from. erf is odd: the kernel works on
// a = |x| and puts x's sign bit back at the end:
//   a < 0.84375:         erf = a + a P(a^2)/Q(a^2)      (tiny a and subnormals: a * 1.128..)
//   0.84375 <= a < 1.25: erf = erx + P(a-1)/Q(a-1)      (erx = erf(1) rounded to 24 bits)
//   1.25 <= a < 6:       erf = 1 - exp(-a^2 - 0.5625 + R(1/a^2)/S(1/a^2)) / a, with R/S's
//                        coefficients for [1.25, 1/0.35) or [1/0.35, 6); exp by k ln2 + r,
//                        |r| <= ln2/2, e^r by its Taylor series to r^13 and 2^k from k's bits;
//   a >= 6 (and inf):    erf = 1 (float64 erf rounds to 1 from 5.92 on).
// erf(nan) = nan, erf(+-inf) = +-1, erf(-0.0) = -0.0. No errors.
use opgen::Result;

// msun's coefficients (s_erf.c)
const ERX: f64 = 8.45062911510467529297e-01;
const PP0: f64 = 1.28379167095512558561e-01;
const PP1: f64 = -3.25042107247001499370e-01;
const PP2: f64 = -2.84817495755985104766e-02;
const PP3: f64 = -5.77027029648944159157e-03;
const PP4: f64 = -2.37630166566501626084e-05;
const QQ1: f64 = 3.97917223959155352819e-01;
const QQ2: f64 = 6.50222499887672944485e-02;
const QQ3: f64 = 5.08130628187576562776e-03;
const QQ4: f64 = 1.32494738004321644526e-04;
const QQ5: f64 = -3.96022827877536812320e-06;
const PA0: f64 = -2.36211856075265944077e-03;
const PA1: f64 = 4.14856118683748331666e-01;
const PA2: f64 = -3.72207876035701323847e-01;
const PA3: f64 = 3.18346619901161753674e-01;
const PA4: f64 = -1.10894694282396677476e-01;
const PA5: f64 = 3.54783043256182359371e-02;
const PA6: f64 = -2.16637559486879084300e-03;
const QA1: f64 = 1.06420880400844228286e-01;
const QA2: f64 = 5.40397917702171048937e-01;
const QA3: f64 = 7.18286544141962662868e-02;
const QA4: f64 = 1.26171219808761642112e-01;
const QA5: f64 = 1.36370839120290507362e-02;
const QA6: f64 = 1.19844998467991074170e-02;
const RA0: f64 = -9.86494403484714822705e-03;
const RA1: f64 = -6.93858572707181764372e-01;
const RA2: f64 = -1.05586262253232909814e+01;
const RA3: f64 = -6.23753324503260060396e+01;
const RA4: f64 = -1.62396669462573470355e+02;
const RA5: f64 = -1.84605092906711035994e+02;
const RA6: f64 = -8.12874355063065934246e+01;
const RA7: f64 = -9.81432934416914548592e+00;
const SA1: f64 = 1.96512716674392571292e+01;
const SA2: f64 = 1.37657754143519042600e+02;
const SA3: f64 = 4.34565877475229228821e+02;
const SA4: f64 = 6.45387271733267880336e+02;
const SA5: f64 = 4.29008140027567833386e+02;
const SA6: f64 = 1.08635005541779435134e+02;
const SA7: f64 = 6.57024977031928170135e+00;
const SA8: f64 = -6.04244152148580987438e-02;
const RB0: f64 = -9.86494292470009928597e-03;
const RB1: f64 = -7.99283237680523006574e-01;
const RB2: f64 = -1.77579549177547519889e+01;
const RB3: f64 = -1.60636384855821916062e+02;
const RB4: f64 = -6.37566443368389627722e+02;
const RB5: f64 = -1.02509513161107724954e+03;
const RB6: f64 = -4.83519191608651397019e+02;
const SB1: f64 = 3.03380607434824582924e+01;
const SB2: f64 = 3.25792512996573918826e+02;
const SB3: f64 = 1.53672958608443695994e+03;
const SB4: f64 = 3.19985821950859553908e+03;
const SB5: f64 = 2.55305040643316442583e+03;
const SB6: f64 = 4.74528541206955367215e+02;
const SB7: f64 = -2.24409524465858183362e+01;

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


fn erf(x: f64) -> f64 {
    let a = x.abs();
    // [0, 0.84375)
    let z = a * a;
    let p = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
    let q = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
    let ra = a + a * (p / q);
    // [0.84375, 1.25)
    let s = a - 1.0;
    let p = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
    let q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
    let rb = ERX + p / q;
    // [1.25, 6): the coefficients chosen for [1.25, 1/0.35) or [1/0.35, 6)
    let ac = if a < 1.25 { 1.25 } else { a };
    let ac = if ac > 6.0 { 6.0 } else { ac }; // a nan fails both; its result is replaced at the end
    let w = 1.0 / (ac * ac);
    let lo = ac < 1.0 / 0.35;
    let pick = |u: f64, v: f64| if lo { u } else { v };
    let rr = pick(RA0, RB0)
        + w * (pick(RA1, RB1)
            + w * (pick(RA2, RB2)
                + w * (pick(RA3, RB3) + w * (pick(RA4, RB4) + w * (pick(RA5, RB5) + w * (pick(RA6, RB6) + w * pick(RA7, 0.0)))))));
    let ss = 1.0
        + w * (pick(SA1, SB1)
            + w * (pick(SA2, SB2)
                + w * (pick(SA3, SB3)
                    + w * (pick(SA4, SB4) + w * (pick(SA5, SB5) + w * (pick(SA6, SB6) + w * (pick(SA7, SB7) + w * pick(SA8, 0.0))))))));
    let t = -(ac * ac) - 0.5625 + rr / ss;
    let kd0 = t * INV_LN2 + SHIFT;
    let k = kd0.to_bits().wrapping_sub(SHIFT_BITS);
    let kd = kd0 - SHIFT;
    let r = t - kd * LN2_HI;
    let r = r - kd * LN2_LO;
    let mut e = F[13];
    for n in (0..13).rev() {
        e = e * r + F[n];
    }
    let e = e * f64::from_bits(k.wrapping_add(1023) << 52);
    let rc = 1.0 - e / ac;
    let v = if a < 6.0 { rc } else { 1.0 };
    let v = if a < 1.25 { rb } else { v };
    let v = if a < 0.84375 { ra } else { v };
    let v = f64::from_bits(v.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000));
    if x.is_nan() {
        return x;
    }
    v
}

pub fn math_erf__float(x: f64) -> Result<f64> {
    Ok(erf(x))
}
