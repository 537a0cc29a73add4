# SPDX-License-Identifier: MIT
"""CUDA arrays of PyTorch and CuPy through the package (scripts/gpu-check.sh, stage
python): results equal to brute force and to the host path, outputs of the input's
framework on its device, and no host copy (the host entries of the C API are never
called; the library's stats of each device kNN report no upload, download or tree
upload). Skipped without the framework, the CUDA module or a GPU, except under
CANOPY_REQUIRE_GPU=1 (gpu-check), where that fails."""
import ctypes
import os
import sys

import numpy as np
import pytest

import canopy
from canopy import _arrays, _lib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_arrays import batches, brute  # noqa: E402

# gpu-check sets it: there, a missing GPU, CUDA module, PyTorch or CuPy is a failure.
REQUIRED = os.environ.get("CANOPY_REQUIRE_GPU") == "1"
if "cuda" not in canopy.info()["backends"]:
    if REQUIRED:
        raise RuntimeError(f"no CUDA backend: {canopy.info()['gpu_why_not']}")
    pytest.skip(f"no CUDA backend: {canopy.info()['gpu_why_not']}", allow_module_level=True)


def need(name):
    if REQUIRED:
        return __import__(name)
    return pytest.importorskip(name)


class Torch:
    def __init__(self):
        self.m = need("torch")

    def dev(self, a):
        return self.m.from_numpy(np.ascontiguousarray(a)).cuda()

    def host(self, t):
        return t.cpu().numpy()

    def check(self, t, like):
        assert isinstance(t, self.m.Tensor) and t.device == like.device, (type(t), t.device)


class CuPy:
    def __init__(self):
        self.m = need("cupy")

    def dev(self, a):
        return self.m.asarray(np.ascontiguousarray(a))

    def host(self, t):
        return self.m.asnumpy(t)

    def check(self, t, like):
        assert isinstance(t, self.m.ndarray) and t.device.id == like.device.id


@pytest.fixture(params=["torch", "cupy"])
def fw(request):
    return Torch() if request.param == "torch" else CuPy()


def same_up_to_ties(d, i, hd, hi):
    """The device kNN equals the host one; indices may differ only where distances tie
    (the GPU and CPU kernels may round a distance apart by an ulp)."""
    np.testing.assert_allclose(d, hd, rtol=1e-6)
    same = i == hi
    np.testing.assert_allclose(d[~same], hd[~same], rtol=1e-6)
    assert same.mean() > 0.9999, same.mean()


def edges_match(got, want, x, y, point):
    """Edge lists equal (row `point` of edge_index holds the points, the other their
    neighbours), except that a neighbour may be swapped for one at the same float32
    distance (the GPU rounding a distance an ulp apart from the reference)."""
    assert got.shape == want.shape, (got.shape, want.shape)
    assert (got[point] == want[point]).all()
    bad = got[1 - point] != want[1 - point]
    if bad.any():
        p, a, b = want[point, bad], got[1 - point, bad], want[1 - point, bad]
        da = ((y[p] - x[a]) ** 2).sum(1)
        db = ((y[p] - x[b]) ** 2).sum(1)
        np.testing.assert_allclose(da, db, rtol=1e-6)
        assert bad.mean() < 1e-3


def forbid_host(monkeypatch):
    """Fails any call of a host-array entry; counts the device-pointer ones."""
    calls = {}
    for name in ("index_build", "index_knn", "gravity", "index_radius_count"):
        def refuse(*a, _n=name):
            raise AssertionError(f"host entry canopy_{_n} called with device inputs")
        monkeypatch.setattr(_lib, name, refuse)
    for name in ("index_build_device", "index_knn_device", "gravity_multipole_device"):
        real = getattr(_lib, name)

        def count(*a, _n=name, _f=real):
            calls[_n] = calls.get(_n, 0) + 1
            if _n != "index_knn_device":
                return _f(*a)
            # The library's own account of the call: no copy either way, the resident tree.
            st = _lib.Stats()
            status = _f(*a[:-1], ctypes.byref(st))
            if status == 0:
                assert (st.upload_seconds, st.download_seconds, st.transfer_seconds,
                        st.tree_upload_bytes) == (0, 0, 0, 0), st.note
                assert st.device_tree_reused == 1 and st.backend == _lib.BACKEND_GPU
            return status
        monkeypatch.setattr(_lib, name, count)
    monkeypatch.setattr(_arrays, "host_result", lambda *a: pytest.fail("host_result called"))
    return calls


@pytest.fixture
def no_host_path(monkeypatch):
    return forbid_host(monkeypatch)


@pytest.mark.parametrize("seed", [1, 2])
def test_graphs_equal_brute_force_on_device(fw, seed, no_host_path):
    rng = np.random.default_rng(seed)
    n = 1500
    x = rng.random((n, 3)).astype(np.float32)
    x[20:30] = x[19]
    b = batches(rng, n, 4)
    b[-3:] = 4  # a last example of 3 points: fewer than k
    xd, bd = fw.dev(x), fw.dev(b)
    for loop in (False, True):
        e = canopy.knn_graph(xd, 8, bd, loop=loop)
        fw.check(e, xd)
        edges_match(fw.host(e), brute(x, x, 8, b, b, not loop)[::-1], x, x, 1)
        e = canopy.radius_graph(xd, 0.1, bd, loop=loop, max_num_neighbors=5,
                                flow="target_to_source")
        fw.check(e, xd)
        edges_match(fw.host(e), brute(x, x, 5, b, b, not loop, 0.1), x, x, 0)
    y = rng.random((400, 3)).astype(np.float32)
    by = batches(rng, 400, 4)
    e = canopy.knn(xd, fw.dev(y), 6, bd, fw.dev(by))
    edges_match(fw.host(e), brute(x, y, 6, b, by, False), x, y, 0)
    e = canopy.radius(xd, fw.dev(y), 0.15, bd, fw.dev(by), max_num_neighbors=40)
    edges_match(fw.host(e), brute(x, y, 40, b, by, False, 0.15), x, y, 0)
    assert no_host_path["index_build_device"] >= 4 and no_host_path["index_knn_device"] >= 4


def test_index_on_device_equals_host(fw, monkeypatch):
    rng = np.random.default_rng(7)
    x = rng.random((200_000, 2)).astype(np.float32)
    q = rng.random((200_000, 2)).astype(np.float32)
    hd, hi = canopy.Index(x).query(q, k=8)
    xd, qd = fw.dev(x), fw.dev(q)
    calls = forbid_host(monkeypatch)
    ix = canopy.Index(xd)
    info = ix.info()
    assert info["gpu_built"] and info["residency"] == "device" and ix.data is None
    d, i = ix.query(qd, k=8)
    fw.check(d, qd)
    fw.check(i, qd)
    same_up_to_ties(fw.host(d), fw.host(i), hd, hi)
    assert calls == {"index_build_device": 1, "index_knn_device": 1}


def test_host_index_with_residency_device_takes_device_queries(fw):
    rng = np.random.default_rng(8)
    x = rng.random((5000, 3)).astype(np.float32)
    q = rng.random((700, 3)).astype(np.float32)
    ix = canopy.Index(x, residency="device")
    d, i = ix.query(fw.dev(q), k=4)
    hd, hi = ix.query(q, k=4)
    same_up_to_ties(fw.host(d), fw.host(i), hd, hi)
    with pytest.raises(_arrays.DeviceError, match="no device copy"):
        canopy.Index(x).query(fw.dev(q), k=4)


def test_gravity_on_device(fw, no_host_path):
    rng = np.random.default_rng(9)
    pos = rng.standard_normal((3000, 3)).astype(np.float32)
    mass = rng.random(3000).astype(np.float32)
    acc = canopy.gravity(fw.dev(pos), fw.dev(mass), theta=0.3, softening=0.01)
    fw.check(acc, fw.dev(pos))
    p = pos.astype(np.float64)
    dx = p[None, :, :] - p[:, None, :]
    r2 = (dx ** 2).sum(-1) + 0.01 ** 2
    np.fill_diagonal(r2, np.inf)
    ref = (mass[None, :, None] * dx / r2[..., None] ** 1.5).sum(1)
    err = np.linalg.norm(fw.host(acc) - ref, axis=1) / np.linalg.norm(ref, axis=1)
    assert np.median(err) < 1e-2, np.median(err)


def test_torch_stream_is_honoured():
    t = Torch()
    torch = t.m
    rng = np.random.default_rng(10)
    x = rng.random((50_000, 3)).astype(np.float32)
    want = canopy.knn_graph(x, 8)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        xd = torch.from_numpy(x).to("cuda", non_blocking=False) * 1.0  # queued on s
        e = canopy.knn_graph(xd, 8)
    s.synchronize()
    edges_match(e.cpu().numpy(), want, x, x, 1)


def test_bad_device_inputs(fw):
    x = np.random.default_rng(11).random((100, 4)).astype(np.float32)
    xd = fw.dev(x)
    with pytest.raises(TypeError, match="float32"):
        canopy.knn_graph(fw.dev(x.astype(np.float64)), 3)
    with pytest.raises(ValueError, match="not C-contiguous"):
        canopy.knn_graph(xd[:, :2], 3)
    with pytest.raises(_arrays.DeviceError, match="cpu|cuda"):
        canopy.knn(xd, x, 3)
    with pytest.raises(_arrays.DeviceError, match="cpu|cuda"):
        canopy.knn_graph(xd, 3, np.zeros(100, np.int64))
    with pytest.raises(ValueError, match="kd"):
        canopy.Index(xd, tree="ball")
    keys = np.sort(x[:, 0])
    with pytest.raises(_arrays.DeviceError, match="CPU only"):
        canopy.Index(keys[:, None], tree="bst").search(fw.dev(keys))
    with pytest.raises(TypeError, match="float32"):
        canopy.paircount(fw.dev(x.astype(np.float64)), 0.0, 0.5, 4)
    with pytest.raises(ValueError, match="backend"):
        canopy.paircount(xd, 0.0, 0.5, 4, backend="cpu")
    with pytest.raises(ValueError, match="expected shape"):
        canopy.paircount(xd, 0.0, 0.5, 4, weights1=fw.dev(np.ones(99, np.float32)))
    with pytest.raises(_arrays.DeviceError, match="cpu|cuda"):
        canopy.paircount(xd, 0.0, 0.5, 4, data2=x)
    with pytest.raises(ValueError, match="backend"):
        canopy.kde(xd, backend="cpu")
    with pytest.raises(ValueError, match="expected shape"):
        canopy.kde(xd, fw.dev(x[:, :3].copy()))
    with pytest.raises(TypeError, match="real number|bool"):
        canopy.knn_graph(fw.dev(x > 0.5), 3)


def test_query_radius_on_device(fw, monkeypatch):
    rng = np.random.default_rng(12)
    x = rng.random((20_000, 3)).astype(np.float32)
    x[:100] = x[0]  # 100 equal points: k grows from 16 to 128 for the rows near them
    q = rng.random((3000, 3)).astype(np.float32)
    q[0] = x[0]
    host = canopy.Index(x)
    want_c = host.query_radius(q, 0.04, count_only=True)
    want_i, want_d = host.query_radius(q, 0.04, return_distance=True)
    xd, qd = fw.dev(x), fw.dev(q)
    canopy.host_copies(reset=True)
    calls = forbid_host(monkeypatch)
    ix = canopy.Index(xd)
    c = ix.query_radius(qd, 0.04, count_only=True)
    fw.check(c, qd)
    # a count may differ where a distance is an ulp from r (GPU and CPU rounding)
    same = fw.host(c) == want_c
    assert same.mean() > 0.999 and fw.host(c)[0] == want_c[0] >= 100
    ind, dst = ix.query_radius(qd, 0.04, return_distance=True)
    fw.check(ind[0], qd)
    fw.check(dst[0], qd)
    for i in np.flatnonzero(same):
        a, d = fw.host(ind[i]), fw.host(dst[i])
        np.testing.assert_allclose(d, want_d[i], rtol=1e-6, atol=1e-7)
        # the same points, nearest first (equal distances may come in another order)
        assert set(a.tolist()) == set(want_i[i].tolist()) and (np.diff(d) >= 0).all()
    assert calls["index_knn_device"] >= 2 and canopy.host_copies() == {}


def forbid_host_entries(monkeypatch):
    """Fails any call of the host entries of paircount, kde and prediction; counts the
    device-pointer ones."""
    from canopy import _kde
    calls = {}
    for mod, name in ((_lib, "paircount"), (_kde, "_kde"), (_lib, "predictor_predict")):
        def refuse(*a, _n=name):
            raise AssertionError(f"host entry {_n} called with device inputs")
        monkeypatch.setattr(mod, name, refuse)
    for mod, name in ((_lib, "paircount_device"), (_kde, "_kde_device"),
                      (_lib, "predictor_predict_device")):
        real = getattr(mod, name)

        def count(*a, _n=name, _f=real):
            calls[_n] = calls.get(_n, 0) + 1
            return _f(*a)
        monkeypatch.setattr(mod, name, count)
    monkeypatch.setattr(_arrays, "copy_to_host", lambda *a: pytest.fail("copy_to_host called"))
    return calls


@pytest.mark.parametrize("seed", [13, 14])
def test_paircount_kde_predict_in_place(fw, seed, monkeypatch):
    """paircount, kde and Predictor.predict read CUDA inputs in place (their device
    entries, no host copy: host_copies() stays empty), results on the input's device,
    equal to the host calls' (counts exactly, sums within float64 rounding)."""
    rng = np.random.default_rng(seed)
    # below 1 after rounding to float32 (the periodic case's box is [0, 1))
    a = (0.999 * rng.random((4000, 3))).astype(np.float32)
    b = rng.random((2500, 3)).astype(np.float32)
    w = (0.5 + rng.random(4000)).astype(np.float32)
    q = rng.random((1500, 3)).astype(np.float32)
    forest = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "forest")
    X = np.load(os.path.join(forest, "xgb_multi.X.npy")).astype(np.float32)
    p = canopy.Predictor.load(os.path.join(forest, "xgb_multi.json"))

    def run(a, b, w, q, X):
        return {
            "auto": canopy.paircount(a, 0.01, 0.2, 6),
            "cross": canopy.paircount(a, 0.0, 0.3, 9, data2=b),
            "weighted": canopy.paircount(a, 0.02, 0.3, 5, data2=b, weights1=w, log=True),
            "box": canopy.paircount(a, 0.0, 0.4, 7, boxsize=1.0),
            "kde": canopy.kde(a, bandwidth=0.1),
            "kde_q": canopy.kde(a, q, bandwidth=0.2, kernel="epanechnikov"),
            "kde_rtol": canopy.kde(a, q, bandwidth=0.1, rtol=1e-3),
            "prob": p.predict(X),
            "class": p.predict(X, output="class"),
        }
    want = run(a, b, w, q, X)
    exact = canopy.kde(a, q, bandwidth=0.1)
    ad, bd, wd, qd, Xd = (fw.dev(v) for v in (a, b, w, q, X))
    canopy.host_copies(reset=True)
    calls = forbid_host_entries(monkeypatch)
    got = run(ad, bd, wd, qd, Xd)
    for key in ("auto", "cross", "box"):
        counts, edges = got[key]
        fw.check(counts, ad)
        fw.check(edges, ad)
        np.testing.assert_array_equal(fw.host(counts), want[key][0])
        assert fw.host(counts).dtype == np.int64
        np.testing.assert_array_equal(fw.host(edges), want[key][1])
    np.testing.assert_allclose(fw.host(got["weighted"][0]), want["weighted"][0], rtol=1e-9)
    for key in ("kde", "kde_q"):
        fw.check(got[key], ad)
        np.testing.assert_allclose(fw.host(got[key]), want[key], rtol=1e-9, atol=1e-9)
    # rtol: each density within 1e-3 of the exact one
    assert (np.abs(np.expm1(fw.host(got["kde_rtol"]) - exact)) <= 1.001e-3).all()
    fw.check(got["prob"], Xd)
    np.testing.assert_allclose(fw.host(got["prob"]), want["prob"], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(fw.host(got["class"]), want["class"])
    assert calls == {"paircount_device": 4, "_kde_device": 3, "predictor_predict_device": 2}
    assert canopy.host_copies() == {}
    # empty inputs: nothing to read
    counts, _ = canopy.paircount(fw.dev(np.zeros((0, 3), np.float32)), 0.0, 0.5, 3)
    np.testing.assert_array_equal(fw.host(counts), [0, 0, 0])
    assert fw.host(p.predict(fw.dev(np.zeros((0, X.shape[1]), np.float32)))).shape[0] == 0
    assert fw.host(canopy.kde(ad, fw.dev(np.zeros((0, 3), np.float32)))).shape == (0,)
    p.close()


def test_count_neighbors_on_device(fw, monkeypatch):
    rng = np.random.default_rng(15)
    x = rng.random((8000, 3)).astype(np.float32)
    y = rng.random((1200, 3)).astype(np.float32)
    host = canopy.Index(x)
    want = host.count_neighbors(y, 0.05)
    want_r = host.count_neighbors(y, np.array([0.02, 0.06]))
    xd, yd = fw.dev(x), fw.dev(y)
    ix = canopy.Index(xd)
    calls = forbid_host(monkeypatch)
    got = ix.count_neighbors(yd, 0.05)
    got_r = ix.count_neighbors(yd, np.array([0.02, 0.06]))
    # a pair may differ where its distance is an ulp from r (GPU and CPU rounding)
    assert isinstance(got, int) and abs(got - want) <= max(2, want // 10000)
    assert (np.abs(got_r - want_r) <= np.maximum(2, want_r // 10000)).all()
    assert calls["index_knn_device"] >= 3 and canopy.host_copies() == {}
    with pytest.raises(_arrays.DeviceError, match="no device copy"):
        host.count_neighbors(yd, 0.05)


def test_torch_tensor_requiring_grad():
    torch = Torch().m
    x = torch.rand((2000, 3), device="cuda", requires_grad=True)
    e = canopy.radius_graph(x, 0.1)
    assert e.device == x.device and not e.requires_grad
    edges_match(e.cpu().numpy(), canopy.radius_graph(x.detach().cpu().numpy(), 0.1),
                x.detach().cpu().numpy(), x.detach().cpu().numpy(), 1)
