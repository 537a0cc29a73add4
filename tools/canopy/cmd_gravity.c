/* canopy gravity: Barnes-Hut accelerations over an octree. */
#include "trav_opts.h"

#include <math.h>
#include <stdio.h>

enum { OPT_BODIES = OPT_FIRST_LOCAL, OPT_THETA, OPT_SOFTENING };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy gravity --bodies B.npy [--theta 0.5] [--softening EPS]\n"
               "       -o ACC.npy [--variant V] [--schedule S] [--backend B] [--threads T]\n"
               "       [--leaf-size L] [--stats]\n\n"
               "Gravitational acceleration (G = 1) of every body from all the others by\n"
               "Barnes-Hut on an octree: monopole cells, opened when |x - com| <=\n"
               "side / theta + |com - cell centre| or when the body is inside the cell;\n"
               "Plummer softening a = m d / (|d|^2 + eps^2)^(3/2).\n\n"
               "B is (n, 3) positions with equal masses 1/n, or (n, 4) with the mass last.\n"
               "Output: ACC float32 (n, 3), written atomically. Without softening, two\n"
               "bodies at one position have an infinite force: that is an error (exit 1).\n\n"
               "Options:\n"
               "  --bodies B       bodies file (required)\n"
               "  --theta X        opening angle, > 0 (default 0.5; smaller is more exact)\n"
               "  --softening E    Plummer softening length, >= 0 (default 0)\n"
               "  -o, --output F   output file (required)\n" TRAV_HELP
               "\nExample: canopy gen plummer --n 100000 -o b.npy &&\n"
               "         canopy gravity --bodies b.npy --softening 0.05 -o acc.npy --stats\n");
}

/* Without softening, two bodies at one position pull each other infinitely hard and
 * the kernel's 0/0 gives NaN: refuse the result rather than write it. Returns 0, or
 * CLI_ERROR after naming a body with a non-finite acceleration and, when there is one,
 * another body at its position. */
static int check_finite(const char *path, canopy_points b, const float *acc, double eps) {
    int64_t bad = -1;
    for (int64_t i = 0; i < 3 * b.n && bad < 0; i++)
        if (!isfinite(acc[i])) bad = i / 3;
    if (bad < 0) return 0;
    const float *p = canopy_point(b, bad);
    int64_t twin = -1;
    for (int64_t j = 0; j < b.n && twin < 0; j++) {
        const float *q = canopy_point(b, j);
        if (j != bad && q[0] == p[0] && q[1] == p[1] && q[2] == p[2]) twin = j;
    }
    if (twin >= 0)
        fprintf(stderr,
                "canopy gravity: %s: bodies %lld and %lld are at the same position (%g, %g, "
                "%g); with softening %g their force is infinite. Give --softening EPS > 0.\n",
                path, (long long)bad, (long long)twin, p[0], p[1], p[2], eps);
    else
        fprintf(stderr,
                "canopy gravity: %s: body %lld has a non-finite acceleration (softening %g); "
                "give --softening EPS > 0\n",
                path, (long long)bad, eps);
    return CLI_ERROR;
}

int cmd_gravity(int argc, char **argv) {
    static const struct option opts[] = {{"bodies", required_argument, NULL, OPT_BODIES},
                                         {"theta", required_argument, NULL, OPT_THETA},
                                         {"softening", required_argument, NULL, OPT_SOFTENING},
                                         {"output", required_argument, NULL, 'o'},
                                         TRAV_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *bodies_path = NULL, *out = NULL;
    double theta = 0.5, eps = 0.0;
    trav_opts to;
    trav_opts_init(&to);
    to.run.tree = CANOPY_TREE_OCT;
    to.tree_fixed = "gravity always uses an octree";
    cli_parser p = cli_parser_start("gravity", "ho:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_BODIES:
            bodies_path = optarg;
            break;
        case OPT_THETA:
            if (cli_parse_double("gravity", "--theta", optarg, 1e-6, 100.0, &theta))
                return CLI_USAGE;
            break;
        case OPT_SOFTENING:
            if (cli_parse_double("gravity", "--softening", optarg, 0.0, 1e30, &eps))
                return CLI_USAGE;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage_error("gravity", "unexpected argument '%s'", argv[optind]);
    if (!bodies_path) return cli_usage_error("gravity", "--bodies is required");
    if (!out) return cli_usage_error("gravity", "-o is required");

    const char *ins[] = {bodies_path}, *outs[] = {out};
    if (cli_check_paths("gravity", ins, 1, outs, 1)) return CLI_ERROR;

    double t0 = canopy_now();
    canopy_array ba;
    canopy_points b;
    if (cli_load_points("gravity", bodies_path, &ba, &b)) return CLI_ERROR;
    double t_load = canopy_now() - t0, t_write = 0.0;
    int rc = CLI_OK;
    float *mass = NULL, *acc = NULL;
    if (b.d != 3 && b.d != 4) {
        fprintf(stderr, "canopy gravity: %s has %d columns; expected 3 (x y z) or 4 (x y z m)\n",
                bodies_path, (int)b.d);
        rc = CLI_ERROR;
    } else if (canopy_alloc((void **)&acc, (size_t)(3 * b.n + 1), sizeof *acc) ||
               (b.d == 4 && canopy_alloc((void **)&mass, (size_t)(b.n + 1), sizeof *mass))) {
        rc = cli_runtime_error("gravity");
    }
    canopy_stats st;
    if (rc == CLI_OK) {
        if (b.d == 4)
            for (int64_t i = 0; i < b.n; i++) mass[i] = canopy_point(b, i)[3];
        b.d = 3; /* positions are the first three columns; stride keeps the mass out */
        if (canopy_gravity(b, mass, (float)theta, (float)eps, &to.run, acc, p.stats ? &st : NULL))
            rc = cli_runtime_error("gravity");
        else
            rc = check_finite(bodies_path, b, acc, eps);
    }
    if (rc == CLI_OK) {
        canopy_array a = cli_array_view(acc, CANOPY_F32, b.n, 3);
        rc = cli_write_arrays("gravity", 1, &out, &a, &t_write);
    }
    if (rc == CLI_OK) {
        cli_summary("gravity: %lld bodies, theta = %g, softening = %g -> %s", (long long)b.n, theta,
                    eps, out);
        if (p.stats) trav_print_stats("gravity", &st, t_load, t_write);
    }
    canopy_free(mass);
    canopy_free(acc);
    canopy_array_release(&ba);
    return rc;
}
