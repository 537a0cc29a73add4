/* SPDX-License-Identifier: MIT */
/* The section-file container shared by saved indexes (.idx) and compiled forest
 * predictors (.cpf): a fixed header, a table of sections and the sections themselves,
 * each 64-byte aligned so a reader can use the arrays in place from an mmap.
 *
 * Layout (all integers little-endian, docs/formats.md "Section files"):
 *   0  magic[8]        the payload kind, e.g. "CNPYIDX1"
 *   8  u32 endian      0x01020304 as written by the writer's native order
 *  12  u32 version     the payload's format version
 *  16  u64 file_size   bytes in the whole file
 *  24  u32 n_sections
 *  28  u32 crc32c      CRC-32C of the whole file with these 4 bytes taken as zero
 *  32  u64 reserved[4] zero
 *  64  n_sections x {u32 id, u32 elem_size, u64 offset, u64 length}
 *  then the sections, each at a multiple of 64 bytes. */
#ifndef CANOPY_IO_SECTIONFILE_H
#define CANOPY_IO_SECTIONFILE_H

#include "canopy.h"

#define CANOPY_SECTION_ALIGN 64
#define CANOPY_SECTION_MAX 64

typedef struct canopy_section {
    uint32_t id;
    uint32_t elem_size; /* bytes per element, for the reader's checks */
    const void *data;
    uint64_t length; /* bytes */
} canopy_section;

/* Writes the sections atomically (canopy_outfile) to path. */
canopy_status canopy_sections_write(const char *path, const char magic[8], uint32_t version,
                                    const canopy_section *secs, int32_t n);

/* An opened section file: the whole file mapped (or copied, for memory input),
 * checked (magic, endianness, version, size, table, alignment, checksum). */
typedef struct canopy_secfile {
    const unsigned char *base;
    size_t size;
    void *map;      /* mmap'ed region, or NULL */
    void *owned;    /* canopy_alloc'ed copy, or NULL */
    char name[256]; /* for messages */
    int32_t n;
    canopy_section sec[CANOPY_SECTION_MAX];
} canopy_secfile;

canopy_status canopy_secfile_open(const char *path, const char magic[8], uint32_t version,
                                  canopy_secfile *f);
/* From memory: copied into an aligned buffer (fuzzing and tests). */
canopy_status canopy_secfile_open_mem(const void *buf, size_t len, const char *name,
                                      const char magic[8], uint32_t version, canopy_secfile *f);
/* Section `id`: its recorded elem_size must be elem_size and, when expect >= 0, it
 * must hold exactly expect elements; *count (may be NULL) gets its element count.
 * A missing or mis-sized section fails naming the file and `what`. */
canopy_status canopy_secfile_get(const canopy_secfile *f, uint32_t id, uint32_t elem_size,
                                 const char *what, int64_t expect, const void **data,
                                 uint64_t *count);
void canopy_secfile_close(canopy_secfile *f);

/* CRC-32C (Castagnoli), bitwise-table implementation; crc = 0 to start. */
uint32_t canopy_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
