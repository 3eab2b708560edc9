// Per-rank memory plan and the batch search. The embedding and the head are gathered on use into
// one extra buffer (sized for the larger of the two), not kept vocab-parallel: it costs one
// (V,H) buffer per rank but keeps every unit on the same gather path as the layers.
#include "abl/parallel/memory_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "abl/core/error.h"
#include "abl/model/weights.h"

namespace abl::parallel {
namespace {

int64_t dsize(DType t) { return static_cast<int64_t>(dtype_size(t)); }

std::string lower(DType t) {
  std::string s(dtype_name(t));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 30); }
double mib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 20); }

std::string plural(int64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// T for B sequences (see kAutoMaxBatchTokens), or the fixed --batch-tokens.
int64_t tokens_per_pass(int64_t B, const PlanOptions& o) {
  if (o.batch_tokens > 0) return o.batch_tokens;
  return std::max({B, o.prompt_tokens, std::min(B * o.prompt_tokens, kAutoMaxBatchTokens)});
}

int64_t reserve_for(int64_t budget) {
  return kReserveFixedBytes + static_cast<int64_t>(kReserveFraction * static_cast<double>(budget));
}

// The largest B in [min_seqs, cap] whose buffers fit, for shard group size G.
struct Fit {
  bool fits = false;
  int64_t B = 0, T = 0;
  engine::BufferPlan buffers;
};

Fit search(const model::ModelSpec& spec, int G, const PlanOptions& o, int64_t budget,
           int64_t reserve) {
  int64_t hi = o.max_seqs > 0 ? o.max_seqs : int64_t{1} << 22;
  if (o.batch_tokens > 0) hi = std::min(hi, o.batch_tokens);  // a decode step is one pass
  const int64_t lo = o.min_seqs;
  auto need = [&](int64_t B) {
    return rank_buffers(spec, G, B, tokens_per_pass(B, o), o).total() + reserve;
  };
  Fit f;
  f.B = lo;
  if (need(lo) <= budget) {
    f.fits = true;
    int64_t good = lo, bad = hi + 1;
    while (bad - good > 1) {
      const int64_t mid = good + (bad - good) / 2;
      (need(mid) <= budget ? good : bad) = mid;
    }
    f.B = good;
  }
  f.T = tokens_per_pass(f.B, o);
  f.buffers = rank_buffers(spec, G, f.B, f.T, o);
  return f;
}

int64_t weight_part(const engine::BufferPlan& p) {
  int64_t w = 0;
  for (const auto& e : p.entries) {
    if (e.name.rfind("weight", 0) == 0 || e.name.rfind("gathered", 0) == 0) w += e.bytes;
  }
  return w;
}

int64_t entry_bytes(const engine::BufferPlan& p, std::string_view prefix) {
  int64_t b = 0;
  for (const auto& e : p.entries) {
    if (e.name.rfind(prefix, 0) == 0) b += e.bytes;
  }
  return b;
}

std::string strategy_for_group(int G, const Topology& t) {
  if (G == t.ranks_per_node) return "--sharding HYBRID_SHARD (shard within the node)";
  if (G == t.world_size) return "--sharding FULL_SHARD";
  return fmt::format("--sharding HYBRID_SHARD --shard-group-size {}", G);
}

void explain_misfit(MemoryPlan& m) {
  const int64_t weights = m.weight_bytes;
  const int64_t kv = entry_bytes(m.buffers, "KV cache");
  const int64_t working = m.allocated() - weights;
  const int G = m.topology.shard_group_size;
  const std::string what_weights =
      G == 1 ? std::string("all weights on every rank")
             : fmt::format("a 1/{} shard + 2 gathered layers + the embedding/head buffer", G);
  m.problem = fmt::format(
      "at the smallest batch ({} of {} tokens, {} tokens per pass) one rank needs {} but has "
      "{}: weights {} ({}), working memory {} (KV cache {}), reserve {}",
      plural(m.batch_seqs, "sequence"), m.tokens_per_seq, m.batch_tokens, format_bytes(m.needed()),
      format_bytes(m.budget_bytes), format_bytes(weights), what_weights, format_bytes(working),
      format_bytes(kv), format_bytes(m.reserve_bytes));
  const bool weights_too_big = weights + m.reserve_bytes > m.budget_bytes;
  m.problem += weights_too_big
                   ? "; the weights alone are too big"
                   : fmt::format("; the working memory does not fit in the {} left after the "
                                 "weights and the reserve",
                                 format_bytes(m.budget_bytes - weights - m.reserve_bytes));

  // Larger shard groups that keep the layout valid: multiples of the node up to the world.
  std::vector<int> candidates;
  const Topology& t = m.topology;
  if (G < t.ranks_per_node) candidates.push_back(t.ranks_per_node);
  for (int g = 2 * t.ranks_per_node; g <= t.world_size; g += t.ranks_per_node) {
    if (g > G && t.world_size % g == 0) candidates.push_back(g);
  }
  if (t.world_size > G && (candidates.empty() || candidates.back() != t.world_size)) {
    candidates.push_back(t.world_size);
  }
  for (int g : candidates) {
    const Fit f = search(m.spec, g, m.options, m.budget_bytes, m.reserve_bytes);
    if (f.fits) {
      m.advice = fmt::format(
          "{}: groups of {} ranks need {} of weights per rank (shard + gathered units) and fit "
          "{} per rank",
          strategy_for_group(g, t), g, format_bytes(weight_part(f.buffers)),
          plural(f.B, "sequence"));
      return;
    }
  }
  if (weights_too_big && t.world_size == 1) {
    m.advice =
        "one rank cannot hold this model: run on more GPUs (HYBRID_SHARD or FULL_SHARD divide the "
        "weights by the shard group size) or on GPUs with more memory (H200: 141 GB)";
  } else if (weights_too_big) {
    const Fit full = search(m.spec, t.world_size, m.options, m.budget_bytes, m.reserve_bytes);
    m.advice = fmt::format(
        "even FULL_SHARD over all {} ranks needs {} per rank: use more nodes (the shard shrinks "
        "with the group size) or GPUs with more memory (H200: 141 GB)",
        t.world_size, format_bytes(full.buffers.total() + m.reserve_bytes));
  } else {
    m.advice = fmt::format(
        "shorten --prompt-tokens/--max-new-tokens (each sequence caches {} tokens) or lower "
        "--batch-tokens (activations grow with the tokens per pass)",
        m.tokens_per_seq);
  }
}

}  // namespace

engine::BackendKind parse_backend(std::string_view name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // auto: what `--backend auto` runs on the GPU nodes a plan is made for.
  if (s == "cuda" || s == "gpu" || s == "auto") return engine::BackendKind::cuda;
  if (s == "cpu") return engine::BackendKind::cpu;
  fail("unknown backend '{}' (expected cuda, cpu or auto)", name);
}


Precision precision_for(engine::BackendKind b) {
  if (b == engine::BackendKind::cpu) return {DType::f32, DType::f32, DType::f32};
  return {DType::bf16, DType::bf16, DType::bf16};
}

ShardUnits shard_units(const model::ModelSpec& spec) {
  ShardUnits u;
  u.num_layers = spec.num_layers;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    // Layers alike in kind have the same slots: count each kind once.
    if (l > 0 && spec.same_layer_kind(l, l - 1)) {
      u.layers.push_back(u.layers.back());
      continue;
    }
    int64_t n = 0;
    for (const model::WeightSlot& s : model::layer_slots(spec, l)) n += model::element_count(s.shape);
    u.layers.push_back(n);
  }
  for (int64_t n : u.layers) u.layer = std::max(u.layer, n);
  u.tied = spec.tied_embeddings;
  for (const model::WeightSlot& s : model::global_slots(spec)) {
    switch (s.role) {
      case model::WeightRole::embed: u.embed += model::element_count(s.shape); break;
      case model::WeightRole::final_norm:
      case model::WeightRole::final_norm_bias:
      case model::WeightRole::lm_head_bias: u.head += model::element_count(s.shape); break;
      case model::WeightRole::lm_head:
        if (!s.tied_to) u.head += model::element_count(s.shape);
        break;
      default: break;
    }
  }
  return u;
}

int64_t shard_elements(int64_t elements, int G, int64_t element_bytes, int64_t align_bytes) {
  ABL_CHECK(G >= 1, "shard group size must be positive, got {}", G);
  ABL_CHECK(elements >= 0, "unit of {} elements", elements);
  ABL_CHECK(element_bytes > 0 && align_bytes % element_bytes == 0, "blocks of {} bytes for elements of {}",
            align_bytes, element_bytes);
  const int64_t s = (elements + G - 1) / G;
  const int64_t block = s * element_bytes > (int64_t{1} << 31) - 1 ? (int64_t{1} << 20) / element_bytes
                                                                  : align_bytes / element_bytes;
  return std::max<int64_t>((s + block - 1) / block * block, block);
}

int64_t padded_elements(int64_t elements, int G) { return shard_elements(elements, G, sizeof(float)) * G; }

int64_t kv_cache_bytes(const model::ModelSpec& spec, int64_t rows, DType dtype) {
  return rows * spec.kv_cache_row_floats() * dsize(dtype);
}

engine::BufferPlan activation_buffers(const model::ModelSpec& spec, int64_t B, int64_t T,
                                      const Precision& p) {
  // Mirrors engine::Engine::plan_for (fp32 on the CPU); tests hold the two together.
  const int64_t H = spec.hidden_size;
  const int64_t F = std::max({spec.dense_mlp_width(), spec.moe_intermediate_size, spec.shared_expert_intermediate_size});
  const int64_t a = dsize(p.activations);
  const std::string at = lower(p.activations);
  engine::BufferPlan b;
  b.add("residual x (T,H) f32", T * H * 4);
  b.add(fmt::format("normed h (T,H) {}", at), T * H * a);
  b.add(fmt::format("q (T,NH*HD) {}", at), T * spec.q_dim() * a);
  b.add(fmt::format("k, v (T,NKV*HD) {}", at), T * (spec.kv_dim() + spec.v_dim()) * a);
  b.add(fmt::format("attention out (T,NH*HD) {}", at), T * std::max(spec.o_dim(), spec.linear_value_dim()) * a);
  if (spec.mla) {
    const int64_t C = spec.kv_lora_rank, R = spec.partial_rotary_dim;
    b.add(fmt::format("q_a_proj out (T,q_lora_rank) {}", at), T * spec.q_lora_rank * a);
    b.add(fmt::format("latent attention kv_a (T,C+R), latent (T,C) {}", at), T * (2 * C + R) * a);
    b.add(fmt::format("kv_b_proj out (T,NH*(nope+HDv)) {}", at),
          T * spec.num_heads * (spec.qk_nope_head_dim + spec.v_head()) * a);
  }
  if (spec.attn_output_gate) b.add(fmt::format("attention output gate (T,NH*HD) {}", at), T * spec.q_dim() * a);
  if (!spec.linear_layers.empty()) {
    b.add(fmt::format("linear attention q|k|v (T,C), z (T,NV*DV), b|a (T,2*NV) {}", at),
          T * (spec.linear_in_dim() + spec.linear_value_dim() + 2 * spec.linear_num_value_heads) * a);
  }
  b.add(fmt::format("projection out y (T,H) {}", at), T * H * a);
  if (!model::gated_activation(spec.activation)) {
    b.add(fmt::format("up (T,F) {}", at), T * F * a);  // ungated MLPs (Nemotron-H, Arcee, Apertus): no gate rows
  } else {
    b.add(fmt::format("gate, up (T,F) {}", at), 2 * T * F * a);
  }
  b.add("last tokens (B,H) f32", B * H * 4);
  if (spec.num_experts > 0) {
    const int64_t E = spec.num_experts, k = spec.experts_per_token;
    b.add("router logits (T,E) f32", T * E * 4);
    b.add("top-k weights and ids (T,k)", T * k * 8);
    b.add(fmt::format("one expert's tokens in, out (T,H) {}", at), 2 * T * H * a);
    b.add(fmt::format("expert outputs of every token (T*k,H) {}", at), T * k * H * a);
    b.add("expert token lists (T*k) i64", 2 * T * k * 8);
    if (spec.moe_latent_size > 0) b.add(fmt::format("LatentMoE latent (T,D) {}", at), T * spec.moe_latent_size * a);
    if (spec.moe_beside_dense) b.add(fmt::format("experts' branch beside the dense MLP (T,H) {}", at), T * H * a);
  }
  if (spec.ple_dim > 0) b.add(fmt::format("per-layer embeddings x0 (T,H), (T,2P) {}", at), T * (H + 2 * spec.ple_dim) * a);
  return b;
}

engine::BufferPlan rank_buffers(const model::ModelSpec& spec, int G, int64_t B, int64_t T,
                                const PlanOptions& o) {
  const Precision p = precision_for(o.backend);
  const int64_t wb = dsize(p.weights);
  const std::string wt = lower(p.weights);
  const ShardUnits u = shard_units(spec);
  const int64_t layer = padded_elements(u.layer, G), embed = padded_elements(u.embed, G),
                head = padded_elements(u.head, G);
  const int64_t L = u.num_layers;
  int64_t layers = 0;  // all layer units, each padded to G slices
  for (int64_t n : u.layers) layers += padded_elements(n, G);
  engine::BufferPlan b;
  const std::string head_name = u.tied ? "final norm (H), lm_head tied" : "final norm + lm_head (V,H)";
  if (G == 1) {
    b.add(fmt::format("weights: {} layer units {}", L, wt), layers * wb);
    b.add(fmt::format("weights: embedding (V,H) {}", wt), embed * wb);
    b.add(fmt::format("weights: {} {}", head_name, wt), head * wb);
  } else {
    // Sharded, a tied head unit carries the embedding matrix a second time (it is gathered whole
    // into the global slot after the embedding): its shard holds 1/G of that copy too.
    const int64_t sharded_head = padded_elements(u.head + (u.tied ? u.embed : 0), G);
    const std::string sharded_head_name = u.tied ? "final norm (H) + tied lm_head copy (V,H)" : head_name;
    b.add(fmt::format("weight shard: {} layer units, 1/{} {}", L, G, wt), (layers / G) * wb);
    b.add(fmt::format("weight shard: embedding, 1/{} {}", G, wt), (embed / G) * wb);
    b.add(fmt::format("weight shard: {}, 1/{} {}", sharded_head_name, G, wt), (sharded_head / G) * wb);
    b.add(fmt::format("gathered layer units: 2 slots {}", wt), 2 * layer * wb);
    b.add(fmt::format("gathered embedding/head: 1 buffer {}", wt), std::max(embed, sharded_head) * wb);
  }
  const int64_t cache_rows = B * (o.prompt_tokens + o.max_new_tokens);
  const int64_t V = spec.vocab_size, H = spec.hidden_size;
  if (!spec.linear_layers.empty()) {
    b.add("recurrent states (B, linear-attention layers: conv K-1 rows + S (NV,DK,DV)) f32",
          B * spec.linear_state_floats() * 4);
  }
  if (o.engine.pass_buffers) {
    // The engine's own plan: its KV cache and every buffer its constructor carves.
    b.add(fmt::format("{}, rows = B*(P+N)", o.engine.kv_cache_label), o.engine.kv_cache_bytes(spec, cache_rows));
    for (auto& e : o.engine.pass_buffers(spec, engine::Limits{T, B}).entries) {
      b.add(fmt::format("{} engine: {}", o.engine.name, e.name), e.bytes);
    }
    if (o.engine.name == "cuda") return b;  // logits, captures and workspaces are in the engine's plan
  } else {
    b.add(fmt::format("KV cache (2,L,B*(P+N),NKV*HD) {}", lower(p.kv_cache)), kv_cache_bytes(spec, cache_rows, p.kv_cache));
    for (auto& e : activation_buffers(spec, B, T, p).entries) b.add(std::move(e.name), e.bytes);
  }
  b.add("logits (B,V) f32", B * V * 4);
  b.add("log-softmax (B,V) f32", B * V * 4);
  // Residual captures of the prompts in one prefill pass, copied out after each pass.
  const int64_t captured = std::min(B, std::max<int64_t>(1, T / std::max<int64_t>(1, o.prompt_tokens)));
  b.add("captures (b,L+1,H) f32, b = T/P", captured * (spec.num_layers + 1) * H * 4);
  if (o.backend == engine::BackendKind::cuda) b.add("cuBLAS workspace", kCublasWorkspaceBytes);
  return b;
}

MemoryPlan plan_memory(const model::ModelSpec& spec, const TopologyRequest& req,
                       const PlanOptions& opts) {
  ABL_CHECK(opts.budget_gib > 0 && std::isfinite(opts.budget_gib),
            "the memory budget must be positive, got {} GiB", opts.budget_gib);
  ABL_CHECK(opts.prompt_tokens >= 1, "--prompt-tokens must be at least 1, got {}", opts.prompt_tokens);
  ABL_CHECK(opts.max_new_tokens >= 0, "--max-new-tokens must be >= 0, got {}", opts.max_new_tokens);
  ABL_CHECK(opts.batch_tokens >= 0, "--batch-tokens must be positive or auto, got {}", opts.batch_tokens);
  ABL_CHECK(opts.max_seqs >= 0, "--max-seqs must be >= 0 (0 = as many as fit), got {}", opts.max_seqs);
  ABL_CHECK(opts.min_seqs >= 1, "the smallest batch must be at least 1 sequence, got {}", opts.min_seqs);
  ABL_CHECK(opts.batch_tokens == 0 || opts.batch_tokens >= opts.prompt_tokens,
            "--batch-tokens {} is smaller than --prompt-tokens {}: a prompt is prefilled in one pass",
            opts.batch_tokens, opts.prompt_tokens);
  ABL_CHECK(opts.max_seqs == 0 || opts.max_seqs >= opts.min_seqs,
            "--max-seqs {} is below the smallest batch of {} sequences", opts.max_seqs, opts.min_seqs);
  ABL_CHECK(opts.batch_tokens == 0 || opts.batch_tokens >= opts.min_seqs,
            "--batch-tokens {} cannot hold a decode step of {} sequences", opts.batch_tokens,
            opts.min_seqs);
  const int64_t seq_tokens = opts.prompt_tokens + opts.max_new_tokens;
  ABL_CHECK(spec.context_length() <= 0 || seq_tokens <= spec.context_length(),
            "{}: prompt + new tokens ({} + {}) exceed the model's context length {}", spec.source,
            opts.prompt_tokens, opts.max_new_tokens, spec.context_length());

  MemoryPlan m;
  m.spec = spec;
  m.options = opts;
  m.precision = precision_for(opts.backend);
  m.requested = req.sharding;
  m.tokens_per_seq = seq_tokens;
  m.budget_bytes = static_cast<int64_t>(opts.budget_gib * static_cast<double>(int64_t{1} << 30));
  m.reserve_bytes = reserve_for(m.budget_bytes);

  const int64_t T_min = tokens_per_pass(opts.min_seqs, opts);
  m.one_rank_bytes = rank_buffers(spec, 1, opts.min_seqs, T_min, opts).total() + m.reserve_bytes;
  m.fits_one_rank = m.one_rank_bytes <= m.budget_bytes;

  TopologyRequest r = req;
  r.fits_one_rank = m.fits_one_rank;
  m.topology = make_topology(r);
  const int G = m.topology.shard_group_size;

  Fit f = search(spec, G, opts, m.budget_bytes, m.reserve_bytes);
  m.fits = f.fits;
  m.batch_seqs = f.B;
  m.batch_tokens = f.T;
  m.buffers = std::move(f.buffers);
  m.weight_bytes = weight_part(m.buffers);

  if (G > 1) {
    const ShardUnits u = shard_units(spec);
    int64_t units = 0;
    for (int64_t n : u.layers) units += padded_elements(n, G);
    units += padded_elements(u.embed, G) * (u.tied ? 2 : 1) + padded_elements(u.head, G);
    m.gathered_bytes_per_pass = units / G * (G - 1) * dsize(m.precision.weights);
  }
  if (!m.fits) explain_misfit(m);
  return m;
}

std::string MemoryPlan::table() const {
  std::string s = fmt::format("  {:<58} {:>12} {:>9}\n", "buffer (one rank)", "MiB", "GiB");
  auto row = [&](const std::string& name, int64_t bytes) {
    s += fmt::format("  {:<58} {:>12.1f} {:>9.2f}\n", name, mib(bytes), gib(bytes));
  };
  for (const auto& e : buffers.entries) row(e.name, e.bytes);
  s += fmt::format("  {:-<58} {:->12} {:->9}\n", "", "", "");
  row("allocated", allocated());
  row(fmt::format("reserve (1 GiB + {:.0f} %): {}", kReserveFraction * 100,
                  options.backend == engine::BackendKind::cuda ? "CUDA context, NCCL, fragmentation"
                                                   : "runtime, MPI, fragmentation"),
      reserve_bytes);
  row("needed", needed());
  row(fmt::format("budget ({})", engine::backend_kind_name(options.backend) == "cuda" ? "--gpu-mem-gib" : "host memory per rank"),
      budget_bytes);
  row(free_bytes() >= 0 ? "free" : "SHORT BY", std::abs(free_bytes()));
  return s;
}

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes < 0 ? -bytes : bytes);
  const char* sign = bytes < 0 ? "-" : "";
  if (b >= static_cast<double>(int64_t{1} << 30)) return fmt::format("{}{:.2f} GiB", sign, b / (1 << 30));
  if (b >= static_cast<double>(1 << 20)) return fmt::format("{}{:.1f} MiB", sign, b / (1 << 20));
  if (b >= 1024) return fmt::format("{}{:.1f} KiB", sign, b / 1024);
  return fmt::format("{}{} B", sign, bytes < 0 ? -bytes : bytes);
}

}  // namespace abl::parallel
