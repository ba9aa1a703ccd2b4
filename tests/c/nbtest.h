/* A small test harness: TEST functions, CHECK macros, a closing "N passed, N failed" line.
 * Each tests/c/test_<stage>.c is its own executable built with ASan + UBSan. */
#ifndef NBTEST_H
#define NBTEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nbt_failed_checks_;
static int nbt_tests_passed_;
static int nbt_tests_failed_;
static const char* nbt_current_;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            ++nbt_failed_checks_;                                                        \
            fprintf(stderr, "  FAIL %s (%s:%d): %s\n", nbt_current_, __FILE__, __LINE__, #cond); \
        }                                                                                \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        const long long a_ = (long long)(a), b_ = (long long)(b);                                  \
        if (a_ != b_) {                                                                            \
            ++nbt_failed_checks_;                                                                  \
            fprintf(stderr, "  FAIL %s (%s:%d): %s == %s (%lld vs %lld)\n", nbt_current_, __FILE__, __LINE__, \
                    #a, #b, a_, b_);                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        const double a_ = (double)(a), b_ = (double)(b);                                           \
        if (!(fabs(a_ - b_) <= (tol))) {                                                           \
            ++nbt_failed_checks_;                                                                  \
            fprintf(stderr, "  FAIL %s (%s:%d): %s ~ %s (%g vs %g, tol %g)\n", nbt_current_, __FILE__, __LINE__, \
                    #a, #b, a_, b_, (double)(tol));                                                \
        }                                                                                          \
    } while (0)

/* Checks a status and that the context's message mentions `needle`. */
#define CHECK_STATUS(ctx, expr, status, needle)                                                    \
    do {                                                                                           \
        const nb_status s_ = (expr);                                                               \
        if (s_ != (status)) {                                                                      \
            ++nbt_failed_checks_;                                                                  \
            fprintf(stderr, "  FAIL %s (%s:%d): %s gave %s, expected %s (%s)\n", nbt_current_, __FILE__, \
                    __LINE__, #expr, nb_status_name(s_), nb_status_name(status), nb_context_message(ctx)); \
        } else if ((needle) && !strstr(nb_context_message(ctx), (needle))) {                       \
            ++nbt_failed_checks_;                                                                  \
            fprintf(stderr, "  FAIL %s (%s:%d): message \"%s\" lacks \"%s\"\n", nbt_current_, __FILE__, \
                    __LINE__, nb_context_message(ctx), (const char*)(needle));                    \
        }                                                                                          \
    } while (0)

#define RUN(fn)                                                      \
    do {                                                             \
        nbt_current_ = #fn;                                          \
        const int before_ = nbt_failed_checks_;                      \
        fn();                                                        \
        if (nbt_failed_checks_ == before_)                           \
            ++nbt_tests_passed_;                                     \
        else {                                                       \
            ++nbt_tests_failed_;                                     \
            fprintf(stderr, "FAILED %s\n", #fn);                     \
        }                                                            \
    } while (0)

/* Prints the closing line and returns the exit code. */
static inline int nbt_finish(const char* suite)
{
    printf("%s: %d passed, %d failed\n", suite, nbt_tests_passed_, nbt_tests_failed_);
    return nbt_tests_failed_ ? 1 : 0;
}

/* Path of a shared test level: $NB_MESHES or ../shared/meshes beside the checkout. */
static inline const char* nbt_mesh_path(const char* name, char* buf, size_t size)
{
    const char* dir = getenv("NB_MESHES");
    snprintf(buf, size, "%s/%s", dir ? dir : "../shared/meshes", name);
    return buf;
}

/* A counting allocator that can fail the Nth allocation, for out-of-memory paths:
 *   nbt_alloc a = {0}; a.fail_at = 3; nb_context_desc d = {0}; nbt_alloc_hooks(&d, &a);
 * live counts blocks not yet freed (a context holds 1 for itself). */
typedef struct nbt_alloc {
    long calls;
    long fail_at;   /* 0 = never fail */
    long fail_from; /* every allocation from this one on fails (memory stays exhausted); 0 = never */
    long live;
} nbt_alloc;

static inline void* nbt_alloc_fn_(void* user, size_t size)
{
    nbt_alloc* a = (nbt_alloc*)user;
    a->calls++;
    if ((a->fail_at && a->calls == a->fail_at) || (a->fail_from && a->calls >= a->fail_from))
        return NULL;
    void* p = malloc(size);
    if (p)
        a->live++;
    return p;
}

static inline void nbt_free_fn_(void* user, void* ptr)
{
    if (!ptr)
        return;
    ((nbt_alloc*)user)->live--;
    free(ptr);
}

#define nbt_alloc_hooks(desc, state)              \
    do {                                          \
        (desc)->allocator.alloc = nbt_alloc_fn_;  \
        (desc)->allocator.free = nbt_free_fn_;    \
        (desc)->allocator.user = (state);         \
    } while (0)

/* A context over a counting allocator (a is reset) whose fail-th allocation after the context's own fails: the
 * out-of-memory sweeps' setup. NULL (a failed check) if even the context cannot be made. */
static inline nb_context* nbt_failing_context(nbt_alloc* a, long fail)
{
    memset(a, 0, sizeof(*a));
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, a);
    nb_context* c = nb_context_create(&d);
    CHECK(c != NULL);
    if (c)
        a->fail_at = a->calls + fail;
    return c;
}

/* A small deterministic generator (xorshift32) for randomized tests; *state must start non-zero. */
static inline uint32_t nbt_rand(uint32_t* state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

#endif
