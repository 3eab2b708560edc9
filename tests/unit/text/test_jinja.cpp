// The Jinja interpreter: Jinja2's whitespace control, scoping, Undefined and Python value
// semantics on small templates (each expectation was checked against Python's jinja2 set up as
// transformers sets it up), the untrusted-input bounds, and the peer test: ~100 genuine chat
// templates rendered by Python's jinja2 (tests/tokpeer/render_templates.py) must render the same.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "abl/text/chat_template.h"
#include "abl/text/jinja.h"

using abl::text::jinja::Dict;
using abl::text::jinja::List;
using abl::text::jinja::RaisedError;
using abl::text::jinja::Template;
using abl::text::jinja::TemplateError;
using abl::text::jinja::Value;

namespace {

std::string render(const std::string& src, Dict vars = {}) {
  return Template(src, "t").render(Value(std::move(vars)));
}

Value messages(const std::string& system, const std::string& user) {
  List m;
  if (!system.empty()) m.emplace_back(Dict{{"role", Value("system")}, {"content", Value(system)}});
  m.emplace_back(Dict{{"role", Value("user")}, {"content", Value(user)}});
  return Value(std::move(m));
}

std::string error_of(const std::string& src, Dict vars = {}) {
  try {
    render(src, std::move(vars));
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Jinja, WhitespaceControlAsTransformersCompilesIt) {
  // lstrip_blocks: indentation before a block tag at a line start goes; trim_blocks: the newline
  // after it goes. Variable tags keep both.
  EXPECT_EQ(render("  {% if true %}\n  x\n  {% endif %}\n  y"), "  x\n  y");
  EXPECT_EQ(render("a {% if true %}b{% endif %}\n c"), "a b c");
  EXPECT_EQ(render("{%- if true -%}  x  {%- endif -%}"), "x");
  EXPECT_EQ(render("a  {{- 'b' -}}  \n c"), "abc");
  EXPECT_EQ(render("  {{ 'v' }}\n\n"), "  v\n");  // one newline at the end of a template goes
  EXPECT_EQ(render("x {# note #}\ny"), "x y");
  EXPECT_EQ(render("  {#- note -#}  y"), "y");
  // + keeps what lstrip_blocks and trim_blocks would remove.
  EXPECT_EQ(render("  {%+ if true +%}\nx{% endif %}"), "  \nx");
  // After a block tag ate its newline, the next line's indentation before a tag is a line start.
  EXPECT_EQ(render("{% if true %}\n    {% set a = 1 %}\n{{ a }}{% endif %}"), "1");
  EXPECT_EQ(render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
}

TEST(Jinja, ScopesAreJinjas) {
  // A loop iteration has its own variables; set in an if at the top level is seen after it.
  EXPECT_EQ(render("{% set x = 0 %}{% for i in range(3) %}{{ x }}{% set x = i %}{{ x }};{% endfor %}{{ x }}"),
            "00;01;02;0");
  EXPECT_EQ(render("{% if true %}{% set y = 5 %}{% endif %}{{ y }}"), "5");
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}"),
            "4");
  // A macro sees the template's variables at the time it is called.
  EXPECT_EQ(render("{% macro m(p, q='d') %}{{ p }}{{ q }}{{ z }}{% endmacro %}{% set z = 3 %}{{ m(1) }}{{ m(2, q='e') }}"),
            "1d32e3");
  EXPECT_EQ(render("{% for m in [1, 2, 3] if m > 1 %}{{ loop.index }}/{{ loop.length }}{{ loop.last }} {% endfor %}"),
            "1/2False 2/2True ");
  EXPECT_EQ(render("{% for x in [1, 2, 3, 4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}"
                   "{% endif %}{{ x }}{% endfor %}"),
            "13");
  EXPECT_EQ(render("{% for x in u %}a{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}"), "a=1,b=2,");
  EXPECT_EQ(render("{% set s %}in {{ 1 + 1 }}{% endset %}[{{ s }}]"), "[in 2]");
  EXPECT_EQ(render("{% filter upper %}abc{% endfilter %}"), "ABC");
  EXPECT_EQ(render("{% generation %}kept{% endgeneration %}"), "kept");
}

TEST(Jinja, UndefinedIsJinjasDefault) {
  EXPECT_EQ(render("[{{ u }}]{{ u is defined }}{{ u|length }}[{{ u|trim }}]{{ not u }}"), "[]False0[]True");
  EXPECT_EQ(render("{{ none.x }}|{{ none.x is defined }}|{{ 'abc'['x'] is defined }}|{{ [1, 2][5] }}|"), "|False|False||");
  EXPECT_EQ(render("{{ u ~ 'a' }}"), "a");
  EXPECT_EQ(render("{{ 'x' if false }}|{{ u|default('d') }}|{{ ''|default('d', true) }}"), "|d|d");
  EXPECT_NE(error_of("{{ u.x }}").find("'u' is undefined"), std::string::npos) << error_of("{{ u.x }}");
  EXPECT_NE(error_of("{{ x + 'a' }}").find("'x' is undefined"), std::string::npos);
  // Gemma 3's template reads messages[0]['content'][0]['text']: on a string it is undefined.
  EXPECT_NE(error_of("{{ m['content'][0]['text'] + '\\n' }}", {{"m", Value(Dict{{"content", Value("hi")}})}}),
            "no error");
}

TEST(Jinja, ValuesArePythons) {
  EXPECT_EQ(render("{{ 1.0 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ 10 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} "
                   "{{ 2 ** 10 }} {{ 1e-5 }} {{ 0.0001 }}"),
            "1.0 1e+20 0.30000000000000004 0.3333333333333333 5.0 3 -4 2 1024 1e-05 0.0001");
  EXPECT_EQ(render("{{ [1, 'a', none, true] }} {{ {'a': 1} }} {{ ('x',) }} {{ \"it's\" }}|{{ [\"it's\"] }}"),
            "[1, 'a', None, True] {'a': 1} ('x',) it's|[\"it's\"]");
  EXPECT_EQ(render("{{ {'a': [1, 2], 'b': 'é\"'}|tojson }} {{ {'a': 1}|tojson(indent=2) }}"),
            "{\"a\": [1, 2], \"b\": \"é\\\"\"} {\n  \"a\": 1\n}");
  EXPECT_EQ(render("{{ 'Hello World'.split() }} {{ ' a '.strip() }} {{ 'a,b'.split(',') }} {{ 'abc'[1:] }} "
                   "{{ 'héllo'[1] }} {{ 'héllo'|length }} {{ [1, 2, 3][::-1] }} {{ 'abc'[-2:] }}"),
            "['Hello', 'World'] a ['a', 'b'] bc é 5 [3, 2, 1] bc");
  EXPECT_EQ(render("{{ true }} {{ none }} {{ 3 > 2 }} {{ 1 == 1.0 }} {{ 'a' in 'cat' }} {{ 2 in [1, 2] }} "
                   "{{ 'k' in {'k': 1} }} {{ 'x' not in 'abc' }}"),
            "True None True True True True True True");
  EXPECT_EQ(render("{{ '  x  '|trim }}|{{ 'ab'|upper }}|{{ 'hello world'|title }}|{{ [3, 1, 2]|sort|join(',') }}|"
                   "{{ 'a-b'.replace('-', '+') }}|{{ 'Ab'.startswith(('x', 'A')) }}"),
            "x|AB|Hello World|1,2,3|a+b|True");
  EXPECT_EQ(render("{{ (1,) }} {{ (1, 2,) }} {{ () }} {{ (3) }} {{ dict({'b': 2}, c=3) }} {{ namespace(x=1).x }}"),
            "(1,) (1, 2) () 3 {'b': 2, 'c': 3} 1");
  // Python's equality: a tuple is not a list of the same items (the expectation is jinja2's output)
  EXPECT_EQ(render("{{ (1, 2) == [1, 2] }} {{ (1, 2) == (1, 2) }} {{ [1, 2] in [(1, 2)] }} {{ (1,) != [1] }} "
                   "{{ [(1, 2)] == [[1, 2]] }} {{ (1, 2)|list == [1, 2] }}"),
            "False True False True False True");
  Dict ctx{{"messages", messages("S", "U")}};
  EXPECT_EQ(render("{{ messages|selectattr('role', 'equalto', 'user')|list|length }}"
                   "{{ messages|map(attribute='content')|join('+') }}{{ messages[0].content }}",
                   ctx),
            "1S+US");
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y') }} {{ strftime_now('%Y-%m-%d %A') }}"), "26 Jul 2024 2024-07-26 Friday");
  // int dict keys (Seed-OSS's thinking-budget table: dictsort by number, then the first key >= the
  // budget), dictsort of str keys ignoring case, items as tuples (expectations from jinja2)
  EXPECT_EQ(render("{% set b = {0: 0, 512: 128, 1024: 256, 16384: 1024} %}{% set ns = namespace(i=none) %}"
                   "{% for k, v in b|dictsort %}{% if ns.i is none and 300 <= k %}{% set ns.i = v %}{% endif %}"
                   "{% endfor %}{{ ns.i }} {{ b[16384] }} {{ b }} {{ 512 in b }} {{ '512' in b }} {{ b|tojson }} "
                   "{{ b.keys()|list }} {{ b.get(0) }} {% for k in b %}{{ k + 1 }},{% endfor %} {{ b|length }} "
                   "{{ {'B': 1, 'a': 2, 'c': 3}|dictsort }} {{ {1: 'x', 1: 'y'} }} {{ {'k': 1}.items()|list }}"),
            "128 1024 {0: 0, 512: 128, 1024: 256, 16384: 1024} True False "
            "{\"0\": 0, \"512\": 128, \"1024\": 256, \"16384\": 1024} [0, 512, 1024, 16384] 0 "
            "1,513,1025,16385, 4 [('a', 2), ('B', 1), ('c', 3)] {1: 'y'} [('k', 1)]");
  EXPECT_NE(error_of("{{ {none: 1} }}").find("dict keys must be strings or integers"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a' + 1 }}").find("can only concatenate str"), std::string::npos);
  EXPECT_NE(error_of("{% for x in none %}{% endfor %}").find("not iterable"), std::string::npos);
}

// The chat_template fuzz target's hand-written seed uses every statement and most expressions;
// Python's jinja2 (set up as render_templates.py sets it up) renders it to exactly this.
TEST(Jinja, TheFeatureSeedRendersAsPythonJinja2) {
  std::ifstream in(std::string(ABL_SOURCE_DIR) + "/tests/fuzz/corpus/chat_template/features.jinja");
  const std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(src.empty());
  Dict ctx{{"messages", messages("You are a helpful assistant.", "Héllo {{ x }} 😀")},
           {"bos_token", Value("<s>")},
           {"eos_token", Value("</s>")},
           {"tools", Value::none()},
           {"add_generation_prompt", Value(true)}};
  EXPECT_EQ(render(src, ctx),
            "<s><|SYSTEM|>You are a helpful assistant.</s><|USER|>éllo {{ x }} 😀!</s>system,user|1|{\n  \"a\": [\n"
            "    1,\n    2.5,\n    null,\n    true\n  ]\n}\n4 -4 y cba 3done 26 jul 2024{{ not parsed }}<|assistant|>");
}

TEST(Jinja, ErrorsNameTheTemplateAndLine) {
  try {
    render("line one\n{{ raise_exception('Conversation roles must alternate') }}");
    FAIL();
  } catch (const RaisedError& e) {
    EXPECT_EQ(e.message(), "Conversation roles must alternate");
    EXPECT_NE(std::string(e.what()).find("t:2:"), std::string::npos) << e.what();
  }
  EXPECT_NE(error_of("a\n{% if x %}").find("t:2: missing {% endif %}"), std::string::npos) << error_of("a\n{% if x %}");
  EXPECT_NE(error_of("{% include 'x' %}").find("not supported"), std::string::npos);
  EXPECT_NE(error_of("{{ x|frobnicate }}").find("filter 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of("{{ 'unclosed }}").find("unclosed string"), std::string::npos);
  EXPECT_NE(error_of("{{ [1, 2].append(3) }}").find("cannot be called"), std::string::npos);
}

TEST(Jinja, UntrustedTemplatesAreBounded) {
  EXPECT_NE(error_of("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}")
                .find("too many steps"),
            std::string::npos);
  EXPECT_NE(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").find("recurses too deeply"),
            std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"), std::string::npos);
  EXPECT_NE(error_of("{% set s = 'x' * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}").find("MiB"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(a=0) %}{% set ns.a = ns %}").find("cannot hold a namespace"),
            std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace(x=[]) %}{% for i in range(300) %}{% set ns.x = [ns.x] %}{% endfor %}").find("nested too deeply"),
            std::string::npos)
      << error_of("{% set ns = namespace(x=[]) %}{% for i in range(300) %}{% set ns.x = [ns.x] %}{% endfor %}");
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 9223372036854775807 }}").find("too large"), std::string::npos);
}

// The peer test: the cases render_templates.py wrote (the tokenizer_peer_install test runs it).
TEST(JinjaPeer, GenuineChatTemplatesRenderAsPythonJinja2) {
  const char* env = std::getenv("ABL_CHAT_TEMPLATE_CASES");
  const std::filesystem::path file =
      env ? std::filesystem::path(env)
          : std::filesystem::path(ABL_TOKPEER_NODE_MODULES).parent_path() / "chat-templates" / "expected.jsonl";
  if (!std::filesystem::exists(file)) {
    GTEST_SKIP() << "no reference renders at " << file << " (tests/tokpeer/run.sh --install-only writes them "
                 << "where node, the npm registry and python3-jinja2 are available)";
  }
  std::ifstream in(file);
  std::string line;
  std::map<std::string, std::unique_ptr<Template>> parsed;  // by template text
  int cases = 0, rendered = 0, mismatches = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto c = nlohmann::json::parse(line);
    const std::string name = c["name"];
    ++cases;
    if (c.contains("parse_error")) {
      ADD_FAILURE() << name << ": Python's jinja2 cannot parse it: " << c["parse_error"];
      continue;
    }
    auto& t = parsed[c["template"].get<std::string>()];
    if (!t) {
      try {
        t = std::make_unique<Template>(c["template"].get<std::string>(), name);
      } catch (const TemplateError& e) {
        ADD_FAILURE() << name << ": " << e.what();
        ++mismatches;
        continue;
      }
    }
    Dict ctx{{"messages", messages(c["system"].is_null() ? "" : c["system"].get<std::string>(), c["user"])},
             {"tools", Value::none()},
             {"documents", Value::none()},
             {"add_generation_prompt", Value(true)}};
    if (!c["system"].is_null() && c["system"].get<std::string>().empty()) ADD_FAILURE() << "empty system prompt case";
    for (const char* key : {"bos_token", "eos_token"}) {
      if (!c[key].is_null()) ctx.emplace_back(key, Value(c[key].get<std::string>()));
    }
    std::string ours, err;
    try {
      ours = t->render(Value(std::move(ctx)));
    } catch (const TemplateError& e) {
      err = e.what();
    }
    const std::string what = name + " (system " + c["system"].dump() + ", user " + c["user"].dump() + ")";
    if (c.contains("rendered")) {
      ++rendered;
      if (!err.empty()) {
        ++mismatches;
        ADD_FAILURE() << what << ": jinja2 renders it, we fail: " << err;
      } else if (ours != c["rendered"].get<std::string>()) {
        ++mismatches;
        ADD_FAILURE() << what << ":\n  jinja2: " << c["rendered"].dump() << "\n  ours:   " << nlohmann::json(ours).dump();
      }
    } else if (err.empty()) {
      ++mismatches;
      ADD_FAILURE() << what << ": jinja2 fails (" << c["error"] << "), we render " << nlohmann::json(ours).dump();
    }
  }
  EXPECT_GT(cases, 500);
  std::cout << cases << " cases of " << parsed.size() << " genuine templates: " << rendered
            << " rendered by jinja2, " << mismatches << " differ\n";
}

// What `--chat-template auto` makes of the same genuine templates: a template is accepted when
// jinja2 renders a system and a user turn, or a user turn alone (then the system text joins the
// user turn); refused only when jinja2 renders neither.
TEST(JinjaPeer, GenuineChatTemplatesAreAcceptedAsJinja2AcceptsThem) {
  const char* env = std::getenv("ABL_CHAT_TEMPLATE_CASES");
  const std::filesystem::path file =
      env ? std::filesystem::path(env)
          : std::filesystem::path(ABL_TOKPEER_NODE_MODULES).parent_path() / "chat-templates" / "expected.jsonl";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no reference renders at " << file;
  struct Seen {
    std::string name;
    abl::text::jinja::Dict tokens;
    bool system_ok = false, user_ok = false;
  };
  std::map<std::string, Seen> templates;
  std::ifstream in(file);
  std::string line;
  const std::string first_system = "You are a helpful assistant.", first_user = "How do I bake bread?";
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto c = nlohmann::json::parse(line);
    if (!c.contains("system") || c["user"] != first_user) continue;
    Seen& s = templates[c["template"].get<std::string>()];
    s.name = c["name"];
    s.tokens.clear();
    for (const char* key : {"bos_token", "eos_token"}) {
      if (!c[key].is_null()) s.tokens.emplace_back(key, Value(c[key].get<std::string>()));
    }
    if (c["system"].is_null()) s.user_ok = c.contains("rendered");
    if (c["system"] == first_system) s.system_ok = c.contains("rendered");
  }
  int accepted = 0, merged = 0;
  std::string merged_names;
  for (const auto& [text, s] : templates) {
    try {
      const auto t = abl::text::ChatTemplate::from_jinja(text, s.name, s.tokens);
      ++accepted;
      EXPECT_TRUE(s.system_ok || s.user_ok) << s.name << ": accepted, but jinja2 renders neither conversation";
      EXPECT_EQ(t.refuses_system_role(), !s.system_ok) << s.name << ": " << t.system_refusal();
      if (t.refuses_system_role()) {
        ++merged;
        merged_names += " " + s.name;
      }
    } catch (const abl::Error& e) {
      EXPECT_FALSE(s.system_ok || s.user_ok) << s.name << ": refused, but jinja2 renders it: " << e.what();
    }
  }
  std::cout << accepted << " of " << templates.size() << " genuine templates accepted; the system prompt joins the "
            << "user turn in " << merged << ":" << merged_names << "\n";
}
