/* SPDX-License-Identifier: MIT */
/* The strict JSON tape reader (src/forest/json_tape.c): grammar errors and
 * truncation named with their byte, navigation, string decoding, and numbers equal to
 * strtod bit for bit on random decimal texts (the fast path must round as strtod). */
#include "check.h"
#include "forest/json_tape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static canopy_status parse(const char *text, cf_jdoc *d) {
    return canopy_cf_jparse(text, strlen(text), "t.json", d);
}

static void expect_error(const char *text, const char *needle) {
    cf_jdoc d;
    canopy_status s = parse(text, &d);
    CHECK_MSG(s == CANOPY_ERR_FORMAT && strstr(canopy_last_error(), needle) &&
                  strncmp(canopy_last_error(), "t.json: ", 8) == 0,
              "'%s': got status %d, '%s', want '%s'", text, (int)s,
              s ? canopy_last_error() : "(accepted)", needle);
    if (!s) canopy_cf_jfree(&d);
}

static void test_errors(void) {
    expect_error("", "truncated JSON");
    expect_error("   ", "truncated JSON");
    expect_error("[1,2", "truncated JSON");
    expect_error("{\"a\":", "truncated JSON");
    expect_error("\"abc", "truncated JSON");
    expect_error("\"\\u12", "truncated JSON");
    expect_error("1.", "truncated JSON");
    expect_error("-", "truncated JSON");
    expect_error("1e+", "truncated JSON");
    expect_error("tru", "truncated JSON");
    expect_error("\"\xE2\x82", "truncated JSON");
    expect_error("[1,]", "at byte 3: unexpected character");
    expect_error("[1 2]", "at byte 3: expected ',' or ']'");
    expect_error("{\"a\" 1}", "at byte 5: expected ':'");
    expect_error("{\"a\":1,}", "at byte 7: expected a string key");
    expect_error("{1:2}", "expected a string key");
    expect_error("{\"a\":1]", "expected ',' or '}'");
    expect_error("01", "unexpected data after the JSON at byte 1");
    expect_error("[01]", "expected ',' or ']'");
    expect_error("1.e5", "no digit after '.'");
    expect_error("1e", "truncated JSON");
    expect_error("1ex", "no digit in the exponent");
    expect_error("-a", "bad number");
    expect_error("+1", "unexpected character");
    expect_error(".5", "unexpected character");
    expect_error("trux", "unknown literal");
    expect_error("nul", "truncated JSON");
    expect_error("NaN", "unexpected character");
    expect_error("[Infinity]", "unexpected character");
    expect_error("'a'", "unexpected character");
    expect_error("// c\n1", "unexpected character");
    expect_error("/* c */ 1", "unexpected character");
    expect_error("[1] x", "unexpected data after the JSON at byte 4");
    expect_error("\"\\x\"", "bad escape");
    expect_error("\"\\u12G4\"", "bad \\u escape");
    expect_error("\"a\x01\"", "control character");
    expect_error("\"a\tb\"", "control character");
    expect_error("\"\xC0\x80\"", "invalid UTF-8");
    expect_error("\"\xED\xA0\x80\"", "invalid UTF-8");
    expect_error("\"\xF4\x90\x80\x80\"", "invalid UTF-8");
    expect_error("\"\xE0\x80\xAF\"", "invalid UTF-8");
    expect_error("\"\x80\"", "invalid UTF-8");
    expect_error("\"\xE2\x28\xA1\"", "invalid UTF-8");
    /* 32 levels are fine, 33 are not */
    char deep[80];
    memset(deep, '[', 33);
    memset(deep + 33, ']', 33);
    deep[66] = '\0';
    expect_error(deep, "nesting deeper than 32");
    deep[65] = '\0';
    cf_jdoc d;
    CHECK_OK(parse(deep + 1, &d));
    if (d.rec) canopy_cf_jfree(&d);
}

static void test_navigation(void) {
    const char *text = " {\"a\": [1, 2, {\"b\": \"x\"}, [], {}], \"c\": true, \"d\": null,"
                       " \"e\": \"2.5\", \"k\\u0065y\": -3, \"a\": 5 } ";
    cf_jdoc d;
    CHECK_OK(parse(text, &d));
    CHECK(canopy_cf_jtype_of(&d, 0) == CF_JOBJECT);
    CHECK(canopy_cf_jcount(&d, 0) == 6);
    /* a repeated key gives its last value, as json-c did */
    cf_jval a = canopy_cf_jfind(&d, 0, "a");
    double x = 0;
    CHECK(a >= 0 && canopy_cf_jtype_of(&d, a) == CF_JNUMBER);
    CHECK_OK(canopy_cf_jnumber(&d, a, "t.json", "a", &x));
    CHECK(x == 5);
    cf_jval arr = canopy_cf_jfirst(&d, 0) + 1;
    CHECK(canopy_cf_jtype_of(&d, arr) == CF_JARRAY && canopy_cf_jcount(&d, arr) == 5);
    int kinds = 0;
    for (cf_jval c = canopy_cf_jfirst(&d, arr); c >= 0; c = canopy_cf_jnext(&d, arr, c))
        kinds = kinds * 10 + (int)canopy_cf_jtype_of(&d, c);
    CHECK_MSG(kinds == 22545, "element types %d", kinds);
    double two[2];
    CHECK_OK(canopy_cf_jnumbers(&d, arr, 2, "t.json", "a", two));
    CHECK(two[0] == 1 && two[1] == 2);
    double three[3];
    CHECK_FAILS(canopy_cf_jnumbers(&d, arr, 3, "t.json", "arr", three), CANOPY_ERR_FORMAT,
                "arr is not a number");
    CHECK(canopy_cf_jfind(&d, arr, "b") < 0); /* not an object */
    cf_jval v;
    CHECK_OK(canopy_cf_jget(&d, 0, "c", CF_JBOOL, "t.json", "root", &v));
    CHECK_OK(canopy_cf_jnumber(&d, v, "t.json", "c", &x));
    CHECK(x == 1);
    CHECK_OK(canopy_cf_jget(&d, 0, "e", CF_JSTRING, "t.json", "root", &v));
    CHECK_OK(canopy_cf_jnumber(&d, v, "t.json", "e", &x));
    CHECK(x == 2.5);
    CHECK_FAILS(canopy_cf_jget(&d, 0, "zz", CF_JNUMBER, "t.json", "root", &v), CANOPY_ERR_FORMAT,
                "t.json: missing field \"zz\" in root");
    CHECK_FAILS(canopy_cf_jget(&d, 0, "c", CF_JARRAY, "t.json", "root", &v), CANOPY_ERR_FORMAT,
                "field \"c\" in root should be an array");
    CHECK_FAILS(canopy_cf_jnumber(&d, canopy_cf_jfind(&d, 0, "d"), "t.json", "d", &x),
                CANOPY_ERR_FORMAT, "d is not a number");
    /* keys compare decoded */
    v = canopy_cf_jfind(&d, 0, "key");
    CHECK_OK(canopy_cf_jnumber(&d, v, "t.json", "key", &x));
    CHECK(x == -3);
    CHECK(canopy_cf_jfind(&d, 0, "ke") < 0 && canopy_cf_jfind(&d, 0, "keyy") < 0);
    canopy_cf_jfree(&d);

    CHECK_OK(parse("[]", &d));
    CHECK(canopy_cf_jcount(&d, 0) == 0 && canopy_cf_jfirst(&d, 0) < 0);
    canopy_cf_jfree(&d);
    CHECK_OK(parse("\"bad\"", &d));
    CHECK(canopy_cf_jfind(&d, 0, "bad") < 0 && canopy_cf_jfirst(&d, 0) < 0 &&
          canopy_cf_jcount(&d, 0) == 0);
    CHECK_FAILS(canopy_cf_jnumber(&d, 0, "t.json", "s", &x), CANOPY_ERR_FORMAT, "not a number");
    canopy_cf_jfree(&d);
}

static void test_strings(void) {
    cf_jdoc d;
    CHECK_OK(parse("[\"a\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\/\\b\\f\\r\\t\", \"\\ud800x\", "
                   "\"caf\xC3\xA9 \xF0\x9F\x98\x80\", \"\"]",
                   &d));
    cf_jval s = canopy_cf_jfirst(&d, 0);
    char *t = canopy_cf_jstrdup(&d, s);
    CHECK(t && strcmp(t, "a\xC3\xA9\xF0\x9F\x98\x80\n\"\\/\b\f\r\t") == 0);
    CHECK(canopy_cf_jstreq(&d, s, "a\xC3\xA9\xF0\x9F\x98\x80\n\"\\/\b\f\r\t"));
    CHECK(!canopy_cf_jstreq(&d, s, "a\xC3\xA9"));
    free(t);
    s = canopy_cf_jnext(&d, 0, s);
    t = canopy_cf_jstrdup(&d, s);
    CHECK(t && strcmp(t, "\xEF\xBF\xBDx") == 0); /* lone surrogate: U+FFFD */
    free(t);
    s = canopy_cf_jnext(&d, 0, s);
    CHECK(canopy_cf_jstreq(&d, s, "caf\xC3\xA9 \xF0\x9F\x98\x80"));
    s = canopy_cf_jnext(&d, 0, s);
    t = canopy_cf_jstrdup(&d, s);
    CHECK(t && t[0] == '\0' && canopy_cf_jstreq(&d, s, ""));
    free(t);
    CHECK(canopy_cf_jstrdup(&d, 0) == NULL);
    canopy_cf_jfree(&d);
}

static uint64_t rng_state;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random number texts in JSON grammar: short and long mantissas, leading zeros in
 * fractions, exponents inside and outside the fast path, and printf's shortest forms
 * of random floats and doubles. */
static void random_number(char *out, size_t cap) {
    int kind = (int)(next_random() % 4);
    if (kind == 0) {
        float f;
        uint32_t bits = (uint32_t)next_random();
        memcpy(&f, &bits, sizeof f);
        if (!isfinite(f)) f = 1.5f;
        snprintf(out, cap, "%.*g", 1 + (int)(next_random() % 9), (double)f);
    } else if (kind == 1) {
        double x;
        uint64_t bits = next_random();
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) x = -2.25;
        snprintf(out, cap, "%.17g", x);
    } else {
        size_t n = 0;
        if (next_random() % 2) out[n++] = '-';
        int int_digits = (int)(next_random() % 12);
        if (int_digits == 0) out[n++] = '0';
        for (int i = 0; i < int_digits; i++)
            out[n++] = (char)('0' + (i == 0 ? 1 + next_random() % 9 : next_random() % 10));
        if (next_random() % 2) {
            out[n++] = '.';
            int zeros = (int)(next_random() % 6), frac = 1 + (int)(next_random() % 22);
            for (int i = 0; i < zeros; i++) out[n++] = '0';
            for (int i = 0; i < frac; i++) out[n++] = (char)('0' + next_random() % 10);
        }
        if (kind == 3)
            n += (size_t)snprintf(out + n, cap - n, "e%d", (int)(next_random() % 80) - 40);
        out[n] = '\0';
    }
}

static void test_numbers(void) {
    static const char *const fixed[] = {"0",
                                        "-0",
                                        "1",
                                        "-1.5",
                                        "0.1",
                                        "3.4028235E38",
                                        "1.17549435E-38",
                                        "9007199254740993",
                                        "9007199254740992",
                                        "123456789012345678901234567890",
                                        "0.000000000000000000000000000001",
                                        "1e22",
                                        "1e23",
                                        "1e-22",
                                        "1e-23",
                                        "4.9406564584124654e-324",
                                        "2.2250738585072011e-308",
                                        "1e400",
                                        "-1e400",
                                        "1e-400",
                                        "0e99999999999",
                                        "1E+2",
                                        "12345678901234567890e-5",
                                        "4.5235E-1"};
    int bad = 0;
    for (int seed = 1; seed <= 3; seed++) {
        rng_state = 0x9E3779B97F4A7C15ull * (uint64_t)seed;
        for (int i = 0; i < 20000 + (int)(sizeof fixed / sizeof fixed[0]); i++) {
            char text[128];
            if (i < (int)(sizeof fixed / sizeof fixed[0]))
                snprintf(text, sizeof text, "%s", fixed[i]);
            else
                random_number(text, sizeof text);
            cf_jdoc d;
            if (parse(text, &d) != CANOPY_OK) {
                if (bad++ < 5) CHECK_MSG(0, "'%s' refused: %s", text, canopy_last_error());
                continue;
            }
            double got = 0, want = strtod(text, NULL);
            CHECK_OK(canopy_cf_jnumber(&d, 0, "t.json", "n", &got));
            if (memcmp(&got, &want, sizeof got) != 0 && bad++ < 5)
                CHECK_MSG(0, "'%s': %.17g, strtod %.17g", text, got, want);
            canopy_cf_jfree(&d);
        }
    }
    CHECK_MSG(bad == 0, "%d numbers differ from strtod", bad);
}

int main(void) {
    test_errors();
    test_navigation();
    test_strings();
    test_numbers();
    return check_finish();
}
