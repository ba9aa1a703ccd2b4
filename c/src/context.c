/* Context, allocator hooks, status table and error messages. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "nb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#endif

const char* nb_status_name(nb_status status)
{
    switch (status) {
#define NB_STATUS_NAME_(name, str) \
    case name:                     \
        return #name;
        NB_STATUS_TABLE(NB_STATUS_NAME_)
#undef NB_STATUS_NAME_
    default:
        return "NB_UNKNOWN_STATUS";
    }
}

const char* nb_status_str(nb_status status)
{
    switch (status) {
#define NB_STATUS_STR_(name, str) \
    case name:                    \
        return str;
        NB_STATUS_TABLE(NB_STATUS_STR_)
#undef NB_STATUS_STR_
    default:
        return "unknown status";
    }
}

static void* default_alloc(void* user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void default_free(void* user, void* ptr)
{
    (void)user;
    free(ptr);
}

nb_context* nb_context_create(const nb_context_desc* desc)
{
    nb_allocator a = { default_alloc, default_free, NULL };
    if (desc && desc->allocator.alloc && desc->allocator.free)
        a = desc->allocator;
    nb_context* ctx = (nb_context*)a.alloc(a.user, sizeof(nb_context));
    if (!ctx)
        return NULL;
    memset(ctx, 0, sizeof(*ctx));
    ctx->allocator = a;
    if (desc) {
        ctx->progress = desc->progress;
        ctx->progress_user = desc->progress_user;
    }
    return ctx;
}

void nb_context_destroy(nb_context* ctx)
{
    if (!ctx)
        return;
    nb_allocator a = ctx->allocator;
    a.free(a.user, ctx);
}

nb_status nb_context_status(const nb_context* ctx) { return ctx ? ctx->status : NB_ERR_NULL_ARG; }

const char* nb_context_message(const nb_context* ctx) { return ctx ? ctx->message : "context is NULL"; }

void nb_context_clear_error(nb_context* ctx)
{
    if (!ctx)
        return;
    ctx->status = NB_OK;
    ctx->message[0] = '\0';
}

void nb_context_set_progress(nb_context* ctx, nb_progress_fn progress, void* user)
{
    if (!ctx)
        return;
    ctx->progress = progress;
    ctx->progress_user = user;
}

void* nb_alloc(nb_context* ctx, size_t size)
{
    if (size == 0)
        size = 1;
    return ctx->allocator.alloc(ctx->allocator.user, size);
}

void* nb_calloc(nb_context* ctx, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void* p = nb_alloc(ctx, count * size);
    if (p)
        memset(p, 0, (count * size) != 0 ? count * size : 1);
    return p;
}

void nb_free(nb_context* ctx, void* ptr)
{
    if (ptr)
        ctx->allocator.free(ctx->allocator.user, ptr);
}

nb_status nb_fail(nb_context* ctx, nb_status status, const char* fmt, ...)
{
    if (!ctx)
        return status;
    ctx->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->message, sizeof(ctx->message), fmt, ap);
    va_end(ap);
    return status;
}

nb_status nb_report(nb_context* ctx, nb_stage stage, uint32_t done, uint32_t total)
{
    if (!ctx || !ctx->progress)
        return NB_OK;
    if (ctx->progress(ctx->progress_user, stage, done, total))
        return nb_fail(ctx, NB_ERR_CANCELLED, "nb_bake: cancelled by the progress callback (stage %d, %u/%u)",
                       (int)stage, done, total);
    return NB_OK;
}

double nb_now_ms(void)
{
#if defined(__EMSCRIPTEN__)
    return emscripten_get_now();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
#endif
}
