#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Accuracy of Barnes-Hut accelerations against a float64 direct sum on a random
subset of bodies (torch on the GPU when present, numpy otherwise): per-body relative
error |a - a_ref| / |a_ref| (median, p99) and the global rms
sqrt(sum |a - a_ref|^2 / sum |a_ref|^2). Equal masses 1/n, G = 1, Plummer softening."""
import argparse

import numpy as np

import bench_meta


def direct(pos, idx, eps):
    try:
        import torch
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        p = torch.from_numpy(pos.astype(np.float64)).to(dev)
        m = 1.0 / p.shape[0]
        out = []
        for s in range(0, len(idx), 256):
            q = p[torch.from_numpy(idx[s:s + 256]).to(dev)]
            d = p[None, :, :] - q[:, None, :]
            r2 = (d * d).sum(-1) + eps * eps
            inv = torch.where(r2 > eps * eps, r2.rsqrt() ** 3, torch.zeros_like(r2))
            out.append((m * inv[..., None] * d).sum(1).cpu().numpy())
        return np.concatenate(out)
    except ImportError:
        p = pos.astype(np.float64)
        out = np.zeros((len(idx), 3))
        for j, i in enumerate(idx):
            d = p - p[i]
            r2 = (d * d).sum(1) + eps * eps
            r2[i] = np.inf
            out[j] = (d / r2[:, None] ** 1.5).sum(0) / len(p)
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", required=True)
    ap.add_argument("--acc", required=True)
    ap.add_argument("--softening", type=float, default=0.05)
    ap.add_argument("--sample", type=int, default=10000)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    pos = np.load(a.bodies)[:, :3]
    acc = np.load(a.acc).astype(np.float64)
    idx = np.random.default_rng(12345).choice(len(pos), min(a.sample, len(pos)), replace=False)
    ref = direct(pos, idx, a.softening)
    err = np.linalg.norm(acc[idx] - ref, axis=1) / np.linalg.norm(ref, axis=1)
    rms = np.sqrt(((acc[idx] - ref) ** 2).sum() / (ref ** 2).sum())
    print(bench_meta.json_line({"label": a.label, "median_rel": float(np.median(err)),
                                "p99_rel": float(np.percentile(err, 99)), "rms": float(rms)}),
          flush=True)


if __name__ == "__main__":
    main()
