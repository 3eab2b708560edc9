// Reference side of the tokenizer peer test: Hugging Face's `tokenizers` (npm) loads a
// tokenizer.json, encodes every case with and without special tokens and decodes the ids
// (skipSpecialTokens false), one JSON line per case. In "decode" mode it decodes the id lists
// that `abliterate tokenize` wrote, so both decoders are compared on the same ids.
//
// usage: node reference.js NODE_MODULES encode TOKENIZER_JSON CASES_JSONL OUT_JSONL
//        node reference.js NODE_MODULES decode TOKENIZER_JSON IDS_JSONL OUT_JSONL
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

function readJsonl(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
}

async function main() {
  const [modules, mode, tokenizerJson, input, output] = process.argv.slice(2);
  if (!output || (mode !== 'encode' && mode !== 'decode')) {
    console.error('usage: node reference.js NODE_MODULES encode|decode TOKENIZER_JSON IN_JSONL OUT_JSONL');
    process.exit(2);
  }
  const { Tokenizer } = createRequire(path.join(path.resolve(modules), 'noop.js'))('tokenizers');
  const tokenizer = Tokenizer.fromFile(tokenizerJson);
  const out = [];
  for (const row of readJsonl(input)) {
    if (mode === 'encode') {
      const plain = (await tokenizer.encode(row.text, null, { addSpecialTokens: false })).getIds();
      const special = (await tokenizer.encode(row.text, null, { addSpecialTokens: true })).getIds();
      out.push({
        id: row.id,
        ids_plain: plain,
        ids_special: special,
        decoded_plain: await tokenizer.decode(plain, false),
        decoded_special: await tokenizer.decode(special, false),
      });
    } else {
      out.push({ decoded: await tokenizer.decode(row.ids, false) });
    }
  }
  fs.writeFileSync(output, out.map((o) => JSON.stringify(o)).join('\n') + (out.length ? '\n' : ''));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
