// Chat templates: the model's Jinja template is recognised by its markers and mapped to a
// built-in renderer (we do not run Jinja); `--chat-template` names one or a {system}/{user} file.
#pragma once
#include <string>
#include <string_view>

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
};

class ChatTemplate {
 public:
  // From an option value: raw, chatml, llama3, llama3.1, mistral, mistral-v3, llama2, gemma, phi3,
  // phi4, phi4-mini, file:PATH.
  static ChatTemplate from_option(std::string_view spec);
  // From the `chat_template` string of tokenizer_config.json; `where` names the file in errors.
  static ChatTemplate detect(std::string_view jinja, const std::string& where);
  // From a model folder: option "auto" reads DIR/tokenizer_config.json, anything else is from_option.
  static ChatTemplate resolve(std::string_view option, const std::string& model_dir);

  // System + user turn + generation prompt (+ response prefix). The text contains the special
  // tokens literally (BOS where the template writes it); tokenize it without add_special_tokens.
  std::string render(std::string_view system, std::string_view user,
                     std::string_view response_prefix = {}) const;

  ChatFormat format() const { return format_; }
  std::string name() const;
  // The model's own template raises on a system turn (Gemma 1 and 2: "System role not
  // supported"); render() still prepends the system text to the user turn, as Gemma 3's does.
  bool refuses_system_role() const { return refuses_system_role_; }

 private:
  ChatFormat format_ = ChatFormat::raw;
  bool refuses_system_role_ = false;
  std::string file_text_;  // for ChatFormat::file
  std::string file_path_;
};

}  // namespace abl::text
