// The tiny fixture, written by tools/fixtures/make_tiny_model.py with its own safetensors
// encoder, read back by our reader: known values, and the sharded copy is byte-identical.
// If the fixture is regenerated with another seed or sizes, update the values it prints.
#include <gtest/gtest.h>

#include <vector>

#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"

namespace {

const std::string kTiny = std::string(ABL_FIXTURE_DIR) + "/tiny-llama";
const std::string kTinySharded = std::string(ABL_FIXTURE_DIR) + "/tiny-llama-sharded";

TEST(TinyModel, SpecMatchesTheFixture) {
  abl::model::ModelSpec s = abl::model::load_model_spec(kTiny);
  EXPECT_EQ(s.architecture, "LlamaForCausalLM");
  EXPECT_EQ(s.hidden_size, 64);
  EXPECT_EQ(s.intermediate_size, 128);
  EXPECT_EQ(s.num_layers, 2);
  EXPECT_EQ(s.num_heads, 4);
  EXPECT_EQ(s.num_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 16);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_GE(s.vocab_size, 256);
  abl::io::SafetensorsReader r(kTiny);
  EXPECT_EQ(r.tensor("model.embed_tokens.weight").shape,
            (std::vector<int64_t>{s.vocab_size, s.hidden_size}));
}

TEST(TinyModel, KnownValues) {
  abl::io::SafetensorsReader r(kTiny);
  const abl::io::TensorInfo& embed = r.tensor("model.embed_tokens.weight");
  EXPECT_EQ(embed.dtype, abl::DType::bf16);
  std::vector<float> v(4);
  r.read_f32(embed, 0, 4, v.data());
  EXPECT_EQ(v, (std::vector<float>{0.2021484375f, -1.21875f, 0.177734375f, 0.6171875f}));

  const abl::io::TensorInfo& norm = r.tensor("model.norm.weight");
  EXPECT_EQ(norm.dtype, abl::DType::f32);
  r.read_f32(norm, 0, 4, v.data());
  EXPECT_EQ(v, (std::vector<float>{1.013693928718567f, 1.042642593383789f, 1.1686192750930786f,
                                   0.9956557750701904f}));

  const abl::io::TensorInfo& down = r.tensor("model.layers.1.mlp.down_proj.weight");
  EXPECT_EQ(down.shape, (std::vector<int64_t>{64, 128}));
  float x = 0;
  r.read_f32(down, 3 * 128 + 5, 1, &x);  // element [3, 5]
  EXPECT_EQ(x, -0.1435546875f);

  const abl::io::TensorInfo& k = r.tensor("model.layers.0.self_attn.k_proj.weight");
  r.read_f32(k, k.numel - 1, 1, &x);
  EXPECT_EQ(x, -0.095703125f);
}

TEST(TinyModel, ShardedCopyHoldsTheSameBytes) {
  abl::io::SafetensorsReader single(kTiny), sharded(kTinySharded);
  EXPECT_EQ(single.num_files(), 1u);
  EXPECT_EQ(sharded.num_files(), 3u);
  ASSERT_EQ(single.tensors().size(), sharded.tensors().size());
  for (size_t i = 0; i < single.tensors().size(); ++i) {
    const abl::io::TensorInfo& a = single.tensors()[i];
    const abl::io::TensorInfo& b = sharded.tensors()[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_EQ(a.dtype_name, b.dtype_name) << a.name;
    EXPECT_EQ(a.shape, b.shape) << a.name;
    std::string x(a.nbytes(), '\0'), y(b.nbytes(), '\0');
    single.read_bytes(a, 0, a.nbytes(), x.data());
    sharded.read_bytes(b, 0, b.nbytes(), y.data());
    EXPECT_EQ(x, y) << a.name;
  }
  EXPECT_EQ(sharded.tensor("model.embed_tokens.weight").file_index, 0u);
  EXPECT_EQ(sharded.tensor("lm_head.weight").file_index, 2u);
}

}  // namespace
