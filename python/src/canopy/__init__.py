# SPDX-License-Identifier: MIT
"""canopy: fast irregular workloads on multicore CPUs, from NumPy.

- ``Index(points, tree="kd")``, a tree built once and queried many times:
  ``query(x, k)`` (like ``scipy.spatial.cKDTree.query``), ``query_radius(x, r)`` (like
  scikit-learn's ``KDTree.query_radius``), ``count_neighbors(other, r)`` (like
  ``cKDTree.count_neighbors``), ``gravity`` (octrees), ``search`` (sorted keys);
  ``save(path)`` and ``Index.load(path)`` (mapped, no rebuild).
- ``gravity(bodies, mass, theta, softening)``: Barnes-Hut accelerations.
- ``paircount(data1, rmin, rmax, nbins, ...)``: binned pair counts DD(r).
- ``kde(data, queries, bandwidth, kernel, atol, rtol)``: kernel density estimates
  (log-density, as scikit-learn's ``KernelDensity.score_samples``).
- ``Predictor.load(path).predict(X)``: XGBoost JSON, LightGBM text and canopy models,
  compiled once; ``save`` / ``Predictor.compile(model, path)`` write compiled ``.cpf``
  files that load by mmap.
- ``Regex(patterns)`` / ``grep(patterns, data)``: ``grep -E`` matching on bytes.
- ``knn_graph``, ``radius_graph``, ``knn``, ``radius``: edge lists as torch_cluster's.

NumPy inputs may be any real dtype and memory order; each is converted once to a
C-contiguous float32 array. Objects with ``__dlpack__`` or ``__cuda_array_interface__``
(PyTorch, CuPy, JAX, ...) are taken too: on the CPU copied once, on a CUDA device used in
place by ``Index``, ``Index.query``, ``Index.query_radius``, ``gravity`` and the graph
builders (float32, C-contiguous; results come back on that device, as that framework's
arrays); ``paircount``, ``kde`` and ``Predictor.predict`` copy CUDA inputs to the host
(the library has no device entry for them) and count it in ``host_copies()``. See
docs/python.md in the repository. The GIL is released while the library works. Errors the
library reports come back as exceptions carrying its message (``CanopyError``, also a
``ValueError``, ``OSError``, ``MemoryError`` or ``RuntimeError`` by kind).
"""
import contextlib as _contextlib
import ctypes as _ctypes
import numbers as _numbers
import os as _os
import threading as _threading

import numpy as _np

from . import _arrays, _lib

__all__ = ["Index", "Predictor", "Regex", "grep", "gravity", "host_copies", "info", "kde", "knn",
           "knn_graph", "paircount", "radius", "radius_graph", "set_threads", "threads",
           "CanopyError", "CanopyValueError", "CanopyOSError", "CanopyMemoryError",
           "CanopyRuntimeError", "__version__"]

__version__ = _lib.version().decode()


class CanopyError(Exception):
    """An error the canopy library reported; str() is its message."""


class CanopyValueError(CanopyError, ValueError):
    pass


class CanopyOSError(CanopyError, OSError):
    pass


class CanopyMemoryError(CanopyError, MemoryError):
    pass


class CanopyRuntimeError(CanopyError, RuntimeError):
    pass


# canopy_status -> exception class (CANOPY_ERR_INVALID, IO, FORMAT, NOMEM, UNSUPPORTED,
# DEVICE, INTERNAL).
_ERRORS = {1: CanopyValueError, 2: CanopyOSError, 3: CanopyValueError, 4: CanopyMemoryError,
           5: CanopyRuntimeError, 6: CanopyRuntimeError, 7: CanopyRuntimeError}


def _hint(msg):
    """The library's message, with how to get the CUDA module when that is what is missing."""
    if "CUDA module" in msg and "not installed" in msg:
        msg += ("; pip install ./python on a machine with nvcc builds it into the package "
                "(CANOPY_CUDA=ON pip install ./python insists on it)")
    return msg


def _check(status):
    if status != 0:
        msg = _lib.last_error().decode(errors="replace") or _lib.status_name(status).decode()
        raise _ERRORS.get(status, CanopyError)(_hint(msg))


def info():
    """What this installation can use, as a dict: ``version``; ``build``, "cuda" when the
    CUDA module (``libcanopy_cuda``) was found beside the library, else "cpu-only" (what
    ``pip install ./python`` builds on a machine without nvcc); ``backends``, those that
    loaded ("cpu", and "cuda" when the module loaded and a GPU answered), and
    ``gpu_why_not``, why "cuda" is missing; ``gpu``, the device's name or None;
    ``library``, the path of the libcanopy loaded; ``isa``, the CPU's SIMD ISA;
    ``threads``."""
    cuda = bool(_lib.have_cuda())
    name = _ctypes.create_string_buffer(256)
    total = _ctypes.c_size_t(0)
    ok = _lib.gpu_info(name, len(name), _ctypes.byref(total)) == 0
    return {"version": __version__, "build": "cuda" if cuda else "cpu-only",
            "backends": ["cpu", "cuda"] if ok else ["cpu"], "library": _lib.lib._name,
            "gpu": name.value.decode() if ok else None,
            "gpu_memory_bytes": total.value if ok else 0,
            "gpu_why_not": "" if ok else _hint(_lib.last_error().decode()),
            "isa": _lib.isa_name(_lib.cpu_isa()).decode(), "threads": _lib.threads()}


def __dir__():
    return sorted(__all__)


def set_threads(n):
    """CPU threads for later calls (default: CANOPY_THREADS, else all cores)."""
    if not isinstance(n, _numbers.Integral) or n < 1:
        raise ValueError("threads must be an integer >= 1")
    _lib.set_threads(int(n))


def threads():
    return _lib.threads()


def _host(a, name):
    """a parsed (any array protocol) as a host input: its _arrays.Array, whose .host is
    a NumPy array; device arrays are refused where no device path exists yet."""
    arr = _arrays.parse(a, name)
    if arr.on_device:
        arr.release()
        raise _arrays.DeviceError(f"{name} is on {arr.where}: this call does not take device "
                                  "arrays yet (Index, Index.query, query_radius, "
                                  "count_neighbors, gravity, the graph builders, paircount, "
                                  "kde and Predictor.predict do); pass a host array")
    return arr


def _host_copy(a, name, call):
    """a parsed, as a host input: a CUDA array is copied to the host once, counted in
    host_copies() under call (for the calls whose library entry reads host memory only);
    None stays None."""
    if a is None:
        return None
    arr = _arrays.parse(a, name)
    if arr.on_device:
        try:
            _arrays.copy_to_host(arr, call)
        except BaseException:
            arr.release()
            raise
    return arr


def _back(template, out, call):
    """A result computed on the host for template's input: on its device when it came
    from one (a counted copy), else as the host path returns it."""
    return _arrays.device_result(template, out, call) if template.on_device else out


def host_copies(reset=False):
    """The host copies made for CUDA inputs of calls that have no device path in the
    library (today only kde over an Index with CUDA queries): per call, ``inputs``
    copied to the host, their ``bytes_to_host``, and ``bytes_to_device`` of the results
    sent back. The other calls with CUDA inputs (paircount, kde, Predictor.predict
    included) read them in place and never appear. reset: zero the counts after reading
    them."""
    out = {k: {"inputs": v[0], "bytes_to_host": v[1], "bytes_to_device": v[2]}
           for k, v in _arrays.HOST_COPIES.items()}
    if reset:
        _arrays.HOST_COPIES.clear()
    return out


def _real_array(a, name):
    return _host(a, name).host


def _f32(a, name, ndim, copy=False):
    """a as a C-contiguous float32 array of ndim dimensions (one conversion at most)."""
    arr = _real_array(a, name)
    if arr.ndim != ndim:
        want = "(n, d)" if ndim == 2 else "(n,)"
        raise ValueError(f"{name}: expected a {ndim}-D array {want}, got shape {arr.shape}")
    if copy:
        return _np.array(arr, dtype=_np.float32, order="C", copy=True)
    return _np.ascontiguousarray(arr, dtype=_np.float32)


def _points(arr):
    """The canopy_points view of a C-contiguous float32 (n, d) array."""
    n, d = arr.shape
    return _lib.Points(arr.ctypes.data, n, d, d)


def _parse(fn, s, what):
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a string")
    out = _ctypes.c_int()
    _check(fn(s.encode(), _ctypes.byref(out)))
    return out.value


class _Handle:
    """A C handle shared by Python threads: calls hold a use count, and close() waits for
    the calls in flight, so a handle is never freed under a running query."""

    def __init__(self, ptr, free, what):
        self._ptr, self._free, self._what = ptr, free, what
        self._uses = 0
        self._cond = _threading.Condition()

    @_contextlib.contextmanager
    def use(self):
        with self._cond:
            if self._ptr is None:
                raise ValueError(f"the {self._what} was closed")
            self._uses += 1
        try:
            yield self._ptr
        finally:
            with self._cond:
                self._uses -= 1
                self._cond.notify_all()

    def close(self):
        with self._cond:
            while self._uses:
                self._cond.wait()
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._free(ptr)

    @property
    def closed(self):
        return self._ptr is None


class _Owner:
    """An object over a _Handle (self._h): closed at garbage collection and at the end
    of a with block; close() is the subclass's."""

    @property
    def closed(self):
        return self._h.closed

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _path(path, what):
    if not isinstance(path, (str, bytes, _os.PathLike)):
        raise TypeError(f"{what} must be a path (str, bytes or os.PathLike)")
    return _os.fsencode(path)


def _not_input(out, inputs, what):
    """Refuses an output path that names one of the inputs (the same file, or for a new
    file the same resolved name), as the CLI does: an atomic rename would replace it."""
    o = _os.fsencode(out)
    for i in inputs:
        if i is None:
            continue
        i = _os.fsencode(i)
        try:
            same = _os.path.samefile(o, i)
        except OSError:
            same = _os.path.realpath(o) == _os.path.realpath(i)
        if same:
            raise ValueError(f"{what} {_os.fsdecode(o)!r} is the input {_os.fsdecode(i)!r}; "
                             "refusing to overwrite it")


def _radius(r):
    if isinstance(r, bool) or not isinstance(r, _numbers.Real) or not _np.isfinite(r) or r < 0:
        raise ValueError("r must be a finite number >= 0")
    return float(r)


# Rows of kNN output (m * k values) query_radius asks for at once, to bound its memory.
_RADIUS_CHUNK = 1 << 22


class Index(_Owner):
    """A tree built once over a fixed set of points and queried any number of times.

    points: (n, d) array-like of reals, converted once to float32; the library keeps its
    own copy in tree order, and this object a read-only float32 copy (``data``), so later
    changes to the caller's array reach neither. tree: "kd", "ball" or "vp" (kNN, radius
    and count queries, any d), "oct" (d = 3: ``gravity``, radius; weights = masses) or
    "bst" (d = 1, keys sorted ascending: ``search``). leaf_size: points per leaf, 0 for
    the tree's default. backend: "auto", "cpu" or "gpu" (with the CUDA module beside the
    library) for the queries. residency: "host", or "device"/"both" to keep the tree on
    the GPU (with the CUDA module and a GPU; otherwise a CanopyRuntimeError); None: "host",
    or "device" for CUDA points. Results never depend on the tree kind, backend or
    residency; only speed does. ``save(path)`` writes the index file, ``Index.load(path)``
    maps it back without a rebuild.

    CUDA points (float32, C-contiguous, PyTorch or CuPy) build a kd index on the GPU in
    place (no host copy; ``data`` is None) on the framework's current stream; ``query``
    with CUDA queries answers on the device (with the index on the device: built from
    CUDA points, or residency "device"/"both").
    """

    def __init__(self, points, tree="kd", leaf_size=0, backend="auto", residency=None,
                 weights=None):
        kind = _parse(_lib.tree_kind_parse, tree, "tree")
        if not isinstance(leaf_size, _numbers.Integral) or not 0 <= leaf_size < 2**31:
            raise ValueError("leaf_size must be an integer in [0, 2**31) (0: the tree's "
                             "default)")
        if residency is not None and (not isinstance(residency, str)
                                      or residency not in _lib.RESIDENCY):
            raise ValueError(f"residency must be one of {', '.join(_lib.RESIDENCY)}")
        src = _arrays.parse(points, "points")
        if src.on_device:
            with src:
                h = _build_device(src, kind, int(leaf_size), residency, weights)
            self._init(h, None, backend)
            return
        arr = src.host
        residency = residency or "host"
        if kind == _lib.TREE_BST and arr.ndim == 1:
            arr = arr[:, None]
        data = _f32(arr, "points", 2, copy=True)
        if data.shape[1] < 1:
            raise ValueError("points: need at least one column")
        opt = _lib.index_options_default(kind)
        opt.leaf_size = int(leaf_size)
        opt.residency = _lib.RESIDENCY[residency]
        mass = None
        if weights is not None:
            if kind != _lib.TREE_OCT:
                raise ValueError("weights (masses) are for tree=\"oct\" only")
            mass = _f32(weights, "weights", 1)
            if mass.shape[0] != data.shape[0]:
                raise ValueError(f"weights has {mass.shape[0]} values but there are "
                                 f"{data.shape[0]} points")
            opt.weights = mass.ctypes.data
        h = _ctypes.c_void_p()
        _check(_lib.index_build(_points(data), _ctypes.byref(opt), _ctypes.byref(h)))
        data.setflags(write=False)
        self._init(h, data, backend)

    def _init(self, h, data, backend):
        self._h = _Handle(h, _lib.index_free, "index")  # first: whatever fails next, h is freed
        self.data = data
        self._opt = _lib.run_options_default()
        self._opt.backend = _parse(_lib.backend_parse, backend, "backend")
        info = self.info()
        self.n, self.d, self.tree = info["n"], info["d"], info["tree"]
        self._residency = info["residency"]
        # The first gravity call caches the bodies in their original order (canopy.h).
        self._gravity_lock = _threading.Lock()

    @classmethod
    def load(cls, path, backend="auto"):
        """An index saved by ``save`` (or ``canopy index build``), mapped from the file:
        no rebuild. ``data`` is None (the file keeps the points in tree order only)."""
        h = _ctypes.c_void_p()
        _check(_lib.index_load(_path(path, "path"), _ctypes.byref(h)))
        self = cls.__new__(cls)
        self._init(h, None, backend)  # on failure, __del__ frees h through self._h
        self._source = _path(path, "path")
        return self

    def save(self, path):
        """Writes the index file (atomically: a failed write leaves no partial file);
        never over the file the index was loaded from."""
        _not_input(_path(path, "path"), [getattr(self, "_source", None)], "path")
        with self._h.use() as h:
            _check(_lib.index_save(h, _path(path, "path")))

    def info(self):
        """The index's facts: tree, n, d, nodes, depth, leaf_size, residency, mapped
        (loaded from a file), builds (1, or 0 when loaded), queries answered, bytes."""
        st = _lib.IndexInfo()
        with self._h.use() as h:
            _check(_lib.index_get_info(h, _ctypes.byref(st)))
        names = {v: k for k, v in _lib.RESIDENCY.items()}
        return {"tree": _lib.tree_kind_name(st.kind).decode(), "n": st.n, "d": st.d,
                "nodes": st.n_nodes, "depth": st.depth, "leaf_size": st.leaf_size,
                "residency": names.get(st.residency, str(st.residency)),
                "mapped": bool(st.mapped), "builds": st.builds, "queries": st.queries,
                "build_seconds": st.build_seconds, "bytes": st.bytes,
                "device_bytes": st.device_bytes, "gpu_built": bool(st.gpu_built)}

    def close(self):
        """Frees the index now (later calls raise ValueError); waits for calls in flight."""
        if getattr(self, "_h", None) is not None:
            self._h.close()

    def __len__(self):
        return self.n

    def __repr__(self):
        if self.closed:
            return "<canopy.Index closed>"
        i = self.info()
        how = "mapped from a file" if i["mapped"] else f"built in {i['build_seconds']:.3g} s"
        return (f"<canopy.Index {i['tree']}: {i['n']} points in {i['d']}-D, {i['nodes']} nodes, "
                f"depth {i['depth']}, leaf size {i['leaf_size']}, {i['residency']}, {how}>")

    def _queries(self, x):
        arr = _real_array(x, "x")
        single = arr.ndim == 1
        if single:
            arr = arr[None, :]
        q = _f32(arr, "x", 2)
        if q.shape[1] != self.d:
            raise ValueError(f"x has {q.shape[1]} columns but the index points have {self.d}")
        return q, single

    def _knn(self, q, k):
        idx = _np.empty((q.shape[0], k), dtype=_np.int64)
        d2 = _np.empty((q.shape[0], k), dtype=_np.float32)
        if q.shape[0] > 0:
            with self._h.use() as h:
                _check(_lib.index_knn(h, _points(q), int(k), _ctypes.byref(self._opt),
                                      idx.ctypes.data_as(_lib.PI64),
                                      d2.ctypes.data_as(_lib.PF32), None))
        return idx, d2

    def query(self, x, k=1):
        """The k nearest points of each row of x: (distances, indices), like cKDTree.

        Distances are Euclidean (the C canopy_knn returns squared ones), ascending, ties
        broken by the smaller index. Shapes (m, k), or (m,) for k=1, without the m axis
        for a single 1-D point. When fewer than k points exist, the tail is inf and n.
        x on a CUDA device: answered there (canopy_index_knn_device), results on it.
        """
        if not isinstance(k, _numbers.Integral) or isinstance(k, bool) or k < 1:
            raise ValueError("k must be an integer >= 1")
        if k > 2**31 - 1:
            raise ValueError("k must be < 2**31")
        src = _arrays.parse(x, "x")
        with src:
            if src.on_device:
                fw = _arrays.check_current(src)
                idx, d2, single = self._knn_device(src, int(k), fw)
                dist = fw.sqrt_(d2)
            else:
                q, single = self._queries(src.host)
                idx, d2 = self._knn(q, int(k))
                dist = _np.sqrt(d2)
        # the library's -1 (no k-th point) as n: arithmetic, not a mask, so a device
        # array is fixed without a synchronisation
        idx += (idx < 0) * (self.n + 1)
        if k == 1:
            dist, idx = dist[:, 0], idx[:, 0]
        if single:
            dist, idx = dist[0], idx[0]
        if not src.on_device:
            dist, idx = _arrays.host_result(src, dist), _arrays.host_result(src, idx)
        return dist, idx

    def _knn_device(self, src, k, fw):
        q, m, single = self._device_queries(src)
        idx = fw.empty(src.obj, (m, k), fw.int64)
        d2 = fw.empty(src.obj, (m, k), fw.float32)
        if m > 0:
            with self._h.use() as h:
                _check(_lib.index_knn_device(h, q, m, k, _ctypes.byref(self._opt),
                                             fw.ptr(idx), fw.ptr(d2), src.stream or 0, None))
        return idx, d2, single

    def _counts(self, q, r):
        counts = _np.empty(q.shape[0], dtype=_np.int64)
        if q.shape[0] > 0:
            with self._h.use() as h:
                _check(_lib.index_radius_count(h, _points(q), _radius(r),
                                               _ctypes.byref(self._opt),
                                               counts.ctypes.data_as(_lib.PI64), None))
        return counts

    def query_radius(self, x, r, return_distance=False, count_only=False):
        """Points within distance r (dist <= r) of each row of x, like scikit-learn's
        KDTree.query_radius: an object array of int64 index arrays (ascending by
        distance), or with count_only the counts, or with return_distance also the
        distances.

        x on a CUDA device (with the index on the device): answered there by device kNN
        calls whose k doubles until every row's count is below it (no host copy of the
        points or the results); counts are a device array, and the object array's rows
        are views of one device array (the counts are read on the host to cut them)."""
        src = _arrays.parse(x, "x")
        if src.on_device:
            with src:
                return self._radius_device(src, _radius(r), return_distance, count_only)
        q, single = self._queries(src.host)
        counts = self._counts(q, r)
        if count_only:
            return counts[0] if single else counts
        m = q.shape[0]
        ind = _np.empty(m, dtype=object)
        dst = _np.empty(m, dtype=object)
        start = 0
        while start < m:
            # A kNN with k = the largest count of a chunk of rows, cut at each row's count.
            stop, kmax = start, 0
            while stop < m and max(kmax, counts[stop]) * (stop - start + 1) <= _RADIUS_CHUNK:
                kmax = max(kmax, int(counts[stop]))
                stop += 1
            stop = max(stop, start + 1)
            kmax = max(kmax, int(counts[start]))
            idx, d2 = self._knn(q[start:stop], kmax) if kmax else (None, None)
            for i in range(start, stop):
                c = int(counts[i])
                ind[i] = idx[i - start, :c].copy() if c else _np.empty(0, dtype=_np.int64)
                dst[i] = _np.sqrt(d2[i - start, :c]) if c else _np.empty(0, dtype=_np.float32)
            start = stop
        if single:
            ind, dst = ind[0], dst[0]
        return (ind, dst) if return_distance else ind

    def _radius_device(self, src, r, return_distance, count_only):
        fw = _arrays.check_current(src)
        q, m, single = self._device_queries(src)
        r2 = float(_np.float32(r) * _np.float32(r))  # the library's radius test
        counts = fw.empty(src.obj, (m,), fw.int64)
        if self.n == 0:
            counts[:] = 0
        parts, start, k = [], 0, min(16, self.n)
        while start < m and self.n > 0:
            stop = min(m, start + max(1, _RADIUS_CHUNK // k))
            idx = fw.empty(src.obj, (stop - start, k), fw.int64)
            d2 = fw.empty(src.obj, (stop - start, k), fw.float32)
            with self._h.use() as h:
                _check(_lib.index_knn_device(h, q + 4 * start * self.d, stop - start, k,
                                             _ctypes.byref(self._opt), fw.ptr(idx), fw.ptr(d2),
                                             src.stream or 0, None))
            within = d2 <= r2  # a prefix of each row: distances ascend
            c = within.sum(1)
            if k < self.n and bool((c == k).any()):  # some row may have more: k too small
                k = min(2 * k, self.n)
                continue
            counts[start:stop] = c
            parts.append((idx, d2, within))
            start = stop
        if count_only:
            return counts[0] if single else counts
        ind = fw.concat([i[w] for i, _, w in parts]) if parts else fw.empty(src.obj, (0,),
                                                                              fw.int64)
        dst = (fw.sqrt_(fw.concat([d[w] for _, d, w in parts])) if parts
               else fw.empty(src.obj, (0,), fw.float32))
        ends = _np.cumsum(fw.to_numpy(counts))
        rows_i, rows_d = _np.empty(m, dtype=object), _np.empty(m, dtype=object)
        for i in range(m):
            a, b = (int(ends[i - 1]) if i else 0), int(ends[i])
            rows_i[i], rows_d[i] = ind[a:b], dst[a:b]
        if single:
            rows_i, rows_d = rows_i[0], rows_d[0]
        return (rows_i, rows_d) if return_distance else rows_i

    def _device_queries(self, src):
        """(pointer, m, single) of CUDA queries for this index's device copy."""
        if self._residency == "host":
            raise _arrays.DeviceError(f"x is on {src.where} but the index has no device copy: "
                                      "build it from device points or with "
                                      "residency=\"device\"")
        if src.dtype != _np.float32:
            raise TypeError(f"x: device arrays must be float32, got {src.dtype}")
        single = len(src.shape) == 1
        m, d = (1, src.shape[0]) if single else (src.shape + (None,))[:2]
        if len(src.shape) not in (1, 2) or d != self.d:
            raise ValueError(f"x: expected shape (m, {self.d}), got {src.shape}")
        return src.ptr, m, single

    def count_neighbors(self, other, r):
        """Pairs (p in this index, q in other) with |p - q| <= r, like
        cKDTree.count_neighbors: an int for a scalar r, an int64 array for an array of
        radii. other: an Index built from points, or an (m, d) array.

        A CUDA other (with this index on the device) is counted there, as
        ``query_radius(other, r, count_only=True)`` (device kNN calls, no host copy of
        the points); the per-point counts are summed on the device and read back."""
        if not isinstance(other, Index):
            src = _arrays.parse(other, "other")
            if src.on_device:
                with src:
                    return self._count_device(src, r)
            other = src.host
        if isinstance(other, Index):
            if other.data is None:
                raise ValueError("other keeps no host point array (loaded from a file or "
                                 "built from device points); pass its points instead")
            q = other.data
        else:
            q = self._queries(other)[0]
        if q.shape[1] != self.d:
            raise ValueError(f"other has {q.shape[1]} columns but the index points have {self.d}")
        if _np.ndim(r) == 0:
            # Counting from the other side: per point of other, this index's points within r.
            return int(self._counts(q, r).sum())
        radii = _real_array(r, "r")
        return _np.array([int(self._counts(q, float(v)).sum()) for v in radii.ravel()],
                        dtype=_np.int64).reshape(radii.shape)

    def _count_device(self, src, r):
        if len(src.shape) != 2:
            raise ValueError(f"other: expected shape (m, {self.d}), got {src.shape}")

        def one(v):
            counts = self._radius_device(src, _radius(v), False, True)
            return int(counts.sum())
        if _np.ndim(r) == 0:
            return one(r)
        radii = _real_array(r, "r")
        return _np.array([one(float(v)) for v in radii.ravel()],
                         dtype=_np.int64).reshape(radii.shape)

    def gravity(self, theta=0.5, softening=0.0):
        """tree="oct": Barnes-Hut accelerations (G = 1) of the indexed bodies from all
        others, (n, 3) float32 in the order of the points given, masses from weights.
        An oct index is built and walked on the host (device points build kd indexes
        only), so the result is a NumPy array; for bodies on a GPU, ``canopy.gravity``
        runs the GPU walk on them in place."""
        theta, softening = _gravity_params(theta, softening)
        acc = _np.empty((self.n, 3), dtype=_np.float32)
        if self.n > 0:
            with self._gravity_lock, self._h.use() as h:
                _check(_lib.index_gravity(h, theta, softening, _ctypes.byref(self._opt),
                                          acc.ctypes.data_as(_lib.PF32), None))
        return acc

    def search(self, x):
        """tree="bst": per query, the index of the first key >= it (n when none), as
        numpy.searchsorted(keys, x, side="left"). x: any shape; the result has its shape.
        bst indexes search on the CPU only: a CUDA x is refused (there is no GPU search
        to run it in place; pass a host copy, or use torch.searchsorted /
        cupy.searchsorted on the device)."""
        src = _arrays.parse(x, "x")
        if src.on_device:
            src.release()
            raise _arrays.DeviceError(
                f"x is on {src.where}: bst indexes search on the CPU only (no GPU search "
                "exists to use it in place); pass a host array (x.cpu() / cupy.asnumpy(x)) "
                "or search on the device with torch.searchsorted / cupy.searchsorted")
        arr = src.host
        q = _np.ascontiguousarray(arr.ravel(), dtype=_np.float32)
        out = _np.empty(q.shape[0], dtype=_np.int64)
        if q.shape[0] > 0:
            with self._h.use() as h:
                _check(_lib.index_search(h, q.ctypes.data_as(_lib.PF32), q.shape[0],
                                         _ctypes.byref(self._opt),
                                         out.ctypes.data_as(_lib.PI64), None))
        return out.reshape(arr.shape)


_MAX_BINS = 1_000_000  # canopy_paircount_edges' limit


def paircount(data1, rmin, rmax, nbins, data2=None, weights1=None, weights2=None, log=False,
              boxsize=None, tree="kd", backend="auto"):
    """Binned pair counts DD(r), as Corrfunc and TreeCorr define them: (counts, edges).

    Bin b holds the pairs (i of data1, j of data2) with edges[b] <= |x_i - y_j| <
    edges[b + 1] (nbins bins over [rmin, rmax), linear, or logarithmic with log=True),
    distances compared as float32 squares. Without data2, the auto-correlation of
    data1: every ordered pair i != j, so each unordered pair counts twice (Corrfunc's
    autocorr=1; halve for TreeCorr). With weights (a missing side weighs 1) a bin holds
    the sum of w1[i] * w2[j] (float64); without, counts are int64. boxsize: the data lie
    in the periodic cube [0, boxsize)^d, minimum-image distances, rmax <= boxsize / 2.

    CUDA inputs (float32, C-contiguous, PyTorch or CuPy, all on the current device) are
    read in place by canopy_paircount_device: the kd trees are built on the GPU and the
    pair walk runs there (tree "kd", backend "auto" or "gpu"); counts and edges (nbins
    values the library returns on the host) come back on the input's device. No host
    copy of the points (``host_copies()`` stays empty).
    """
    names = ("data1", "data2", "weights1", "weights2")
    with _contextlib.ExitStack() as stack:
        srcs = [None if a is None else stack.enter_context(_arrays.parse(a, n))
                for a, n in zip((data1, data2, weights1, weights2), names)]
        _arrays.same_place(srcs)
        po = _paircount_options(rmin, rmax, nbins, log, boxsize)
        # The library checks nbins (at most _MAX_BINS) before it writes any edge.
        edges = _np.empty(min(max(po.nbins, 0), _MAX_BINS) + 1, dtype=_np.float64)
        _check(_lib.paircount_edges(_ctypes.byref(po), edges.ctypes.data_as(_lib.PF64)))
        opt = _lib.run_options_default()
        opt.tree = _parse(_lib.tree_kind_parse, tree, "tree")
        opt.backend = _parse(_lib.backend_parse, backend, "backend")
        if srcs[0].on_device:
            counts = _paircount_device(srcs, po, opt)
        else:
            counts = _paircount_host([None if a is None else a.host for a in srcs], po, opt)
    if weights1 is None and weights2 is None:
        counts = counts.astype(_np.int64)
    if srcs[0].on_device:
        return _arrays.small_result(srcs[0], counts), _arrays.small_result(srcs[0], edges)
    return counts, edges


def _paircount_options(rmin, rmax, nbins, log, boxsize):
    if not isinstance(nbins, _numbers.Integral) or isinstance(nbins, bool):
        raise ValueError("nbins must be an integer")
    box = 0.0 if boxsize is None else boxsize
    for name, v in (("rmin", rmin), ("rmax", rmax), ("boxsize", box)):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise ValueError(f"{name} must be a number")
    if boxsize is not None and not box > 0:
        raise ValueError("boxsize must be > 0 (None: no periodic box)")
    po = _lib.paircount_options_default()
    po.rmin, po.rmax, po.boxsize = float(rmin), float(rmax), float(box)
    po.log_bins = 1 if log else 0
    po.nbins = int(min(max(nbins, -1), 2**31 - 1))
    return po


def _paircount_host(arrays, po, opt):
    data1, data2, weights1, weights2 = arrays
    d1 = _f32(data1, "data1", 2)
    d2 = None if data2 is None else _f32(data2, "data2", 2)
    if d2 is not None and d2.shape[1] != d1.shape[1]:
        raise ValueError(f"data1 has {d1.shape[1]} columns but data2 has {d2.shape[1]}")
    ws = []
    for name, w, pts in (("weights1", weights1, d1), ("weights2", weights2, d2)):
        if w is None:
            ws.append(None)
            continue
        if name == "weights2" and pts is None:
            raise ValueError("weights2 needs data2 (the auto-correlation uses weights1)")
        arr = _f32(w, name, 1)
        if arr.shape[0] != pts.shape[0]:
            raise ValueError(f"{name} has {arr.shape[0]} values but its data has "
                             f"{pts.shape[0]} points")
        ws.append(arr)
    counts = _np.zeros(po.nbins, dtype=_np.float64)
    other = _lib.Points(None, 0, d1.shape[1], 0) if d2 is None else _points(d2)
    wp = [None if w is None else w.ctypes.data_as(_lib.PF32) for w in ws]
    _check(_lib.paircount(_points(d1), wp[0], other, wp[1], _ctypes.byref(po), _ctypes.byref(opt),
                          counts.ctypes.data_as(_lib.PF64), None))
    return counts


def _paircount_device(srcs, po, opt):
    """Counts (NumPy float64) of CUDA inputs, read in place (canopy_paircount_device)."""
    d1, d2, w1, w2 = srcs
    fw = _arrays.check_current(d1)
    if opt.backend not in (0, _lib.BACKEND_GPU):
        raise ValueError("data1 is on the GPU: backend must be \"auto\" or \"gpu\"")
    _device_f32(d1, (None, None))
    n1, dim = d1.shape
    if d2 is not None:
        _device_f32(d2, (None, dim))
    if w2 is not None and d2 is None:
        raise ValueError("weights2 needs data2 (the auto-correlation uses weights1)")
    ptrs = []
    for w, pts in ((w1, d1), (w2, d2)):
        if w is not None:
            _device_f32(w, (pts.shape[0],))
        ptrs.append(None if w is None else w.ptr)
    # The device entry takes both weight arrays or neither: a missing side weighs 1.
    ones = None
    if d2 is not None and (w1 is None) != (w2 is None):
        side = d1 if w1 is None else d2
        ones = fw.empty(side.obj, (side.shape[0],), fw.float32)
        ones[...] = 1
        ptrs[0 if w1 is None else 1] = fw.ptr(ones)
    counts = _np.zeros(po.nbins, dtype=_np.float64)
    other = (_lib.Points(None, 0, dim, 0) if d2 is None
             else _lib.Points(d2.ptr, d2.shape[0], dim, dim))
    _check(_lib.paircount_device(_lib.Points(d1.ptr, n1, dim, dim), ptrs[0], other, ptrs[1],
                                 _ctypes.byref(po), _ctypes.byref(opt),
                                 counts.ctypes.data_as(_lib.PF64), d1.stream or 0, None))
    return counts


def _gravity_params(theta, softening):
    for name, v in (("theta", theta), ("softening", softening)):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real) or not _np.isfinite(v):
            raise ValueError(f"{name} must be a finite number")
    if theta <= 0:
        raise ValueError("theta must be > 0")
    if softening < 0:
        raise ValueError("softening must be >= 0")
    return float(theta), float(softening)


def gravity(bodies, mass=None, theta=0.5, softening=0.0, backend="auto"):
    """Barnes-Hut accelerations (G = 1) of each body from all others: (n, 3) float32.

    bodies: (n, 3) positions; mass: (n,) or None (equal masses 1/n); theta: opening
    angle (> 0, smaller is more exact); softening: Plummer length (>= 0).

    CUDA bodies (and mass; float32, C-contiguous, PyTorch or CuPy) run the GPU
    multipole walk in place (canopy_gravity_multipole_device: quadrupoles, its own
    accuracy table, so values differ from the CPU's within theta's error); the result is
    on the same device."""
    src = _arrays.parse(bodies, "bodies")
    if src.on_device:
        with src:
            return _gravity_device(src, mass, theta, softening, backend)
    pos = _f32(src.host, "bodies", 2)
    n = pos.shape[0]
    m = None
    if mass is not None:
        m = _f32(mass, "mass", 1)
        if m.shape[0] != n:
            raise ValueError(f"mass has {m.shape[0]} values but there are {n} bodies")
    theta, softening = _gravity_params(theta, softening)
    opt = _lib.run_options_default()
    opt.backend = _parse(_lib.backend_parse, backend, "backend")
    acc = _np.empty_like(pos)
    if n > 0:
        _check(_lib.gravity(_points(pos), None if m is None else m.ctypes.data_as(_lib.PF32),
                            theta, softening, _ctypes.byref(opt),
                            acc.ctypes.data_as(_lib.PF32), None))
    return _arrays.host_result(src, acc)


def _device_f32(a, shape):
    """Checks a CUDA input's dtype and shape (None in shape: any size)."""
    if a.dtype != _np.float32:
        raise TypeError(f"{a.name}: device arrays must be float32, got {a.dtype} (convert on "
                        "the device first, e.g. x.float())")
    if len(a.shape) != len(shape) or any(w is not None and w != s
                                         for s, w in zip(a.shape, shape)):
        want = "(" + ", ".join("n" if w is None else str(w) for w in shape) + ")"
        raise ValueError(f"{a.name}: expected shape {want}, got {a.shape}")


def _build_device(src, kind, leaf_size, residency, weights):
    """A kd index built on the GPU from CUDA points, in place."""
    _arrays.check_current(src)
    if kind != _lib.TREE_KD:
        raise ValueError(f"tree {_lib.tree_kind_name(kind).decode()}: device points build kd "
                         "indexes only (others are not yet supported for device arrays)")
    if weights is not None:
        raise ValueError("weights are for tree=\"oct\", which device points cannot build yet")
    if residency not in (None, "device"):
        raise ValueError(f"residency {residency!r}: an index built from device points lives on "
                         "the device (residency \"device\")")
    _device_f32(src, (None, None))
    n, d = src.shape
    if d < 1:
        raise ValueError("points: need at least one column")
    opt = _lib.index_options_default(kind)
    opt.leaf_size = leaf_size
    h = _ctypes.c_void_p()
    _check(_lib.index_build_device(_lib.Points(src.ptr, n, d, d), _ctypes.byref(opt),
                                   src.stream or 0, _ctypes.byref(h)))
    return h


def _gravity_device(src, mass, theta, softening, backend):
    theta, softening = _gravity_params(theta, softening)
    if _parse(_lib.backend_parse, backend, "backend") not in (0, _lib.BACKEND_GPU):
        raise ValueError("bodies are on the GPU: backend must be \"auto\" or \"gpu\"")
    fw = _arrays.check_current(src)
    _device_f32(src, (None, 3))
    n = src.shape[0]
    with _contextlib.ExitStack() as stack:
        m = None if mass is None else stack.enter_context(_arrays.parse(mass, "mass"))
        _arrays.same_place([src, m])
        if m is not None:
            _device_f32(m, (n,))
        g = _lib.gravity_options_default()
        g.theta, g.softening = theta, softening
        opt = _lib.run_options_default()
        opt.backend = _lib.BACKEND_GPU
        acc = fw.empty(src.obj, (n, 3), fw.float32)
        if n > 0:
            _check(_lib.gravity_multipole_device(_lib.Points(src.ptr, n, 3, 3),
                                                 None if m is None else m.ptr,
                                                 _ctypes.byref(g), _ctypes.byref(opt),
                                                 fw.ptr(acc), None, src.stream or 0, None))
    return acc


def _predict_options(layout, engine, backend):
    opt = _lib.predict_options_default()
    opt.layout = _parse(_lib.forest_layout_parse, layout, "layout")
    opt.engine = _parse(_lib.forest_engine_parse, engine, "engine")
    opt.backend = _parse(_lib.backend_parse, backend, "backend")
    return opt


def _is_compiled(path):
    try:
        with open(path, "rb") as f:
            return f.read(len(_lib.PREDICTOR_MAGIC)) == _lib.PREDICTOR_MAGIC
    except OSError:
        return False  # the library's loader reports the file's problem


class Predictor(_Owner):
    """A decision forest compiled once for prediction: ``Predictor.load(path).predict(X)``.

    The layout and engine are chosen and built at load; every ``predict`` reuses them.
    ``save(path)`` writes a compiled predictor file (``.cpf``), which ``load`` maps with
    no model parsing; ``Predictor.compile(model, path)`` does both steps at once.
    """

    def __init__(self, handle, forest, path):
        self._h = _Handle(handle, _lib.predictor_free, "predictor")
        # An imported model must outlive its predictor (canopy_predictor_compile).
        self._forest = forest
        self.path = path
        info = _lib.ForestInfo()
        _lib.forest_get_info(_lib.predictor_forest(handle), _ctypes.byref(info))
        self.n_features, self.n_outputs = info.n_features, info.n_outputs
        self.n_trees, self.n_classes = info.n_trees, info.n_classes
        self.source = (info.source or b"").decode()
        self.objective = (info.objective or b"").decode()
        # A GPU predictor keeps its layout on the device: its calls must not overlap.
        gpu = _lib.predictor_options(handle).backend == _lib.BACKEND_GPU
        self._serial = _threading.Lock() if gpu else _contextlib.nullcontext()
        # The GPU twin of a CPU predictor, for CUDA rows (made at the first such call;
        # its calls are serialised by _gpu_lock, as a GPU predictor's).
        self._gpu = None
        self._gpu_lock = _threading.Lock()

    @classmethod
    def load(cls, path, format="auto", layout="auto", engine="auto", backend="auto"):
        """Loads a compiled predictor file (.cpf, by mmap, with its saved options) or an
        XGBoost JSON, LightGBM text or canopy JSON model (format "auto" detects it from
        the content), compiled with layout, engine and backend ("auto": the library's
        choice; backend auto means the CPU)."""
        p = _path(path, "path")
        fmt = _parse(_lib.forest_format_parse, format, "format")
        opt = _predict_options(layout, engine, backend)
        h = _ctypes.c_void_p()
        if _is_compiled(p):
            if (format, layout, engine, backend) != ("auto",) * 4:
                raise ValueError(f"{_os.fsdecode(p)} is a compiled predictor: it carries its "
                                 "own options (format, layout, engine and backend must be "
                                 "\"auto\")")
            _check(_lib.predictor_load(p, _ctypes.byref(h)))
            return cls(h, None, _os.fsdecode(p))
        forest = _Handle(_ctypes.c_void_p(), _lib.forest_free, "model")
        _check(_lib.forest_load(p, fmt, _ctypes.byref(forest._ptr)))
        try:
            _check(_lib.predictor_compile(forest._ptr, _ctypes.byref(opt), _ctypes.byref(h)))
        except BaseException:
            forest.close()
            raise
        return cls(h, forest, _os.fsdecode(p))

    @classmethod
    def compile(cls, model, path, format="auto", layout="auto", engine="auto", backend="auto"):
        """Compiles a model file (or a loaded Predictor) and saves it to path as a
        compiled predictor file; returns the Predictor."""
        if not isinstance(model, Predictor):
            _not_input(_path(path, "path"), [_path(model, "model")], "path")
        p = model if isinstance(model, Predictor) else cls.load(model, format, layout, engine,
                                                                 backend)
        p.save(path)
        return p

    def save(self, path):
        """Writes the compiled predictor file (atomically); never over the model file it
        was loaded from."""
        _not_input(_path(path, "path"), [self.path], "path")
        with self._h.use() as h:
            _check(_lib.predictor_save(h, _path(path, "path")))

    def predict(self, X, output="prob"):
        """Predictions for the rows of X (n, features); NaN is a missing value.

        output: "prob" (default, as the CLI and XGBoost's predict: the objective's link
        applied), "raw" (margins; the C library's default) or "class" (int64 class
        index). Returns (n,) when the model has one output, else (n, outputs), as
        X's kind of array. A CUDA X (float32, C-contiguous, PyTorch or CuPy, on the
        current device) is read in place by canopy_predictor_predict_device and the
        predictions are written on its device (no host copy of the rows): by this
        predictor when it was compiled with backend "gpu", else by a GPU twin of it
        (layout and engine "auto") compiled at the first CUDA call and kept."""
        kind = _parse(_lib.forest_output_parse, output, "output")
        src = _arrays.parse(X, "X")
        if src.on_device:
            with src:
                return self._predict_device(src, kind, output)
        x = _f32(src.host, "X", 2)
        with self._h.use() as h:
            width = _lib.forest_output_width(_lib.predictor_forest(h), kind)
            out = _np.empty((x.shape[0], width), dtype=_np.float64)
            if x.shape[0] > 0:
                with self._serial:
                    _check(_lib.predictor_predict(
                        h, _points(x), kind, out.ctypes.data_as(_lib.PF64),
                        None))
        if output == "class":
            out = out.astype(_np.int64)
        out = out[:, 0] if width == 1 else out
        return _arrays.host_result(src, out)

    def _predict_device(self, src, kind, output):
        fw = _arrays.check_current(src)
        _device_f32(src, (None, None))
        n, d = src.shape
        if d != self.n_features:
            raise ValueError(f"X has {d} columns but the model has {self.n_features} features")
        with self._h.use() as h:
            width = _lib.forest_output_width(_lib.predictor_forest(h), kind)
            out = fw.empty(src.obj, (n, width), fw.float64)
            if n > 0:
                gpu = self._gpu_twin(h)
                with self._serial if gpu is None else self._gpu_lock:
                    _check(_lib.predictor_predict_device(
                        h if gpu is None else gpu, _lib.Points(src.ptr, n, d, d), kind,
                        fw.ptr(out), src.stream or 0, None))
        if output == "class":
            out = out.to(fw.int64) if fw.name == "torch" else out.astype(fw.int64)
        return out[:, 0] if width == 1 else out

    def _gpu_twin(self, h):
        """None when this predictor runs on the GPU itself, else its GPU twin (compiled
        once, freed with the predictor)."""
        if _lib.predictor_options(h).backend == _lib.BACKEND_GPU:
            return None
        with self._gpu_lock:
            if self._gpu is None:
                opt = _predict_options("auto", "auto", "gpu")
                twin = _ctypes.c_void_p()
                _check(_lib.predictor_compile(_lib.predictor_forest(h), _ctypes.byref(opt),
                                              _ctypes.byref(twin)))
                self._gpu = twin
        return self._gpu

    def __repr__(self):
        state = " closed" if self.closed else ""
        return (f"<canopy.Predictor{state} {self.source} {self.objective}: {self.n_trees} trees, "
                f"{self.n_features} features, {self.n_outputs} outputs, from {self.path}>")

    def close(self):
        """Frees the predictor now (later calls raise ValueError)."""
        if getattr(self, "_gpu", None) is not None:
            with self._gpu_lock:  # first: it shares the predictor's model
                _lib.predictor_free(self._gpu)
                self._gpu = None
        if getattr(self, "_h", None) is not None:
            self._h.close()
        if getattr(self, "_forest", None) is not None:
            self._forest.close()


def _pattern_bytes(p):
    if isinstance(p, str):
        return p.encode()
    if isinstance(p, (bytes, bytearray, memoryview)):
        return bytes(p)
    raise TypeError(f"a pattern must be str or bytes, not {type(p).__name__}")


def _buffer(data):
    if isinstance(data, str):
        raise TypeError("data must be bytes-like (encode the str first)")
    try:
        return _np.frombuffer(data, dtype=_np.uint8)
    except (TypeError, ValueError) as e:
        raise TypeError(f"data must be a bytes-like object: {e}") from None


class Regex:
    """A set of POSIX extended regular expressions (grep -E syntax, C locale) matched
    together: a line is selected when any pattern matches part of it."""

    def __init__(self, patterns, ignore_case=False, whole_line=False, whole_word=False):
        if isinstance(patterns, (str, bytes, bytearray, memoryview)):
            patterns = [patterns]
        pats = [_pattern_bytes(p) for p in patterns]
        self.patterns = pats
        arr = (_ctypes.c_char_p * max(len(pats), 1))(*pats)
        lens = (_ctypes.c_size_t * max(len(pats), 1))(*[len(p) for p in pats])
        flags = ((_lib.REGEX_ICASE if ignore_case else 0) | (_lib.REGEX_LINE if whole_line else 0)
                 | (_lib.REGEX_WORD if whole_word else 0))
        h = _ctypes.c_void_p()
        self._h = None
        _check(_lib.regex_compile(arr, lens, len(pats), flags, _ctypes.byref(h)))
        self._h = h

    def _match(self, data, invert, want_lines, want_patterns):
        buf = _buffer(data)
        nlines = int(buf.size and (_np.count_nonzero(buf == 10) + (buf[-1] != 10)))
        sel = _np.zeros(nlines, dtype=_np.uint8) if want_lines else None
        pc = _np.zeros(len(self.patterns), dtype=_np.int64) if want_patterns else None
        opt = _lib.RegexMatchOptions(0, 1 if invert else 0)
        res = _lib.RegexResult()
        _check(_lib.regex_match(
            self._h, buf.ctypes.data_as(_ctypes.POINTER(_ctypes.c_char)), buf.size,
            _ctypes.byref(opt),
            None if sel is None else sel.ctypes.data_as(_ctypes.POINTER(_ctypes.c_uint8)),
            None if pc is None else pc.ctypes.data_as(_lib.PI64), _ctypes.byref(res)))
        return res, sel, pc

    def count(self, data, invert=False):
        """Lines of data (bytes-like, split on b"\\n") selected, as grep -c."""
        return int(self._match(data, invert, False, False)[0].selected)

    def matches(self, data, invert=False):
        """0-based indices of the selected lines (int64 array)."""
        return _np.flatnonzero(self._match(data, invert, True, False)[1]).astype(_np.int64)

    def pattern_counts(self, data, invert=False):
        """Per pattern, the lines it matches (int64 array)."""
        return self._match(data, invert, False, True)[2]

    def close(self):
        if getattr(self, "_h", None) is not None:
            _lib.regex_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


def grep(patterns, data, count=False, invert=False, ignore_case=False, whole_line=False,
         whole_word=False):
    """grep -E over bytes: the selected line indices, or with count=True their number."""
    re = Regex(patterns, ignore_case=ignore_case, whole_line=whole_line, whole_word=whole_word)
    try:
        return re.count(data, invert) if count else re.matches(data, invert)
    finally:
        re.close()


# Last: the graph builders and kde use the helpers above.
from ._graphs import knn, knn_graph, radius, radius_graph  # noqa: E402
from ._kde import kde  # noqa: E402
