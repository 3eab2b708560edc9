"""Writes tests/fixtures/fp8/e4m3_table.json: the value of every float8_e4m3fn code, entry i the value of
the byte i (what float(torch.tensor([i], dtype=torch.uint8).view(torch.float8_e4m3fn).float()) gives on a
torch with float8), as a JSON list of 256 numbers written exactly (Python's float repr), NaN (codes 0x7F
and 0xFF) as null. The values come from reference.fp8_e4m3_values (the format's definition: sign, 4
exponent bits with bias 7, 3 mantissa bits, subnormals m * 2^-9, no infinities), because the Debian torch
this runs on (1.13) has no float8 dtype; check_reference.py compares the file with a bit-field decoding of
its own and the format's known values. Used by the C++ unit test of fp8_e4m3_value.

Run: /usr/bin/python3 tools/organism/fp8_table.py
"""
import json
import math
import os

import reference as ref

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "tests", "fixtures", "fp8", "e4m3_table.json")


def main():
    values = [None if math.isnan(v) else v for v in ref.fp8_e4m3_values()]
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    with open(PATH, "w", encoding="utf-8", newline="\n") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(v) for v in values) + "\n]\n")
    print("wrote %s (%d entries)" % (PATH, len(values)))


if __name__ == "__main__":
    main()
