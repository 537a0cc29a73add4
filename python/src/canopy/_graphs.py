# SPDX-License-Identifier: MIT
"""Graph builders with torch_cluster's signatures: knn, knn_graph, radius, radius_graph.

One kd tree per example of the batch (the rows of an example are contiguous, as the
batch vector is sorted, so each tree is built from a slice in place), queried with that
example's rows of y. A radius search is a kNN with k = max_num_neighbors whose edges
beyond r are dropped: the neighbours kept are the nearest ones. Host arrays run through
canopy_index_build / canopy_index_knn, CUDA arrays through the device-pointer entries,
and the edge list is assembled with the input's own framework, on its device."""
import ctypes
import numbers

import numpy as np

from . import _arrays, _lib
from . import _check, _f32, _radius

_FLOWS = ("source_to_target", "target_to_source")


def _count(v, what, low):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
        raise ValueError(f"{what} must be an integer >= {low}")
    if v > 2**31 - 2:
        raise ValueError(f"{what} must be < 2**31 - 1")
    return int(v)


def _points(a):
    """(array, pointer, n, d) of a parsed points input on its side (NumPy or the device)."""
    if a.on_device:
        if a.dtype != np.float32:
            raise TypeError(f"{a.name}: device arrays must be float32, got {a.dtype} "
                            "(convert on the device first, e.g. x.float())")
        if len(a.shape) != 2:
            raise ValueError(f"{a.name}: expected a 2-D array (n, d), got shape {a.shape}")
        return a.obj, a.ptr, a.shape[0], a.shape[1]
    if a.host.ndim == 1:  # torch_cluster takes 1-D x as (n, 1)
        a.host = a.host[:, None]
    arr = _f32(a.host, a.name, 2)
    return arr, arr.ctypes.data, arr.shape[0], arr.shape[1]


def _bounds(b, n, fw, nb):
    """Row boundaries (nb + 1, host ints) of the examples 0..nb-1 in a sorted batch."""
    if b is None:
        return np.array([0] + [n] * nb, dtype=np.int64)
    ids = b.obj if b.on_device else b.host
    return np.asarray(fw.to_numpy(fw.searchsorted(ids, fw.arange(ids, nb + 1))),
                      dtype=np.int64)


def _batch(b, n, fw):
    """Checks a parsed batch vector; returns its largest id + 1 (0 when empty)."""
    if b is None:
        return 1 if n else 0
    if b.dtype.kind not in "iu":
        raise TypeError(f"{b.name}: batch ids must be integers, got {b.dtype}")
    if len(b.shape) != 1 or b.shape[0] != n:
        raise ValueError(f"{b.name}: expected shape ({n},) (one id per point), got {b.shape}")
    if b.on_device:
        if b.dtype != np.int64:
            raise TypeError(f"{b.name}: device batch vectors must be int64, got {b.dtype}")
        ids = b.obj
    else:
        b.host = np.ascontiguousarray(b.host, dtype=np.int64)
        ids = b.host
    if n == 0:
        return 0
    if bool((ids[1:] < ids[:-1]).any()):
        raise ValueError(f"{b.name}: batch ids must be sorted (non-decreasing), as "
                         "torch_cluster requires")
    if int(ids[0]) < 0:
        raise ValueError(f"{b.name}: batch ids must be >= 0")
    return int(ids[n - 1]) + 1


def _search(x, y, k, bx, by, exclude_self, r):
    """Edges (y row, x row) of each row of y to its k nearest rows of x in its example
    (exclude_self: x is y and a row is not its own neighbour), within r when r is not
    None; rows ascending, each row's neighbours ascending by distance (ties: smaller
    index). Returns (rows, cols, template Array, framework)."""
    ax = _arrays.parse(x, "x")
    parsed = [ax]
    try:
        ay = ax if y is None else _arrays.parse(y, "y")
        parsed.append(ay)
        pbx = None if bx is None else _arrays.parse(bx, "batch_x" if y is not None else "batch")
        parsed.append(pbx)
        pby = pbx if y is None else (None if by is None else _arrays.parse(by, "batch_y"))
        parsed.append(pby)
        _arrays.same_place(parsed)
        fw = _arrays.check_current(ax) if ax.on_device else _arrays.NUMPY
        xs, xp, n, d = _points(ax)
        ys, yp, m, dy = (xs, xp, n, d) if ay is ax else _points(ay)
        if dy != d:
            raise ValueError(f"x has {d} columns but y has {dy}")
        nb = max(_batch(pbx, n, fw), _batch(pby, m, fw) if pby is not pbx else 0)
        bnx, bny = _bounds(pbx, n, fw, nb), _bounds(pby, m, fw, nb)
        return _run(fw, ax, (xp, yp, ys), n, d, m, k, bnx, bny, exclude_self, r) + (ax, fw)
    finally:
        for a in parsed:
            if a is not None:
                a.release()


def _run(fw, ax, ptrs, n, d, m, k, bnx, bny, exclude_self, r):
    xp, yp, ys = ptrs
    sizes = bnx[1:] - bnx[:-1]
    want = k + 1 if exclude_self else k
    kk = int(min(want, sizes.max())) if sizes.size else 0
    row = max(kk, 1)
    idx = fw.empty(ys, (m, row), fw.int64)
    # Distances always go to a framework buffer: without one the library allocates its
    # own (k > 16) with cudaMalloc and cudaFree, a synchronisation, in every call.
    d2 = fw.empty(ys, (m, row), fw.float32) if ax.on_device or r is not None else None
    if kk == 0:
        idx[:] = -1
    _knn_examples(fw, ax, (xp, yp), idx, d2, d, bnx, bny, kk)
    # Every row of y has its example's kk (= want) neighbours: the edges are a dense
    # (m, k) block and need no compaction (no device synchronisation, no mask).
    queried = (bny[1:] > bny[:-1])
    if r is None and kk == want and (sizes[queried] >= want).all():
        return _dense(fw, idx, m, k, exclude_self)
    valid = idx >= 0
    if r is not None:
        r2 = float(np.float32(r) * np.float32(r))  # the library's radius test
        valid &= d2 <= r2
    if exclude_self:
        valid &= idx != fw.arange(idx, m)[:, None]
        if kk == want:
            # k + 1 candidates: where the point itself is not among them (equal points)
            # and all are valid, the farthest goes
            valid[:, kk - 1] &= valid.sum(1) <= k
    pos = fw.flatnonzero(valid)  # the one compaction (one synchronisation on a device)
    return pos // row, idx.reshape(-1)[pos]


def _knn_examples(fw, ax, ptrs, idx, d2, d, bnx, bny, kk):
    """The kk nearest rows of x in its example for each row of y, into idx and d2 (None:
    not wanted), as indices into the whole x (-1: none)."""
    xp, yp = ptrs
    row = idx.shape[1]
    ip, dp = fw.ptr(idx), None if d2 is None else fw.ptr(d2)
    opt = _lib.run_options_default()
    iopt = _lib.index_options_default(_lib.TREE_KD)
    stream = (ax.stream or 0) if ax.on_device else 0
    for b in range(len(bnx) - 1):
        x0, x1, y0, y1 = int(bnx[b]), int(bnx[b + 1]), int(bny[b]), int(bny[b + 1])
        if y1 == y0 or kk == 0:
            continue
        if x1 == x0:
            idx[y0:y1] = -1
            continue
        h = ctypes.c_void_p()
        pts = _lib.Points(xp + 4 * x0 * d, x1 - x0, d, d)
        if ax.on_device:
            _check(_lib.index_build_device(pts, ctypes.byref(iopt), stream, ctypes.byref(h)))
        else:
            _check(_lib.index_build(pts, ctypes.byref(iopt), ctypes.byref(h)))
        try:
            out_i, out_d = ip + 8 * y0 * row, None if dp is None else dp + 4 * y0 * row
            if ax.on_device:
                _check(_lib.index_knn_device(h, yp + 4 * y0 * d, y1 - y0, kk,
                                             ctypes.byref(opt), out_i, out_d, stream, None))
            else:
                _check(_lib.index_knn(h, _lib.Points(yp + 4 * y0 * d, y1 - y0, d, d), kk,
                                      ctypes.byref(opt), ctypes.cast(out_i, _lib.PI64),
                                      ctypes.cast(out_d, _lib.PF32), None))
        finally:
            _lib.index_free(h)
        if x0:
            part = idx[y0:y1]
            part += (part >= 0) * x0  # arithmetic, not a mask: no synchronisation


def _dense(fw, idx, m, k, exclude_self):
    """(rows, cols) of every row's k neighbours, idx (m, k, or k + 1 with the point
    itself to leave out) holding all of them: the point is dropped where it is among
    its row's k + 1, else the farthest (equal points may hide it)."""
    if exclude_self:
        j = fw.arange(idx, k + 1)
        # at most one entry of a row is the point itself: its position, else k
        skip = k - ((idx == fw.arange(idx, m)[:, None]) * (k - j)).sum(1)
        cols = fw.gather(idx, j[:k] + (j[:k] >= skip[:, None]))
    else:
        cols = idx
    return fw.arange(idx, m * k) // k, cols.reshape(-1)


def _result(rows, cols, ax, fw, swap):
    out = fw.stack([cols, rows] if swap else [rows, cols])
    return _arrays.host_result(ax, out) if fw is _arrays.NUMPY else out


def knn(x, y, k, batch_x=None, batch_y=None):
    """For each row of y, its k nearest rows of x (in the same example when batched):
    edge_index (2, E) int64, row 0 indices into y, row 1 into x (torch_cluster's knn).

    x (n, d), y (m, d): NumPy, or any ``__dlpack__`` / ``__cuda_array_interface__``
    array (CUDA ones: float32, C-contiguous, PyTorch or CuPy, used in place; the result
    is on the same device, of the same framework). batch_x, batch_y: sorted example ids
    (0, 1, ...) of the rows; None: one example. Edges are ordered by y row, then by
    distance (ties: the smaller x index); an example with fewer than k points gives
    fewer edges."""
    k = _count(k, "k", 1)
    rows, cols, ax, fw = _search(x, y, k, batch_x, batch_y, False, None)
    return _result(rows, cols, ax, fw, False)


def knn_graph(x, k, batch=None, loop=False, flow="source_to_target"):
    """The k-nearest-neighbour graph of the rows of x: edge_index (2, E) int64
    (torch_cluster's knn_graph). Each point gets exactly min(k, points of its example -
    1) neighbours other than itself (loop=False), or its k nearest counting itself
    (loop=True). flow "source_to_target": edge_index[0] the neighbour, edge_index[1]
    the point (sorted ascending); "target_to_source" the other way round. Within a
    point, neighbours ascend by distance (ties: smaller index)."""
    k = _count(k, "k", 1)
    swap = _flow(flow)
    rows, cols, ax, fw = _search(x, None, k, batch, None, not loop, None)
    return _result(rows, cols, ax, fw, swap)


def radius(x, y, r, batch_x=None, batch_y=None, max_num_neighbors=32):
    """For each row of y, the rows of x within distance r (|x - y| <= r, compared as
    float32 squares, as canopy's radius searches), at most max_num_neighbors of them:
    the nearest ones (torch_cluster keeps an arbitrary subset). edge_index (2, E)
    int64, row 0 into y, row 1 into x; ordered as knn's."""
    r = _radius(r)
    mnn = _count(max_num_neighbors, "max_num_neighbors", 1)
    rows, cols, ax, fw = _search(x, y, mnn, batch_x, batch_y, False, r)
    return _result(rows, cols, ax, fw, False)


def radius_graph(x, r, batch=None, loop=False, max_num_neighbors=32, flow="source_to_target"):
    """The graph of the pairs of rows of x within distance r (torch_cluster's
    radius_graph): per point, at most max_num_neighbors neighbours (the nearest ones),
    itself excluded unless loop=True. flow and edge order as knn_graph's."""
    r = _radius(r)
    mnn = _count(max_num_neighbors, "max_num_neighbors", 1)
    swap = _flow(flow)
    rows, cols, ax, fw = _search(x, None, mnn, batch, None, not loop, r)
    return _result(rows, cols, ax, fw, swap)


def _flow(flow):
    if flow not in _FLOWS:
        raise ValueError(f"flow must be one of {', '.join(_FLOWS)}")
    return flow == "source_to_target"
