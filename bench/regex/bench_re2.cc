// In-process timing of RE2::Set (unanchored, Latin-1: bytes are characters) over
// the lines of a file: the count of lines matching any pattern, REPS times.
// Prints "count ms ms ...". usage: bench_re2 FILE REPS PATTERN...
#include <re2/re2.h>
#include <re2/set.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: bench_re2 FILE REPS PATTERN...\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    RE2::Options opt;
    opt.set_encoding(RE2::Options::EncodingLatin1);
    opt.set_max_mem(256 << 20);
    RE2::Set set(opt, RE2::UNANCHORED);
    for (int i = 3; i < argc; i++) {
        std::string err;
        if (set.Add(argv[i], &err) < 0) {
            std::fprintf(stderr, "bench_re2: %s\n", err.c_str());
            return 2;
        }
    }
    if (!set.Compile()) return 2;
    int reps = std::atoi(argv[2]);
    long count = 0;
    for (int r = -1; r < reps; r++) { // r = -1: warm-up
        auto t0 = std::chrono::steady_clock::now();
        count = 0;
        const char *p = text.data(), *end = p + text.size();
        while (p < end) {
            const char *nl = static_cast<const char *>(std::memchr(p, '\n', end - p));
            const char *le = nl ? nl : end;
            if (set.Match(re2::StringPiece(p, le - p), nullptr)) count++;
            p = le + 1;
        }
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r < 0)
            std::printf("%ld", count);
        else
            std::printf(" %.3f", ms);
    }
    std::printf("\n");
    return 0;
}
