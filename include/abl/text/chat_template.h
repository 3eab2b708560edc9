// Chat templates: `auto` runs the model's own Jinja template (our interpreter, jinja.h) as
// transformers' apply_chat_template runs it, with the model's special tokens; `--chat-template`
// names a built-in renderer instead, or a {system}/{user} file.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "abl/text/jinja.h"

namespace abl::text {

enum class ChatFormat {
  raw,        // the user text as it is
  chatml,     // Qwen: <|im_start|>role\n...<|im_end|>\n
  llama3,     // Llama 3: header ids, <|eot_id|>
  llama31,    // Llama 3.1+: as llama3 with the "Cutting Knowledge Date" system preamble
  mistral,    // Mistral v0.1/v0.2: <s>[INST] system\n\nuser [/INST]
  mistral_v3, // Mistral v0.3: <s>[INST] system\n\nuser[/INST]
  llama2,     // Llama 2: <s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST]
  gemma,      // Gemma 2/3: <bos><start_of_turn>user\nsystem\n\nuser<end_of_turn>\n<start_of_turn>model\n
  phi3,       // Phi-3: <|system|>\n...<|end|>\n<|user|>\n...<|end|>\n<|assistant|>\n
  phi4,       // Phi-4: <|im_start|>role<|im_sep|>...<|im_end|> (ChatML's tokens, no newlines)
  phi4_mini,  // Phi-4-mini: <|system|>...<|end|><|user|>...<|end|><|assistant|> (no newlines)
  file,       // user template with {system} and {user}
  jinja,      // the model's own Jinja template
};

class ChatTemplate {
 public:
  // From an option value: raw, chatml, llama3, llama3.1, mistral, mistral-v3, llama2, gemma, phi3,
  // phi4, phi4-mini, file:PATH.
  static ChatTemplate from_option(std::string_view spec);
  // The built-in renderer whose markers a Jinja template writes (a hint for templates that
  // cannot run); `where` names the file in errors.
  static ChatTemplate detect(std::string_view jinja, const std::string& where);
  // A Jinja template run as transformers runs it: `special_tokens` (bos_token, eos_token, ...) are
  // its variables besides the conversation; `date` is what strftime_now formats (YYYY-MM-DD).
  // Tried once on a conversation with a system turn: a template that raises or fails on it
  // (Gemma 1/2; the first Gemma 3 templates, which read a system turn's content as a list of
  // parts) gets the system text prepended to the user turn instead (refuses_system_role).
  static ChatTemplate from_jinja(std::string_view source, const std::string& where, jinja::Dict special_tokens,
                                 std::string date = "2024-07-26");
  // From a model folder: option "auto" runs the model's template (chat_template.jinja, else
  // tokenizer_config.json's chat_template, else chat_template.json's) with the special tokens of
  // tokenizer_config.json; anything else is from_option.
  static ChatTemplate resolve(std::string_view option, const std::string& model_dir);

  // System + user turn + generation prompt (+ response prefix). The text contains the special
  // tokens literally (BOS where the template writes it); tokenize it without add_special_tokens.
  std::string render(std::string_view system, std::string_view user,
                     std::string_view response_prefix = {}) const;

  ChatFormat format() const { return format_; }
  // The option that selects this renderer; for the model's template "jinja:FILE:HASH" (64-bit
  // FNV-1a of its text), so that run records change when the template does.
  std::string name() const;
  // For people: where the template came from and which built-in renders it the same, if one does.
  std::string describe() const;
  // The model's own template raises on a system turn (Gemma 1 and 2: "System role not
  // supported"); render() still prepends the system text to the user turn, as Gemma 3's does.
  bool refuses_system_role() const { return refuses_system_role_; }
  // What the template said when it refused (empty for the built-ins).
  const std::string& system_refusal() const { return system_refusal_; }
  // The model's own template reads each message's content as a list of typed parts ([{"type": "text", "text": …}])
  // and drops a plain string (LLaVA-1.5's processor template): render() passes the parts.
  bool content_as_parts() const { return content_as_parts_; }

 private:
  ChatFormat format_ = ChatFormat::raw;
  bool refuses_system_role_ = false;
  bool content_as_parts_ = false;
  std::string system_refusal_;
  std::string file_text_;  // for ChatFormat::file, and the source of ChatFormat::jinja
  std::string file_path_;
  std::shared_ptr<const jinja::Template> jinja_;
  jinja::Dict special_tokens_;
  std::string date_;
};

}  // namespace abl::text
