// The per-operator cost of libtorch's C++ API on this host, for issue 22's goal (a 1-element add
// in oxten faster than in libtorch): `torch::add(a, b)` and `torch::add_out(out, a, b)` on
// 1-element f32 tensors, timed in loops; prints the median of 15 timed loops in ns per call.
// Built and run by scripts/libtorch_add.sh against the libtorch inside the pip wheel.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

template <class F>
static double median_ns(F f) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 100000; ++i) f();
  std::vector<double> samples;
  const int n = 200000;
  for (int r = 0; r < 15; ++r) {
    auto t0 = clock::now();
    for (int i = 0; i < n; ++i) f();
    auto dt = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    samples.push_back(dt / n);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

int main() {
  at::set_num_threads(2);
  // Inference mode off, as a plain eager call from Python or Rust would be: autograd keys stay.
  auto a = torch::ones({1});
  auto b = torch::full({1}, 2.0);
  auto out = torch::empty({1});
  volatile float sink = 0;
  double alloc = median_ns([&] {
    auto c = torch::add(a, b);
    sink = sink + c.data_ptr<float>()[0];
  });
  double add_out = median_ns([&] {
    torch::add_out(out, a, b);
    sink = sink + out.data_ptr<float>()[0];
  });
  std::printf("add_1elem_alloc %.1f\nadd_1elem_out %.1f\n", alloc, add_out);
  return 0;
}
