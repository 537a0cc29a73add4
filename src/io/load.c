/* SPDX-License-Identifier: MIT */
/* Loading any supported file by its extension, and loading points (the float32
 * n x d input of the tree workloads) with their values checked. */
#include "io/io.h"

#include <string.h>

canopy_status canopy_array_load(const char *path, canopy_array *out) {
    memset(out, 0, sizeof *out);
    if (!path) return canopy_fail(CANOPY_ERR_INVALID, "no file name given");
    if (canopy_io_has_suffix(path, ".npy")) return canopy_npy_read(path, out);
    if (canopy_io_has_suffix(path, ".csv")) return canopy_csv_read(path, out);
    if (canopy_io_has_suffix(path, ".fvecs") || canopy_io_has_suffix(path, ".ivecs"))
        return canopy_vecs_read(path, out);

    static const char *const compressed[] = {".gz", ".bz2", ".xz", ".zst", ".zip"};
    for (size_t i = 0; i < sizeof compressed / sizeof compressed[0]; i++)
        if (canopy_io_has_suffix(path, compressed[i]))
            return canopy_fail(CANOPY_ERR_FORMAT,
                               "%s: compressed files are not supported; decompress it first", path);
    if (canopy_io_has_suffix(path, ".npz"))
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: .npz archives are not supported; save the array with numpy.save "
                           "as .npy",
                           path);
    return canopy_fail(CANOPY_ERR_FORMAT,
                       "unknown file type '%s' (expected .npy, .csv, .fvecs or .ivecs)", path);
}

canopy_status canopy_points_load(const char *path, canopy_array *out) {
    canopy_status s = canopy_array_load(path, out);
    if (s != CANOPY_OK) return s;
    if (out->ndim == 1) {
        out->ndim = 2;
        out->shape[1] = 1;
    }
    if (out->ndim != 2) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: points must be a 1-D or 2-D array, not %d-D", path,
                        (int)out->ndim);
    } else if (out->shape[1] == 0) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: points have 0 columns", path);
    } else if (out->shape[1] > INT32_MAX) {
        s = canopy_fail(CANOPY_ERR_FORMAT, "%s: %lld columns is more than canopy supports", path,
                        (long long)out->shape[1]);
    } else if ((s = canopy_array_convert(out, CANOPY_F32)) != CANOPY_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", canopy_last_error());
        s = canopy_fail(s, "%s: %s", path, why);
    } else {
        canopy_points p = canopy_points_make(out->data, out->shape[0], (int32_t)out->shape[1]);
        s = canopy_points_check(p, path);
    }
    if (s != CANOPY_OK) canopy_array_release(out);
    return s;
}
