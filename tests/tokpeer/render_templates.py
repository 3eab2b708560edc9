#!/usr/bin/env python3
"""Reference side of the chat-template peer test: renders every template of templates.js's list
with Python's jinja2 set up as transformers sets it up for apply_chat_template (a sandbox that
forbids changing values, trim_blocks and lstrip_blocks, loop controls, a {% generation %} tag
that renders its body, its own tojson, raise_exception and strftime_now), for a few
conversations of one optional system turn and one user turn with the generation prompt.
strftime_now formats the fixed day our renderer uses, so that renders do not depend on the date.

One JSON line per (template, conversation): the inputs and either "rendered" or "error" (the
template raised or failed). The C++ side (tests/unit/text/test_jinja.cpp) renders the same and
compares.

usage: python3 render_templates.py TEMPLATES_JSONL OUT_JSONL
"""
import datetime
import json
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

DATE = datetime.date(2024, 7, 26)  # Template::render's default date

SYSTEMS = ["You are a helpful assistant.", None, "  Be terse.\n\n", "Réponds en français — “toujours”."]
USERS = [
    "How do I bake bread?",
    "  Héllo — 日本語 😀\n\tsecond line  ",
    "{{ not a tag }} {% neither %} <|im_end|> [INST] </s> 'quotes' \"double\" \\backslash",
    "",
]
# Every system with the first user, and every user without a system and with the first system.
CONVERSATIONS = [(s, USERS[0]) for s in SYSTEMS] + [(None, u) for u in USERS[1:]] + \
                [(SYSTEMS[0], u) for u in USERS[1:]]


class GenerationTag(Extension):
    """transformers' {% generation %}...{% endgeneration %} (assistant masks): only its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return DATE.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: render_templates.py TEMPLATES_JSONL OUT_JSONL")
    env = environment()
    rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    out = []
    for row in rows:
        try:
            template = env.from_string(row["template"])
        except jinja2.exceptions.TemplateError as e:
            out.append({"name": row["name"], "template": row["template"], "parse_error": str(e)})
            continue
        for system, user in CONVERSATIONS:
            messages = ([{"role": "system", "content": system}] if system is not None else []) + \
                       [{"role": "user", "content": user}]
            case = {"name": row["name"], "template": row["template"], "bos_token": row["bos_token"],
                    "eos_token": row["eos_token"], "system": system, "user": user}
            kwargs = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": True}
            for key in ("bos_token", "eos_token"):
                if row[key] is not None:
                    kwargs[key] = row[key]
            try:
                case["rendered"] = template.render(**kwargs)
            except Exception as e:  # what the template raised, or how it failed
                case["error"] = f"{type(e).__name__}: {e}"
            out.append(case)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        for case in out:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    rendered = sum("rendered" in c for c in out)
    print(f"{len(rows)} templates, {len(out)} cases: {rendered} rendered by jinja2 {jinja2.__version__}, "
          f"{len(out) - rendered} raised or failed")


if __name__ == "__main__":
    main()
