# SPDX-License-Identifier: MIT
"""The array protocol layer: NumPy arrays, objects with ``__dlpack__`` and objects with
``__cuda_array_interface__``, on the CPU or a CUDA device, in; the caller's kind of
array, on the caller's device, out.

Design (docs/python.md "Device arrays"):

- NumPy (and anything ``numpy.asarray`` takes that has neither protocol) is used as
  before: converted once to C-contiguous float32.
- A CPU ``__dlpack__`` object is read through its capsule (parsed here with ctypes),
  copied once into a NumPy array, and released (capsule renamed "used_dltensor", its
  deleter called). Outputs go back through the producer module's ``from_dlpack`` (found
  in ``sys.modules`` from the input's type, never imported), else stay NumPy.
- A CUDA input is used in place: its pointer goes to the C API's device-pointer entries
  while the capsule (or the object) is held, and released after the call. It must be
  C-contiguous, of the dtype the entry takes, and on the current device of its
  framework. Outputs are allocated by that framework (PyTorch or CuPy, the two whose
  allocators are known here) on the input's device, and the work runs on the
  framework's current stream (``__cuda_array_interface__``: the stream it names).
"""
import ctypes
import sys

import numpy as np

# DLPack's C structs (dlpack.h, the unversioned DLManagedTensor every producer gives
# when __dlpack__ is called without max_version).
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_CODES = {0: "i", 1: "u", 2: "f"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]

_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.restype = ctypes.c_int
_capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The capsule keeps this pointer as its name: a module constant outlives every capsule.
_USED = b"used_dltensor"


class DeviceError(ValueError):
    """An array on a device this call cannot use (or arrays on different devices)."""


def _framework(obj):
    """The top-level module of obj's type, as already imported by the caller."""
    return sys.modules.get(type(obj).__module__.split(".")[0])


def _dtype(code, bits, lanes, name):
    if lanes != 1 or code not in _DL_CODES:
        raise TypeError(f"{name}: DLPack dtype (code {code}, bits {bits}, lanes {lanes}) is "
                        "not a real number type")
    return np.dtype(f"{_DL_CODES[code]}{bits // 8}")


def _contiguous(shape, strides, name):
    """strides in elements (None: C-contiguous); size-1 axes may carry any stride, and
    an empty array any strides (PyTorch and CuPy give (0, 0) for shape (0, 3))."""
    if strides is None or 0 in tuple(shape):
        return
    want = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != want:
            raise ValueError(f"{name}: the array is not C-contiguous (shape {tuple(shape)}, "
                             f"strides {tuple(strides)} elements); pass a contiguous copy "
                             "(.contiguous() / .copy())")
        want *= n


class Array:
    """One input, parsed: where it lives (``device`` None for the host, else the CUDA
    device id), its data pointer, shape and dtype, the framework that made it, and the
    stream its data is ready on. ``host`` holds the NumPy array of a host input.
    ``release()`` gives a DLPack capsule back (its deleter runs once)."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name
        self.host = None
        self.device = None
        self.ptr = 0
        self.stream = None
        self.framework = None
        self._managed = None

    def release(self):
        m, self._managed = self._managed, None
        if m is not None and m.contents.deleter:
            m.contents.deleter(m)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    @property
    def on_device(self):
        return self.device is not None

    @property
    def where(self):
        return "cpu" if self.device is None else f"cuda:{self.device}"


def _from_dlpack(a, obj, name):
    fw = _framework(obj)
    a.framework = fw
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else None
    kw = {}
    if dev is not None and int(dev[0]) in (DL_CUDA, DL_CUDA_MANAGED):
        adapter = device_framework(fw, name)
        # The consumer's stream (DLPack: 1 is the legacy default, 0 is not allowed).
        kw["stream"] = adapter.current_stream(obj) or 1
    capsule = obj.__dlpack__(**kw)
    if not _capsule_valid(capsule, b"dltensor"):
        raise TypeError(f"{name}: __dlpack__ did not return an unused DLPack capsule")
    m = ctypes.cast(_capsule_get(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    # From here the capsule is ours: renamed, so its destructor leaves the tensor to us.
    _capsule_rename(capsule, _USED)
    a._managed = m
    t = m.contents.dl_tensor
    try:
        a.dtype = _dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes, name)
        a.shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        _contiguous(a.shape, strides, name)
        ptr = (t.data or 0) + t.byte_offset
        kind = t.device.device_type
        if kind in (DL_CPU, DL_CUDA_HOST):
            count = int(np.prod(a.shape, dtype=np.int64))
            if count == 0:
                a.host = np.empty(a.shape, dtype=a.dtype)
            else:
                buf = (ctypes.c_char * (count * a.dtype.itemsize)).from_address(ptr)
                # One copy: the capsule goes back right after.
                a.host = np.frombuffer(buf, dtype=a.dtype).reshape(a.shape).copy()
            a.release()
        elif kind in (DL_CUDA, DL_CUDA_MANAGED):
            a.device, a.ptr = int(t.device.device_id), ptr
            a.stream = kw.get("stream")
        else:
            raise DeviceError(f"{name}: DLPack device type {kind} is not supported (the CPU "
                              "and CUDA devices are)")
    except BaseException:
        a.release()
        raise


def _from_cai(a, obj, name):
    cai = obj.__cuda_array_interface__
    a.framework = _framework(obj)
    typestr = cai["typestr"]
    a.dtype = np.dtype(typestr)
    if a.dtype.kind not in "fiu" or not a.dtype.isnative:
        raise TypeError(f"{name}: dtype {typestr} is not a native real number type")
    a.shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        if any(s % a.dtype.itemsize for s in strides):
            raise ValueError(f"{name}: strides {tuple(strides)} are not whole elements")
        strides = tuple(s // a.dtype.itemsize for s in strides)
    _contiguous(a.shape, strides, name)
    a.ptr = int(cai["data"][0] or 0)
    # v3: the stream the data is ready on (None: ready now; 1 and 2 the default streams).
    a.stream = cai.get("stream") if cai.get("version", 2) >= 3 else None
    a.device = device_framework(a.framework, name).device_of(obj)


def _from_adapter(a, obj, fw, name):
    """A CUDA array of a known framework, read from the framework's own attributes: no
    DLPack capsule to make, parse with ctypes and give back, no stream handshake with
    the producer (a fixed cost of every call). The work runs on the framework's current
    stream, as on the DLPack path."""
    a.framework = fw.m
    a.ptr, a.shape, strides, a.dtype, a.device = fw.describe(obj, name)
    _contiguous(a.shape, strides, name)
    a.stream = fw.current_stream(obj)


def parse(obj, name):
    """obj as an Array (a context manager: leave it to give a DLPack capsule back)."""
    a = Array(obj, name)
    fw = _adapter(type(obj).__module__.split(".")[0])
    if fw is not None and fw.on_cuda(obj):
        _from_adapter(a, obj, fw, name)
        return a
    if isinstance(obj, np.ndarray) or not (hasattr(obj, "__dlpack__")
                                           or hasattr(obj, "__cuda_array_interface__")):
        arr = np.asarray(obj)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{name}: dtype {arr.dtype} is not a real number type")
        a.host, a.dtype, a.shape = arr, arr.dtype, arr.shape
        return a
    if hasattr(obj, "__dlpack__"):
        if getattr(obj, "requires_grad", False) and hasattr(obj, "detach"):
            # PyTorch exports no tensor that requires grad; no result here is differentiable
            obj = a.obj = obj.detach()
        _from_dlpack(a, obj, name)
    else:
        _from_cai(a, obj, name)
    return a


def same_place(arrays):
    """Raises DeviceError unless every Array (None entries skipped) is on one device."""
    arrays = [a for a in arrays if a is not None]
    for a in arrays[1:]:
        if a.device != arrays[0].device:
            raise DeviceError(f"{arrays[0].name} is on {arrays[0].where} but {a.name} is on "
                              f"{a.where}: pass arrays on one device")


def host_result(template, arr):
    """arr (NumPy) as the kind of array template (an Array of a host input) came as."""
    fw = template.framework
    if fw is None or template.obj is None or isinstance(template.obj, np.ndarray):
        return arr
    convert = getattr(fw, "from_dlpack", None)
    if convert is None or fw is np:
        return arr
    return convert(np.ascontiguousarray(arr))


class _Torch:
    name = "torch"

    def __init__(self, torch):
        self.m = torch
        self.int64, self.float32, self.float64 = torch.int64, torch.float32, torch.float64
        self._dtypes = {getattr(torch, t): np.dtype(t) for t in
                        ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
                         "uint8")}

    def on_cuda(self, obj):
        return isinstance(obj, self.m.Tensor) and obj.is_cuda

    def describe(self, obj, name):
        """(pointer, shape, strides in elements, NumPy dtype, device id) of a CUDA tensor."""
        dt = self._dtypes.get(obj.dtype)
        if dt is None:
            raise TypeError(f"{name}: dtype {obj.dtype} is not a real number type canopy reads")
        return obj.data_ptr(), tuple(obj.shape), obj.stride(), dt, obj.device.index

    def device_of(self, obj):
        return obj.device.index

    def current(self):
        return self.m.cuda.current_device()

    def current_stream(self, obj):
        return self.m.cuda.current_stream(obj.device).cuda_stream

    def empty(self, like, shape, dtype):
        return self.m.empty(shape, dtype=dtype, device=like.device)

    def ptr(self, arr):
        return arr.data_ptr()

    def arange(self, like, n):
        return self.m.arange(n, dtype=self.int64, device=like.device)

    def stack(self, arrays):
        return self.m.stack(arrays, dim=0)

    def concat(self, arrays):
        return self.m.cat(arrays)

    def to_numpy(self, a):
        return a.detach().cpu().numpy()

    def from_host(self, like, arr):
        return self.m.from_numpy(np.ascontiguousarray(arr)).to(like.device)

    def searchsorted(self, a, v):
        return self.m.searchsorted(a, v)

    def gather(self, a, idx):
        return self.m.gather(a, 1, idx)

    def sqrt_(self, a):
        return a.sqrt_()

    def flatnonzero(self, mask):
        return self.m.nonzero(mask.reshape(-1)).reshape(-1)


class _CuPy:
    name = "cupy"

    def __init__(self, cupy):
        self.m = cupy
        self.int64, self.float32, self.float64 = np.int64, np.float32, np.float64

    def on_cuda(self, obj):
        return isinstance(obj, self.m.ndarray)

    def describe(self, obj, name):
        dt = obj.dtype
        if dt.kind not in "fiu" or not dt.isnative:
            raise TypeError(f"{name}: dtype {dt} is not a native real number type")
        if any(s % dt.itemsize for s in obj.strides):
            raise ValueError(f"{name}: strides {obj.strides} are not whole elements")
        return (obj.data.ptr, tuple(obj.shape), tuple(s // dt.itemsize for s in obj.strides), dt,
                obj.device.id)

    def device_of(self, obj):
        return obj.device.id

    def current(self):
        return self.m.cuda.runtime.getDevice()

    def current_stream(self, obj):
        return self.m.cuda.get_current_stream().ptr

    def empty(self, like, shape, dtype):
        with self.m.cuda.Device(like.device.id):
            return self.m.empty(shape, dtype=dtype)

    def ptr(self, arr):
        return arr.data.ptr

    def arange(self, like, n):
        with self.m.cuda.Device(like.device.id):
            return self.m.arange(n, dtype=np.int64)

    def stack(self, arrays):
        return self.m.stack(arrays, axis=0)

    def concat(self, arrays):
        return self.m.concatenate(arrays)

    def to_numpy(self, a):
        return self.m.asnumpy(a)

    def from_host(self, like, arr):
        with self.m.cuda.Device(like.device.id):
            return self.m.asarray(arr)

    def searchsorted(self, a, v):
        return self.m.searchsorted(a, v)

    def gather(self, a, idx):
        return self.m.take_along_axis(a, idx, axis=1)

    def sqrt_(self, a):
        return self.m.sqrt(a, out=a)

    def flatnonzero(self, mask):
        return self.m.flatnonzero(mask)


class _NumPy:
    """The same operations on the host, so the graph builders have one code path."""
    name = "numpy"
    int64, float32, float64 = np.int64, np.float32, np.float64

    def empty(self, like, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def ptr(self, arr):
        return arr.ctypes.data

    def arange(self, like, n):
        return np.arange(n, dtype=np.int64)

    def stack(self, arrays):
        return np.stack(arrays, axis=0)

    def concat(self, arrays):
        return np.concatenate(arrays)

    def to_numpy(self, a):
        return a

    def from_host(self, like, arr):
        return arr

    def searchsorted(self, a, v):
        return np.searchsorted(a, v)

    def gather(self, a, idx):
        return np.take_along_axis(a, idx, axis=1)

    def sqrt_(self, a):
        return np.sqrt(a, out=a)

    def flatnonzero(self, mask):
        return np.flatnonzero(mask)


NUMPY = _NumPy()
_ADAPTER_TYPES = {"torch": _Torch, "cupy": _CuPy}
# One adapter per framework, made at its first CUDA array (a call's fixed cost counts).
_ADAPTERS = {}


def _adapter(mod):
    """The adapter of the framework named mod when canopy knows it and it is imported."""
    fw = _ADAPTERS.get(mod)
    if fw is None and mod in _ADAPTER_TYPES and mod in sys.modules:
        fw = _ADAPTERS[mod] = _ADAPTER_TYPES[mod](sys.modules[mod])
    return fw


def device_framework(module, name):
    """The adapter of a CUDA array's framework, or a clear refusal."""
    mod = getattr(module, "__name__", None)
    fw = _adapter(mod)
    if fw is None:
        raise DeviceError(f"{name}: CUDA arrays of {mod or 'this type'} are not supported yet "
                          "(PyTorch and CuPy are: canopy allocates its outputs with the "
                          "input's own framework)")
    return fw


# The host copies of calls that have no device path (docs/python.md "What runs on the
# device"): per call, [inputs copied to the host, their bytes, bytes of results copied
# back to the device]. canopy.host_copies() reports them.
HOST_COPIES = {}


def _count(call, inputs=0, to_host=0, to_device=0):
    c = HOST_COPIES.setdefault(call, [0, 0, 0])
    c[0] += inputs
    c[1] += to_host
    c[2] += to_device


def copy_to_host(a, call):
    """A parsed CUDA input a, copied once to the host by its own framework (on its
    current stream, so pending work on the data is done first), counted for call;
    a.host holds the NumPy copy and a.device stays, so the results go back there."""
    fw = check_current(a)
    a.host = np.asarray(fw.to_numpy(a.obj))
    _count(call, 1, a.host.nbytes)
    a.release()
    return a


def device_result(template, arr, call):
    """arr (NumPy), computed on the host for the CUDA input template, as that input's
    framework's array on its device (a counted host-to-device copy)."""
    out = device_framework(template.framework, template.name).from_host(template.obj, arr)
    _count(call, to_device=arr.nbytes)
    return out


def small_result(template, arr):
    """arr (NumPy), a small result the library returns on the host for a CUDA input
    whose points it read in place (paircount's counts and edges), as that input's
    framework's array on its device; not a host copy of an input, so not counted."""
    return device_framework(template.framework, template.name).from_host(template.obj, arr)


def check_current(a):
    """The C library works on the current CUDA device: a (on the device) must be there."""
    fw = device_framework(a.framework, a.name)
    cur = fw.current()
    if a.device != cur:
        raise DeviceError(f"{a.name} is on cuda:{a.device} but the current device is "
                          f"cuda:{cur}: make it current (torch.cuda.set_device / "
                          "cupy.cuda.Device(...).use())")
    return fw
