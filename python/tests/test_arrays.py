# SPDX-License-Identifier: MIT
"""The array protocol layer on the CPU (DLPack capsules parsed by the package, a
DLPack-only wrapper object, refusals of what it cannot take) and the graph builders
(knn, knn_graph, radius, radius_graph) against a brute-force reference."""
import ctypes
import sys

import numpy as np
import pytest

import canopy
from canopy import _arrays, _lib

SEEDS = [1, 2, 3]


class Wrap:
    """An array known only through DLPack (no __array__, no buffer protocol)."""

    def __init__(self, a):
        self._a = a
        self.capsules = []

    def __dlpack__(self, stream=None):
        c = self._a.__dlpack__()
        self.capsules.append(c)
        return c

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]
_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeCapsule:
    """A DLPack producer on a device of our choosing (the tensor is never read)."""

    def __init__(self, device_type, shape=(4, 3)):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.m = _arrays._DLManagedTensor()
        t = self.m.dl_tensor
        t.data, t.ndim, t.shape = 4096, len(shape), self.shape
        t.device.device_type, t.dtype.code, t.dtype.bits, t.dtype.lanes = device_type, 2, 32, 1
        self.kind = device_type

    def __dlpack__(self, stream=None):
        return _new(ctypes.addressof(self.m), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.kind, 0)


class FakeCAI:
    __cuda_array_interface__ = {"shape": (4, 3), "typestr": "<f4", "data": (4096, False),
                                "version": 3, "strides": None, "stream": 1}


def brute(x, y, k, bx, by, exclude_self, r=None):
    """Edges (y row, x row): per row of y its k nearest rows of x of its example,
    ascending by (distance, index)."""
    x = np.asarray(x, np.float32).reshape(len(x), -1)
    y = np.asarray(y, np.float32).reshape(len(y), -1)
    # float32, axis by axis in order, as the library computes them: ties are the same ties
    d2 = np.zeros((len(y), len(x)), np.float32)
    for j in range(x.shape[1]):
        d2 += (y[:, None, j] - x[None, :, j]) ** 2
    d2[np.asarray(by)[:, None] != np.asarray(bx)[None, :]] = np.inf
    if exclude_self:
        np.fill_diagonal(d2, np.inf)
    if r is not None:
        d2[d2 > np.float32(r) * np.float32(r)] = np.inf
    rows, cols = [], []
    for i in range(len(y)):
        order = np.argsort(d2[i], kind="stable")[:k]
        order = order[np.isfinite(d2[i, order])]
        rows += [i] * len(order)
        cols += list(order)
    return np.array([rows, cols], dtype=np.int64).reshape(2, -1)


def batches(rng, n, nb):
    return np.sort(rng.integers(0, nb, n)).astype(np.int64)


def test_dlpack_capsule_is_used_then_released():
    a = np.random.default_rng(0).random((50, 3)).astype(np.float32)
    w = Wrap(a)
    before = sys.getrefcount(a)
    d, i = canopy.Index(w).query(Wrap(a[:5]), k=3)
    dn, inn = canopy.Index(a).query(a[:5], k=3)
    np.testing.assert_array_equal(i, inn)
    np.testing.assert_array_equal(d, dn)
    assert type(d) is np.ndarray
    assert _name(w.capsules[0]) == b"used_dltensor"
    # The deleter ran: the reference the capsule's tensor held on a is gone.
    w.capsules.clear()
    assert sys.getrefcount(a) == before


@pytest.mark.parametrize("bad, err, msg", [
    (lambda: Wrap(np.zeros((6, 4), np.float32)[:, ::2]), ValueError, "not C-contiguous"),
    (lambda: Wrap(np.zeros((4, 3), np.complex64)), TypeError, "not a real number type"),
    (lambda: Wrap(np.zeros((4, 3), bool)), TypeError, "not a real number type"),
    (lambda: FakeCapsule(10), canopy._arrays.DeviceError, "device type 10"),
    (lambda: FakeCapsule(2), canopy._arrays.DeviceError, "not supported yet"),
    (lambda: FakeCAI(), canopy._arrays.DeviceError, "not supported yet"),
])
def test_bad_arrays_raise_clearly(bad, err, msg):
    for call in (lambda a: canopy.Index(a), lambda a: canopy.knn_graph(a, 2),
                 lambda a: canopy.gravity(a)):
        with pytest.raises(err, match=msg):
            call(bad())


def test_device_arrays_refused_where_no_device_path():
    ix = canopy.Index(np.zeros((4, 3), np.float32))
    with pytest.raises(canopy._arrays.DeviceError, match="not supported yet"):
        ix.query_radius(FakeCAI(), 0.1)
    with pytest.raises(canopy._arrays.DeviceError):
        canopy.paircount(FakeCapsule(2), 0.1, 1.0, 4)


def test_mixed_devices_refused():
    host, dev = _arrays.Array(None, "x"), _arrays.Array(None, "y")
    dev.device = 0
    with pytest.raises(_arrays.DeviceError, match="x is on cpu but y is on cuda:0"):
        _arrays.same_place([host, None, dev])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d", [1, 3])
def test_knn_and_radius_match_brute_force(seed, d):
    rng = np.random.default_rng(seed)
    n, m, nb = 300, 120, 4
    x = rng.random((n, d)).astype(np.float32)
    y = rng.random((m, d)).astype(np.float32)
    x[10:20] = x[9]  # duplicates
    bx, by = batches(rng, n, nb), batches(rng, m, nb)
    for k in (1, 5):
        got = canopy.knn(x, y, k, bx, by)
        assert got.dtype == np.int64 and got.shape[0] == 2
        np.testing.assert_array_equal(got, brute(x, y, k, bx, by, False))
        np.testing.assert_array_equal(canopy.knn(Wrap(x), Wrap(y), k, Wrap(bx), Wrap(by)), got)
    np.testing.assert_array_equal(canopy.knn(x, y, 4), brute(x, y, 4, [0] * n, [0] * m, False))
    for r, mnn in ((0.05, 32), (0.2, 3)):
        np.testing.assert_array_equal(canopy.radius(x, y, r, bx, by, max_num_neighbors=mnn),
                                      brute(x, y, mnn, bx, by, False, r))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("flow", ["source_to_target", "target_to_source"])
def test_graphs_match_brute_force(seed, loop, flow):
    rng = np.random.default_rng(seed)
    n = 400
    x = rng.random((n, 3)).astype(np.float32)
    x[50:60] = x[49]  # ten duplicates of one point: self still excluded, k still kept
    b = batches(rng, n, 5)
    b[b == 2] = 3  # an example with no points
    swap = (lambda e: e[::-1]) if flow == "source_to_target" else (lambda e: e)
    for k in (1, 6, 20):
        got = canopy.knn_graph(x, k, b, loop=loop, flow=flow)
        np.testing.assert_array_equal(got, swap(brute(x, x, k, b, b, not loop)))
    for r, mnn in ((0.1, 32), (0.25, 4)):
        got = canopy.radius_graph(x, r, b, loop=loop, max_num_neighbors=mnn, flow=flow)
        np.testing.assert_array_equal(got, swap(brute(x, x, mnn, b, b, not loop, r)))
    one = canopy.knn_graph(Wrap(x), 3, loop=loop, flow=flow)
    np.testing.assert_array_equal(one, swap(brute(x, x, 3, [0] * n, [0] * n, not loop)))


def test_graph_edge_cases():
    x = np.random.default_rng(4).random((5, 2)).astype(np.float32)
    # n < k: every other point, no more
    e = canopy.knn_graph(x, 10)
    assert e.shape == (2, 20)
    np.testing.assert_array_equal(e, brute(x, x, 10, [0] * 5, [0] * 5, True)[::-1])
    assert canopy.knn_graph(x[:1], 3).shape == (2, 0)
    assert canopy.knn_graph(x[:1], 3, loop=True).tolist() == [[0], [0]]
    for empty in (np.zeros((0, 2), np.float32),):
        assert canopy.knn_graph(empty, 3).shape == (2, 0)
        assert canopy.radius_graph(empty, 0.5).shape == (2, 0)
        assert canopy.knn(empty, x, 2).shape == (2, 0)
        assert canopy.knn(x, empty, 2).shape == (2, 0)
    # 1-D x is a column of points, as in torch_cluster
    np.testing.assert_array_equal(canopy.knn_graph(x[:, 0], 2), canopy.knn_graph(x[:, :1], 2))
    # batch_y only: batch_x missing means every x row is example 0
    e = canopy.knn(x, x, 2, None, np.array([0, 0, 1, 1, 1]))
    np.testing.assert_array_equal(e, brute(x, x, 2, [0] * 5, [0, 0, 1, 1, 1], False))


@pytest.mark.parametrize("call, err, msg", [
    (lambda x: canopy.knn_graph(x, 2, np.array([1, 0, 0, 0, 0])), ValueError, "sorted"),
    (lambda x: canopy.knn_graph(x, 2, np.array([0, 0, 1])), ValueError, "one id per point"),
    (lambda x: canopy.knn_graph(x, 2, np.zeros(5)), TypeError, "integers"),
    (lambda x: canopy.knn_graph(x, 2, np.array([-1, 0, 0, 0, 0])), ValueError, ">= 0"),
    (lambda x: canopy.knn_graph(x, 2, flow="up"), ValueError, "flow"),
    (lambda x: canopy.knn_graph(x, 0), ValueError, "k must"),
    (lambda x: canopy.radius_graph(x, -1.0), ValueError, "r must"),
    (lambda x: canopy.radius_graph(x, float("nan")), ValueError, "r must"),
    (lambda x: canopy.radius_graph(x, 0.5, max_num_neighbors=0), ValueError, "max_num"),
    (lambda x: canopy.knn(x, x[:, :1], 2), ValueError, "columns"),
    (lambda x: canopy.knn_graph(np.array([["a", "b"]] * 5), 2), TypeError, "real number"),
    (lambda x: canopy.knn_graph(np.full((5, 2), np.nan, np.float32), 2), canopy.CanopyError,
     "finite|NaN|nan"),
])
def test_graph_bad_input(call, err, msg):
    x = np.random.default_rng(5).random((5, 2)).astype(np.float32)
    with pytest.raises(err, match=msg):
        call(x)


def test_info_and_public_names():
    i = canopy.info()
    assert i["backends"][0] == "cpu" and ("cuda" in i["backends"]) == (i["gpu"] is not None)
    assert i["backends"] == ["cpu", "cuda"] or i["gpu_why_not"]
    assert dir(canopy) == sorted(canopy.__all__)
    for name in ("knn", "knn_graph", "radius", "radius_graph"):
        assert name in dir(canopy)


class FakeDevice:
    """Host memory presented as CUDA device 0 (its DLPack capsule says kDLCUDA), with the
    device entries of the C API emulated by the host ones: the package's device branch
    (in-place pointers, per-example slices, outputs from the framework) runs on the CPU."""

    def __init__(self, a):
        self.a = np.ascontiguousarray(a)
        self.shape = self.a.shape

    def __dlpack__(self, stream=None):
        assert stream == 1  # the framework's current stream (0) sent as DLPack's default
        c = self.a.__dlpack__()
        m = ctypes.cast(_arrays._capsule_get(c, b"dltensor"),
                        ctypes.POINTER(_arrays._DLManagedTensor))
        m.contents.dl_tensor.device.device_type = _arrays.DL_CUDA
        return c

    def __dlpack_device__(self):
        return (_arrays.DL_CUDA, 0)

    def __getitem__(self, i):
        return self.a[i]


class FakeFramework(_arrays._NumPy):
    name = "fake"

    def __init__(self, module):
        self.created = []

    def device_of(self, obj):
        return 0

    def current(self):
        return 0

    def current_stream(self, obj):
        return 0

    def empty(self, like, shape, dtype):
        out = FakeOut(shape, dtype)
        self.created.append(out)
        return out

    def stack(self, arrays):
        return np.stack(arrays).view(FakeOut)

    def searchsorted(self, a, v):
        return np.searchsorted(a.a if isinstance(a, FakeDevice) else a, v)

    def to_numpy(self, a):
        return a.a if isinstance(a, FakeDevice) else np.asarray(a)

    def from_host(self, like, arr):
        return np.array(arr).view(FakeOut)

    def concat(self, arrays):
        return np.concatenate(arrays).view(FakeOut)


class FakeOut(np.ndarray):
    """An output the fake framework allocated (a distinct type, to see it comes back)."""


@pytest.fixture
def fake_device(monkeypatch):
    real = _arrays.device_framework
    fw = FakeFramework(None)
    monkeypatch.setattr(_arrays, "device_framework",
                        lambda m, name: fw if m is sys.modules[__name__] else real(m, name))
    from canopy import _lib
    host_build, host_knn, host_info = _lib.index_build, _lib.index_knn, _lib.index_get_info
    host_gravity = _lib.gravity

    def build(pts, opt, stream, out):
        assert stream == 1
        return host_build(pts, opt, out)

    def knn(h, q, nq, k, opt, idx, d2, stream, stats):
        info = _lib.IndexInfo()
        host_info(h, ctypes.byref(info))
        return host_knn(h, _lib.Points(q, nq, info.d, info.d), k, opt,
                        ctypes.cast(idx, _lib.PI64), ctypes.cast(d2, _lib.PF32), stats)

    def info(h, out):
        status = host_info(h, out)
        out._obj.residency = _lib.RESIDENCY["device"]  # as a device build's
        return status

    def gravity(pts, mass, g, opt, acc, pot, stream, stats):
        assert stream == 1 and pot is None and opt._obj.backend == _lib.BACKEND_GPU
        opt._obj.backend = 1  # the host walk stands in for the GPU one
        return host_gravity(pts, ctypes.cast(mass, _lib.PF32), g._obj.theta, g._obj.softening,
                            opt, ctypes.cast(acc, _lib.PF32), None)

    from canopy import _kde
    host_paircount, host_kde = _lib.paircount, _kde._kde
    host_predict, host_compile = _lib.predictor_predict, _lib.predictor_compile

    def paircount(d1, w1, d2, w2, po, opt, counts, stream, stats):
        # the device entry takes both weight arrays or neither (auto: weights1 only)
        assert stream == 1 and (w1 is None) == (w2 is None) or d2.data is None
        return host_paircount(d1, ctypes.cast(w1, _lib.PF32), d2, ctypes.cast(w2, _lib.PF32),
                              po, opt, counts, stats)

    def kde(data, queries, ko, opt, out, stream, stats):
        assert stream == 1 and (out is not None or queries.n == 0)
        return host_kde(data, queries, ko, opt, ctypes.cast(out, _lib.PF64), stats)

    def predict(h, X, kind, out, stream, stats):
        assert stream == 1
        return host_predict(h, X, kind, ctypes.cast(out, _lib.PF64), stats)

    def compile_(forest, opt, out):
        opt._obj.backend = 0 if opt._obj.backend == _lib.BACKEND_GPU else opt._obj.backend
        return host_compile(forest, opt, out)

    def refuse(*args):
        raise AssertionError("a host entry of the C API was called for device arrays")
    monkeypatch.setattr(_lib, "paircount_device", paircount)
    monkeypatch.setattr(_kde, "_kde_device", kde)
    monkeypatch.setattr(_lib, "predictor_predict_device", predict)
    monkeypatch.setattr(_lib, "predictor_compile", compile_)
    monkeypatch.setattr(_lib, "paircount", refuse)
    monkeypatch.setattr(_kde, "_kde", refuse)
    monkeypatch.setattr(_lib, "index_build_device", build)
    monkeypatch.setattr(_lib, "index_knn_device", knn)
    monkeypatch.setattr(_lib, "index_get_info", info)
    monkeypatch.setattr(_lib, "gravity_multipole_device", gravity)
    monkeypatch.setattr(_lib, "gravity", refuse)
    monkeypatch.setattr(_lib, "index_build", refuse)
    monkeypatch.setattr(_lib, "index_knn", refuse)
    return fw


@pytest.mark.parametrize("loop", [False, True])
def test_device_branch_on_emulated_device(fake_device, loop):
    rng = np.random.default_rng(12)
    x = rng.random((600, 3)).astype(np.float32)
    x[5:15] = x[4]
    b = batches(rng, 600, 3)
    b[-2:] = 3  # an example smaller than k
    e = canopy.knn_graph(FakeDevice(x), 6, FakeDevice(b), loop=loop)
    assert isinstance(e, FakeOut)
    np.testing.assert_array_equal(e, brute(x, x, 6, b, b, not loop)[::-1])
    e = canopy.radius_graph(FakeDevice(x), 0.1, FakeDevice(b), loop=loop, max_num_neighbors=4)
    np.testing.assert_array_equal(e, brute(x, x, 4, b, b, not loop, 0.1)[::-1])
    y = rng.random((50, 3)).astype(np.float32)
    by = batches(rng, 50, 3)
    e = canopy.knn(FakeDevice(x), FakeDevice(y), 3, FakeDevice(b), FakeDevice(by))
    np.testing.assert_array_equal(e, brute(x, y, 3, b, by, False))
    with pytest.raises(_arrays.DeviceError, match="cuda:0 but y is on cpu"):
        canopy.knn(FakeDevice(x), y, 3)
    with pytest.raises(TypeError, match="float32"):
        canopy.knn_graph(FakeDevice(x.astype(np.float64)), 3)
    with pytest.raises(TypeError, match="int64"):
        canopy.knn_graph(FakeDevice(x), 3, FakeDevice(b.astype(np.int32)))


def test_index_device_branch_on_emulated_device(fake_device):
    rng = np.random.default_rng(13)
    x = rng.random((700, 2)).astype(np.float32)
    q = rng.random((90, 2)).astype(np.float32)
    ix = canopy.Index(FakeDevice(x), leaf_size=4)
    assert ix.data is None and len(ix) == 700
    d, i = ix.query(FakeDevice(q), k=5)
    assert isinstance(i, FakeOut) and isinstance(d, FakeOut)
    hi = brute(x, q, 5, [0] * 700, [0] * 90, False)[1].reshape(90, 5)
    np.testing.assert_array_equal(i, hi)
    hd = np.sqrt(((q[:, None, :] - x[hi]) ** 2).sum(-1))
    np.testing.assert_allclose(d, hd, rtol=1e-5)
    d1, i1 = ix.query(FakeDevice(q[0]), k=1)  # one 1-D point, k = 1: scalars
    assert i1 == hi[0, 0] and d1.shape == ()
    with pytest.raises(ValueError, match="kd"):
        canopy.Index(FakeDevice(x), tree="vp")
    with pytest.raises(ValueError, match="residency"):
        canopy.Index(FakeDevice(x), residency="host")


def test_missing_cuda_module_says_how_to_get_it():
    if canopy.info()["build"] == "cuda":
        pytest.skip("this build has the CUDA module")
    assert "nvcc" in canopy.info()["gpu_why_not"]
    with pytest.raises(canopy.CanopyRuntimeError, match="pip install ./python"):
        canopy.gravity(np.zeros((10, 3), np.float32), backend="gpu")


def test_gravity_device_branch_on_emulated_device(fake_device):
    rng = np.random.default_rng(14)
    pos = rng.standard_normal((400, 3)).astype(np.float32)
    mass = rng.random(400).astype(np.float32)
    acc = canopy.gravity(FakeDevice(pos), FakeDevice(mass), theta=0.4, softening=0.01)
    assert isinstance(acc, FakeOut) and acc.shape == (400, 3)
    p = pos.astype(np.float64)
    dx = p[None, :, :] - p[:, None, :]
    r2 = (dx ** 2).sum(-1) + 0.01 ** 2
    np.fill_diagonal(r2, np.inf)
    ref = (mass[None, :, None] * dx / r2[..., None] ** 1.5).sum(1)
    err = np.linalg.norm(acc - ref, axis=1) / np.linalg.norm(ref, axis=1)
    assert np.median(err) < 1e-2
    with pytest.raises(_arrays.DeviceError, match="cuda:0 but mass is on cpu"):
        canopy.gravity(FakeDevice(pos), mass)
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        canopy.gravity(FakeDevice(pos[:, :2].copy()))
    with pytest.raises(ValueError, match="backend"):
        canopy.gravity(FakeDevice(pos), backend="cpu")


def test_dense_and_masked_edge_paths_on_emulated_device(fake_device):
    """Unbatched, every point with k + 1 candidates: the edges come from the dense path
    (no compaction), which must drop the point itself where it is among its k + 1 and
    the farthest where equal points hide it; batched with a small example: the masked
    path. Both equal brute force."""
    rng = np.random.default_rng(16)
    x = rng.random((300, 2)).astype(np.float32)
    x[10:25] = x[9]  # 16 equal points: with k = 4 the point itself is often not queried
    for k in (1, 4, 9):
        for loop in (False, True):
            e = canopy.knn_graph(FakeDevice(x), k, loop=loop, flow="target_to_source")
            np.testing.assert_array_equal(e, brute(x, x, k, [0] * 300, [0] * 300, not loop))
    b = np.zeros(300, np.int64)
    b[-3:] = 1
    e = canopy.knn_graph(FakeDevice(x), 4, FakeDevice(b))
    np.testing.assert_array_equal(e, brute(x, x, 4, b, b, True)[::-1])


def test_query_radius_on_emulated_device(fake_device, monkeypatch):
    rng = np.random.default_rng(17)
    x = rng.random((900, 3)).astype(np.float32)
    x[:40] = x[0]  # 40 equal points: k must grow past 16 and 32
    q = rng.random((70, 3)).astype(np.float32)
    q[0] = x[0]
    ix = canopy.Index(FakeDevice(x))
    canopy.host_copies(reset=True)  # what earlier tests in this process counted
    monkeypatch.setattr(canopy, "_RADIUS_CHUNK", 64)  # chunks of rows that shrink as k grows
    for r in (0.0, 0.05, 0.2):
        rows, cols = brute(x, q, len(x), [0] * len(x), [0] * len(q), False, r)
        want = np.bincount(rows, minlength=len(q))
        counts = ix.query_radius(FakeDevice(q), r, count_only=True)
        assert isinstance(counts, FakeOut)
        np.testing.assert_array_equal(counts, want)
        ind, dst = ix.query_radius(FakeDevice(q), r, return_distance=True)
        ends = np.cumsum(want)
        for i, (a, c) in enumerate(zip(ind, dst)):
            assert isinstance(a, FakeOut) and isinstance(c, FakeOut)
            b = cols[ends[i] - want[i]:ends[i]]
            np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(c, np.sqrt(((q[i] - x[b]) ** 2).sum(1)), rtol=1e-6)
        one = ix.query_radius(FakeDevice(q[0]), r)
        np.testing.assert_array_equal(one, cols[:want[0]])
    assert canopy.host_copies() == {}
    with pytest.raises(TypeError, match="float32"):
        ix.query_radius(FakeDevice(q.astype(np.float64)), 0.1)
    with pytest.raises(ValueError, match="expected shape"):
        ix.query_radius(FakeDevice(q[:, :2].copy()), 0.1)


def test_device_calls_on_emulated_device(fake_device, monkeypatch):
    """paircount, kde, Predictor.predict and count_neighbors take the device entries for
    CUDA inputs (the host ones stand in for them here): results as the input's
    framework's arrays, equal to the host calls', and no host copy (host_copies()
    empty)."""
    import os
    rng = np.random.default_rng(18)
    a = rng.random((500, 3)).astype(np.float32)
    b = rng.random((300, 3)).astype(np.float32)
    w = rng.random(500).astype(np.float32)
    forest = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "forest")
    X = np.load(os.path.join(forest, "xgb_multi.X.npy")).astype(np.float32)
    p = canopy.Predictor.load(os.path.join(forest, "xgb_multi.json"))
    canopy.host_copies(reset=True)
    with monkeypatch.context() as m:
        m.setattr(_lib, "predictor_predict", lambda *x: pytest.fail("host predict called"))
        counts, edges = canopy.paircount(FakeDevice(a), 0.01, 0.3, 5, weights1=FakeDevice(w))
        cross, _ = canopy.paircount(FakeDevice(a), 0.0, 0.3, 4, data2=FakeDevice(b),
                                    weights1=FakeDevice(w))
        plain, _ = canopy.paircount(FakeDevice(a), 0.0, 0.3, 4, data2=FakeDevice(b))
        dens = canopy.kde(FakeDevice(a), FakeDevice(a[:50]), bandwidth=0.2)
        self_dens = canopy.kde(FakeDevice(a), bandwidth=0.2)
        got = p.predict(FakeDevice(X))
        got_c = p.predict(FakeDevice(X), output="class")
        got_n = canopy.Index(FakeDevice(a)).count_neighbors(FakeDevice(b), 0.1)
    for out in (counts, edges, cross, plain, dens, self_dens, got, got_c):
        assert isinstance(out, FakeOut)
    assert canopy.host_copies() == {}
    monkeypatch.undo()  # the host entries again, for the references
    want_p = p.predict(X)
    want_c = p.predict(X, output="class")
    want_n = canopy.Index(a).count_neighbors(b, 0.1)
    want = canopy.paircount(a, 0.01, 0.3, 5, weights1=w)
    # weighted sums: the threads' partial sums may add up in another order
    np.testing.assert_allclose(counts, want[0], rtol=1e-12)
    np.testing.assert_array_equal(edges, want[1])
    np.testing.assert_allclose(cross, canopy.paircount(a, 0.0, 0.3, 4, data2=b, weights1=w)[0],
                               rtol=1e-12)
    np.testing.assert_array_equal(plain, canopy.paircount(a, 0.0, 0.3, 4, data2=b)[0])
    assert plain.dtype == np.int64 and counts.dtype == np.float64
    np.testing.assert_allclose(dens, canopy.kde(a, a[:50], bandwidth=0.2), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(self_dens, canopy.kde(a, bandwidth=0.2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, want_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got_c, want_c)
    assert got_c.dtype == np.int64 and got_n == want_n
    p.close()


def test_empty_arrays_are_contiguous_whatever_their_strides():
    # PyTorch and CuPy describe an empty (0, 3) CUDA array with strides (0, 0)
    _arrays._contiguous((0, 3), (0, 0), "x")
    with pytest.raises(ValueError, match="not C-contiguous"):
        _arrays._contiguous((2, 3), (1, 2), "x")


def test_device_call_errors_on_emulated_device(fake_device, monkeypatch):
    monkeypatch.setattr(_lib, "index_build", _lib.lib.canopy_index_build)  # host indexes
    rng = np.random.default_rng(19)
    a = rng.random((50, 3)).astype(np.float32)
    with pytest.raises(_arrays.DeviceError, match="cuda:0 but data2 is on cpu"):
        canopy.paircount(FakeDevice(a), 0.01, 0.3, 5, data2=a)
    with pytest.raises(ValueError, match="weights2 needs data2"):
        canopy.paircount(FakeDevice(a), 0.01, 0.3, 5, weights2=FakeDevice(a[:, 0].copy()))
    with pytest.raises(ValueError, match=r"expected shape \(50\), got \(10,\)"):
        canopy.paircount(FakeDevice(a), 0.01, 0.3, 5, weights1=FakeDevice(a[:10, 0].copy()))
    with pytest.raises(ValueError, match="backend"):
        canopy.paircount(FakeDevice(a), 0.01, 0.3, 5, backend="cpu")
    with pytest.raises(TypeError, match="float32"):
        canopy.kde(FakeDevice(a.astype(np.float64)))
    with pytest.raises(ValueError, match=r"expected shape \(n, 3\)"):
        canopy.kde(FakeDevice(a), FakeDevice(a[:, :2].copy()))
    with pytest.raises(_arrays.DeviceError, match="cuda:0 but queries is on cpu"):
        canopy.kde(FakeDevice(a), a)
    with pytest.raises(_arrays.DeviceError, match="CPU only"):
        canopy.Index(np.sort(a[:, :1], axis=0), tree="bst").search(FakeDevice(a[:, 0].copy()))


class GradWrap(Wrap):
    """A tensor that, like PyTorch's with requires_grad, exports only once detached."""
    requires_grad = True

    def __dlpack__(self, stream=None):
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")

    def detach(self):
        return Wrap(self._a)


def test_tensor_requiring_grad_is_read_detached():
    x = np.random.default_rng(15).random((40, 3)).astype(np.float32)
    np.testing.assert_array_equal(canopy.knn_graph(GradWrap(x), 3), canopy.knn_graph(x, 3))
