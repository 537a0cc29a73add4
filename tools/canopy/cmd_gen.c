#include "cli.h"

#include <stdio.h>

int cmd_gen(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "canopy gen: not built yet\n");
    return CLI_ERROR;
}
