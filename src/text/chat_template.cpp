// Chat templates. `auto` runs the model's own Jinja template with our interpreter (jinja.h), as
// transformers' apply_chat_template does; the built-in renderers reproduce what each family's
// template renders for [system, user] with add_generation_prompt=True, for models without one;
// families that have no system role (Mistral v0.3, Gemma) prepend the system text to the user turn
// the way their templates do.
#include "abl/text/chat_template.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "abl/core/error.h"
#include "abl/io/json_file.h"

namespace abl::text {
namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// One left-to-right pass, so a system prompt containing "{user}" is not substituted again.
std::string fill_placeholders(std::string_view tmpl, std::string_view system, std::string_view user) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl.compare(i, 8, "{system}") == 0) {
      out += system;
      i += 8;
    } else if (tmpl.compare(i, 6, "{user}") == 0) {
      out += user;
      i += 6;
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

// Jinja's `| trim` (the Llama 3 and Gemma templates trim message contents).
std::string trim(std::string_view s) {
  const char* ws = " \t\n\r\v\f";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot open chat template file {}", path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// "system\n\nuser", or just the user text when there is no system prompt.
std::string merged_user(std::string_view system, std::string_view user) {
  if (system.empty()) return std::string(user);
  return std::string(system) + "\n\n" + std::string(user);
}

// The built-in renderers by their --chat-template names.
struct NamedFormat {
  const char* name;
  ChatFormat format;
};
constexpr NamedFormat kNamed[] = {
    {"raw", ChatFormat::raw},         {"chatml", ChatFormat::chatml},         {"llama3", ChatFormat::llama3},
    {"llama3.1", ChatFormat::llama31}, {"mistral", ChatFormat::mistral},      {"mistral-v3", ChatFormat::mistral_v3},
    {"llama2", ChatFormat::llama2},   {"gemma", ChatFormat::gemma},           {"phi3", ChatFormat::phi3},
    {"phi4", ChatFormat::phi4},       {"phi4-mini", ChatFormat::phi4_mini},
};

// "raw|chatml|...|file:PATH" (or with ", " and " or "), for messages.
std::string option_names(const char* sep, const char* last_sep) {
  std::string out;
  for (const NamedFormat& n : kNamed) out += std::string(n.name) + sep;
  out.resize(out.size() - std::string(sep).size());
  return out + last_sep + "file:PATH";
}

// 64-bit FNV-1a, as hex: the template's identity in run records.
std::string fnv1a_hex(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// What to say when the model's template cannot run: the built-in whose markers it writes, if any.
std::string builtin_hint(std::string_view jinja) {
  try {
    const std::string n = ChatTemplate::detect(jinja, "").name();
    return fmt::format("; its markers are those of the built-in renderer '{}': --chat-template {} renders that "
                       "format (compare with `abliterate prompts --show 3`)", n, n);
  } catch (const Error&) {
    return fmt::format("; pass --chat-template {}", option_names("|", "|"));
  }
}

// A message's content: the text, or (`parts`) the list of one text part a multimodal processor's template reads.
jinja::Value message_content(std::string_view text, bool parts) {
  if (!parts) return jinja::Value(std::string(text));
  return jinja::Value(jinja::List{
      jinja::Value(jinja::Dict{{"type", jinja::Value("text")}, {"text", jinja::Value(std::string(text))}})});
}

// The conversation transformers gives a chat template, with the model's special tokens.
jinja::Value jinja_context(std::string_view system, std::string_view user, const jinja::Dict& special_tokens,
                           bool parts) {
  jinja::List messages;
  if (!system.empty()) {
    messages.emplace_back(jinja::Dict{{"role", jinja::Value("system")}, {"content", message_content(system, parts)}});
  }
  messages.emplace_back(jinja::Dict{{"role", jinja::Value("user")}, {"content", message_content(user, parts)}});
  jinja::Dict ctx = special_tokens;
  ctx.emplace_back("messages", jinja::Value(std::move(messages)));
  ctx.emplace_back("tools", jinja::Value::none());
  ctx.emplace_back("documents", jinja::Value::none());
  ctx.emplace_back("add_generation_prompt", jinja::Value(true));
  return jinja::Value(std::move(ctx));
}

// The special tokens of tokenizer_config.json (a string or an AddedToken object each), as
// transformers passes them to the template.
jinja::Dict special_tokens_of(const io::JsonValue& config) {
  jinja::Dict out;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"}) {
    const auto v = config.find(key);
    if (!v) continue;
    if (v->is_string()) {
      out.emplace_back(key, jinja::Value(v->as_string()));
    } else if (v->is_object() && v->find("content") && v->at("content").is_string()) {
      out.emplace_back(key, jinja::Value(v->at("content").as_string()));
    }
  }
  if (const auto extra = config.find("additional_special_tokens"); extra && extra->is_array()) {
    jinja::List tokens;
    for (size_t i = 0; i < extra->size(); ++i) {
      const io::JsonValue t = extra->at(i);
      if (t.is_string()) tokens.emplace_back(t.as_string());
      if (t.is_object() && t.find("content") && t.at("content").is_string()) tokens.emplace_back(t.at("content").as_string());
    }
    out.emplace_back("additional_special_tokens", jinja::Value(std::move(tokens)));
  }
  return out;
}

// A Jinja chat template found in a model folder: its text and where it was read.
struct FoundTemplate {
  std::string text, where;
};

// tokenizer_config.json's or chat_template.json's "chat_template": a string, or a list of named
// templates of which "default" is what transformers applies.
std::optional<FoundTemplate> template_in(const io::JsonValue& j, const std::string& file) {
  const auto ct = j.find("chat_template");
  if (!ct) return std::nullopt;
  if (ct->is_string()) return FoundTemplate{ct->as_string(), file};
  if (ct->is_array()) {
    for (size_t i = 0; i < ct->size(); ++i) {
      const io::JsonValue item = ct->at(i);
      if (item.is_object() && item.get_string("name", "") == "default") {
        return FoundTemplate{item.get_string("template"), file + " (chat_template 'default')"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ChatTemplate ChatTemplate::from_jinja(std::string_view source, const std::string& where, jinja::Dict special_tokens,
                                      std::string date) {
  ChatTemplate t;
  t.format_ = ChatFormat::jinja;
  t.file_text_ = std::string(source);
  t.file_path_ = where;
  t.special_tokens_ = std::move(special_tokens);
  t.date_ = std::move(date);
  try {
    t.jinja_ = std::make_shared<const jinja::Template>(source, where);
  } catch (const jinja::TemplateError& e) {
    fail("the model's chat template cannot run here: {}{}", e.what(), builtin_hint(source));
  }
  // The content as a string, as transformers passes text; a template that then loses the user's text but keeps it
  // given as a list of parts (LLaVA-1.5's: `content | selectattr('type', 'equalto', 'text')`) gets the parts, and one
  // that loses it either way is refused rather than rendering every prompt alike.
  const std::string probe = "Hello, the user's text.";
  const auto keeps_user_text = [&](bool parts) -> std::optional<bool> {  // nullopt: the rendering raised
    try {
      return contains(t.jinja_->render(jinja_context("", probe, t.special_tokens_, parts), t.date_), probe);
    } catch (const jinja::TemplateError&) {
      return std::nullopt;
    }
  };
  if (const std::optional<bool> as_string = keeps_user_text(false); !as_string || !*as_string) {
    if (const std::optional<bool> as_parts = keeps_user_text(true); as_parts && *as_parts) {
      t.content_as_parts_ = true;
    } else if (as_string) {
      fail("the model's chat template ({}) drops the user's text, given as a string and as a list of text parts, so "
           "every prompt would render alike{}",
           where, builtin_hint(source));
    }  // (raising either way: the conversation below says why)
  }
  // Tried once with a system turn: a template that raises on it (Gemma 1 and 2) or fails on it
  // (the first Gemma 3 templates read a system turn's content as a list of parts) gets the system
  // text in the user turn instead; one that cannot render a plain conversation is refused now.
  const bool parts = t.content_as_parts_;
  try {
    t.jinja_->render(jinja_context("You are a helpful assistant.", "Hello.", t.special_tokens_, parts), t.date_);
  } catch (const jinja::TemplateError& e) {
    try {
      t.jinja_->render(jinja_context("", "Hello.", t.special_tokens_, parts), t.date_);
    } catch (const jinja::TemplateError& e2) {
      fail("the model's chat template cannot render a conversation of one user turn: {}{}", e2.what(),
           builtin_hint(source));
    }
    t.refuses_system_role_ = true;
    const auto* raised = dynamic_cast<const jinja::RaisedError*>(&e);
    t.system_refusal_ = raised ? raised->message() : e.what();
  }
  return t;
}

ChatTemplate ChatTemplate::from_option(std::string_view spec) {
  ChatTemplate t;
  for (const NamedFormat& n : kNamed) {
    if (spec == n.name) {
      t.format_ = n.format;
      return t;
    }
  }
  if (spec.substr(0, 5) == "file:") {
    t.format_ = ChatFormat::file;
    t.file_path_ = std::string(spec.substr(5));
    t.file_text_ = read_text_file(t.file_path_);
    // Editors end files with a newline; that one newline is not part of the template.
    if (!t.file_text_.empty() && t.file_text_.back() == '\n') t.file_text_.pop_back();
    ABL_CHECK(contains(t.file_text_, "{user}"),
              "chat template file {} has no {{user}} placeholder", t.file_path_);
  } else {
    fail("invalid --chat-template '{}' (expected auto, {})", spec, option_names(", ", " or "));
  }
  return t;
}

ChatTemplate ChatTemplate::detect(std::string_view jinja, const std::string& where) {
  ChatTemplate t;
  if (contains(jinja, "<|im_sep|>")) {  // before ChatML, whose tokens Phi-4 shares
    t.format_ = ChatFormat::phi4;
  } else if (contains(jinja, "<|im_start|>")) {
    t.format_ = ChatFormat::chatml;
  } else if (contains(jinja, "<|start_header_id|>")) {
    t.format_ = contains(jinja, "Cutting Knowledge Date") ? ChatFormat::llama31 : ChatFormat::llama3;
  } else if (contains(jinja, "<start_of_turn>")) {
    t.format_ = ChatFormat::gemma;
    t.refuses_system_role_ = contains(jinja, "System role not supported");
  } else if (contains(jinja, "<<SYS>>")) {
    t.format_ = ChatFormat::llama2;
  } else if (contains(jinja, "[INST]")) {
    // v0.3 closes with '[/INST]' right after the content; v0.1/v0.2 with ' [/INST]'.
    t.format_ = contains(jinja, "' [/INST]'") ? ChatFormat::mistral : ChatFormat::mistral_v3;
  } else if (contains(jinja, "'<|' + message['role'] + '|>'") && contains(jinja, "<|end|>")) {
    t.format_ = ChatFormat::phi4_mini;  // builds the role tokens, no newline after them
  } else if (contains(jinja, "<|user|>") && contains(jinja, "<|end|>")) {
    t.format_ = ChatFormat::phi3;
  } else {
    fail("{}: chat template not recognised (none of ChatML, Llama 3, Mistral/Llama 2 [INST], "
         "Gemma, Phi-3, Phi-4); pass --chat-template {}", where, option_names("|", "|"));
  }
  return t;
}

ChatTemplate ChatTemplate::resolve(std::string_view option, const std::string& model_dir) {
  if (option != "auto") return from_option(option);
  namespace fs = std::filesystem;
  const fs::path dir(model_dir);
  const fs::path cfg = dir / "tokenizer_config.json";
  std::optional<io::JsonValue> config;
  if (fs::is_regular_file(cfg)) config = io::read_json_file(cfg.string());
  // transformers: a chat_template.jinja file takes precedence over tokenizer_config.json's
  // template; multimodal processors keep theirs in chat_template.json.
  std::optional<FoundTemplate> found;
  if (const fs::path f = dir / "chat_template.jinja"; fs::is_regular_file(f)) {
    found = FoundTemplate{read_text_file(f.string()), f.string()};
  } else if (config) {
    found = template_in(*config, cfg.string());
  }
  if (!found) {
    if (const fs::path f = dir / "chat_template.json"; fs::is_regular_file(f)) {
      found = template_in(io::read_json_file(f.string()), f.string());
    }
  }
  ABL_CHECK(found && !found->text.empty(),
            "model folder {} has no chat template (chat_template.jinja, tokenizer_config.json 'chat_template' or "
            "chat_template.json); pass --chat-template {}",
            model_dir, option_names("|", "|"));
  return from_jinja(found->text, found->where, config ? special_tokens_of(*config) : jinja::Dict{});
}

std::string ChatTemplate::render(std::string_view system, std::string_view user,
                                 std::string_view response_prefix) const {
  const std::string sys(system), usr(user);
  std::string out;
  switch (format_) {
    case ChatFormat::raw:
      out = usr;
      break;
    case ChatFormat::chatml:
      if (!sys.empty()) out += "<|im_start|>system\n" + sys + "<|im_end|>\n";
      out += "<|im_start|>user\n" + usr + "<|im_end|>\n<|im_start|>assistant\n";
      break;
    case ChatFormat::llama3:
    case ChatFormat::llama31: {
      out = "<|begin_of_text|>";
      std::string sys_text = trim(sys);
      if (format_ == ChatFormat::llama31) {
        sys_text = "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" + sys_text;
      }
      if (!sys_text.empty()) {
        out += "<|start_header_id|>system<|end_header_id|>\n\n" + sys_text + "<|eot_id|>";
      }
      out += "<|start_header_id|>user<|end_header_id|>\n\n" + trim(usr) +
             "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    }
    case ChatFormat::mistral:
      out = "<s>[INST] " + merged_user(sys, usr) + " [/INST]";
      break;
    case ChatFormat::mistral_v3:
      out = "<s>[INST] " + merged_user(sys, usr) + "[/INST]";
      break;
    case ChatFormat::llama2:
      out = "<s>[INST] ";
      if (!sys.empty()) out += "<<SYS>>\n" + sys + "\n<</SYS>>\n\n";
      out += usr + " [/INST]";
      break;
    case ChatFormat::gemma:
      out = "<bos><start_of_turn>user\n" + (sys.empty() ? "" : sys + "\n\n") + trim(usr) +
            "<end_of_turn>\n<start_of_turn>model\n";
      break;
    case ChatFormat::phi3:
      if (!sys.empty()) out += "<|system|>\n" + sys + "<|end|>\n";
      out += "<|user|>\n" + usr + "<|end|>\n<|assistant|>\n";
      break;
    case ChatFormat::phi4:
      if (!sys.empty()) out += "<|im_start|>system<|im_sep|>" + sys + "<|im_end|>";
      out += "<|im_start|>user<|im_sep|>" + usr + "<|im_end|><|im_start|>assistant<|im_sep|>";
      break;
    case ChatFormat::phi4_mini:
      if (!sys.empty()) out += "<|system|>" + sys + "<|end|>";
      out += "<|user|>" + usr + "<|end|><|assistant|>";
      break;
    case ChatFormat::file:
      out = fill_placeholders(file_text_, sys, usr);
      break;
    case ChatFormat::jinja:
      if (refuses_system_role_) {
        out = jinja_->render(jinja_context("", merged_user(sys, usr), special_tokens_, content_as_parts_), date_);
      } else {
        out = jinja_->render(jinja_context(sys, usr, special_tokens_, content_as_parts_), date_);
      }
      break;
  }
  return out + std::string(response_prefix);
}

std::string ChatTemplate::name() const {
  if (format_ == ChatFormat::file) return "file:" + file_path_;
  if (format_ == ChatFormat::jinja) {
    return "jinja:" + std::filesystem::path(file_path_).filename().string() + ":" + fnv1a_hex(file_text_);
  }
  for (const NamedFormat& n : kNamed) {
    if (n.format == format_) return n.name;
  }
  return "?";
}

std::string ChatTemplate::describe() const {
  if (format_ != ChatFormat::jinja) return "built-in " + name();
  std::string out = "the model's own (" + file_path_ + ", run as Jinja)";
  // The built-in that renders the same on a few conversations, if any.
  const std::pair<const char*, const char*> probes[] = {
      {"You are a helpful assistant.", "How do I bake bread?"}, {"", "Hi"}, {" Be brief.\n", " x y \n"}};
  for (const NamedFormat& n : kNamed) {
    if (n.format == ChatFormat::raw) continue;
    const ChatTemplate b = from_option(n.name);
    bool same = true;
    try {
      for (const auto& [sys, usr] : probes) same = same && b.render(sys, usr) == render(sys, usr);
    } catch (const Error&) {
      same = false;
    }
    if (same) return out + ", renders as the built-in " + n.name;
  }
  return out;
}

}  // namespace abl::text
