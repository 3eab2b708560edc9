#!/usr/bin/python3
"""Plots of an abliterate run folder (file layouts in docs/outputs.md), written as PNG files.

    plot_run.py RUN_DIR [--out DIR] [--dpi N]

  pareto.png      every trial of trials.h5 (or trials.h5.partial of a sweep still running) as
                  refusals vs KL divergence, coloured by trial index, with the Pareto front and
                  the original model's refusals
  directions.png  per-depth statistics of directions.h5 (/stats/*)
  pca.png         2-D PCA of the good and bad residuals of residuals.h5 at every depth, with the
                  refusal direction of directions.h5; skipped with a note when residuals.h5 holds
                  only the means (written with --no-full-residuals)

The default output folder is RUN_DIR/plots. Each plot is made from its own input files, so a
missing file stops only the plots that need it. Uses Debian's python3-h5py, python3-numpy and
python3-matplotlib (hence /usr/bin/python3; installed by `./scripts/install-deps.sh`).

Exit status: 0 every plot written (pca.png may be skipped for means-only residuals), 1 an input
file missing or unreadable (the other plots are still written), 2 bad usage, 77 a Python module
missing.
"""
import argparse
import json
import math
import os
import sys

# A sweep that is still running holds HDF5's lock on trials.h5.partial; reading it needs the
# lock off, and HDF5 reads this variable when h5py is imported.
os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"

try:
    import h5py
    import numpy as np
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    from matplotlib.lines import Line2D
except ImportError as e:  # ctest reads 77 as "skipped"
    print(f"SKIP: {e} (install python3-h5py python3-matplotlib: ./scripts/install-deps.sh)")
    sys.exit(77)

# The phase that writes each file, for the error when it is missing.
PRODUCERS = {
    "trials.h5": "`abliterate sweep` (or `abliterate run`)",
    "directions.h5": "`abliterate directions` (or `abliterate run`)",
    "residuals.h5": "`abliterate residuals` (or `abliterate run`)",
}
SCHEMAS = {  # file -> (schema attribute, newest version this script reads)
    "trials.h5": ("abliterate-trials", 1),
    "directions.h5": ("abliterate-directions", 1),
    "residuals.h5": ("abliterate-residuals", 1),
}


class InputError(Exception):
    """An input file is missing or not what it should be; the message says which and why."""


class Skipped(Exception):
    """A plot that cannot be made from these (valid) inputs; the message says why."""


def as_str(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def open_run_file(run_dir, name, allow_partial=False, quiet=False):
    """Opens RUN_DIR/name read-only after checking its schema; returns (h5py.File, path)."""
    path = os.path.join(run_dir, name)
    partial = path + ".partial"
    if not os.path.exists(path):
        if allow_partial and os.path.exists(partial):
            path = partial
        elif os.path.exists(partial):
            raise InputError(f"{path} not found, only {partial}: the phase that writes it did not "
                             f"finish ({PRODUCERS[name]}); run it again")
        else:
            raise InputError(f"{path} not found: it is written by {PRODUCERS[name]}")
    elif allow_partial and os.path.exists(partial) and not quiet:
        print(f"note: both {name} and {name}.partial exist; reading {name}")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise InputError(f"{path}: cannot open with h5py: {e}") from e
    schema, newest = SCHEMAS[name]
    got = as_str(f.attrs.get("schema", "(none)"))
    version = f.attrs.get("schema_version")
    if got != schema:
        f.close()
        raise InputError(f"{path}: schema is {got!r}, expected {schema!r}")
    if version is None or int(version) > newest:
        f.close()
        raise InputError(f"{path}: schema_version {version} is newer than this script reads ({newest})")
    return f, path


def short_model(model):
    """The model path for a title: normalized, and only its last two parts when long."""
    if model.startswith("synthetic:"):
        return model
    model = os.path.normpath(model)
    parts = model.split(os.sep)
    return model if len(model) <= 36 or len(parts) <= 2 else os.path.join("…", *parts[-2:])


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def depth_name(d, n_depths):
    if d == 0:
        return "embeddings"
    if d == n_depths - 1:
        return f"layer {d} + final norm"
    return f"layer {d}"


def save(fig, out_dir, name, dpi):
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print(f"wrote {path}")


# --- pareto.png ----------------------------------------------------------------------------

def pareto_front(refusals, kl):
    """Indices of the non-dominated trials (fewer refusals, lower KL), sorted by refusals; of
    trials with equal scores only the first is kept, trials with a NaN score never are (as
    `abliterate report`)."""
    ok = np.flatnonzero(np.isfinite(kl) & np.isfinite(refusals))
    order = ok[np.lexsort((ok, kl[ok], refusals[ok]))]
    front, best_kl = [], math.inf
    for i in order:
        if kl[i] < best_kl:
            front.append(int(i))
            best_kl = kl[i]
    return front


def plot_pareto(run_dir, out_dir, dpi):
    f, path = open_run_file(run_dir, "trials.h5", allow_partial=True)
    with f:
        a = f.attrs
        t = int(a["n_trials"])  # rows beyond it are an unfinished batch
        kl = f["/trials/kl"][:t].astype(float)
        refusals = f["/trials/refusals"][:t].astype(float)
        n_ref = int(a["n_refusal"])
        base = int(a["baseline_refusals"])
        search = as_str(a.get("search", "?"))
        model = as_str(a.get("model", "?"))
        try:
            startup = int(json.loads(as_str(a.get("config_json", "{}"))).get("startup_trials", 0))
        except (ValueError, TypeError):
            startup = 0
    partial = path.endswith(".partial")
    if t == 0:
        raise Skipped(f"{path} holds no complete batch yet")

    idx = np.arange(t)
    finite = np.isfinite(kl) & np.isfinite(refusals)
    front = pareto_front(refusals, kl)
    fig, ax = plt.subplots(figsize=(8.4, 5.4), layout="constrained")

    # KL on a log axis when it spans more than a decade; symlog when some trials have KL 0.
    pos = kl[finite & (kl > 0)]
    if pos.size and pos.max() / pos.min() > 10:
        if np.any(kl[finite] <= 0):
            ax.set_xscale("symlog", linthresh=float(pos.min()))
        else:
            ax.set_xscale("log")

    sc = ax.scatter(kl[finite], refusals[finite], c=idx[finite], cmap="viridis", s=22, alpha=0.85,
                    edgecolors="none", zorder=2, vmin=0, vmax=max(t - 1, 1))
    cb = fig.colorbar(sc, ax=ax, pad=0.01)
    cb.set_label("trial index (search order)")
    cb.ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    if search == "tpe" and 0 < startup < t:
        cb.ax.axhline(startup - 0.5, color="white", lw=1.5)
        cb.ax.text(0.5, (startup - 0.5) / max(t - 1, 1), "← Sobol   TPE →", transform=cb.ax.transAxes,
                   rotation=90, ha="center", va="center", fontsize=7, color="white",
                   bbox=dict(facecolor="black", alpha=0.4, lw=0, pad=1))

    fk, fr = kl[front], refusals[front]
    order = np.argsort(fk, kind="stable")
    fk, fr = fk[order], fr[order]
    front_sorted = [front[i] for i in order]
    xmax = float(np.nanmax(kl[finite])) if finite.any() else 1.0
    ax.plot(np.append(fk, max(xmax, fk[-1])), np.append(fr, fr[-1]), drawstyle="steps-post",
            color="crimson", lw=1.6, zorder=3)
    ax.scatter(fk, fr, s=70, facecolors="none", edgecolors="crimson", linewidths=1.6, zorder=4)
    if len(front_sorted) <= 20:  # trial numbers, as `abliterate report` and `export --trial` use them
        for j, (k, r, i) in enumerate(zip(fk, fr, front_sorted)):
            ax.annotate(f"#{i}", (k, r), xytext=(4, 6 if j % 2 == 0 else -11), textcoords="offset points",
                        fontsize=7, color="crimson", zorder=5)
    ax.axhline(base, color="0.35", ls="--", lw=1.2, zorder=1)

    ax.set_xlabel("KL divergence from the original model (first response token)")
    ax.set_ylabel(f"refusals (of {n_ref} prompts)")
    ax.set_ylim(-0.04 * n_ref, 1.06 * n_ref)
    sec = ax.secondary_yaxis("right", functions=(lambda y: 100.0 * y / n_ref, lambda p: p * n_ref / 100.0))
    sec.set_ylabel("refusal rate (%)")
    ax.grid(True, which="major", alpha=0.3)
    handles = [
        Line2D([], [], marker="o", ls="", color="tab:green", alpha=0.85, label=f"trial ({int(finite.sum())}, colour = index)"),
        Line2D([], [], marker="o", ls="-", color="crimson", mfc="none", mew=1.6,
               label=f"Pareto front ({plural(len(front), 'trial')})"),
        Line2D([], [], ls="--", color="0.35",
               label=f"original model: {base}/{n_ref} = {100.0 * base / n_ref:.0f} % refusals"),
    ]
    if (~finite).any():
        handles.append(Line2D([], [], ls="", label=f"{int((~finite).sum())} trials with NaN scores not shown"))
    ax.legend(handles=handles, loc="center right", fontsize=8, framealpha=0.9)
    status = "\nsweep unfinished: trials.h5.partial, rows up to the last complete batch" if partial else ""
    ax.set_title(f"{short_model(model)}: {plural(t, 'trial')}, search {search}{status}", fontsize=11)
    save(fig, out_dir, "pareto.png", dpi)


# --- directions.png ------------------------------------------------------------------------

def front_direction_depths(run_dir):
    """The depths of the directions that the global-scope Pareto-front trials use (their
    direction_index k interpolates between the outputs of layers k and k+1, i.e. depth k + 1);
    empty when there are no trials."""
    try:
        f, _ = open_run_file(run_dir, "trials.h5", allow_partial=True, quiet=True)
    except InputError:
        return np.array([])
    try:
        with f:
            t = int(f.attrs["n_trials"])
            params = f["/trials/params"][:t]
            kl = f["/trials/kl"][:t].astype(float)
            refusals = f["/trials/refusals"][:t].astype(float)
    except (KeyError, OSError, ValueError):
        return np.array([])  # pareto.png reports what is wrong with the file
    names = params.dtype.names or ()
    if t == 0 or "direction_index" not in names:
        return np.array([])
    front = np.array(pareto_front(refusals, kl), dtype=int)
    if "direction_scope" in names:
        front = front[params["direction_scope"][front] == 0]  # 0 = global, as `abliterate report`
    return params["direction_index"][front] + 1.0


def plot_directions(run_dir, out_dir, dpi):
    f, path = open_run_file(run_dir, "directions.h5")
    with f:
        s = {k: f["/stats/" + k][()].astype(float) for k in
             ("good_norm", "bad_norm", "direction_norm", "cosine_good_bad", "separation")}
        model = as_str(f.attrs.get("model", "?"))
        projected = int(f.attrs.get("projected", 0))
    n = s["good_norm"].shape[0]
    depths = np.arange(n)
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.6), sharex=True, layout="constrained")
    (a_norm, a_rel), (a_cos, a_sep) = axes

    a_norm.plot(depths, s["good_norm"], "o-", color="tab:blue", label="‖mean good‖ (harmless)")
    a_norm.plot(depths, s["bad_norm"], "s-", color="tab:red", label="‖mean bad‖ (harmful)")
    a_norm.plot(depths, s["direction_norm"], "^-", color="black", label="‖mean bad − mean good‖")
    a_norm.set_ylabel("norm")
    a_norm.set_title("class means and their difference")
    a_norm.legend(fontsize=8)

    scale = 0.5 * (s["good_norm"] + s["bad_norm"])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, s["direction_norm"] / scale, np.nan)
    a_rel.plot(depths, rel, "^-", color="black")
    a_rel.set_ylabel("‖bad − good‖ / mean norm")
    a_rel.set_title("difference relative to the activations")

    a_cos.plot(depths, s["cosine_good_bad"], "o-", color="tab:purple")
    a_cos.set_ylabel("cosine")
    a_cos.set_title("cosine(mean good, mean bad)")

    sep = s["separation"]
    a_sep.set_title("prompts' separation along the direction")
    a_sep.set_ylabel("Cohen's d")
    if np.isfinite(sep).any():
        a_sep.plot(depths, sep, "o-", color="tab:green")
        best = int(np.nanargmax(sep))
        for a in axes.flat:
            a.axvline(best, color="tab:green", alpha=0.35, lw=4, zorder=0)
        a_sep.annotate(f"best: depth {best}, d = {sep[best]:.2f}", (best, sep[best]), xytext=(-10, -14),
                       textcoords="offset points", ha="right", fontsize=8, color="tab:green")
        if np.isnan(sep).any():
            a_sep.text(0.02, 0.95, "NaN where the direction is zero", transform=a_sep.transAxes,
                       fontsize=7, va="top", color="0.4")
    else:
        a_sep.text(0.5, 0.5, "not available: residuals.h5 holds only the means\n"
                   "(written with --no-full-residuals), so the per-prompt\n"
                   "projections were not computed",
                   transform=a_sep.transAxes, ha="center", va="center", fontsize=9, color="0.3")
        a_sep.set_yticks([])

    rug = front_direction_depths(run_dir)
    if rug.size:
        a_sep.plot(rug, np.zeros_like(rug), "|", color="crimson", ms=14, mew=2, transform=a_sep.get_xaxis_transform(),
                   clip_on=False, label="Pareto-front trials (global scope):\ndirection_index + 1")
        a_sep.legend(fontsize=7, loc="center right")

    step = max(1, int(math.ceil(n / 12)))
    for a in axes.flat:
        a.grid(True, alpha=0.3)
        a.set_xticks(depths[::step])
    fig.supxlabel(f"depth (0 = embeddings, i = output of layer i, {n - 1} = last layer after the final norm)",
                  fontsize=10)
    kind = "projected against the good mean" if projected else "plain difference of means"
    fig.suptitle(f"{short_model(model)}: refusal directions per depth ({kind})")
    save(fig, out_dir, "directions.png", dpi)


# --- pca.png -------------------------------------------------------------------------------

def plot_pca(run_dir, out_dir, dpi, max_points=1500):
    f, path = open_run_file(run_dir, "residuals.h5")
    with f:
        if "residuals" not in f["good"] or "residuals" not in f["bad"]:
            raise Skipped(f"{path} holds only the class means (written with --no-full-residuals); "
                          "run `abliterate residuals` without it for the PCA plot")
        good_ds, bad_ds = f["good/residuals"], f["bad/residuals"]
        n_good, n_depths, hidden = good_ds.shape
        n_bad = bad_ds.shape[0]
        model = as_str(f.attrs.get("model", "?"))
        directions = None
        try:
            df, _ = open_run_file(run_dir, "directions.h5")
            with df:
                directions = df["/directions"][()]
            if directions.shape != (n_depths, hidden):
                print(f"note: directions.h5 has shape {directions.shape}, residuals {n_depths}x{hidden}; "
                      "no direction arrows")
                directions = None
        except InputError as e:
            print(f"note: no direction arrows in pca.png: {e}")

        rng = np.random.default_rng(0)
        pick_g = np.sort(rng.choice(n_good, min(n_good, max_points), replace=False))
        pick_b = np.sort(rng.choice(n_bad, min(n_bad, max_points), replace=False))
        panels, skipped = [], []
        for d in range(n_depths):
            g = good_ds[:, d, :].astype(np.float64)
            b = bad_ds[:, d, :].astype(np.float64)
            x = np.concatenate([g, b])
            centre = x.mean(axis=0)
            xc = x - centre
            scale = max(float(np.abs(x).max()), 1e-30)
            if float(np.abs(xc).max()) <= 1e-6 * scale:
                skipped.append(d)  # every prompt has the same residual here (e.g. the embedding of
                continue           # the template's last token): nothing to project
            _, sv, vt = np.linalg.svd(xc, full_matrices=False)
            var = sv ** 2
            explained = var[:2] / var.sum()
            basis = vt[:2]  # (2, H)
            if basis.shape[0] < 2:
                skipped.append(d)
                continue
            # Orient the axes so that the bad centroid lies at positive PC1 (and PC2).
            gap = b.mean(axis=0) - g.mean(axis=0)
            signs = np.where(basis @ gap < 0, -1.0, 1.0)
            basis = basis * signs[:, None]
            pg, pb = (g - centre) @ basis.T, (b - centre) @ basis.T
            arrow = None
            if directions is not None and np.linalg.norm(directions[d]) > 0:
                r = directions[d] / np.linalg.norm(directions[d])
                in_plane = basis @ r
                arrow = (pg.mean(axis=0), in_plane * float(gap @ r), float(np.linalg.norm(in_plane)))
            panels.append((d, pg[pick_g], pb[pick_b], pg.mean(axis=0), pb.mean(axis=0), explained, arrow))

    if not panels:
        raise Skipped(f"{path}: every depth has identical residuals for all prompts")
    ncols = min(4, len(panels))
    nrows = int(math.ceil(len(panels) / ncols))
    height = 3.3 * nrows + 1.0
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, height), squeeze=False)
    for ax, (d, pg, pb, cg, cb, explained, arrow) in zip(axes.flat, panels):
        ax.scatter(pg[:, 0], pg[:, 1], s=7, alpha=0.45, color="tab:blue", edgecolors="none")
        ax.scatter(pb[:, 0], pb[:, 1], s=7, alpha=0.45, color="tab:red", edgecolors="none")
        ax.scatter(*cg, marker="+", s=90, color="black", linewidths=1.3, zorder=3)
        ax.scatter(*cb, marker="+", s=90, color="black", linewidths=1.3, zorder=3)
        title = f"depth {d}: {depth_name(d, n_depths)}"
        if arrow is not None:
            start, vec, share = arrow
            ax.annotate("", xy=start + vec, xytext=start, zorder=4,
                        arrowprops=dict(arrowstyle="-|>", color="black", lw=1.6, mutation_scale=12))
            title += f"\nr: {100 * share:.0f} % in this plane"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"PC1 ({100 * explained[0]:.0f} % var.)", fontsize=8)
        ax.set_ylabel(f"PC2 ({100 * explained[1]:.0f} % var.)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(True, alpha=0.25)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles = [
        Line2D([], [], marker="o", ls="", color="tab:blue", label=f"good (harmless), {n_good} prompts"),
        Line2D([], [], marker="o", ls="", color="tab:red", label=f"bad (harmful), {n_bad} prompts"),
        Line2D([], [], marker="+", ls="", color="black", markersize=9, label="class means"),
    ]
    if directions is not None:
        handles.append(Line2D([], [], color="black", marker=">", label="refusal direction r (directions.h5), "
                              "from the good mean, length = gap of the means along r"))
    fig.legend(handles=handles, loc="lower center", ncols=2, fontsize=8, frameon=False)
    note = f"; depth {', '.join(map(str, skipped))} skipped (the same residual for every prompt)" if skipped else ""
    fig.suptitle(f"{short_model(model)}: PCA of the residuals at the last prompt token, per depth{note}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.55 / height, 1, 1))
    save(fig, out_dir, "pca.png", dpi)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("run_dir", metavar="RUN_DIR", help="run folder (the --out of abliterate run/sweep)")
    p.add_argument("--out", metavar="DIR", help="output folder (default RUN_DIR/plots)")
    p.add_argument("--dpi", type=int, default=90, help="resolution of the PNG files (default 90)")
    args = p.parse_args()
    if not os.path.isdir(args.run_dir):
        p.error(f"{args.run_dir}: not a folder")
    out_dir = args.out or os.path.join(args.run_dir, "plots")
    os.makedirs(out_dir, exist_ok=True)

    failed = 0
    for name, plot in (("pareto.png", plot_pareto), ("directions.png", plot_directions), ("pca.png", plot_pca)):
        try:
            plot(args.run_dir, out_dir, args.dpi)
        except Skipped as e:
            print(f"note: {name} skipped: {e}")
        except InputError as e:
            print(f"error: {name} not written: {e}", file=sys.stderr)
            failed += 1
        except (KeyError, OSError, ValueError) as e:
            print(f"error: {name} not written: {args.run_dir}: unexpected file contents: {e!r}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
