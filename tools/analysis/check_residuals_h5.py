#!/usr/bin/python3
"""Offline check of a residuals.h5 written by `abliterate residuals` (schema in docs/outputs.md).

Checks the schema attributes, every dataset's shape and dtype, that the prompts are UTF-8
strings, that the values are finite, and that /<set>/mean equals the mean of /<set>/residuals
when the full residuals are stored. Uses Debian's python3-h5py (hence /usr/bin/python3).

    check_residuals_h5.py residuals.h5 [--expect-good N] [--expect-bad N] [--expect-depths N]
        [--expect-hidden N] [--expect-world-size N] [--expect-full | --expect-no-full]

Exit status: 0 all checks passed, 1 a check failed, 2 bad usage, 77 h5py or numpy missing.
"""
import argparse
import datetime
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # ctest reads 77 as "skipped"
    print(f"SKIP: {e} (install python3-h5py)")
    sys.exit(77)

SCHEMA = "abliterate-residuals"
VERSION = 1
STRING_ATTRS = ["model", "architecture", "dtype", "chat_template", "sharding",
                "abliterate_version", "created"]
SETS = ["good", "bad"]


def as_str(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def check(path, args):
    problems = []

    def need(cond, msg):
        if not cond:
            problems.append(msg)
        return cond

    need(not path.endswith(".partial"), "a .partial file is an incomplete write")
    with h5py.File(path, "r") as f:
        a = f.attrs
        need(as_str(a.get("schema")) == SCHEMA, f"attribute schema is {a.get('schema')!r}, not {SCHEMA!r}")
        version = a.get("schema_version")
        need(isinstance(version, np.integer) and version == VERSION,
             f"attribute schema_version is {version!r}, expected {VERSION}")
        for name in STRING_ATTRS:
            need(isinstance(as_str(a.get(name)), str), f"attribute {name} missing or not a string")
        need(isinstance(a.get("world_size"), np.integer) and a["world_size"] >= 1,
             "attribute world_size missing or not a positive integer")
        q = a.get("winsorize_quantile")
        need(isinstance(q, np.floating) and 0 < q <= 1,
             f"attribute winsorize_quantile is {q!r}, expected a float in (0, 1]")
        try:
            datetime.datetime.strptime(as_str(a.get("created", "")), "%Y-%m-%dT%H:%M:%SZ")
        except (TypeError, ValueError):
            problems.append(f"attribute created {a.get('created')!r} is not ISO 8601 UTC")
        if args.expect_world_size is not None:
            need(a.get("world_size") == args.expect_world_size,
                 f"world_size {a.get('world_size')} != expected {args.expect_world_size}")

        mean_shape = f["good/mean"].shape if "good/mean" in f else None
        if not need(mean_shape is not None and len(mean_shape) == 2, "/good/mean missing or not 2-D"):
            return problems
        depths, hidden = mean_shape
        if args.expect_depths is not None:
            need(depths == args.expect_depths, f"depths {depths} != expected {args.expect_depths}")
        if args.expect_hidden is not None:
            need(hidden == args.expect_hidden, f"hidden {hidden} != expected {args.expect_hidden}")

        full = {s: f"{s}/residuals" in f for s in SETS}
        need(full["good"] == full["bad"], "only one set has /<set>/residuals")
        if args.expect_full is not None:
            need(full["good"] == args.expect_full,
                 "full residuals " + ("missing" if args.expect_full else "present") + " unexpectedly")

        for s in SETS:
            expect_n = args.expect_good if s == "good" else args.expect_bad
            present = [need(f"{s}/{name}" in f, f"/{s}/{name} missing")
                       for name in ("n_tokens", "prompts", "mean")]
            if not all(present):
                continue
            tokens = f[f"{s}/n_tokens"]
            n = tokens.shape[0] if tokens.ndim == 1 else -1
            need(tokens.ndim == 1 and tokens.dtype == np.int64, f"/{s}/n_tokens is {tokens.shape} {tokens.dtype}, expected (N,) int64")
            need(n > 0 and (tokens[()] > 0).all(), f"/{s}/n_tokens has non-positive counts")
            if expect_n is not None:
                need(n == expect_n, f"/{s}: {n} prompts, expected {expect_n}")
            prompts = f[f"{s}/prompts"]
            need(h5py.check_string_dtype(prompts.dtype) is not None and prompts.shape == (n,),
                 f"/{s}/prompts is {prompts.shape} {prompts.dtype}, expected ({n},) strings")
            try:
                texts = prompts.asstr()[()]
                need(len(texts) == n, f"/{s}/prompts has {len(texts)} strings")
            except UnicodeDecodeError as e:
                problems.append(f"/{s}/prompts is not UTF-8: {e}")
            mean = f[f"{s}/mean"]
            need(mean.shape == (depths, hidden) and mean.dtype == np.float64,
                 f"/{s}/mean is {mean.shape} {mean.dtype}, expected ({depths}, {hidden}) float64")
            mean = mean[()]
            need(np.isfinite(mean).all(), f"/{s}/mean has non-finite values")
            if not full[s]:
                continue
            res = f[f"{s}/residuals"]
            if not need(res.shape == (n, depths, hidden) and res.dtype == np.float32,
                        f"/{s}/residuals is {res.shape} {res.dtype}, expected ({n}, {depths}, {hidden}) float32"):
                continue
            # Row blocks keep memory bounded on real files (N x (L+1) x H can be gigabytes).
            total = np.zeros((depths, hidden))
            finite = True
            for first in range(0, n, 256):
                block = res[first:first + 256].astype(np.float64)
                finite = finite and np.isfinite(block).all()
                total += block.sum(axis=0)
            need(finite, f"/{s}/residuals has non-finite values")
            recomputed = total / n
            scale = max(1.0, float(np.abs(recomputed).max()))
            err = float(np.abs(recomputed - mean).max())
            need(err <= 1e-6 * scale, f"/{s}/mean differs from the mean of /{s}/residuals by {err:g}")
        summary = (f"{path}: schema {SCHEMA} v{version}, depths {depths}, hidden {hidden}, "
                   f"good {f['good/n_tokens'].shape[0] if 'good/n_tokens' in f else '?'}, "
                   f"bad {f['bad/n_tokens'].shape[0] if 'bad/n_tokens' in f else '?'}, "
                   f"full residuals {'yes' if full['good'] else 'no'}, "
                   f"world_size {a.get('world_size')}, model {as_str(a.get('model'))!r}")
        print(summary)
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--expect-good", type=int)
    p.add_argument("--expect-bad", type=int)
    p.add_argument("--expect-depths", type=int, help="L+1")
    p.add_argument("--expect-hidden", type=int)
    p.add_argument("--expect-world-size", type=int)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--expect-full", dest="expect_full", action="store_true", default=None)
    g.add_argument("--expect-no-full", dest="expect_full", action="store_false")
    args = p.parse_args()
    try:
        problems = check(args.file, args)
    except OSError as e:
        problems = [f"cannot read: {e}"]
    for msg in problems:
        print(f"{args.file}: {msg}", file=sys.stderr)
    print("FAILED" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
