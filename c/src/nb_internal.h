/* Internal helpers shared by the library's source files. Not installed, not part of the API. */
#ifndef NB_INTERNAL_H
#define NB_INTERNAL_H

#include "navbake.h"

#include <stdarg.h>
#include <string.h>

#define NB_MESSAGE_MAX 512

struct nb_context {
    nb_allocator allocator;
    nb_progress_fn progress;
    void* progress_user;
    nb_status status;
    char message[NB_MESSAGE_MAX];
};

/* Allocation through the context's hooks. nb_alloc(ctx, 0) returns a valid 1-byte block. */
void* nb_alloc(nb_context* ctx, size_t size);
void* nb_calloc(nb_context* ctx, size_t count, size_t size); /* zeroed; NULL on overflow */
void nb_free(nb_context* ctx, void* ptr);

/* Records status + formatted message in ctx (when ctx is not NULL) and returns status. */
nb_status nb_fail(nb_context* ctx, nb_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Asks the progress callback; returns NB_ERR_CANCELLED (with message) when it asks to stop. */
nb_status nb_report(nb_context* ctx, nb_stage stage, uint32_t done, uint32_t total);

/* Validates a volume and returns its bounding box (footprint in xz, height range in y). fn names the caller
 * in messages. */
nb_status nb_volume_bounds(nb_context* ctx, const char* fn, const nb_volume* v, float lo[3], float hi[3]);

/* Validates a volume and returns its bounding box (footprint in xz, height range in y). fn names the caller
 * in messages. */
nb_status nb_volume_bounds(nb_context* ctx, const char* fn, const nb_volume* v, float lo[3], float hi[3]);

/* Monotonic milliseconds. */
double nb_now_ms(void);

static inline int nb_mini(int a, int b) { return a < b ? a : b; }
static inline int nb_maxi(int a, int b) { return a > b ? a : b; }
static inline int nb_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline int nb_absi(int a) { return a < 0 ? -a : a; }
static inline float nb_minf(float a, float b) { return a < b ? a : b; }
static inline float nb_maxf(float a, float b) { return a > b ? a : b; }

#endif
