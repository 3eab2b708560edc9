"""Byte-level BPE in the Qwen2 / Llama 3 style: learning merges, encoding exactly as Hugging Face
`tokenizers` does for the files written here, decoding, and the tokenizer.json writer.

The file layout (NFC normalizer, regex Split + ByteLevel pre-tokenizer, ByteLevel decoder) and the
byte alphabet are those of tools/fixtures/make_tiny_tokenizer.py, imported from there. The encoder
here is exact only for ASCII text without control characters other than '\n' (everything this
project feeds it); it refuses anything else rather than guess, because Python's `re` has no \\p{L}.
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from make_tiny_tokenizer import SPLIT_PATTERN, byte_level_bpe_json, bytes_to_unicode  # noqa: E402

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# SPLIT_PATTERN with \p{L} -> [A-Za-z] and \p{N} -> [0-9]: identical matches on the ASCII texts
# accepted by `check_ascii` (for those, \s is exactly [ \t\n\r\x0b\x0c] in both engines).
_ASCII_SPLIT = re.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]"
                          r"| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def check_ascii(text):
    for ch in text:
        o = ord(ch)
        if o > 126 or (o < 32 and ch != "\n"):
            raise ValueError("the python BPE encoder only handles printable ASCII and '\\n': %r" % text)


def pre_tokenize(text):
    check_ascii(text)
    pieces = _ASCII_SPLIT.findall(text)
    assert "".join(pieces) == text, text
    return pieces


class ByteLevelBPE:
    def __init__(self, merges, specials=SPECIAL_TOKENS):
        order, chars = bytes_to_unicode()
        self.byte_char = {b: chars[k] for k, b in enumerate(order)}
        self.char_byte = {c: b for b, c in self.byte_char.items()}
        self.vocab = {c: k for k, c in enumerate(chars)}
        self.merges = [tuple(m) for m in merges]
        for a, b in self.merges:
            if a + b not in self.vocab:
                self.vocab[a + b] = len(self.vocab)
        self.num_model_tokens = len(self.vocab)
        self.specials = {}
        for s in specials:
            self.specials[s] = len(self.vocab) + len(self.specials)
        self.rank = {m: i for i, m in enumerate(self.merges)}
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        for s, i in self.specials.items():
            self.id_to_token[i] = s
        self.vocab_size = self.num_model_tokens + len(self.specials)
        self._cache = {}
        self._special_re = re.compile("|".join(re.escape(s) for s in
                                               sorted(self.specials, key=len, reverse=True)))

    # -- encoding ------------------------------------------------------------------------------
    def _bpe(self, piece):
        if piece in self._cache:
            return self._cache[piece]
        word = [self.byte_char[b] for b in piece.encode("utf-8")]
        while len(word) > 1:
            best, best_rank = None, None
            for i in range(len(word) - 1):
                r = self.rank.get((word[i], word[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            a, b = word[best], word[best + 1]
            out, i = [], 0
            while i < len(word):  # all occurrences of the best pair, left to right
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        ids = [self.vocab[t] for t in word]
        self._cache[piece] = ids
        return ids

    def encode(self, text):
        """Ids of `text` with special tokens matched first (no BOS/EOS added)."""
        ids, pos = [], 0
        for m in self._special_re.finditer(text):
            ids += self._encode_plain(text[pos:m.start()])
            ids.append(self.specials[m.group(0)])
            pos = m.end()
        ids += self._encode_plain(text[pos:])
        return ids

    def _encode_plain(self, text):
        ids = []
        for piece in pre_tokenize(text) if text else []:
            ids += self._bpe(piece)
        return ids

    # -- decoding ------------------------------------------------------------------------------
    def decode(self, ids, skip_special_tokens=True):
        out, buf = [], []
        for i in ids:
            tok = self.id_to_token[int(i)]
            if tok in self.specials:
                out.append(bytes(buf).decode("utf-8", errors="replace"))
                buf = []
                if not skip_special_tokens:
                    out.append(tok)
            else:
                buf += [self.char_byte[c] for c in tok]
        out.append(bytes(buf).decode("utf-8", errors="replace"))
        return "".join(out)

    # -- files ---------------------------------------------------------------------------------
    def tokenizer_json(self):
        added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s, i in self.specials.items()]
        vocab = {t: i for t, i in sorted(self.vocab.items(), key=lambda kv: kv[1])}
        return byte_level_bpe_json(added, vocab, self.merges)

    def tokenizer_config_json(self, system_prompt):
        return {
            "add_bos_token": False,
            "add_prefix_space": False,
            "added_tokens_decoder": {str(i): {"content": s, "lstrip": False, "normalized": False,
                                              "rstrip": False, "single_word": False, "special": True}
                                     for s, i in self.specials.items()},
            "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
            "bos_token": None,
            "chat_template": chatml_template(system_prompt),
            "clean_up_tokenization_spaces": False,
            "eos_token": "<|im_end|>",
            "errors": "replace",
            "model_max_length": 2048,
            "pad_token": "<|endoftext|>",
            "split_special_tokens": False,
            "tokenizer_class": "Qwen2Tokenizer",
            "unk_token": None,
        }

    def write(self, folder, system_prompt):
        for name, obj in (("tokenizer.json", self.tokenizer_json()),
                          ("tokenizer_config.json", self.tokenizer_config_json(system_prompt))):
            with open(os.path.join(folder, name), "w", encoding="utf-8", newline="\n") as f:
                json.dump(obj, f, ensure_ascii=False, indent=2)
                f.write("\n")


def chatml_template(system_prompt):
    """Plain ChatML (Qwen2.5 style without tools) with `system_prompt` as the default system turn."""
    return (
        "{%- if messages[0]['role'] == 'system' %}\n"
        "    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
        "    {%- set loop_messages = messages[1:] %}\n"
        "{%- else %}\n"
        "    {{- '<|im_start|>system\\n" + system_prompt + "<|im_end|>\\n' }}\n"
        "    {%- set loop_messages = messages %}\n"
        "{%- endif %}\n"
        "{%- for message in loop_messages %}\n"
        "    {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|im_start|>assistant\\n' }}\n"
        "{%- endif %}\n"
    )


def learn_merges(texts, num_merges):
    """Classic BPE training on the pre-tokens of `texts` (special tokens cut out first): the most
    frequent adjacent pair wins, ties broken by the smaller pair, until `num_merges` merges or no
    pair is left. Deterministic."""
    order, chars = bytes_to_unicode()
    byte_char = {b: chars[k] for k, b in enumerate(order)}
    special_re = re.compile("|".join(re.escape(s) for s in SPECIAL_TOKENS))
    counts = collections.Counter()
    for text in texts:
        for seg in special_re.split(text):
            if seg:
                for piece in pre_tokenize(seg):
                    counts[piece] += 1
    words = [[byte_char[b] for b in piece.encode("utf-8")] for piece in sorted(counts)]
    freq = [counts[piece] for piece in sorted(counts)]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for wi, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freq[wi]
            where[(a, b)].add(wi)
    merges = []
    while len(merges) < num_merges:
        live = [(c, p) for p, c in pair_count.items() if c > 0]
        if not live:
            break
        best = min(live, key=lambda cp: (-cp[0], cp[1]))[1]
        merges.append(best)
        a, b = best
        for wi in sorted(where[best]):
            w = words[wi]
            for x, y in zip(w, w[1:]):
                pair_count[(x, y)] -= freq[wi]
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += freq[wi]
                where[(x, y)].add(wi)
        del pair_count[best]
    return merges
