/* Input checks shared by the tree-search applications. */
#ifndef CANOPY_APPS_COMMON_H
#define CANOPY_APPS_COMMON_H

#include "canopy.h"

/* Validates ref and query (finite, same d). A query with n == 0 and data == NULL
 * means "ref queries itself": it is replaced by ref and *self set to 1. */
canopy_status canopy_app_check_inputs(const char *app, canopy_points ref, canopy_points *query,
                                      int *self);

#endif
