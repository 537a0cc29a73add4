# SPDX-License-Identifier: MIT
"""canopy: fast irregular workloads on multicore CPUs, from NumPy.

- ``Index(points, tree="kd")``: ``query(x, k)`` (like ``scipy.spatial.cKDTree.query``),
  ``query_radius(x, r)`` (like scikit-learn's ``KDTree.query_radius``) and
  ``count_neighbors(other, r)`` (like ``cKDTree.count_neighbors``).
- ``gravity(bodies, mass, theta, softening)``: Barnes-Hut accelerations.
- ``Predictor.load(path).predict(X)``: XGBoost JSON, LightGBM text and canopy models.
- ``Regex(patterns)`` / ``grep(patterns, data)``: ``grep -E`` matching on bytes.

Inputs may be any real dtype and memory order; each is converted once to a
C-contiguous float32 array. The GIL is released while the library works. Errors the
library reports come back as exceptions carrying its message (``CanopyError``, also a
``ValueError``, ``OSError``, ``MemoryError`` or ``RuntimeError`` by kind).
"""
import ctypes
import numbers
import os

import numpy as np

from . import _lib

__all__ = ["Index", "Predictor", "Regex", "grep", "gravity", "set_threads", "threads",
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


def _check(status):
    if status != 0:
        msg = _lib.last_error().decode(errors="replace") or _lib.status_name(status).decode()
        raise _ERRORS.get(status, CanopyError)(msg)


def set_threads(n):
    """CPU threads for later calls (default: CANOPY_THREADS, else all cores)."""
    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError("threads must be an integer >= 1")
    _lib.set_threads(int(n))


def threads():
    return _lib.threads()


def _real_array(a, name):
    arr = np.asarray(a)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: dtype {arr.dtype} is not a real number type")
    return arr


def _f32(a, name, ndim, copy=False):
    """a as a C-contiguous float32 array of ndim dimensions (one conversion at most)."""
    arr = _real_array(a, name)
    if arr.ndim != ndim:
        want = "(n, d)" if ndim == 2 else "(n,)"
        raise ValueError(f"{name}: expected a {ndim}-D array {want}, got shape {arr.shape}")
    if copy:
        return np.array(arr, dtype=np.float32, order="C", copy=True)
    return np.ascontiguousarray(arr, dtype=np.float32)


def _points(arr):
    """The canopy_points view of a C-contiguous float32 (n, d) array."""
    n, d = arr.shape
    return _lib.Points(arr.ctypes.data, n, d, d)


def _parse(fn, s, what):
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a string")
    out = ctypes.c_int()
    _check(fn(s.encode(), ctypes.byref(out)))
    return out.value


class Index:
    """Nearest-neighbour searches over a fixed set of points.

    points: (n, d) array-like of reals, copied (as float32), so later changes to the
    caller's array do not reach the index. tree: "kd", "ball" or "vp". backend: "auto",
    "cpu" or "gpu" (with the CUDA module beside the library). Results never depend on the
    tree or backend; only speed does.
    """

    def __init__(self, points, tree="kd", leaf_size=0, backend="auto"):
        self.data = _f32(points, "points", 2, copy=True)
        self.data.setflags(write=False)
        self.n, self.d = self.data.shape
        if self.d < 1:
            raise ValueError("points: need at least one column")
        self._opt = _lib.run_options_default()
        self._opt.tree = _parse(_lib.tree_kind_parse, tree, "tree")
        self._opt.backend = _parse(_lib.backend_parse, backend, "backend")
        if not isinstance(leaf_size, numbers.Integral) or leaf_size < 0:
            raise ValueError("leaf_size must be an integer >= 0 (0: the tree's default)")
        self._opt.leaf_size = int(leaf_size)

    def __len__(self):
        return self.n

    def _queries(self, x):
        arr = _real_array(x, "x")
        single = arr.ndim == 1
        if single:
            arr = arr[None, :]
        q = _f32(arr, "x", 2)
        if q.shape[1] != self.d:
            raise ValueError(f"x has {q.shape[1]} columns but the index points have {self.d}")
        return q, single

    def query(self, x, k=1):
        """The k nearest points of each row of x: (distances, indices), like cKDTree.

        Distances are Euclidean (the C canopy_knn returns squared ones), ascending, ties
        broken by the smaller index. Shapes (m, k), or (m,) for k=1, without the m axis
        for a single 1-D point. When fewer than k points exist, the tail is inf and n.
        """
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise ValueError("k must be an integer >= 1")
        if k > 2**31 - 1:
            raise ValueError("k must be < 2**31")
        q, single = self._queries(x)
        m = q.shape[0]
        idx = np.empty((m, k), dtype=np.int64)
        d2 = np.empty((m, k), dtype=np.float32)
        if m > 0:
            _check(_lib.knn(_points(self.data), _points(q), int(k), ctypes.byref(self._opt),
                            idx.ctypes.data_as(_lib.PI64), d2.ctypes.data_as(_lib.PF32), None))
        dist = np.sqrt(d2)
        idx[idx < 0] = self.n
        if k == 1:
            dist, idx = dist[:, 0], idx[:, 0]
        if single:
            dist, idx = dist[0], idx[0]
        return dist, idx

    def _counts(self, q, r):
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not np.isfinite(r) or r < 0:
            raise ValueError("r must be a finite number >= 0")
        counts = np.empty(q.shape[0], dtype=np.int64)
        if q.shape[0] > 0:
            _check(_lib.radius_count(_points(self.data), _points(q), float(r),
                                     ctypes.byref(self._opt), counts.ctypes.data_as(_lib.PI64),
                                     None))
        return counts

    def query_radius(self, x, r, return_distance=False, count_only=False):
        """Points within distance r (dist <= r) of each row of x, like scikit-learn's
        KDTree.query_radius: an object array of int64 index arrays (ascending by
        distance), or with count_only the counts, or with return_distance also the
        distances."""
        q, single = self._queries(x)
        counts = self._counts(q, r)
        if count_only:
            return counts[0] if single else counts
        m = q.shape[0]
        ind = np.empty(m, dtype=object)
        dst = np.empty(m, dtype=object)
        kmax = int(counts.max()) if m else 0
        if kmax > 0:
            idx = np.empty((m, kmax), dtype=np.int64)
            d2 = np.empty((m, kmax), dtype=np.float32)
            _check(_lib.knn(_points(self.data), _points(q), kmax, ctypes.byref(self._opt),
                            idx.ctypes.data_as(_lib.PI64), d2.ctypes.data_as(_lib.PF32), None))
        for i in range(m):
            c = int(counts[i])
            ind[i] = idx[i, :c].copy() if c else np.empty(0, dtype=np.int64)
            dst[i] = np.sqrt(d2[i, :c]) if c else np.empty(0, dtype=np.float32)
        if single:
            ind, dst = ind[0], dst[0]
        return (ind, dst) if return_distance else ind

    def count_neighbors(self, other, r):
        """Pairs (p in this index, q in other) with |p - q| <= r, like
        cKDTree.count_neighbors: an int for a scalar r, an int64 array for an array of
        radii. other: an Index or an (m, d) array."""
        q = other.data if isinstance(other, Index) else self._queries(other)[0]
        if q.shape[1] != self.d:
            raise ValueError(f"other has {q.shape[1]} columns but the index points have {self.d}")
        if np.ndim(r) == 0:
            # Counting from the other side: per point of other, this index's points within r.
            return int(self._counts(q, r).sum())
        radii = _real_array(r, "r")
        return np.array([int(self._counts(q, float(v)).sum()) for v in radii.ravel()],
                        dtype=np.int64).reshape(radii.shape)


def gravity(bodies, mass=None, theta=0.5, softening=0.0, backend="auto"):
    """Barnes-Hut accelerations (G = 1) of each body from all others: (n, 3) float32.

    bodies: (n, 3) positions; mass: (n,) or None (equal masses 1/n); theta: opening
    angle (> 0, smaller is more exact); softening: Plummer length (>= 0)."""
    pos = _f32(bodies, "bodies", 2)
    n = pos.shape[0]
    m = None
    if mass is not None:
        m = _f32(mass, "mass", 1)
        if m.shape[0] != n:
            raise ValueError(f"mass has {m.shape[0]} values but there are {n} bodies")
    for name, v in (("theta", theta), ("softening", softening)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number")
    if theta <= 0:
        raise ValueError("theta must be > 0")
    if softening < 0:
        raise ValueError("softening must be >= 0")
    opt = _lib.run_options_default()
    opt.backend = _parse(_lib.backend_parse, backend, "backend")
    acc = np.empty_like(pos)
    if n > 0:
        _check(_lib.gravity(_points(pos), None if m is None else m.ctypes.data_as(_lib.PF32),
                            float(theta), float(softening), ctypes.byref(opt),
                            acc.ctypes.data_as(_lib.PF32), None))
    return acc


class Predictor:
    """A decision forest: ``Predictor.load(path).predict(X)``."""

    def __init__(self, handle, path):
        self._h = handle
        self.path = path

    @classmethod
    def load(cls, path, format="auto"):
        """Loads an XGBoost JSON, LightGBM text or canopy JSON model (format "auto"
        detects it from the content)."""
        fmt = _parse(_lib.forest_format_parse, format, "format")
        h = ctypes.c_void_p()
        _check(_lib.forest_load(os.fsencode(path), fmt, ctypes.byref(h)))
        return cls(h, os.fspath(path))

    def predict(self, X, output="prob", backend="auto"):
        """Predictions for the rows of X (n, features); NaN is a missing value.

        output: "prob" (default, as the CLI and XGBoost's predict: the objective's link
        applied), "raw" (margins; the C library's default) or "class" (int64 class
        index). Returns (n,) when the model has one output, else (n, outputs)."""
        if self._h is None:
            raise ValueError("the predictor was closed")
        x = _f32(X, "X", 2)
        opt = _lib.predict_options_default()
        opt.output = _parse(_lib.forest_output_parse, output, "output")
        opt.backend = _parse(_lib.backend_parse, backend, "backend")
        width = _lib.forest_output_width(self._h, opt.output)
        out = np.empty((x.shape[0], width), dtype=np.float64)
        if x.shape[0] > 0:
            _check(_lib.forest_predict(self._h, _points(x), ctypes.byref(opt),
                                       out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                       None))
        if output == "class":
            out = out.astype(np.int64)
        return out[:, 0] if width == 1 else out

    def close(self):
        if getattr(self, "_h", None) is not None:
            _lib.forest_free(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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
        return np.frombuffer(data, dtype=np.uint8)
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
        arr = (ctypes.c_char_p * max(len(pats), 1))(*pats)
        lens = (ctypes.c_size_t * max(len(pats), 1))(*[len(p) for p in pats])
        flags = ((_lib.REGEX_ICASE if ignore_case else 0) | (_lib.REGEX_LINE if whole_line else 0)
                 | (_lib.REGEX_WORD if whole_word else 0))
        h = ctypes.c_void_p()
        self._h = None
        _check(_lib.regex_compile(arr, lens, len(pats), flags, ctypes.byref(h)))
        self._h = h

    def _match(self, data, invert, want_lines, want_patterns):
        buf = _buffer(data)
        nlines = int(buf.size and (np.count_nonzero(buf == 10) + (buf[-1] != 10)))
        sel = np.zeros(nlines, dtype=np.uint8) if want_lines else None
        pc = np.zeros(len(self.patterns), dtype=np.int64) if want_patterns else None
        opt = _lib.RegexMatchOptions(0, 1 if invert else 0)
        res = _lib.RegexResult()
        _check(_lib.regex_match(
            self._h, buf.ctypes.data_as(ctypes.POINTER(ctypes.c_char)), buf.size,
            ctypes.byref(opt), None if sel is None else sel.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
            None if pc is None else pc.ctypes.data_as(_lib.PI64), ctypes.byref(res)))
        return res, sel, pc

    def count(self, data, invert=False):
        """Lines of data (bytes-like, split on b"\\n") selected, as grep -c."""
        return int(self._match(data, invert, False, False)[0].selected)

    def matches(self, data, invert=False):
        """0-based indices of the selected lines (int64 array)."""
        return np.flatnonzero(self._match(data, invert, True, False)[1]).astype(np.int64)

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
