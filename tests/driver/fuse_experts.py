#!/usr/bin/env python3
"""Copies an MoE model folder with its experts stacked the way transformers 5 holds them and saves
them with save_original_format=False (conversion_mapping.py): per layer mlp.experts.gate_up_proj
(E, 2*Fm, H), each expert's gate rows then its up rows, and mlp.experts.down_proj (E, H, Fm);
Mixtral's block_sparse_moe.gate becomes mlp.gate. The twin of tests/unit/io/fused_experts_test_util.h
for the driver tests; standard library only.

usage: fuse_experts.py SRC DST              (DST: a new folder; SRC has one model.safetensors)
       fuse_experts.py --stack A B [TOL]    (exit 1 unless folder B's tensors are folder A's, stacked:
                                             bit for bit, or, for the F32 o_proj and down projections
                                             of exports made with other directions, within TOL of
                                             the largest value)
"""
import array
import json
import os
import re
import shutil
import struct
import sys

EXPERT = re.compile(r"(.*layers\.\d+\.)(?:mlp|block_sparse_moe)\.experts\.(\d+)\.(gate_proj|w1|up_proj|w3|down_proj|w2)\.weight$")


def read(folder):
    raw = open(os.path.join(folder, "model.safetensors"), "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", None)
    tensors = []
    for name, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        a, b = v["data_offsets"]
        tensors.append((name, v["dtype"], v["shape"], raw[8 + n + a:8 + n + b]))
    return tensors, meta


def write(folder, tensors, meta):
    header, data = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, blob in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def fused(tensors):
    """The tensors with each layer's experts replaced by its two stacked tensors, in place of the
    layer's first expert tensor."""
    out, layers = [], {}
    for name, dtype, shape, blob in tensors:
        m = EXPERT.match(name)
        if not m:
            out.append((re.sub(r"\.block_sparse_moe\.gate\.weight$", ".mlp.gate.weight", name), dtype, shape, blob))
            continue
        prefix, e, proj = m.group(1), int(m.group(2)), m.group(3)
        if prefix not in layers:
            layers[prefix] = {"at": len(out), "dtype": dtype, "gate": {}, "up": {}, "down": {}}
            out += [None, None]
        kind = {"gate_proj": "gate", "w1": "gate", "up_proj": "up", "w3": "up"}.get(proj, "down")
        layers[prefix][kind][e] = (shape, blob)
    for prefix, layer in layers.items():
        E = len(layer["gate"])
        assert E and len(layer["up"]) == E and len(layer["down"]) == E, f"{prefix}: incomplete experts"
        (fm, h), (hd, fmd) = layer["gate"][0][0], layer["down"][0][0]
        gate_up = b"".join(layer["gate"][e][1] + layer["up"][e][1] for e in range(E))
        down = b"".join(layer["down"][e][1] for e in range(E))
        out[layer["at"]] = (prefix + "mlp.experts.gate_up_proj", layer["dtype"], [E, 2 * fm, h], gate_up)
        out[layer["at"] + 1] = (prefix + "mlp.experts.down_proj", layer["dtype"], [E, hd, fmd], down)
    return out


def main():
    if sys.argv[1] == "--stack":
        want = {t[0]: t[1:] for t in fused(read(sys.argv[2])[0])}
        have = {t[0]: t[1:] for t in read(sys.argv[3])[0]}
        assert want.keys() == have.keys(), f"tensors differ: {sorted(want.keys() ^ have.keys())}"
        tol = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
        bad, close, worst = [], 0, 0.0
        for k in want:
            if want[k] == have[k]:
                continue
            ablatable = k.endswith(("o_proj.weight", "down_proj.weight", ".w2.weight", ".experts.down_proj"))
            if tol == 0 or not ablatable or want[k][:2] != have[k][:2] or want[k][0] != "F32":
                bad.append(k)
                continue
            x, y = array.array("f", want[k][2]), array.array("f", have[k][2])
            err = max(abs(a - b) for a, b in zip(x, y)) / max(1.0, max(abs(a) for a in x))
            worst = max(worst, err)
            close += 1
            if err > tol:
                bad.append(k)
        assert not bad, f"{len(bad)} tensors differ from the stacked ones, e.g. {bad[:3]}"
        print(f"{sys.argv[3]}: all {len(have)} tensors are those of {sys.argv[2]}, experts stacked "
              f"({len(have) - close} bit for bit, {close} ablated ones within {worst:.2g})")
        return
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst)
    for f in os.listdir(src):
        p = os.path.join(src, f)
        if os.path.isfile(p) and not f.endswith(".safetensors") and f != "model.safetensors.index.json":
            shutil.copy(p, dst)
    tensors, meta = read(src)
    out = fused(tensors)
    write(dst, out, meta)
    print(f"{dst}: {len(tensors)} tensors -> {len(out)}, experts stacked")


if __name__ == "__main__":
    main()
