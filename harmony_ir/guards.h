/* guards.h (internal to harmony_ir): the guards of a built Harmony program's commands
 * (guards.c says what they are). */
#ifndef RFX_HARMONY_GUARDS_H
#define RFX_HARMONY_GUARDS_H

#include "harmony.h"

/* Sets each running command's guard; false on out-of-memory. */
bool rfx_harmony_guards(rfx_harmony *h);

#endif
