# SPDX-License-Identifier: MIT
"""The Python package against brute-force NumPy, scipy's cKDTree and the predictions
XGBoost/LightGBM made for the shipped models; bad input must raise, never crash."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import canopy

FOREST = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "forest")
SEEDS = [1, 2, 3]


def brute_knn(ref, q, k):
    d2 = ((q[:, None, :].astype(np.float64) - ref[None, :, :]) ** 2).sum(-1)
    order = np.argsort(d2, axis=1, kind="stable")[:, :k]
    return np.sqrt(np.take_along_axis(d2, order, 1)), order


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tree", ["kd", "ball", "vp"])
@pytest.mark.parametrize("d", [1, 3, 7])
def test_query_matches_brute_force(seed, tree, d):
    rng = np.random.default_rng(seed)
    ref = rng.random((500, d)).astype(np.float32)
    q = rng.random((60, d)).astype(np.float32)
    dist, idx = canopy.Index(ref, tree=tree).query(q, k=5)
    bd, bi = brute_knn(ref, q, 5)
    assert dist.shape == (60, 5) and idx.dtype == np.int64
    np.testing.assert_allclose(dist, bd, rtol=1e-5, atol=1e-6)
    # Indices may differ only where distances tie.
    same = idx == bi
    np.testing.assert_allclose(dist[~same], bd[~same], rtol=1e-5, atol=1e-6)
    assert same.mean() > 0.99


def test_query_like_ckdtree_shapes_and_values():
    spatial = pytest.importorskip("scipy.spatial")
    rng = np.random.default_rng(7)
    ref = rng.random((2000, 3))
    q = rng.random((100, 3))
    ix = canopy.Index(ref)
    kt = spatial.cKDTree(ref.astype(np.float32))
    for k in (1, 4):
        d, i = ix.query(q, k=k)
        kd, ki = kt.query(q.astype(np.float32), k=k)
        assert d.shape == kd.shape and i.shape == ki.shape
        np.testing.assert_allclose(d, kd, rtol=1e-5, atol=1e-6)
        assert (i == ki).mean() > 0.99
    d, i = ix.query(q[0], k=3)  # one 1-D point
    assert d.shape == (3,) and i.shape == (3,)
    d, i = ix.query(q[0])
    assert np.ndim(d) == 0 and np.ndim(i) == 0
    assert ix.count_neighbors(canopy.Index(q), 0.2) == kt.count_neighbors(
        spatial.cKDTree(q.astype(np.float32)), 0.2)


def test_duplicates_k_larger_than_n_and_empty_queries():
    ref = np.zeros((3, 2))
    d, i = canopy.Index(ref).query(np.zeros((2, 2)), k=5)
    assert (i[:, :3] >= 0).all() and (i[:, 3:] == 3).all()  # cKDTree's missing index: n
    assert (d[:, :3] == 0).all() and np.isinf(d[:, 3:]).all()
    d, i = canopy.Index(ref).query(np.empty((0, 2)), k=2)
    assert d.shape == (0, 2) and i.shape == (0, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_query_radius_and_count_neighbors(seed):
    rng = np.random.default_rng(seed)
    ref = rng.random((400, 2))
    q = rng.random((50, 2))
    r = 0.1
    ix = canopy.Index(ref, tree="ball")
    d = np.sqrt(((q[:, None, :].astype(np.float32) - ref[None].astype(np.float32)) ** 2).sum(-1))
    want = [np.flatnonzero(row <= r) for row in d]
    counts = ix.query_radius(q, r, count_only=True)
    np.testing.assert_array_equal(counts, [len(w) for w in want])
    ind, dist = ix.query_radius(q, r, return_distance=True)
    for got, gd, w in zip(ind, dist, want):
        assert sorted(got) == sorted(w)
        assert (np.diff(gd) >= 0).all() and (gd <= r + 1e-6).all()
    assert ix.count_neighbors(q, r) == sum(len(w) for w in want)
    radii = np.array([0.0, 0.05, 0.1])
    np.testing.assert_array_equal(ix.count_neighbors(q, radii),
                                  [(d <= rr).sum() for rr in radii.astype(np.float32)])


def test_any_float_dtype_and_order_gives_same_answer():
    rng = np.random.default_rng(11)
    base = rng.random((300, 4))
    q = rng.random((20, 4))
    want = canopy.Index(base.astype(np.float32)).query(q.astype(np.float32), k=3)
    for variant in (base, base.astype(np.float16).astype(np.float64), np.asfortranarray(base),
                    base[:, ::1].copy(order="F")):
        got = canopy.Index(variant).query(np.asfortranarray(q), k=3)
        if variant.dtype == base.dtype:
            np.testing.assert_array_equal(got[1], want[1])
    strided = np.repeat(base, 2, axis=0)[::2]  # non-contiguous view
    np.testing.assert_array_equal(canopy.Index(strided).query(q, k=3)[1], want[1])
    ro = base.copy()
    ro.setflags(write=False)
    np.testing.assert_array_equal(canopy.Index(ro).query(q, k=3)[1], want[1])
    ints = (base * 100).astype(np.int32)
    canopy.Index(ints).query(ints[:5], k=2)


def test_bad_input_raises_with_the_library_message():
    ix = canopy.Index(np.random.rand(50, 3))
    bad = np.random.rand(50, 3)
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN|nan|not finite"):
        canopy.Index(bad).query(np.zeros((1, 3)), k=1)
    with pytest.raises(ValueError, match="NaN|nan|not finite"):
        ix.query(bad, k=1)
    with pytest.raises(canopy.CanopyError):
        ix.query(np.full((1, 3), np.inf), k=1)
    with pytest.raises(ValueError, match="columns"):
        ix.query(np.zeros((4, 2)), k=1)
    with pytest.raises(ValueError, match="2-D"):
        canopy.Index(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError):
        ix.query(np.zeros((1, 3)), k=0)
    with pytest.raises(TypeError):
        canopy.Index(np.array([["a", "b"]]))
    with pytest.raises(TypeError):
        canopy.Index(np.zeros((4, 3), dtype=np.complex64))
    with pytest.raises(TypeError):
        canopy.Index([[object()]])
    with pytest.raises(ValueError, match="tree"):
        canopy.Index(np.zeros((4, 3)), tree="quad")
    with pytest.raises(ValueError):
        ix.query_radius(np.zeros((1, 3)), -1.0)
    with pytest.raises(ValueError):
        canopy.gravity(np.zeros((4, 3)), mass=np.ones(3))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("how", ["function", "octree index"])
def test_gravity_against_direct_sum(seed, how):
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(300, 3))
    m = rng.random(300) + 0.5
    eps = 0.05
    if how == "function":
        acc = canopy.gravity(pos, m.astype(np.float32), theta=0.2, softening=eps)
    else:
        ix = canopy.Index(pos, tree="oct", weights=m)
        acc = ix.gravity(theta=0.2, softening=eps)
        np.testing.assert_array_equal(ix.gravity(theta=0.2, softening=eps), acc)  # reused
    dx = pos[None, :, :] - pos[:, None, :]
    r2 = (dx ** 2).sum(-1) + eps ** 2
    np.fill_diagonal(r2, np.inf)
    want = (m[None, :, None] * dx / r2[..., None] ** 1.5).sum(1)
    err = np.linalg.norm(acc - want, axis=1) / np.linalg.norm(want, axis=1)
    assert acc.shape == (300, 3) and acc.dtype == np.float32
    assert np.median(err) < 1e-2
    equal = canopy.gravity(pos, None, theta=0.2, softening=eps)
    np.testing.assert_allclose(equal, canopy.gravity(pos, np.full(300, 1 / 300), 0.2, eps),
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["xgb_binary", "xgb_multi", "xgb_reg", "lgb_binary",
                                  "lgb_multi", "sk_et_reg"])
def test_predictor_matches_the_training_framework(name):
    model = [f for f in os.listdir(FOREST) if f.startswith(name + ".")
             and f.endswith((".json", ".txt"))][0]
    X = np.load(os.path.join(FOREST, name + ".X.npy"))
    p = canopy.Predictor.load(os.path.join(FOREST, model))
    for kind in ("prob", "raw"):
        want = np.load(os.path.join(FOREST, f"{name}.{kind}.npy"))
        got = p.predict(X, output=kind)
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-5)
    cls = p.predict(X, output="class")
    assert cls.dtype == np.int64 and cls.shape == (X.shape[0],)
    with pytest.raises(ValueError, match="feature|column"):
        p.predict(X[:, :-1])
    p.close()


def test_predictor_bad_files(tmp_path):
    with pytest.raises(OSError):
        canopy.Predictor.load("/nonexistent/model.json")
    with pytest.raises(canopy.CanopyError, match="binary model"):
        canopy.Predictor.load(os.path.join(FOREST, "xgb_binary.X.npy"))
    bad = tmp_path / "m.json"
    bad.write_text('{"learner": [1, 2')
    with pytest.raises(ValueError, match="m.json"):
        canopy.Predictor.load(bad)
    with pytest.raises(ValueError, match="output"):
        canopy.Predictor.load(os.path.join(FOREST, "xgb_reg.json")).predict(
            np.zeros((1, 1)), output="probability")


def test_grep_against_python_re():
    import re
    rng = np.random.default_rng(5)
    words = ["apple", "banana", "cherry", "date", "Apple pie", "x1", ""]
    lines = [" ".join(rng.choice(words, 3)) for _ in range(2000)]
    data = ("\n".join(lines) + "\n").encode()
    pats = ["ap+le", "^date", "y$"]
    want = [i for i, ln in enumerate(lines) if any(re.search(p, ln) for p in pats)]
    np.testing.assert_array_equal(canopy.grep(pats, data), want)
    assert canopy.grep(pats, data, count=True) == len(want)
    assert canopy.grep(pats, bytearray(data), count=True, invert=True) == len(lines) - len(want)
    icase = [i for i, ln in enumerate(lines) if re.search("apple", ln, re.I)]
    assert canopy.Regex("apple", ignore_case=True).count(memoryview(data)) == len(icase)
    rx = canopy.Regex(pats)
    np.testing.assert_array_equal(rx.pattern_counts(data), [
        sum(bool(re.search(p, ln)) for ln in lines) for p in pats])
    assert rx.count(b"") == 0 and rx.count(b"apple") == 1  # last line without newline
    with pytest.raises(ValueError, match="Unmatched"):
        canopy.Regex("(ab")
    with pytest.raises(TypeError):
        rx.count("a str, not bytes")
    with pytest.raises(TypeError):
        canopy.Regex([3])


def test_gil_is_released_for_concurrent_queries():
    ref = np.random.default_rng(3).random((20000, 3))
    ix = canopy.Index(ref)
    out = []
    threads = [threading.Thread(target=lambda: out.append(ix.query(ref[:2000], k=4)[1]))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 3 and all((o == out[0]).all() for o in out)


def test_gpu_backend_without_the_cuda_module():
    """The CUDA module hidden (a fresh process: the library looks for it once): "auto" runs
    on the CPU, "gpu" raises with the reason, never a crash."""
    code = (
        "import numpy as np, canopy\n"
        "x = np.random.default_rng(1).random((50, 3))\n"
        "canopy.Index(x).query(x, k=2)\n"
        "try:\n"
        "    canopy.Index(x, backend='gpu').query(x, k=2)\n"
        "except canopy.CanopyError as e:\n"
        "    print('raised:', e)\n"
    )
    env = dict(os.environ, CANOPY_CUDA_MODULE="/nonexistent/libcanopy_cuda.so.0")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "raised:" in run.stdout and "CUDA module" in run.stdout, run.stdout
