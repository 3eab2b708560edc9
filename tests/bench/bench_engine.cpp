// CPU engine throughput: prefill tokens/s (packed prompts) and decode tokens/s (one token per
// sequence per pass over the KV cache) for a model folder or a synthetic preset. Prints figures
// as JSON lines too, so scripts/bench.sh can put them next to the torch reference.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "abl/engine/cpu/weights.h"
#include "abl/backend/cpu/ops.h"
#include "abl/engine/cpu/engine.h"

using namespace abl;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_engine MODEL [PROMPTS=8] [PROMPT_LEN=64] [DECODE_BATCH=8] [STEPS=16] [THREADS=0]\n");
    return 2;
  }
  const std::string model = argv[1];
  const int64_t P = argc > 2 ? std::atoll(argv[2]) : 8, n = argc > 3 ? std::atoll(argv[3]) : 64;
  const int64_t B = argc > 4 ? std::atoll(argv[4]) : 8, steps = argc > 5 ? std::atoll(argv[5]) : 16;
  cpu::set_num_threads(argc > 6 ? std::atoi(argv[6]) : 0);

  double t0 = now_s();
  auto w = engine::HostWeights::load(model);
  const double load_s = now_s() - t0;
  const model::ModelSpec& spec = w->spec();
  engine::Engine eng(*w, {std::max(P * n, B), std::max(P, B)});
  engine::KvCache cache(spec, std::max(P, B) * (n + steps));
  const int64_t V = spec.vocab_size;
  std::vector<int32_t> toks(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) toks[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919 + 13) % (V - 3));
  std::vector<float> logits(static_cast<size_t>(std::max(P, B) * V));
  engine::Outputs out;
  out.logits = logits.data();

  // Prefill: P prompts of n tokens in one packed pass (best of 3).
  double prefill_s = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    engine::Batch b;
    for (int64_t p = 0; p < P; ++p) b.add(toks.data(), n, p * (n + steps), 0);
    t0 = now_s();
    eng.forward(b, cache, out);
    prefill_s = std::min(prefill_s, now_s() - t0);
  }
  // Decode: B sequences (prefilled above when B <= P) advance `steps` tokens.
  engine::Batch pre;
  for (int64_t s = 0; s < B; ++s) pre.add(toks.data(), n, s * (n + steps), 0);
  eng.forward(pre, cache, out);
  t0 = now_s();
  for (int64_t st = 0; st < steps; ++st) {
    engine::Batch b;
    for (int64_t s = 0; s < B; ++s) b.add(&toks[static_cast<size_t>(st % n)], 1, s * (n + steps), n + st);
    eng.forward(b, cache, out);
  }
  const double decode_s = now_s() - t0;
  const double prefill_tps = static_cast<double>(P * n) / prefill_s;
  const double decode_tps = static_cast<double>(B * steps) / decode_s;
  std::printf("%-28s load %6.2f s  prefill %9.1f tokens/s (%lld x %lld)  decode %8.1f tokens/s (batch %lld, %.1f ms/step)  threads %d\n",
              model.c_str(), load_s, prefill_tps, static_cast<long long>(P), static_cast<long long>(n), decode_tps,
              static_cast<long long>(B), decode_s / static_cast<double>(steps) * 1e3, cpu::num_threads());
  std::printf("{\"impl\": \"abliterate\", \"model\": \"%s\", \"prefill_tps\": %.2f, \"decode_tps\": %.2f}\n", model.c_str(),
              prefill_tps, decode_tps);
  return 0;
}
