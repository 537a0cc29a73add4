# SPDX-License-Identifier: MIT
"""canopy.kde against scikit-learn's KernelDensity.score_samples (skipped without
scikit-learn) and against a NumPy brute force; the tolerance bound on every query;
bad input raises."""
import math

import numpy as np
import pytest

import canopy

KERNELS = ["gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"]
TOLS = [(0.0, 0.0), (0.0, 1e-4), (1e-3, 1e-2)]


def brute(x, q, h, kernel):
    """float64 densities from float32 squared distances, as canopy computes them."""
    d2 = ((q[:, None, :] - x[None, :, :]) ** 2).sum(-1, dtype=np.float32).astype(np.float64)
    u = np.sqrt(d2) / h
    k = {"gaussian": np.exp(-0.5 * u * u), "tophat": (u < 1) * 1.0,
         "epanechnikov": np.where(u < 1, 1 - u * u, 0.0), "exponential": np.exp(-u),
         "linear": np.where(u < 1, 1 - u, 0.0),
         "cosine": np.where(u < 1, np.cos(0.5 * np.pi * u), 0.0)}[kernel]
    d = x.shape[1]
    if kernel == "gaussian":
        norm = (2 * np.pi) ** (-d / 2)
    else:  # 1 / integral over R^d of k(|y|), radially, by the midpoint rule
        r = (np.arange(200000) + 0.5) / 200000
        kr = {"tophat": np.ones_like(r), "epanechnikov": 1 - r * r, "exponential": None,
              "linear": 1 - r, "cosine": np.cos(0.5 * np.pi * r)}[kernel]
        surface = 2 * np.pi ** (d / 2) / math.gamma(d / 2)
        integral = math.gamma(d) if kernel == "exponential" else np.sum(kr * r ** (d - 1)) / r.size
        norm = 1 / (surface * integral)
    with np.errstate(divide="ignore"):  # log(0) = -inf where no kernel reaches
        return np.log(k.sum(1) * norm / h ** d / x.shape[0])


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("tol", TOLS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_bound_against_brute_force(kernel, tol, d):
    rng = np.random.default_rng(d * 100 + KERNELS.index(kernel))
    x = rng.random((700, d)).astype(np.float32)
    q = rng.random((150, d)).astype(np.float32)
    got = canopy.kde(x, q, bandwidth=0.15, kernel=kernel, atol=tol[0], rtol=tol[1])
    want = brute(x, q, 0.15, kernel)
    assert got.shape == (150,) and got.dtype == np.float64
    p, pg = np.exp(want), np.exp(got)
    # the bound, plus the midpoint rule's error in the brute force's norm
    assert np.all(np.abs(pg - p) <= tol[0] + tol[1] * p + 1e-7 * p)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("tol", TOLS)
def test_matches_sklearn(kernel, tol):
    sk = pytest.importorskip("sklearn.neighbors")
    rng = np.random.default_rng(7)
    x = rng.random((2000, 3)).astype(np.float32)
    q = rng.random((400, 3)).astype(np.float32)
    got = canopy.kde(x, q, bandwidth=0.2, kernel=kernel, atol=tol[0], rtol=tol[1])
    kd = sk.KernelDensity(bandwidth=0.2, kernel=kernel, atol=tol[0], rtol=tol[1])
    want = kd.fit(x.astype(np.float64)).score_samples(q.astype(np.float64))
    p, pg = np.exp(want), np.exp(got)
    # each within the tolerance of the exact density, so within twice of each other;
    # 1e-6: float32 (canopy) against float64 (scikit-learn) distances
    assert np.all(np.abs(pg - p) <= 2 * (tol[0] + tol[1] * p) + 1e-6 * p)


def test_queries_default_to_data_and_zero_density():
    x = np.array([[0.0], [1.0]])
    np.testing.assert_array_equal(canopy.kde(x, bandwidth=1, kernel="tophat"),
                                  [math.log(0.25), math.log(0.25)])
    assert canopy.kde(x, [[5.0]], bandwidth=1, kernel="tophat")[0] == -np.inf


def test_bad_input_raises():
    x = np.random.default_rng(0).random((50, 3))
    with pytest.raises(ValueError, match="bandwidth"):
        canopy.kde(x, bandwidth=0)
    with pytest.raises(ValueError, match="unknown kernel"):
        canopy.kde(x, bandwidth=1, kernel="box")
    with pytest.raises(ValueError, match="columns"):
        canopy.kde(x, x[:, :2], bandwidth=1)
    with pytest.raises(ValueError, match="NaN|finite"):
        canopy.kde(np.array([[0.0, np.nan]]), bandwidth=1)
    with pytest.raises(ValueError, match="rtol"):
        canopy.kde(x, bandwidth=1, rtol=-1)
    with pytest.raises(ValueError, match="backend"):
        canopy.kde(x, bandwidth=1, backend="tpu")
    with pytest.raises(ValueError, match="no points"):
        canopy.kde(np.empty((0, 3)), x, bandwidth=1)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "cosine"])
@pytest.mark.parametrize("tol", TOLS)
def test_on_an_index_tree(kernel, tol):
    rng = np.random.default_rng(11 + KERNELS.index(kernel))
    x = rng.random((900, 3)).astype(np.float32)
    q = rng.random((200, 3)).astype(np.float32)
    ix = canopy.Index(x, leaf_size=int(rng.integers(1, 40)))
    for queries, ref in ((q, q), (None, x)):
        got = canopy.kde(ix, queries, bandwidth=0.12, kernel=kernel, atol=tol[0], rtol=tol[1])
        p, pg = np.exp(brute(x, ref, 0.12, kernel)), np.exp(got)
        assert got.shape == (ref.shape[0],)
        assert np.all(np.abs(pg - p) <= tol[0] + tol[1] * p + 1e-7 * p)
    with pytest.raises(ValueError, match="columns"):
        canopy.kde(ix, q[:, :2], bandwidth=1)
    with pytest.raises(ValueError, match="cannot answer"):
        canopy.kde(canopy.Index(x, tree="ball"), q, bandwidth=1)


def test_gpu_backend_same_bound_or_refused():
    rng = np.random.default_rng(3)
    x = rng.random((3000, 3)).astype(np.float32)
    q = rng.random((500, 3)).astype(np.float32)
    try:
        got = canopy.kde(x, q, bandwidth=0.1, rtol=1e-4, backend="gpu")
    except canopy.CanopyError as e:  # no CUDA module or no usable GPU here
        assert "kde: " in str(e)
        return
    p = np.exp(brute(x, q, 0.1, "gaussian"))
    assert np.all(np.abs(np.exp(got) - p) <= 1e-4 * p + 1e-7 * p)
