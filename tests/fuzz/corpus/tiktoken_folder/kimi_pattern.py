# Test fixture for abliterate, written by tools/fixtures/make_tiktoken_fixture.py. It stands in
# for the remote code (tokenization_kimi.py) that Kimi-K2 / Moonlight model folders ship, and is
# our own short text, not a copy of it. abliterate never runs it: its tiktoken reader only reads
# pat_str, num_reserved_special_tokens and the "+ 2" of the special-id range out of this file.
import base64
import json
import os


class TikTokenTokenizer:
    vocab_file = "tiktoken.model"

    num_reserved_special_tokens = 16

    pat_str = "|".join(
        [
            r"""[\p{Han}]+""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    )

    def __init__(self, folder):
        with open(os.path.join(folder, self.vocab_file), "rb") as f:
            self.ranks = {base64.b64decode(t): int(r) for t, r in (l.split() for l in f if l.strip())}
        with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
            names = {int(k): v["content"] for k, v in json.load(f)["added_tokens_decoder"].items()}
        num_base_tokens = len(self.ranks)
        self.special_tokens = {}
        for i in range(num_base_tokens, num_base_tokens + self.num_reserved_special_tokens + 2):
            self.special_tokens[names.get(i, f"<|reserved_token_{i}|>")] = i
