# SPDX-License-Identifier: MIT
"""ctypes declarations of the parts of canopy.h the package uses.

ctypes releases the GIL for the duration of every call into a CDLL, so the library's
work runs while other Python threads go on."""
import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_uint8, c_uint32, c_void_p)


def _load():
    path = os.environ.get("CANOPY_LIBRARY") or os.path.join(os.path.dirname(__file__),
                                                            "libcanopy.so")
    return ctypes.CDLL(path)


lib = _load()


class Points(Structure):
    _fields_ = [("data", c_void_p), ("n", c_int64), ("d", c_int32), ("stride", c_int64)]


class RunOptions(Structure):
    _fields_ = [("variant", c_int), ("schedule", c_int), ("backend", c_int), ("tree", c_int),
                ("leaf_size", c_int32), ("profile_depth", c_int32)]


class PredictOptions(Structure):
    _fields_ = [("layout", c_int), ("engine", c_int), ("backend", c_int), ("output", c_int),
                ("hier_depth", c_int32), ("switch_level", c_int32), ("compaction", c_int32),
                ("mapping", c_int)]


class IndexOptions(Structure):
    _fields_ = [("kind", c_int), ("leaf_size", c_int32), ("residency", c_int),
                ("weights", c_void_p)]


class IndexInfo(Structure):
    _fields_ = [("kind", c_int), ("n", c_int64), ("d", c_int32), ("n_nodes", c_int32),
                ("depth", c_int32), ("leaf_size", c_int32), ("residency", c_int),
                ("mapped", c_int32), ("builds", c_int64), ("queries", c_int64),
                ("build_seconds", c_double), ("bytes", c_size_t), ("device_bytes", c_size_t),
                ("gpu_built", c_int32)]


class Stats(Structure):
    # canopy_stats, every field (the library writes the whole struct); the tests read the
    # copy times of device-pointer calls from it
    _fields_ = [("build_seconds", c_double), ("schedule_seconds", c_double),
                ("transfer_seconds", c_double), ("traverse_seconds", c_double),
                ("queries", c_int64), ("nodes_per_query", c_double),
                ("work_expansion", c_double), ("variant", c_int), ("schedule", c_int),
                ("backend", c_int), ("tree", c_int), ("tree_nodes", c_int32),
                ("tree_depth", c_int32), ("profile_depth", c_int32),
                ("profile_leaves", c_int32), ("nodes_per_group", c_double),
                ("index_reused", c_int32), ("note", c_char * 512),
                ("tree_upload_bytes", c_int64), ("tree_upload_seconds", c_double),
                ("device_tree_reused", c_int32), ("lane_calls", c_int64),
                ("upload_seconds", c_double), ("download_seconds", c_double),
                ("threads", c_int32)]


class GravityOptions(Structure):
    _fields_ = [("theta", ctypes.c_float), ("order", c_int32), ("opening", c_int),
                ("softening", ctypes.c_float), ("accuracy", c_double), ("tree", c_int),
                ("box", ctypes.c_float), ("ewald_grid", c_int32), ("periodic", c_int32),
                ("pm_grid", c_int32)]


class PaircountOptions(Structure):
    _fields_ = [("rmin", c_double), ("rmax", c_double), ("nbins", c_int32), ("log_bins", c_int),
                ("boxsize", c_double)]


class ForestInfo(Structure):
    _fields_ = [("source", c_char_p), ("objective", c_char_p), ("n_trees", c_int32),
                ("n_features", c_int32), ("n_outputs", c_int32), ("n_classes", c_int32),
                ("link", c_int), ("aggregation", c_int), ("n_nodes", c_int64),
                ("n_leaves", c_int64), ("max_depth", c_int32), ("depth_hist", c_int32 * 64)]


class RegexMatchOptions(Structure):
    _fields_ = [("engine", c_int), ("invert", c_int32)]


class RegexResult(Structure):
    # canopy_regex_result, every field: the library writes the whole struct
    _fields_ = [("lines", c_int64), ("selected", c_int64), ("engine", c_int), ("isa", c_int),
                ("dfa_states", c_int64), ("dfa_fallbacks", c_int64), ("literals", c_int32),
                ("literals_exact", c_int32), ("dfa_bytes", c_int64), ("literal_bytes3", c_int64),
                ("literal_isa", c_int), ("literals_shifted", c_int32), ("literal_products", c_int32)]


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


Status = c_int
PI64 = POINTER(c_int64)
PF32 = POINTER(ctypes.c_float)
PF64 = POINTER(c_double)

last_error = _fn("canopy_last_error", c_char_p)
status_name = _fn("canopy_status_name", c_char_p, c_int)
version = _fn("canopy_version", c_char_p)
set_threads = _fn("canopy_set_threads", None, c_int)
threads = _fn("canopy_threads", c_int)
have_cuda = _fn("canopy_have_cuda", c_int)
gpu_info = _fn("canopy_gpu_info", c_int, c_char_p, c_size_t, POINTER(c_size_t))
cpu_isa = _fn("canopy_cpu_isa", c_int)
isa_name = _fn("canopy_isa_name", c_char_p, c_int)

run_options_default = _fn("canopy_run_options_default", RunOptions)
tree_kind_parse = _fn("canopy_tree_kind_parse", Status, c_char_p, POINTER(c_int))
backend_parse = _fn("canopy_backend_parse", Status, c_char_p, POINTER(c_int))
gravity = _fn("canopy_gravity", Status, Points, PF32, ctypes.c_float, ctypes.c_float,
              POINTER(RunOptions), PF32, c_void_p)

index_options_default = _fn("canopy_index_options_default", IndexOptions, c_int)
index_build = _fn("canopy_index_build", Status, Points, POINTER(IndexOptions), POINTER(c_void_p))
# Device pointers in, device pointers out; void *stream is a cudaStream_t (0: legacy).
index_build_device = _fn("canopy_index_build_device", Status, Points, POINTER(IndexOptions),
                         c_void_p, POINTER(c_void_p))
index_knn_device = _fn("canopy_index_knn_device", Status, c_void_p, c_void_p, c_int64, c_int32,
                       POINTER(RunOptions), c_void_p, c_void_p, c_void_p, c_void_p)
gravity_options_default = _fn("canopy_gravity_options_default", GravityOptions)
gravity_multipole_device = _fn("canopy_gravity_multipole_device", Status, Points, c_void_p,
                               POINTER(GravityOptions), POINTER(RunOptions), c_void_p,
                               c_void_p, c_void_p, c_void_p)
index_free = _fn("canopy_index_free", None, c_void_p)
index_get_info = _fn("canopy_index_get_info", Status, c_void_p, POINTER(IndexInfo))
index_knn = _fn("canopy_index_knn", Status, c_void_p, Points, c_int32, POINTER(RunOptions), PI64,
                PF32, c_void_p)
index_radius_count = _fn("canopy_index_radius_count", Status, c_void_p, Points, ctypes.c_float,
                         POINTER(RunOptions), PI64, c_void_p)
index_gravity = _fn("canopy_index_gravity", Status, c_void_p, ctypes.c_float, ctypes.c_float,
                    POINTER(RunOptions), PF32, c_void_p)
index_search = _fn("canopy_index_search", Status, c_void_p, PF32, c_int64, POINTER(RunOptions),
                   PI64, c_void_p)
index_save = _fn("canopy_index_save", Status, c_void_p, c_char_p)
index_load = _fn("canopy_index_load", Status, c_char_p, POINTER(c_void_p))
tree_kind_name = _fn("canopy_tree_kind_name", c_char_p, c_int)

paircount_options_default = _fn("canopy_paircount_options_default", PaircountOptions)
paircount_edges = _fn("canopy_paircount_edges", Status, POINTER(PaircountOptions), PF64)
paircount = _fn("canopy_paircount", Status, Points, PF32, Points, PF32,
                POINTER(PaircountOptions), POINTER(RunOptions), PF64, c_void_p)
# Device points and weights (c_void_p), counts on the host, then the stream.
paircount_device = _fn("canopy_paircount_device", Status, Points, c_void_p, Points, c_void_p,
                       POINTER(PaircountOptions), POINTER(RunOptions), PF64, c_void_p,
                       c_void_p)

forest_load = _fn("canopy_forest_load", Status, c_char_p, c_int, POINTER(c_void_p))
forest_free = _fn("canopy_forest_free", None, c_void_p)
forest_format_parse = _fn("canopy_forest_format_parse", Status, c_char_p, POINTER(c_int))
forest_output_parse = _fn("canopy_forest_output_parse", Status, c_char_p, POINTER(c_int))
forest_output_width = _fn("canopy_forest_output_width", c_int32, c_void_p, c_int)
predict_options_default = _fn("canopy_predict_options_default", PredictOptions)

forest_get_info = _fn("canopy_forest_get_info", None, c_void_p, POINTER(ForestInfo))
forest_layout_parse = _fn("canopy_forest_layout_parse", Status, c_char_p, POINTER(c_int))
forest_engine_parse = _fn("canopy_forest_engine_parse", Status, c_char_p, POINTER(c_int))
predictor_compile = _fn("canopy_predictor_compile", Status, c_void_p, POINTER(PredictOptions),
                        POINTER(c_void_p))
predictor_free = _fn("canopy_predictor_free", None, c_void_p)
predictor_predict = _fn("canopy_predictor_predict", Status, c_void_p, Points, c_int,
                        PF64, c_void_p)
# Device rows in, device predictions out, then the stream.
predictor_predict_device = _fn("canopy_predictor_predict_device", Status, c_void_p, Points, c_int,
                               c_void_p, c_void_p, c_void_p)
predictor_forest = _fn("canopy_predictor_forest", c_void_p, c_void_p)
predictor_options = _fn("canopy_predictor_options", PredictOptions, c_void_p)
predictor_save = _fn("canopy_predictor_save", Status, c_void_p, c_char_p)
predictor_load = _fn("canopy_predictor_load", Status, c_char_p, POINTER(c_void_p))

regex_compile = _fn("canopy_regex_compile", Status, POINTER(c_char_p), POINTER(c_size_t),
                    c_int32, c_uint32, POINTER(c_void_p))
regex_free = _fn("canopy_regex_free", None, c_void_p)
regex_match = _fn("canopy_regex_match", Status, c_void_p, POINTER(c_char), c_size_t,
                  POINTER(RegexMatchOptions), POINTER(c_uint8), PI64, POINTER(RegexResult))

REGEX_ICASE, REGEX_LINE, REGEX_WORD = 1, 2, 4
TREE_KD, TREE_OCT, TREE_BST = 0, 3, 4
RESIDENCY = {"host": 0, "device": 1, "both": 2}
BACKEND_GPU = 2
# Magic of a compiled predictor file (docs/formats.md "Section files").
PREDICTOR_MAGIC = b"CNPYCPF1"
