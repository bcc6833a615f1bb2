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
template <class T> __device__ __forceinline__ T ox_shr(T a, T b) {
  const long long bits = sizeof(T) * 8, s = (long long)b;
  if (s < 0 || s >= bits) return a < T(0) ? T(-1) : T(0);
  return T(a >> s);
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
