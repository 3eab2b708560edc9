// Built-in chat renderers. Each reproduces what the family's own Jinja template renders for
// [system, user] with add_generation_prompt=True; families that have no system role
// (Mistral v0.3, Gemma) prepend the system text to the user turn the way their templates do.
#include "abl/text/chat_template.h"

#include <filesystem>
#include <fstream>
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

}  // namespace

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
  const fs::path cfg = fs::path(model_dir) / "tokenizer_config.json";
  const fs::path jinja_file = fs::path(model_dir) / "chat_template.jinja";
  std::string jinja;
  std::string where = cfg.string();
  if (fs::is_regular_file(cfg)) {
    const io::JsonValue j = io::read_json_file(cfg.string());
    if (auto ct = j.find("chat_template")) {
      if (ct->is_string()) {
        jinja = ct->as_string();
      } else if (ct->is_array()) {
        // A list of named templates: the one named "default" is what HF applies.
        for (size_t i = 0; i < ct->size(); ++i) {
          const io::JsonValue item = ct->at(i);
          if (item.is_object() && item.get_string("name", "") == "default") {
            jinja = item.get_string("template");
          }
        }
      }
    }
  }
  if (jinja.empty() && fs::is_regular_file(jinja_file)) {
    jinja = read_text_file(jinja_file.string());
    where = jinja_file.string();
  }
  ABL_CHECK(!jinja.empty(),
            "model folder {} has no chat template (tokenizer_config.json 'chat_template' or "
            "chat_template.jinja); pass --chat-template {}",
            model_dir, option_names("|", "|"));
  return detect(jinja, where);
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
  }
  return out + std::string(response_prefix);
}

std::string ChatTemplate::name() const {
  if (format_ == ChatFormat::file) return "file:" + file_path_;
  for (const NamedFormat& n : kNamed) {
    if (n.format == format_) return n.name;
  }
  return "?";
}

}  // namespace abl::text
