/* SPDX-License-Identifier: MIT */
/* Section files: see sectionfile.h for the layout. */
#define _POSIX_C_SOURCE 200809L
#include "io/sectionfile.h"

#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_BYTES 64
#define ENTRY_BYTES 24
#define ENDIAN_MARK 0x01020304u
#define CRC_OFFSET 28

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        crc_table[i] = c;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* SSE4.2 has CRC-32C in hardware (8 bytes a step): the checksum of a large file then
 * costs a fraction of reading it. Same polynomial and bit order as the table. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                         size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
    }
    crc = (uint32_t)c;
    for (; len; p++, len--) crc = __builtin_ia32_crc32qi(crc, *p);
    return crc;
}
#endif

uint32_t canopy_crc32c(uint32_t crc, const void *buf, size_t len) {
    const unsigned char *p = buf;
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (canopy_cpu_isa() >= CANOPY_ISA_SSE42) return ~crc_hw(crc, p, len);
#endif
    pthread_once(&crc_once, crc_init);
    for (size_t i = 0; i < len; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint64_t align_up(uint64_t x) {
    return (x + CANOPY_SECTION_ALIGN - 1) / CANOPY_SECTION_ALIGN * CANOPY_SECTION_ALIGN;
}

static void put32(unsigned char *p, uint32_t v) {
    memcpy(p, &v, 4);
}
static void put64(unsigned char *p, uint64_t v) {
    memcpy(p, &v, 8);
}
static uint32_t get32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

canopy_status canopy_sections_write(const char *path, const char magic[8], uint32_t version,
                                    const canopy_section *secs, int32_t n) {
    if (n < 0 || n > CANOPY_SECTION_MAX)
        return canopy_fail(CANOPY_ERR_INTERNAL, "%s: %d sections (at most %d)", path, (int)n,
                           CANOPY_SECTION_MAX);
    unsigned char head[HEADER_BYTES + CANOPY_SECTION_MAX * ENTRY_BYTES];
    memset(head, 0, sizeof head);
    uint64_t table_end = HEADER_BYTES + (uint64_t)n * ENTRY_BYTES, off = align_up(table_end);
    for (int32_t i = 0; i < n; i++) {
        unsigned char *e = head + HEADER_BYTES + i * ENTRY_BYTES;
        put32(e, secs[i].id);
        put32(e + 4, secs[i].elem_size);
        put64(e + 8, off);
        put64(e + 16, secs[i].length);
        off = align_up(off + secs[i].length);
    }
    memcpy(head, magic, 8);
    put32(head + 8, ENDIAN_MARK);
    put32(head + 12, version);
    put64(head + 16, off);
    put32(head + 24, (uint32_t)n);
    /* The checksum covers the header (its own field as zero), the padding (zero) and
     * every section, in file order. */
    static const unsigned char zeros[CANOPY_SECTION_ALIGN];
    uint32_t crc = canopy_crc32c(0, head, table_end);
    crc = canopy_crc32c(crc, zeros, align_up(table_end) - table_end);
    for (int32_t i = 0; i < n; i++) {
        crc = canopy_crc32c(crc, secs[i].data, secs[i].length);
        crc = canopy_crc32c(crc, zeros, align_up(secs[i].length) - secs[i].length);
    }
    put32(head + CRC_OFFSET, crc);

    canopy_outfile o;
    canopy_status s = canopy_outfile_open(&o, path);
    if (s) return s;
    s = canopy_io_write(&o, head, table_end);
    if (!s) s = canopy_io_write(&o, zeros, align_up(table_end) - table_end);
    for (int32_t i = 0; i < n && !s; i++) {
        s = canopy_io_write(&o, secs[i].data, secs[i].length);
        if (!s) s = canopy_io_write(&o, zeros, align_up(secs[i].length) - secs[i].length);
    }
    if (s) {
        canopy_outfile_abort(&o);
        return s;
    }
    return canopy_outfile_commit(&o);
}

/* Checks the mapped bytes f->base[0 .. f->size) and fills the section table. */
static canopy_status parse(canopy_secfile *f, const char magic[8], uint32_t version) {
    const unsigned char *b = f->base;
    const char *nm = f->name;
    if (f->size < HEADER_BYTES)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated (%zu bytes, header needs %d)", nm,
                           f->size, HEADER_BYTES);
    if (memcmp(b, magic, 8) != 0) {
        char got[32];
        canopy_io_printable(got, sizeof got, (const char *)b, 8);
        char want[16];
        canopy_io_printable(want, sizeof want, magic, 8);
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: not a %s file (magic '%s')", nm, want, got);
    }
    uint32_t endian = get32(b + 8);
    if (endian != ENDIAN_MARK)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: written on a machine of another byte order (endianness marker "
                           "0x%08x, expected 0x%08x)",
                           nm, endian, ENDIAN_MARK);
    uint32_t ver = get32(b + 12);
    if (ver != version)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: format version %u, this canopy reads version %u",
                           nm, ver, version);
    uint64_t fsize = get64(b + 16);
    if (fsize != f->size)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: %s (header says %llu bytes, file has %zu)", nm,
                           fsize > f->size ? "truncated" : "trailing bytes or corrupt header",
                           (unsigned long long)fsize, f->size);
    uint32_t n = get32(b + 24);
    if (n > CANOPY_SECTION_MAX)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: %u sections (at most %d)", nm, n,
                           CANOPY_SECTION_MAX);
    uint64_t table_end = HEADER_BYTES + (uint64_t)n * ENTRY_BYTES;
    if (table_end > f->size)
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: truncated section table", nm);
    uint32_t stored = get32(b + CRC_OFFSET);
    static const unsigned char zero4[4];
    uint32_t crc = canopy_crc32c(0, b, CRC_OFFSET);
    crc = canopy_crc32c(crc, zero4, 4);
    crc = canopy_crc32c(crc, b + CRC_OFFSET + 4, f->size - CRC_OFFSET - 4);
    if (crc != stored)
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "%s: checksum mismatch (CRC-32C 0x%08x, header says 0x%08x): the "
                           "file is corrupt",
                           nm, crc, stored);
    f->n = (int32_t)n;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = b + HEADER_BYTES + i * ENTRY_BYTES;
        canopy_section *s = &f->sec[i];
        s->id = get32(e);
        s->elem_size = get32(e + 4);
        uint64_t off = get64(e + 8);
        s->length = get64(e + 16);
        if (off % CANOPY_SECTION_ALIGN || off < table_end || off > f->size ||
            s->length > f->size - off)
            return canopy_fail(CANOPY_ERR_FORMAT,
                               "%s: section %u (id %u) at offset %llu, %llu bytes, lies outside "
                               "the file or is misaligned",
                               nm, i, s->id, (unsigned long long)off,
                               (unsigned long long)s->length);
        s->data = b + off;
    }
    return CANOPY_OK;
}

canopy_status canopy_secfile_open(const char *path, const char magic[8], uint32_t version,
                                  canopy_secfile *f) {
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", path);
    /* O_NONBLOCK: a FIFO would block in open() until a writer came; it fails below. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return canopy_fail(CANOPY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return canopy_fail(CANOPY_ERR_IO,
                           "%s: not a regular file (files are mapped: a pipe, FIFO or device "
                           "cannot be)",
                           path);
    }
    f->size = (size_t)st.st_size;
    if (f->size > 0) {
        void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return canopy_fail(CANOPY_ERR_IO, "%s: cannot map: %s", path, strerror(e));
        }
        f->map = m;
        f->base = m;
    } else {
        static const unsigned char empty[1];
        f->base = empty;
    }
    close(fd);
    canopy_status s = parse(f, magic, version);
    if (s) canopy_secfile_close(f);
    return s;
}

canopy_status canopy_secfile_open_mem(const void *buf, size_t len, const char *name,
                                      const char magic[8], uint32_t version, canopy_secfile *f) {
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", canopy_io_name(name));
    canopy_status s = canopy_alloc(&f->owned, len + 1, 1);
    if (s) return s;
    if (len) memcpy(f->owned, buf, len);
    f->base = f->owned;
    f->size = len;
    if ((s = parse(f, magic, version))) canopy_secfile_close(f);
    return s;
}

canopy_status canopy_secfile_get(const canopy_secfile *f, uint32_t id, uint32_t elem_size,
                                 const char *what, int64_t expect, const void **data,
                                 uint64_t *count) {
    for (int32_t i = 0; i < f->n; i++) {
        const canopy_section *s = &f->sec[i];
        if (s->id != id) continue;
        if (s->elem_size != elem_size || s->length % elem_size)
            return canopy_fail(CANOPY_ERR_FORMAT,
                               "%s: section '%s' has %u-byte elements (%llu bytes), expected %u",
                               f->name, what, s->elem_size, (unsigned long long)s->length,
                               elem_size);
        if (expect >= 0 && (uint64_t)expect != s->length / elem_size)
            return canopy_fail(
                CANOPY_ERR_FORMAT, "%s: section '%s' has %llu elements, expected %llu", f->name,
                what, (unsigned long long)(s->length / elem_size), (unsigned long long)expect);
        *data = s->data;
        if (count) *count = s->length / elem_size;
        return CANOPY_OK;
    }
    return canopy_fail(CANOPY_ERR_FORMAT, "%s: section '%s' is missing", f->name, what);
}

void canopy_secfile_close(canopy_secfile *f) {
    if (f->map) munmap(f->map, f->size);
    canopy_free(f->owned);
    memset(f, 0, sizeof *f);
}
