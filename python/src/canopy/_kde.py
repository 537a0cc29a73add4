# SPDX-License-Identifier: MIT
"""canopy.kde: kernel density estimates (canopy_kde, include/canopy/kde.h)."""
import contextlib
import ctypes as _ctypes
import numbers as _numbers

import numpy as _np

from . import (Index, _arrays, _back, _check, _device_f32, _f32, _host_copy, _lib, _parse,
               _points)


class _KdeOptions(_ctypes.Structure):
    _fields_ = [("kernel", _ctypes.c_int), ("bandwidth", _ctypes.c_double),
                ("atol", _ctypes.c_double), ("rtol", _ctypes.c_double)]


_options_default = _lib._fn("canopy_kde_options_default", _KdeOptions)
_kernel_parse = _lib._fn("canopy_kde_kernel_parse", _lib.Status, _ctypes.c_char_p,
                         _ctypes.POINTER(_ctypes.c_int))
_kde = _lib._fn("canopy_kde", _lib.Status, _lib.Points, _lib.Points,
                _ctypes.POINTER(_KdeOptions), _ctypes.POINTER(_lib.RunOptions), _lib.PF64,
                _ctypes.c_void_p)
# Device data and queries in, device log-densities out, then the stream.
_kde_device = _lib._fn("canopy_kde_device", _lib.Status, _lib.Points, _lib.Points,
                       _ctypes.POINTER(_KdeOptions), _ctypes.POINTER(_lib.RunOptions),
                       _ctypes.c_void_p, _ctypes.c_void_p, _ctypes.c_void_p)
_index_kde = _lib._fn("canopy_index_kde", _lib.Status, _ctypes.c_void_p, _lib.Points,
                      _ctypes.POINTER(_KdeOptions), _ctypes.POINTER(_lib.RunOptions), _lib.PF64,
                      _ctypes.c_void_p)


def kde(data, queries=None, bandwidth=1.0, kernel="gaussian", atol=0.0, rtol=0.0,
        backend="auto"):
    """Log-density of each query under a kernel density estimate of data: (nq,) float64.

    As scikit-learn's ``KernelDensity(bandwidth=, kernel=, atol=, rtol=).fit(data)
    .score_samples(queries)``: kernel gaussian, tophat, epanechnikov, exponential,
    linear or cosine, normalised to integrate to 1 (scikit-learn's cosine norm is wrong
    in even dimensions; canopy's is right in every dimension); every query's density p
    within atol + rtol * p of the exact one (exact when both are 0); -inf where it is 0.
    queries=None: the data themselves. data may be a kd ``canopy.Index``: its tree is
    used, none is built for the data (canopy_index_kde). backend "cpu", "gpu" (with the
    CUDA module beside the library; the same bound) or "auto" (the GPU from 50000
    queries when one is usable). CUDA data and queries (float32, C-contiguous, PyTorch
    or CuPy, on the current device; backend "auto" or "gpu") are read in place by
    canopy_kde_device: both trees are built and walked on the GPU and the result is the
    input's kind of array on its device, with no host copy. With an Index as data,
    CUDA queries are copied to the host and the result back (canopy_index_kde reads
    host arrays; counted in canopy.host_copies()).
    """
    index = data if isinstance(data, Index) else None
    src = None if index is not None else _arrays.parse(data, "data")
    if src is not None and src.on_device:
        with src:
            return _kde_on_device(src, queries, bandwidth, kernel, atol, rtol, backend)
    qsrc = _host_copy(queries, "queries", "kde")
    _arrays.same_place([src, qsrc])
    if index is None:
        x = _f32(src.host, "data", 2)
        d = x.shape[1]
        q = x if qsrc is None else _f32(qsrc.host, "queries", 2)
    else:
        d = index.d
        q = None if qsrc is None else _f32(qsrc.host, "queries", 2)
    if q is not None and q.shape[1] != d:
        raise ValueError(f"data has {d} columns but queries have {q.shape[1]}")
    ko, opt = _options(bandwidth, kernel, atol, rtol, backend)
    if index is None:
        out = _np.empty(q.shape[0], dtype=_np.float64)
        _check(_kde(_points(x), _points(q), _ctypes.byref(ko), _ctypes.byref(opt),
                    out.ctypes.data_as(_lib.PF64), None))
        return _back(src, out, "kde")
    # no queries: the self-query form (n = 0, data NULL), the indexed points themselves
    pq = _lib.Points(None, 0, d, d) if q is None else _points(q)
    out = _np.empty(index.n if q is None else q.shape[0], dtype=_np.float64)
    with index._h.use() as h:
        _check(_index_kde(h, pq, _ctypes.byref(ko), _ctypes.byref(opt),
                          out.ctypes.data_as(_lib.PF64), None))
    return out if qsrc is None else _back(qsrc, out, "kde")


def _options(bandwidth, kernel, atol, rtol, backend):
    for name, v in (("bandwidth", bandwidth), ("atol", atol), ("rtol", rtol)):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise ValueError(f"{name} must be a number")
    ko = _options_default()
    ko.kernel = _parse(_kernel_parse, kernel, "kernel")
    ko.bandwidth, ko.atol, ko.rtol = float(bandwidth), float(atol), float(rtol)
    opt = _lib.run_options_default()
    opt.backend = _parse(_lib.backend_parse, backend, "backend")
    return ko, opt


def _kde_on_device(src, queries, bandwidth, kernel, atol, rtol, backend):
    """kde of CUDA data (and queries), in place (canopy_kde_device)."""
    fw = _arrays.check_current(src)
    _device_f32(src, (None, None))
    n, d = src.shape
    with contextlib.ExitStack() as stack:
        qsrc = None if queries is None else stack.enter_context(_arrays.parse(queries, "queries"))
        _arrays.same_place([src, qsrc])
        if qsrc is not None:
            _device_f32(qsrc, (None, d))
        ko, opt = _options(bandwidth, kernel, atol, rtol, backend)
        if opt.backend not in (0, _lib.BACKEND_GPU):
            raise ValueError("data is on the GPU: backend must be \"auto\" or \"gpu\"")
        q = src if qsrc is None else qsrc
        m = q.shape[0]
        out = fw.empty(src.obj, (m,), fw.float64)
        _check(_kde_device(_lib.Points(src.ptr, n, d, d), _lib.Points(q.ptr, m, d, d),
                           _ctypes.byref(ko), _ctypes.byref(opt), fw.ptr(out) if m else None,
                           src.stream or 0, None))
    return out
