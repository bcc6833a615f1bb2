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
// Regularized incomplete gamma functions (kernels/special/src/incomplete_gamma.rs), in double.
__device__ double ox_t_minus_log1p(double t) {
  if (fabs(t) >= 0.01) return t - log1p(t);
  double power = t * t, sum = 0.0;
  for (int k = 2; k < 14; k++) { sum += power / k; power *= -t; }
  return sum;
}
__device__ double ox_lgamma1p(double a) {
  if (fabs(a) >= 0.2) return lgamma(1.0 + a);
  const double Z[23] = {1.6449340668482264, 1.2020569031595943, 1.0823232337111382, 1.0369277551433699,
                        1.0173430619844491, 1.0083492773819228, 1.0040773561979444, 1.0020083928260822,
                        1.0009945751278181, 1.0004941886041195, 1.0002460865533081, 1.0001227133475785,
                        1.0000612481350587, 1.000030588236307, 1.0000152822594087, 1.0000076371976379,
                        1.0000038172932649, 1.0000019082127166, 1.0000009539620339, 1.0000004769329868,
                        1.0000002384505027, 1.0000001192199259, 1.0000000596081891};
  double power = -a, sum = 0.0;  // (-a)^k for k = 2, 3, ...
  for (int k = 0; k < 23; k++) { power *= -a; sum += Z[k] * power / (k + 2); }
  return -0.5772156649015329 * a + sum;
}
// Returns Q; *p receives P. a, x finite and positive.
__device__ double ox_incomplete_gamma(double a, double x, double* p) {
  const double PI = 3.141592653589793;
  if (a > 1e8) {
    double t = (x - a) / a, h = ox_t_minus_log1p(t), eta = copysign(sqrt(2.0 * h), t);
    double c0 = fabs(t) < 1e-3 ? -1.0 / 3.0 + eta * (1.0 / 12.0 - eta * (2.0 / 135.0 - eta / 864.0)) : 1.0 / t - 1.0 / eta;
    double r = exp(-a * h) / sqrt(2.0 * PI * a) * c0, z = eta * sqrt(a / 2.0);
    *p = 0.5 * erfc(-z) - r;
    return 0.5 * erfc(z) + r;
  }
  bool q_small = x <= 0.5 ? a <= -0.4 / log(x) : (x <= 1.1 && a <= 1.1 * x);
  if (q_small) {
    double factor = 1.0, sum = 0.0;
    for (int n = 1; n < 2000; n++) {
      factor *= -x / n;
      double term = factor / (a + n);
      sum += term;
      if (fabs(term) <= fabs(sum) * 1e-17) break;
    }
    double lx = log(x);
    double q = -expm1(a * lx - ox_lgamma1p(a)) - exp(a * lx - lgamma(a)) * sum;
    *p = 1.0 - q;
    return q;
  }
  double front;
  if (a < 10.0) {
    front = exp(a * log(x) - x - lgamma(a));
  } else {
    double inv = 1.0 / a, inv2 = inv * inv;
    double s = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)));
    front = exp(-a * ox_t_minus_log1p((x - a) / a) - s) * sqrt(a / (2.0 * PI));
  }
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term, den = a;
    for (int i = 0; i < 200000; i++) {
      den += 1.0;
      term *= x / den;
      sum += term;
      if (fabs(term) < fabs(sum) * 1e-17) break;
    }
    *p = front * sum;
    return 1.0 - *p;
  }
  const double TINY = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / TINY, d = 1.0 / b, h = d;
  for (int i = 1; i <= 200000; i++) {
    double an = -(double)i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < TINY) d = TINY;
    c = b + an / c;
    if (fabs(c) < TINY) c = TINY;
    d = 1.0 / d;
    double step = d * c;
    h *= step;
    if (fabs(step - 1.0) < 1e-16) break;
  }
  *p = 1.0 - front * h;
  return front * h;
}
// P at the domain's edges (NaN, 0 or 1), or -1 when a and x are inside it.
__device__ double ox_igamma_edge(double a, double x) {
  if (isnan(a) || isnan(x) || a < 0.0 || x < 0.0) return 0.0 / 0.0;
  if (a == 0.0) return x > 0.0 ? 1.0 : 0.0 / 0.0;
  if (x == 0.0) return 0.0;
  if (isinf(a)) return isinf(x) ? 0.0 / 0.0 : 0.0;
  if (isinf(x)) return 1.0;
  return -1.0;
}
__device__ double ox_igamma_d(double a, double x) {
  double e = ox_igamma_edge(a, x), p;
  if (e != -1.0) return e;
  ox_incomplete_gamma(a, x, &p);
  return p;
}
__device__ double ox_igammac_d(double a, double x) {
  double e = ox_igamma_edge(a, x), p;
  if (e != -1.0) return isnan(e) ? e : 1.0 - e;
  return ox_incomplete_gamma(a, x, &p);
}
OX_SPECIAL2(ox_igamma, ox_igamma_d(da, db))
OX_SPECIAL2(ox_igammac, ox_igammac_d(da, db))
// Modified Bessel functions of the second kind, orders 0 and 1, plain or scaled by e^x
// (kernels/special/src/bessel_k.rs), in double.
__device__ double ox_bessel_k_d(int nu, double x, bool scaled) {
  if (isnan(x) || x < 0.0) return 0.0 / 0.0;
  if (x == 0.0) return 1.0 / 0.0;
  if (isinf(x)) return 0.0;
  if (x <= 2.0) {
    double q = x * x / 4.0, lh = log(x / 2.0), psi = -0.5772156649015329, psi1 = 1.0 - 0.5772156649015329;
    double term = 1.0, sum = nu == 0 ? psi : psi + psi1;
    for (int k = 1; k < 40; k++) {
      psi += 1.0 / k;
      psi1 += 1.0 / (k + 1.0);
      if (nu == 0) { term *= q / ((double)k * k); sum += psi * term; }
      else { term *= q / ((double)k * (k + 1.0)); sum += (psi + psi1) * term; }
      if (term < 1e-18) break;
    }
    double k = nu == 0 ? -lh * ox_bessel_d(x, 0.0, false) + sum : 1.0 / x + lh * ox_bessel_d(x, 1.0, false) - x / 4.0 * sum;
    return scaled ? k * exp(x) : k;
  }
  double ks;
  if (x <= 20.0) {
    double sum = 0.5;
    for (int k = 1; k < 200; k++) {
      double t = k * 0.1, e = x * (cosh(t) - 1.0);
      if (e > 45.0) break;
      sum += nu == 0 ? exp(-e) : exp(-e) * cosh(t);
    }
    ks = 0.1 * sum;
  } else {
    double mu = 4.0 * nu * nu, term = 1.0, sum = 1.0;
    for (int k = 1; k < 200; k++) {
      double odd = 2.0 * k - 1.0, next = term * (mu - odd * odd) / (8.0 * k * x);
      if (fabs(next) >= fabs(term)) break;
      if (fabs(next) < fabs(sum) * 1e-17) { sum += next; break; }
      term = next;
      sum += term;
    }
    ks = sum * sqrt(3.141592653589793 / (2.0 * x));
  }
  return scaled ? ks : ks * exp(-x);
}
OX_SPECIAL1(ox_modified_bessel_k0, ox_bessel_k_d(0, d, false))
OX_SPECIAL1(ox_modified_bessel_k1, ox_bessel_k_d(1, d, false))
OX_SPECIAL1(ox_scaled_modified_bessel_k0, ox_bessel_k_d(0, d, true))
OX_SPECIAL1(ox_scaled_modified_bessel_k1, ox_bessel_k_d(1, d, true))
// sin(x)/x, erfcx, log Phi and Phi^-1 (kernels/special/src/{lib,normal}.rs), in double.
__device__ double ox_spherical_bessel_j0_d(double x) {
  if (isinf(x)) return 0.0;
  if (fabs(x) < 0.5) {
    double x2 = x * x;
    return 1.0 + x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362880.0
           + x2 * (-1.0 / 39916800.0 + x2 * (1.0 / 6227020800.0 + x2 * (-1.0 / 1307674368000.0)))))));
  }
  return sin(x) / x;
}
__device__ double ox_erfcx_nonnegative(double x) {
  if (x < 5.0) return exp(x * x) * erfc(x);
  double f = x;  // Laplace's continued fraction from its 60th term up
  for (int k = 60; k >= 1; k--) f = x + 0.5 * k / f;
  return 0.5641895835477563 / f;
}
__device__ double ox_erfcx_d(double x) {
  if (isnan(x)) return x;
  if (x < 0.0) return x < -26.7 ? 1.0 / 0.0 : 2.0 * exp(x * x) - ox_erfcx_nonnegative(-x);
  return ox_erfcx_nonnegative(x);
}
__device__ double ox_log_ndtr_d(double x) {
  if (x < -1.0) return log(0.5 * ox_erfcx_d(-x * 0.7071067811865476)) - 0.5 * x * x;
  return log1p(-0.5 * erfc(x * 0.7071067811865476));
}
__device__ double ox_ndtri_halley(double x, double residual) {
  double half = exp(0.25 * x * x);
  double u = residual * 2.5066282746310007 * half * half;
  return x - u / (1.0 + 0.5 * x * u);
}
__device__ double ox_ndtri_d(double p) {
  if (isnan(p) || p < 0.0 || p > 1.0) return 0.0 / 0.0;
  if (p == 0.0) return -1.0 / 0.0;
  if (p == 1.0) return 1.0 / 0.0;
  if (fabs(p - 0.5) <= 0.25) {
    double q = 2.0 * p - 1.0, x = q * 1.2533141373155003;
    for (int i = 0; i < 5; i++) x = ox_ndtri_halley(x, 0.5 * (erf(x * 0.7071067811865476) - q));
    return x;
  }
  double sign = 1.0, lo = p;
  if (p > 0.5) { sign = -1.0; lo = 1.0 - p; }
  double t = sqrt(-2.0 * log(lo));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 3; i++) x = ox_ndtri_halley(x, 0.5 * erfc(-x * 0.7071067811865476) - lo);
  return sign * x;
}
OX_SPECIAL1(ox_spherical_bessel_j0, ox_spherical_bessel_j0_d(d))
// The Airy function Ai (kernels/special/src/airy.rs): series, damped integral, oscillatory
// expansion.
__device__ double ox_airy_ai_d(double x) {
  if (!isfinite(x)) return 0.0 / 0.0;
  if (x > 1.0) {
    double root = sqrt(x), zeta = 2.0 / 3.0 * x * root, sum = 0.5;
    int points = (int)(sqrt(40.0 / root) / 0.05) + 1;
    for (int i = 1; i <= points; i++) {
      double t = i * 0.05;
      sum += exp(-root * t * t) * cos(t * t * t / 3.0);
    }
    return exp(-zeta) / 3.141592653589793 * sum * 0.05;
  }
  if (x >= -6.7) {
    double x3 = x * x * x, f = 1.0, g = x, tf = 1.0, tg = x;
    for (int k = 1; k < 200; k++) {
      tf *= x3 / ((3.0 * k - 1.0) * (3.0 * k));
      tg *= x3 / ((3.0 * k) * (3.0 * k + 1.0));
      f += tf;
      g += tg;
      if (fabs(tf) <= 1e-17 * fabs(f) && fabs(tg) <= 1e-17 * fabs(g)) break;
    }
    return 0.35502805388781724 * f - 0.2588194037928068 * g;
  }
  double z = -x, zeta = 2.0 / 3.0 * z * sqrt(z), p = 0.0, q = 0.0, term = 1.0, previous = 1.0 / 0.0;
  for (int k = 0; k < 80; k++) {
    if (fabs(term) >= previous) break;
    previous = fabs(term);
    switch (k % 4) { case 0: p += term; break; case 1: q += term; break; case 2: p -= term; break; default: q -= term; }
    double n = k + 1.0;
    term *= (6.0 * n - 5.0) * (6.0 * n - 3.0) * (6.0 * n - 1.0) / ((2.0 * n - 1.0) * 216.0 * n * zeta);
  }
  double phase = zeta + 0.7853981633974483;
  return (sin(phase) * p - cos(phase) * q) / (1.7724538509055159 * sqrt(sqrt(z)));
}
OX_SPECIAL1(ox_airy_ai, ox_airy_ai_d(d))
// CUDA's own double-precision Bessel functions, NaN at +-inf as the CPU's (and PyTorch's).
OX_SPECIAL1(ox_bessel_j0, isinf(d) ? 0.0 / 0.0 : j0(d))
OX_SPECIAL1(ox_bessel_j1, isinf(d) ? 0.0 / 0.0 : j1(d))
OX_SPECIAL1(ox_bessel_y0, isinf(d) ? 0.0 / 0.0 : y0(d))
OX_SPECIAL1(ox_bessel_y1, isinf(d) ? 0.0 / 0.0 : y1(d))
OX_SPECIAL1(ox_erfcx, ox_erfcx_d(d))
OX_SPECIAL1(ox_log_ndtr, ox_log_ndtr_d(d))
OX_SPECIAL1(ox_ndtri, ox_ndtri_d(d))
// Orthogonal polynomials in the element's own precision, as the CPU kernels
// (kernels/special/src/polynomials.rs): kind 0..3 = T, U, V, W.
#define OX_MAX_RECURRENCE (1LL << 20)
template <class T> __device__ long long ox_degree(T n) {
  if (isnan(n) || n >= (T)9.223372036854775808e18 || n < (T)-9.223372036854775808e18) return -9223372036854775807LL - 1;
  return (long long)n;
}
template <class T> __device__ T ox_alternating(long long n, T v) { return n % 2 == 0 ? v : -v; }
template <class T> __device__ T ox_odd(long long n) {
  return (T)(long long)((unsigned long long)n + (unsigned long long)n + 1ULL);
}
template <class T> __device__ T ox_chebyshev_outside(int kind, T x, long long n) {
  T t = acosh(fabs(x)), half = t / (T)2.0, nf = (T)n, nh = (T)n + (T)0.5;
  if (x < (T)0.0 && kind >= 2) kind = 5 - kind;
  T v = kind == 0 ? cosh(nf * t) : kind == 1 ? sinh((nf + (T)1.0) * t) / sinh(t)
      : kind == 2 ? cosh(nh * t) / cosh(half) : sinh(nh * t) / sinh(half);
  return x > (T)0.0 ? v : ox_alternating(n, v);
}
template <class T> __device__ T ox_chebyshev(int kind, T x, long long n, bool shifted) {
  const T one = (T)1.0, zero = (T)0.0;
  if (n < 0) return zero;
  if (fabs(x) == one) {
    if (kind == 0) return ox_alternating(x > zero ? 0 : n, one);
    if (kind == 1) return ox_alternating(x > zero ? 0 : n, (T)(long long)((unsigned long long)n + 1ULL));
    if (kind == 2) return x > zero ? one : ox_alternating(n, ox_odd<T>(n));
    return x > zero ? ox_odd<T>(n) : ox_alternating(n, one);
  }
  long long closed_above = kind == 0 ? 6 : !shifted ? 8 : kind == 3 ? 4 : 6;
  if (n > closed_above && fabs(x) < one) {
    T theta = acos(x), half = theta / (T)2.0, nh = (T)n + (T)0.5;
    if (kind == 0) return cos((T)n * theta);
    if (kind == 1) {
      T n1 = (T)(long long)((unsigned long long)n + 1ULL);
      return sin(theta) != zero ? sin(n1 * theta) / sin(theta) : n1 * cos(n1 * theta) / x;
    }
    if (kind == 2) return sin(half) != one ? cos(nh * theta) / cos(half) : ox_alternating(n, ox_odd<T>(n));
    if (cos(half) != one) return sin(nh * theta) / sin(half);
    return (x > zero && !shifted) ? ox_odd<T>(n) : ox_alternating(n, one);
  }
  if (n > OX_MAX_RECURRENCE && !isnan(x)) return ox_chebyshev_outside(kind, x, n);
  T first = kind == 0 ? x : kind == 1 ? x + x : kind == 2 ? x + x - one : x + x + one;
  if (n == 0) return one;
  if (n == 1) return first;
  T p = one, q = first;
  for (long long k = 2; k <= n && !isnan(q); k++) {
    T r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}
template <class T> __device__ T ox_hermite(bool physicists, T x, long long n) {
  const long long limit = sizeof(T) == 4 ? 128 : 512;
  if (n < 0) return (T)0.0;
  if (n == 0) return (T)1.0;
  if (n == 1) return physicists ? x + x : x;
  if (n > limit) return (T)(0.0 / 0.0);
  T p = (T)1.0, q = physicists ? x + x : x, r = (T)0.0;
  if (physicists) {
    for (long long k = 2; k < n + n; k += 2) { r = (x + x) * q - (T)k * p; p = q; q = r; }
    return r;
  }
  for (long long k = 1; k < n; k++) { r = x * q - (T)k * p; p = q; q = r; }
  return q;
}
template <class T> __device__ T ox_laguerre(T x, long long n) {
  const T one = (T)1.0;
  if (n < 0) return (T)0.0;
  if (fabs(x) == (T)0.0 || n == 0) return one;
  if (n == 1) return one - x;
  T p = one, q = one - x;
  for (long long k = 1; k < n && !isnan(q); k++) {
    if (k > OX_MAX_RECURRENCE) return (T)(0.0 / 0.0);
    T r = (((T)(k + k) + (one - x)) * q - (T)k * p) / (T)(k + 1);
    p = q;
    q = r;
  }
  return q;
}
template <class T> __device__ T ox_legendre(T x, long long n) {
  const T one = (T)1.0;
  if (n < 0) return (T)0.0;
  if (fabs(x) == one) return ox_alternating(x > (T)0.0 ? 0 : n, one);
  if (n == 0) return one;
  if (n == 1) return x;
  T p = one, q = x;
  for (long long k = 1; k < n && !isnan(q); k++) {
    if (k > OX_MAX_RECURRENCE) return (T)(0.0 / 0.0);
    T r = ((T)(k + k + 1) * x * q - (T)k * p) / (T)(k + 1);
    p = q;
    q = r;
  }
  return q;
}
#define OX_POLYNOMIAL(name, expr)                                                            \
  template <class T> __device__ __forceinline__ T name(T x, T nf) { long long n = ox_degree(nf); return (expr); }
OX_POLYNOMIAL(ox_chebyshev_t, ox_chebyshev(0, x, n, false))
OX_POLYNOMIAL(ox_chebyshev_u, ox_chebyshev(1, x, n, false))
OX_POLYNOMIAL(ox_chebyshev_v, ox_chebyshev(2, x, n, false))
OX_POLYNOMIAL(ox_chebyshev_w, ox_chebyshev(3, x, n, false))
OX_POLYNOMIAL(ox_shifted_chebyshev_t, ox_chebyshev(0, x + x - (T)1.0, n, true))
OX_POLYNOMIAL(ox_shifted_chebyshev_u, ox_chebyshev(1, x + x - (T)1.0, n, true))
OX_POLYNOMIAL(ox_shifted_chebyshev_v, ox_chebyshev(2, x + x - (T)1.0, n, true))
OX_POLYNOMIAL(ox_shifted_chebyshev_w, ox_chebyshev(3, x + x - (T)1.0, n, true))
OX_POLYNOMIAL(ox_hermite_h, ox_hermite(true, x, n))
OX_POLYNOMIAL(ox_hermite_he, ox_hermite(false, x, n))
OX_POLYNOMIAL(ox_laguerre_l, ox_laguerre(x, n))
OX_POLYNOMIAL(ox_legendre_p, ox_legendre(x, n))
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
// nextafter in the element type: f16 and bf16 compute in float, where the next float would
// round back, so their step is taken on the 16-bit pattern. `S0` is the kernel's output type.
template <class H> __device__ __forceinline__ float ox_nextafter_16(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  H h = OxStore<H>::go(a), t = OxStore<H>::go(b);
  unsigned short bits = h.x;
  if ((bits & 0x7fff) == 0) bits = (unsigned short)(1 | (t.x & 0x8000));
  else if ((a < b) == ((bits & 0x8000) == 0)) bits = (unsigned short)(bits + 1);
  else bits = (unsigned short)(bits - 1);
  H r;
  r.x = bits;
  return ox_widen(r);
}
__device__ __forceinline__ float ox_nextafter_in(float a, float b, float) { return nextafterf(a, b); }
__device__ __forceinline__ double ox_nextafter_in(double a, double b, double) { return nextafter(a, b); }
__device__ __forceinline__ float ox_nextafter_in(float a, float b, ox_half) { return ox_nextafter_16<ox_half>(a, b); }
__device__ __forceinline__ float ox_nextafter_in(float a, float b, ox_bf16) { return ox_nextafter_16<ox_bf16>(a, b); }
#define ox_nextafter(a, b) ox_nextafter_in((a), (b), S0())
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
