/* SPDX-License-Identifier: MIT */
/* libFuzzer target: a pattern compiled and matched on a short subject must never
 * crash, overflow the stack or take long, and must keep its contract: a refused
 * pattern gets INVALID or NOMEM with a message; every engine selects the same lines;
 * canopy_regex_find returns a match inside the line, and a line that find matches
 * (from 0) is one the engines selected.
 * Matching costs (subject bytes) x (program size) per engine, so the subject is cut
 * to keep that under MATCH_BUDGET, and a pattern whose program may exceed the budget
 * is compiled but not matched.
 * Input: byte 0 the flags (bit 0 -i, 1 -x, 2 -w), then the pattern up to the first
 * NUL (at most 512 bytes), then the subject (at most 256 bytes, lines on '\n'). */
#include "canopy.h"

#include <stdlib.h>
#include <string.h>

/* Pike VM steps (subject bytes x program instructions) per engine: ~2 ms under ASan */
#define MATCH_BUDGET 65536.0

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint32_t flags = 0;
    if (data[0] & 1) flags |= CANOPY_REGEX_ICASE;
    if (data[0] & 2) flags |= CANOPY_REGEX_LINE;
    if (data[0] & 4) flags |= CANOPY_REGEX_WORD;
    const char *pat = (const char *)data + 1;
    const char *nul = memchr(pat, 0, size - 1);
    size_t plen = nul ? (size_t)(nul - pat) : size - 1;
    if (plen > 512) return 0;
    const char *subj = nul ? nul + 1 : pat + plen;
    size_t slen = size - 1 - plen - (nul != NULL);
    if (slen > 256) return 0;
    /* Intervals multiply a program (up to 1 Mi instructions, which compile in a few
     * ms) and the Pike VM's closures cost up to the program per subject byte
     * (]?????????????{2216} took 2 s under ASan): the product of the pattern's numbers
     * times its length (plus -x/-w's wrapping) bounds the program. Matching big
     * programs on long lines is tested in test_regex.c and cli_grep_hostile.sh. */
    double product = 1;
    for (size_t i = 0; i < plen; i++) {
        if (pat[i] < '0' || pat[i] > '9') continue;
        long v = 0;
        while (i < plen && pat[i] >= '0' && pat[i] <= '9' && v < 100000)
            v = v * 10 + (pat[i++] - '0');
        product *= (double)v + 1;
    }
    canopy_regex *re = NULL;
    canopy_status s = canopy_regex_compile(&pat, &plen, 1, flags, &re);
    if (s != CANOPY_OK) {
        if (re || (s != CANOPY_ERR_INVALID && s != CANOPY_ERR_NOMEM) || !canopy_last_error()[0])
            abort();
        return 0;
    }
    double program = product * (double)(plen + 8);
    if (program > MATCH_BUDGET) { /* compiled, not matched */
        canopy_regex_free(re);
        return 0;
    }
    if ((double)slen * program > MATCH_BUDGET) slen = (size_t)(MATCH_BUDGET / program);
    int64_t lines = canopy_regex_count_lines(subj, slen);
    uint8_t sel[2][257];
    int64_t selected = -1;
    for (int e = 1; e < CANOPY_REGEX_ENGINE_COUNT; e++) {
        canopy_regex_match_options o = {(canopy_regex_engine)e, 0};
        canopy_regex_result r;
        uint8_t *out = sel[e == 1 ? 0 : 1];
        if (canopy_regex_match(re, subj, slen, &o, out, NULL, &r) != CANOPY_OK) abort();
        if (r.lines != lines || (selected >= 0 && r.selected != selected)) abort();
        if (e > 1 && memcmp(sel[0], sel[1], (size_t)lines) != 0) abort();
        selected = r.selected;
    }
    const char *b = subj, *end = subj + slen;
    for (int64_t i = 0; i < lines; i++) {
        const char *nl = memchr(b, '\n', (size_t)(end - b));
        size_t len = (size_t)((nl ? nl : end) - b), ms = 0, me = 0;
        int found = 0;
        if (canopy_regex_find(re, b, len, 0, &ms, &me, &found) != CANOPY_OK) abort();
        if (found && (ms > me || me > len)) abort();
        if (found && !sel[0][i]) abort();
        b += len + 1;
    }
    canopy_regex_free(re);
    return 0;
}
