// Fuzz target: a chat template (jinja::Template, the way ChatTemplate runs a model's template) on
// a fixed conversation. Templates come with downloaded models: parsing and rendering may only
// fail as abl::Error, within the interpreter's bounds (steps, nesting, output size), and a render
// is deterministic.
#include "abl/text/jinja.h"
#include "fuzz_target.h"

namespace jinja = abl::text::jinja;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abl::fuzz::run_input([&] {
    const jinja::Template t(abl::fuzz::as_text(data, size), "chat_template.jinja");
    jinja::List messages{jinja::Dict{{"role", jinja::Value("system")}, {"content", jinja::Value("You are a helpful assistant.")}},
                         jinja::Dict{{"role", jinja::Value("user")}, {"content", jinja::Value("Héllo {{ x }} 😀")}}};
    const jinja::Value ctx(jinja::Dict{{"messages", jinja::Value(messages)},
                                       {"bos_token", jinja::Value("<s>")},
                                       {"eos_token", jinja::Value("</s>")},
                                       {"tools", jinja::Value::none()},
                                       {"add_generation_prompt", jinja::Value(true)}});
    const std::string out = t.render(ctx);
    ABL_FUZZ_CHECK(out.size() <= (size_t{64} << 20), std::to_string(out.size()));
    ABL_FUZZ_CHECK(t.render(ctx) == out, "a second render differs");
  });
}
