/* SPDX-License-Identifier: MIT */
/* Structure-aware libFuzzer mutator for canopy section files (.idx, .cpf; layout in
 * docs/formats.md): most mutants edit one element of one section (a node's child,
 * count or point range, a box corner, a radius, a point, a header value) to a
 * boundary value, a neighbour, NaN or infinity, or copy another element over it, and
 * every mutant gets its checksum recomputed. Byte-level mutation alone almost never
 * gets past the CRC and the table checks; this way nearly every input reaches the
 * content checks and the engines behind them. Included by one fuzz target each. */
#ifndef CANOPY_FUZZ_SECTION_MUTATOR_H
#define CANOPY_FUZZ_SECTION_MUTATOR_H

#include "io/sectionfile.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static uint32_t fuzz_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

static void fuzz_fix_checksum(uint8_t *data, size_t size) {
    if (size < 64) return;
    memset(data + 28, 0, 4);
    uint32_t crc = canopy_crc32c(0, data, size);
    memcpy(data + 28, &crc, 4);
}

/* One 4-byte word of a section: an int32 field or a float. */
static void fuzz_edit_word(uint8_t *w, const uint8_t *other, uint64_t *rs) {
    static const int32_t ints[] = {0, 1, 2, 3, -1, -2, 7, 8, 9, 16, 64, 1024, 65536, INT32_MAX};
    int32_t i;
    float f;
    memcpy(&i, w, 4);
    memcpy(&f, w, 4);
    switch (fuzz_rand(rs) % 10) {
    case 0:
        i = ints[fuzz_rand(rs) % (sizeof ints / sizeof ints[0])];
        break;
    case 1:
        i = (int32_t)((uint32_t)i + fuzz_rand(rs) % 5 - 2u); /* wraps, no overflow */
        break;
    case 2:
        memcpy(&i, other, 4);
        break; /* another element's value: a sibling, a box side */
    case 3:
        f = NAN;
        memcpy(&i, &f, 4);
        break;
    case 4:
        f = (fuzz_rand(rs) & 1) ? INFINITY : -INFINITY;
        memcpy(&i, &f, 4);
        break;
    case 5:
        f = -f;
        memcpy(&i, &f, 4);
        break;
    case 6:
        f *= (fuzz_rand(rs) & 1) ? 0.5f : 2.0f;
        memcpy(&i, &f, 4);
        break;
    case 7:
        f = nextafterf(f, (fuzz_rand(rs) & 1) ? INFINITY : -INFINITY);
        memcpy(&i, &f, 4);
        break;
    case 8:
        f += (float)(fuzz_rand(rs) % 3) - 1.0f;
        memcpy(&i, &f, 4);
        break;
    default:
        i ^= (int32_t)(1u << (fuzz_rand(rs) % 32));
        break;
    }
    memcpy(w, &i, 4);
}

/* One 8-byte element: an int64 header value, id, offset, or a double. */
static void fuzz_edit_dword(uint8_t *w, uint64_t *rs) {
    static const int64_t ints[] = {0, 1, 2, 3, -1, 7, 8, 9, 1024, 4096, INT32_MAX, INT64_MAX};
    int64_t i;
    double d;
    memcpy(&i, w, 8);
    memcpy(&d, w, 8);
    switch (fuzz_rand(rs) % 6) {
    case 0:
        i = ints[fuzz_rand(rs) % (sizeof ints / sizeof ints[0])];
        break;
    case 1:
        i = (int64_t)((uint64_t)i + fuzz_rand(rs) % 5 - 2u);
        break;
    case 2:
        d = NAN;
        memcpy(&i, &d, 8);
        break;
    case 3:
        d = (fuzz_rand(rs) & 1) ? INFINITY : -INFINITY;
        memcpy(&i, &d, 8);
        break;
    case 4:
        d = -d;
        memcpy(&i, &d, 8);
        break;
    default:
        i ^= (int64_t)(1ull << (fuzz_rand(rs) % 64));
        break;
    }
    memcpy(w, &i, 8);
}

static size_t section_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    uint64_t rs = 0x9e3779b97f4a7c15ull ^ seed;
    uint32_t n = 0;
    if (size >= 64) memcpy(&n, data + 24, 4);
    int table_ok = size >= 64 && n >= 1 && n <= 64 && 64 + 24 * (size_t)n <= size;
    if (!table_ok || fuzz_rand(&rs) % 16 == 0) {
        size = LLVMFuzzerMutate(data, size, max_size);
        fuzz_fix_checksum(data, size);
        return size;
    }
    int edits = 1 + (int)(fuzz_rand(&rs) % 3);
    for (int e = 0; e < edits; e++) {
        const uint8_t *t = data + 64 + 24 * (size_t)(fuzz_rand(&rs) % n);
        uint32_t elem;
        uint64_t off, len;
        memcpy(&elem, t + 4, 4);
        memcpy(&off, t + 8, 8);
        memcpy(&len, t + 16, 8);
        if (off > size || len > size - off || len < 4) continue;
        uint8_t *sec = data + off;
        if (elem == 8 && len >= 8) {
            fuzz_edit_dword(sec + 8 * (fuzz_rand(&rs) % (len / 8)), &rs);
        } else {
            uint64_t words = len / 4;
            fuzz_edit_word(sec + 4 * (fuzz_rand(&rs) % words), sec + 4 * (fuzz_rand(&rs) % words),
                           &rs);
        }
    }
    fuzz_fix_checksum(data, size);
    return size;
}

#endif
