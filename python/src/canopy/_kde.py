# SPDX-License-Identifier: MIT
"""canopy.kde: kernel density estimates (canopy_kde, include/canopy/kde.h)."""
import ctypes as _ctypes
import numbers as _numbers

import numpy as _np

from . import Index, _arrays, _back, _check, _f32, _host_copy, _lib, _parse, _points


class _KdeOptions(_ctypes.Structure):
    _fields_ = [("kernel", _ctypes.c_int), ("bandwidth", _ctypes.c_double),
                ("atol", _ctypes.c_double), ("rtol", _ctypes.c_double)]


_options_default = _lib._fn("canopy_kde_options_default", _KdeOptions)
_kernel_parse = _lib._fn("canopy_kde_kernel_parse", _lib.Status, _ctypes.c_char_p,
                         _ctypes.POINTER(_ctypes.c_int))
_kde = _lib._fn("canopy_kde", _lib.Status, _lib.Points, _lib.Points,
                _ctypes.POINTER(_KdeOptions), _ctypes.POINTER(_lib.RunOptions), _lib.PF64,
                _ctypes.c_void_p)
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
    queries when one is usable). The library reads host arrays here: CUDA data and
    queries are copied to the host and the result back to their device (counted in
    canopy.host_copies()).
    """
    index = data if isinstance(data, Index) else None
    src = None if index is not None else _host_copy(data, "data", "kde")
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
    for name, v in (("bandwidth", bandwidth), ("atol", atol), ("rtol", rtol)):
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise ValueError(f"{name} must be a number")
    ko = _options_default()
    ko.kernel = _parse(_kernel_parse, kernel, "kernel")
    ko.bandwidth, ko.atol, ko.rtol = float(bandwidth), float(atol), float(rtol)
    opt = _lib.run_options_default()
    opt.backend = _parse(_lib.backend_parse, backend, "backend")
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
