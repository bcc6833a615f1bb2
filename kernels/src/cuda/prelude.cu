// oxten's CUDA prelude: storage types, conversions and the math of pointwise expressions.
// Every generated kernel is compiled with this text first (NVRTC, no headers needed).

struct ox_half { unsigned short x; };
struct ox_bf16 { unsigned short x; };
struct ox_bool { unsigned char x; };

__device__ __forceinline__ float ox_widen(ox_half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
}
__device__ __forceinline__ float ox_widen(ox_bf16 b) { return __uint_as_float(((unsigned)b.x) << 16); }
__device__ __forceinline__ int ox_widen(ox_bool b) { return b.x != 0; }
template <class S> __device__ __forceinline__ S ox_widen(S s) { return s; }

template <class T, class S> __device__ __forceinline__ T ox_load(S s) { return T(ox_widen(s)); }

template <class S> struct OxStore {
  template <class V> static __device__ __forceinline__ S go(V v) { return S(v); }
};
// Floats to 8- and 16-bit integers go through 64 bits first, so that -2.7 -> uint8 wraps to
// 254 as on the CPU (and x86 PyTorch) instead of saturating.
#define OX_STORE_VIA_I64(S)                                                                  \
  template <> struct OxStore<S> {                                                            \
    template <class V> static __device__ __forceinline__ S go(V v) { return (S)((long long)v); } \
  };
OX_STORE_VIA_I64(unsigned char)
OX_STORE_VIA_I64(signed char)
OX_STORE_VIA_I64(short)
template <> struct OxStore<ox_half> {
  template <class V> static __device__ __forceinline__ ox_half go(V v) {
    float f = float(v);
    ox_half h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f));
    return h;
  }
};
template <> struct OxStore<ox_bf16> {
  // Round to nearest even; NaN stays a (quiet) NaN.
  template <class V> static __device__ __forceinline__ ox_bf16 go(V v) {
    ox_bf16 b;
#if __CUDA_ARCH__ >= 800
    // One instruction on Ampere and later (NaN becomes the canonical 0x7fff).
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.x) : "f"(float(v)));
#else
    unsigned u = __float_as_uint(float(v));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      b.x = (unsigned short)((u >> 16) | 0x40u);
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      b.x = (unsigned short)(u >> 16);
    }
#endif
    return b;
  }
};
template <> struct OxStore<ox_bool> {
  template <class V> static __device__ __forceinline__ ox_bool go(V v) {
    ox_bool b;
    b.x = (v != V(0)) ? 1 : 0;
    return b;
  }
};
template <class S, class V> __device__ __forceinline__ S ox_store(V v) { return OxStore<S>::go(v); }

#define OX_F1(name, ff, df)                                          \
  __device__ __forceinline__ float name(float x) { return ff(x); }  \
  __device__ __forceinline__ double name(double x) { return df(x); }
OX_F1(ox_exp, expf, exp)
OX_F1(ox_log, logf, log)
OX_F1(ox_log1p, log1pf, log1p)
OX_F1(ox_expm1, expm1f, expm1)
OX_F1(ox_sqrt, sqrtf, sqrt)
OX_F1(ox_tanh, tanhf, tanh)
OX_F1(ox_sin, sinf, sin)
OX_F1(ox_cos, cosf, cos)
OX_F1(ox_tan, tanf, tan)
OX_F1(ox_asin, asinf, asin)
OX_F1(ox_acos, acosf, acos)
OX_F1(ox_atan, atanf, atan)
OX_F1(ox_sinh, sinhf, sinh)
OX_F1(ox_cosh, coshf, cosh)
OX_F1(ox_asinh, asinhf, asinh)
OX_F1(ox_acosh, acoshf, acosh)
OX_F1(ox_atanh, atanhf, atanh)
OX_F1(ox_log2, log2f, log2)
OX_F1(ox_log10, log10f, log10)
OX_F1(ox_exp2, exp2f, exp2)
OX_F1(ox_erf, erff, erf)
OX_F1(ox_erfc, erfcf, erfc)
OX_F1(ox_lgamma, lgammaf, lgamma)
// Special functions without a CUDA math-library counterpart: oxten-special's algorithms, in
// double for both float and double (as the CPU kernels compute them).
__device__ double ox_digamma_d(double x) {
  const double PI = 3.141592653589793238;
  if (x == 0.0) return copysign(1.0 / 0.0, -x);
  double result = 0.0;
  if (x < 0.0) {
    if (x == trunc(x)) return 0.0 / 0.0;
    double r = x - trunc(x);
    result = -PI / tan(PI * r);
    x = 1.0 - x;
  }
  if (isnan(x)) return x;
  while (x < 10.0) { result -= 1.0 / x; x += 1.0; }
  if (x == 10.0) return result + 2.25175258906672110764;
  const double B[7] = {8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                       -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                       8.33333333333333333333e-2};
  double y = 0.0;
  if (x < 1.0e17) {
    double z = 1.0 / (x * x), acc = 0.0;
    for (int i = 0; i < 7; i++) acc = acc * z + B[i];
    y = acc * z;
  }
  return result + log(x) - 0.5 / x - y;
}
__device__ double ox_trigamma_d(double x) {
  const double PI = 3.141592653589793238;
  double sign = 1.0, result = 0.0;
  if (x < 0.5) {
    sign = -1.0;
    double s = sin(PI * x);
    result -= PI * PI / (s * s);
    x = 1.0 - x;
  }
  for (int i = 0; i < 6; i++) { result += 1.0 / (x * x); x += 1.0; }
  double ixx = 1.0 / (x * x);
  result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x;
  return sign * result;
}
__device__ double ox_zeta_d(double x, double q) {
  const double EPS = 1.11e-16;
  const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183792e9, 7.47242496e10,
                        -2.950130727918164e12, 1.1646782814350067e14, -4.597978722407473e15,
                        1.8152105401943546e17, -7.166165256175667e18};
  if (x == 1.0) return 1.0 / 0.0;
  if (x < 1.0 || isnan(x) || isnan(q)) return 0.0 / 0.0;
  if (q <= 0.0) {
    if (q == floor(q)) return 1.0 / 0.0;
    if (x != floor(x)) return 0.0 / 0.0;
  }
  double s = pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i++;
    a += 1.0;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < EPS) return s;
  }
  double w = a;
  s += b * w / (x - 1.0);
  s -= 0.5 * b;
  a = 1.0;
  double k = 0.0;
  for (int j = 0; j < 12; j++) {
    a *= x + k;
    b /= w;
    double t = a * b / A[j];
    s += t;
    if (fabs(t / s) < EPS) return s;
    k += 1.0;
    a *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}
__device__ double ox_polygamma_d(double n, double x) {
  if (n == 0.0) return ox_digamma_d(x);
  if (n == 1.0) return ox_trigamma_d(x);
  if (!(n > 0.0) || n != trunc(n)) return 0.0 / 0.0;
  double sign = fmod(n, 2.0) == 1.0 ? 1.0 : -1.0;
  return sign * exp(lgamma(n + 1.0)) * ox_zeta_d(n + 1.0, x);
}
// I_nu(x) / (x/2)^nu by its power series, and sqrt(2 pi x) e^-x I_nu(x) asymptotically (nu 0 or 1).
__device__ double ox_bessel_series_d(double x, double nu) {
  double q = x * x / 4.0, term = 1.0, sum = 1.0, k = 0.0;
  for (;;) {
    k += 1.0;
    term *= q / (k * (k + nu));
    sum += term;
    if (term < sum * 1e-17) return sum;
  }
}
__device__ double ox_bessel_asymptotic_d(double ax, double nu) {
  double mu = 4.0 * nu * nu, term = 1.0, sum = 1.0, k = 1.0;
  for (;;) {
    double next = -term * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * ax);
    if (fabs(next) >= fabs(term) || fabs(next) < fabs(sum) * 1e-17) return sum + next;
    term = next;
    sum += term;
    k += 1.0;
  }
}
__device__ double ox_bessel_d(double x, double nu, bool scaled) {
  const double TWO_PI = 6.283185307179586;
  double ax = fabs(x);
  if (isnan(ax)) return x;
  if (isinf(ax)) return scaled ? copysign(0.0, nu == 0.0 ? 1.0 : x) : (nu == 0.0 ? ax : x);
  double v;
  if (ax <= 20.0) {
    v = ox_bessel_series_d(ax, nu) * (nu == 0.0 ? 1.0 : 0.5 * ax);
    if (scaled) v *= exp(-ax);
  } else {
    v = ox_bessel_asymptotic_d(ax, nu) / sqrt(TWO_PI * ax);
    if (!scaled) {
      double half = exp(0.5 * ax);
      v = v * half * half;
    }
  }
  return nu == 0.0 ? v : copysign(v, x);
}
#define OX_SPECIAL1(name, expr)                                                              \
  __device__ __forceinline__ float name(float x) { double d = (double)x; return (float)(expr); } \
  __device__ __forceinline__ double name(double x) { double d = x; return (expr); }
#define OX_SPECIAL2(name, expr)                                                                   \
  __device__ __forceinline__ float name(float a, float b) {                                       \
    double da = (double)a, db = (double)b;                                                        \
    return (float)(expr);                                                                         \
  }                                                                                               \
  __device__ __forceinline__ double name(double a, double b) { double da = a, db = b; return (expr); }
OX_SPECIAL1(ox_digamma, ox_digamma_d(d))
OX_SPECIAL1(ox_i0, ox_bessel_d(d, 0.0, false))
OX_SPECIAL1(ox_i0e, ox_bessel_d(d, 0.0, true))
OX_SPECIAL1(ox_i1, ox_bessel_d(d, 1.0, false))
OX_SPECIAL1(ox_i1e, ox_bessel_d(d, 1.0, true))
// float trigamma in float arithmetic, as PyTorch (its value near the poles depends on it).
__device__ __forceinline__ float ox_polygamma(float n, float x) {
  if (n != 1.0f) return (float)ox_polygamma_d((double)n, (double)x);
  const float PI = 3.14159265358979323846f;
  float sign = 1.0f, result = 0.0f;
  if (x < 0.5f) {
    sign = -1.0f;
    float s = sinf(PI * x);
    result -= PI * PI / (s * s);
    x = 1.0f - x;
  }
  for (int i = 0; i < 6; i++) { result += 1.0f / (x * x); x += 1.0f; }
  float ixx = 1.0f / (x * x);
  result += (1.0f + 1.0f / (2.0f * x) + ixx * (1.0f / 6.0f - ixx * (1.0f / 30.0f - ixx * (1.0f / 42.0f)))) / x;
  return sign * result;
}
__device__ __forceinline__ double ox_polygamma(double n, double x) { return ox_polygamma_d(n, x); }
OX_SPECIAL2(ox_zeta, ox_zeta_d(da, db))
__device__ __forceinline__ float ox_deg2rad(float x) { return x * 0.017453292519943295f; }
__device__ __forceinline__ double ox_deg2rad(double x) { return x * 0.017453292519943295; }
__device__ __forceinline__ float ox_rad2deg(float x) { return x * 57.29577951308232f; }
__device__ __forceinline__ double ox_rad2deg(double x) { return x * 57.29577951308232; }
OX_F1(ox_erfinv, erfinvf, erfinv)
OX_F1(ox_floor, floorf, floor)
OX_F1(ox_ceil, ceilf, ceil)
OX_F1(ox_round, rintf, rint)
OX_F1(ox_trunc, truncf, trunc)
// Rounding: integers are already integral (the float overloads above win for float/double).
template <class T> __device__ __forceinline__ T ox_floor(T x) { return x; }
template <class T> __device__ __forceinline__ T ox_ceil(T x) { return x; }
template <class T> __device__ __forceinline__ T ox_round(T x) { return x; }
template <class T> __device__ __forceinline__ T ox_trunc(T x) { return x; }
// Predicates: integers are never NaN or infinite.
template <class T> __device__ __forceinline__ bool ox_isnan(T x) { return x != x; }
template <class T> __device__ __forceinline__ bool ox_isinf(T) { return false; }
__device__ __forceinline__ bool ox_isinf(float x) { return isinf(x) != 0; }
__device__ __forceinline__ bool ox_isinf(double x) { return isinf(x) != 0; }
template <class T> __device__ __forceinline__ bool ox_isfinite(T x) { return x == x && !ox_isinf(x); }
template <class T> __device__ __forceinline__ bool ox_signbit(T x) { return x < T(0); }
__device__ __forceinline__ bool ox_signbit(float x) { return signbit(x) != 0; }
__device__ __forceinline__ bool ox_signbit(double x) { return signbit(x) != 0; }
// Integer division as the CPU kernels: a zero divisor gives 0 (the op rejects it before the
// launch) and MIN / -1 wraps.
template <class T> __device__ __forceinline__ T ox_div_trunc(T a, T b) {
  if (b == T(0)) return T(0);
  if (T(-1) < T(0) && b == T(-1)) return T(0ULL - (unsigned long long)a);
  return T(a / b);
}
template <class T> __device__ __forceinline__ T ox_fmod(T a, T b) {
  if (b == T(0) || (T(-1) < T(0) && b == T(-1))) return T(0);
  return T(a % b);
}
__device__ __forceinline__ float ox_div_trunc(float a, float b) { return truncf(a / b); }
__device__ __forceinline__ double ox_div_trunc(double a, double b) { return trunc(a / b); }
__device__ __forceinline__ float ox_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double ox_fmod(double a, double b) { return fmod(a, b); }
template <class T> __device__ __forceinline__ T ox_remainder(T a, T b) {
  T m = ox_fmod(a, b);
  return (m != T(0) && ((b < T(0)) != (m < T(0)))) ? T(m + b) : m;
}
template <class T> __device__ __forceinline__ T ox_div_floor(T a, T b) {
  T q = ox_div_trunc(a, b), m = ox_fmod(a, b);
  return (m != T(0) && ((b < T(0)) != (m < T(0)))) ? T(q - T(1)) : q;
}
// PyTorch's div_floor_floating: the quotient from fmod, so that it agrees with remainder.
template <class F> __device__ __forceinline__ F ox_div_floor_float(F a, F b) {
  if (b == F(0)) return a / b;
  F m = ox_fmod(a, b);
  F div = (a - m) / b;
  if (m != F(0) && ((b < F(0)) != (m < F(0)))) div -= F(1);
  if (div == F(0)) return copysign(F(0), a / b);
  F q = floor(div);
  return div - q > F(0.5) ? q + F(1) : q;
}
__device__ __forceinline__ float ox_div_floor(float a, float b) { return ox_div_floor_float(a, b); }
__device__ __forceinline__ double ox_div_floor(double a, double b) { return ox_div_floor_float(a, b); }
template <class T> __device__ __forceinline__ T ox_fmax(T a, T b) { return (a != a || a < b) ? b : a; }
template <class T> __device__ __forceinline__ T ox_fmin(T a, T b) { return (a != a || a > b) ? b : a; }
__device__ __forceinline__ float ox_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double ox_copysign(double a, double b) { return copysign(a, b); }
// Bit operations (integer compute types only; bools compute as 0/1 ints, where bitnot is
// logical not). Shift counts outside [0, bits) follow PyTorch: 0 for <<, every bit out for >>.
template <class T> __device__ __forceinline__ T ox_bitand(T a, T b) { return T(a & b); }
template <class T> __device__ __forceinline__ T ox_bitor(T a, T b) { return T(a | b); }
template <class T> __device__ __forceinline__ T ox_bitxor(T a, T b) { return T(a ^ b); }
#ifdef OX_BOOL_COMPUTE
template <class T> __device__ __forceinline__ T ox_bitnot(T x) { return T(x == T(0)); }
#else
template <class T> __device__ __forceinline__ T ox_bitnot(T x) { return T(~x); }
#endif
template <class T> __device__ __forceinline__ T ox_shl(T a, T b) {
  const long long bits = sizeof(T) * 8, s = (long long)b;
  return (s < 0 || s >= bits) ? T(0) : T((unsigned long long)(long long)a << s);
}
// gcd/lcm as PyTorch's calc_gcd: Euclid on the absolute values (unsigned negation wraps).
template <class T> __device__ __forceinline__ T ox_iabs(T x) {
  return x < T(0) ? T(0ull - (unsigned long long)(long long)x) : x;
}
template <class T> __device__ __forceinline__ T ox_gcd(T a, T b) {
  a = ox_iabs(a);
  b = ox_iabs(b);
  while (a != T(0)) {
    T c = a;
    a = T(b % a);
    b = c;
  }
  return b;
}
template <class T> __device__ __forceinline__ T ox_lcm(T a, T b) {
  T g = ox_gcd(a, b);
  if (g == T(0)) return T(0);
  return ox_iabs(T((unsigned long long)(long long)(a / g) * (unsigned long long)(long long)b));
}
template <class T> __device__ __forceinline__ T ox_shr(T a, T b) {
  const long long bits = sizeof(T) * 8, s = (long long)b;
  if (s < 0 || s >= bits) return a < T(0) ? T(-1) : T(0);
  return T(a >> s);
}
// Integer powers as PyTorch's `powi`: squaring in unsigned 64-bit arithmetic (wrapping, never
// signed-overflow UB), and a negative power gives 1 for 1, ±1 for -1 by parity, else 0.
template <class T> __device__ __forceinline__ T ox_pow(T a, T b) {
  if (b < T(0)) return a == T(1) ? T(1) : (a == T(-1) ? ((b % T(2)) == T(0) ? T(1) : T(-1)) : T(0));
  unsigned long long base = (unsigned long long)(long long)a, e = (unsigned long long)(long long)b, r = 1;
  while (e) {
    if (e & 1ull) r *= base;
    e >>= 1;
    base *= base;
  }
  return T((long long)r);
}
__device__ __forceinline__ float ox_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double ox_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float ox_atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double ox_atan2(double a, double b) { return atan2(a, b); }
__device__ __forceinline__ float ox_hypot(float a, float b) { return hypotf(a, b); }
__device__ __forceinline__ double ox_hypot(double a, double b) { return hypot(a, b); }

template <class T> __device__ __forceinline__ T ox_abs(T x) { return x < T(0) ? T(-x) : x; }
__device__ __forceinline__ float ox_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double ox_abs(double x) { return fabs(x); }
template <class T> __device__ __forceinline__ T ox_rsqrt(T x) { return T(1) / ox_sqrt(x); }
template <class T> __device__ __forceinline__ T ox_reciprocal(T x) { return T(1) / x; }
template <class T> __device__ __forceinline__ T ox_sigmoid(T x) { return T(1) / (T(1) + ox_exp(-x)); }
template <class T> __device__ __forceinline__ T ox_silu(T x) { return x / (T(1) + ox_exp(-x)); }
template <class T> __device__ __forceinline__ T ox_gelu(T x) {
  return x / T(2) * (T(1) + ox_erf(x * T(0.7071067811865476)));
}
template <class T> __device__ __forceinline__ T ox_gelu_tanh(T x) {
  T inner = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + ox_tanh(inner));
}
template <class T> __device__ __forceinline__ T ox_softplus(T x) { return x > T(20) ? x : ox_log1p(ox_exp(x)); }
template <class T> __device__ __forceinline__ T ox_sign(T x) { return T(int(T(0) < x) - int(x < T(0))); }
// torch.minimum / torch.maximum: NaN if either is NaN (x != x only holds for NaN).
template <class T> __device__ __forceinline__ T ox_min(T a, T b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }
template <class T> __device__ __forceinline__ T ox_max(T a, T b) { return a != a ? a : (b != b ? b : (b > a ? b : a)); }
template <class T> __device__ __forceinline__ T ox_relu(T x) { return ox_max(x, T(0)); }
template <class T> __device__ __forceinline__ T ox_clamp(T x, T lo, T hi) { return ox_min(ox_max(x, lo), hi); }
template <class C, class T> __device__ __forceinline__ T ox_where(C c, T a, T b) { return c ? a : b; }

// Extremes of each compute type: the identities of max and min.
template <class T> struct OxLimits;
template <> struct OxLimits<float> {
  static __device__ __forceinline__ float lowest() { return __int_as_float(0xff800000); }
  static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }
};
template <> struct OxLimits<double> {
  static __device__ __forceinline__ double lowest() { return __longlong_as_double(0xfff0000000000000ULL); }
  static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000ULL); }
};
template <> struct OxLimits<unsigned char> {
  static __device__ __forceinline__ unsigned char lowest() { return 0; }
  static __device__ __forceinline__ unsigned char highest() { return 255; }
};
template <> struct OxLimits<signed char> {
  static __device__ __forceinline__ signed char lowest() { return -128; }
  static __device__ __forceinline__ signed char highest() { return 127; }
};
template <> struct OxLimits<short> {
  static __device__ __forceinline__ short lowest() { return -32768; }
  static __device__ __forceinline__ short highest() { return 32767; }
};
template <> struct OxLimits<int> {
  static __device__ __forceinline__ int lowest() { return -2147483647 - 1; }
  static __device__ __forceinline__ int highest() { return 2147483647; }
};
template <> struct OxLimits<long long> {
  static __device__ __forceinline__ long long lowest() { return -9223372036854775807LL - 1; }
  static __device__ __forceinline__ long long highest() { return 9223372036854775807LL; }
};

// Block-wide reductions (blockDim.x a multiple of 32, at most 1024): every thread gets the result.
struct OxSum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct OxMaxOp { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return ox_max(a, b); } };
template <class T, class F> __device__ __forceinline__ T ox_warp_reduce(T v, F f) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
template <class T, class F> __device__ __forceinline__ T ox_block_reduce(T v, F f, T identity) {
  __shared__ T ox_partial[32];
  __shared__ T ox_result;
  v = ox_warp_reduce(v, f);
  if ((threadIdx.x & 31) == 0) ox_partial[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    T w = threadIdx.x < (blockDim.x >> 5) ? ox_partial[threadIdx.x] : identity;
    w = ox_warp_reduce(w, f);
    if (threadIdx.x == 0) ox_result = w;
  }
  __syncthreads();
  T r = ox_result;
  __syncthreads();
  return r;
}
