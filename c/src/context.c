/* Context, allocator hooks, status table and error messages. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "nb_internal.h"

#include <stdlib.h>
#include <time.h>

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
    if (desc && (!desc->allocator.alloc) != (!desc->allocator.free))
        return NULL; /* half an allocator: malloc in its place would bypass the caller's arena unseen */
    if (desc && desc->allocator.alloc)
        a = desc->allocator;
    nb_context* ctx = (nb_context*)a.alloc(a.user, sizeof(nb_context));
    if (!ctx)
        return NULL;
    memset(ctx, 0, sizeof(*ctx));
    ctx->allocator = a;
    ctx->report_stage = -1;
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
    ctx->report_stage = -1;
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

/* ---- message formatting ------------------------------------------------------------------------------
 * A snprintf for exactly the conversions the library's messages use, so the wasm build carries no libc printf
 * (printf_core + long-double fmt_fp: ~6 KB of code). Output matches printf's for those conversions, rounding
 * included (ties to even); the only approximation is %g of values outside about 1e-17..1e27, which may differ
 * in the last digit when they lie within 1e-16 (relative) of a rounding tie. Cold code: sized for bytes. */

/* Writes v in base 10 or 16, left-padded to width with pad; returns the length. */
NB_COLD NB_NOINLINE static int put_uint(char* p, uint64_t v, unsigned base, int width, char pad)
{
    char tmp[24];
    int n = 0, len = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    for (; width > n; --width)
        p[len++] = pad;
    while (n)
        p[len++] = tmp[--n];
    return len;
}

/* Error of the rounded product p = a * b (a * b - p exactly; Dekker's split, no FMA needed). */
static double product_error(double a, double b, double p)
{
    const double ca = 134217729.0 * a, cb = 134217729.0 * b; /* 2^27 + 1 */
    const double ah = ca - (ca - a), al = a - ah;
    const double bh = cb - (cb - b), bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

/* %g (precision 6) of a finite non-zero magnitude a; returns the length. */
NB_COLD NB_NOINLINE static int put_g(char* p, double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof(bits));
    int e = ((int)(bits >> 52) - 1023) * 30103 / 100000; /* log10(2^binexp): off by at most one (more for subnormals) */
    uint32_t d;
    for (;;) {
        /* q ~ a * 10^(5 - e), to become the six digits; rest: the sign of the exact a * 10^(5 - e) - q (exact
         * while |5 - e| <= 22, where every power of ten is a double) */
        double y = a, q, rest;
        int k = 5 - e;
        for (; k > 22; k -= 22)
            y *= 1e22;
        for (; k < -22; k += 22)
            y /= 1e22;
        double ten = 1.0;
        for (int i = k < 0 ? -k : k; i > 0; --i)
            ten *= 10.0;
        if (k >= 0) {
            q = y * ten;
            rest = product_error(y, ten, q);
        } else {
            q = y / ten;
            const double back = q * ten;
            rest = (y - back) - product_error(q, ten, back);
        }
        if (q >= 1e6 || q < 1e5) {
            e += q >= 1e6 ? 1 : -1;
            continue;
        }
        d = (uint32_t)q;
        const double frac = q - d; /* exact; only an exact .5 needs rest to decide (ties to even, as printf) */
        if (frac > 0.5 || (frac == 0.5 && (rest > 0 || (rest == 0 && (d & 1)))))
            d++;
        if (d == 1000000) {
            d = 100000;
            e++;
        }
        break;
    }
    char digits[8];
    put_uint(digits, d, 10, 0, ' ');
    int nd = 6, len = 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    const int expo = e < -4 || e >= 6;
    int point = expo ? 1 : e + 1; /* digits before the point */
    if (point <= 0) {
        p[len++] = '0';
        p[len++] = '.';
        for (; point < 0; ++point)
            p[len++] = '0';
        point = -1; /* written */
    }
    for (int i = 0; i < nd || i < point; ++i) {
        if (i == point)
            p[len++] = '.';
        p[len++] = digits[i];
    }
    if (expo) {
        p[len++] = 'e';
        p[len++] = e < 0 ? '-' : '+';
        len += put_uint(p + len, (uint64_t)(e < 0 ? -e : e), 10, 2, '0');
    }
    return len;
}

/* %.0f of a finite magnitude a: every integer digit, like printf; returns the length (at most 309). */
NB_COLD NB_NOINLINE static int put_f0(char* p, double a)
{
    if (a < 9007199254740992.0) /* 2^53: rint is exact below, and ties go to even as in printf */
        return put_uint(p, (uint64_t)__builtin_rint(a), 10, 0, ' ');
    /* a = m * 2^s exactly (an integer): multiply out in base 1e9 limbs */
    uint64_t bits;
    memcpy(&bits, &a, sizeof(bits));
    const uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    uint32_t limb[36] = { (uint32_t)(m % 1000000000u), (uint32_t)(m / 1000000000u) };
    int n = 2, len = 0;
    for (int s = (int)(bits >> 52) - 1075; s > 0; s -= 29) {
        uint64_t carry = 0;
        for (int i = 0; i < n; ++i) {
            carry += (uint64_t)limb[i] << (s < 29 ? s : 29);
            limb[i] = (uint32_t)(carry % 1000000000u);
            carry /= 1000000000u;
        }
        if (carry)
            limb[n++] = (uint32_t)carry;
    }
    while (n--)
        len += put_uint(p + len, limb[n], 10, len ? 9 : 0, '0');
    return len;
}

NB_COLD int nb_vformat(char* buf, size_t size, const char* fmt, va_list ap)
{
    size_t total = 0;
    char tmp[320];
    for (const char* f = fmt; *f; ++f) {
        /* each step produces the piece s[0..n) */
        const char* s = f;
        size_t n = 1;
        if (*f == '%') {
            ++f;
            s = tmp;
            char pad = ' ';
            if (*f == '0')
                pad = *f++;
            int width = 0;
            while (*f >= '0' && *f <= '9')
                width = width * 10 + (*f++ - '0');
            while (*f == '.' || (*f >= '0' && *f <= '9'))
                ++f; /* precision: only %.0f is used */
            int mod = 0; /* number of 'l's; 'z': size_t */
            while (*f == 'l' || *f == 'z')
                mod = *f++ == 'z' ? 'z' : mod + 1;
            const char c = *f;
            if (c == 'd') {
                const long long v = mod == 2 ? va_arg(ap, long long) : mod == 1 ? va_arg(ap, long) : va_arg(ap, int);
                n = 0;
                if (v < 0)
                    tmp[n++] = '-';
                n += (size_t)put_uint(tmp + n, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10, width - (int)n, pad);
            } else if (c == 'u' || c == 'x') {
                const uint64_t v = mod == 'z' ? (uint64_t)va_arg(ap, size_t)
                                   : mod == 2 ? (uint64_t)va_arg(ap, unsigned long long)
                                   : mod == 1 ? (uint64_t)va_arg(ap, unsigned long)
                                              : (uint64_t)va_arg(ap, unsigned);
                n = (size_t)put_uint(tmp, v, c == 'x' ? 16 : 10, width, pad);
            } else if (c == 'c') {
                tmp[0] = (char)va_arg(ap, int);
            } else if (c == 's') {
                s = va_arg(ap, const char*);
                s = s ? s : "(null)";
                n = strlen(s);
            } else if (c == 'g' || c == 'f') {
                const double v = va_arg(ap, double), a = __builtin_fabs(v);
                n = 0;
                if (__builtin_signbit(v))
                    tmp[n++] = '-';
                if (a != a || a > 1.7976931348623157e308)
                    memcpy(tmp + n, a != a ? "nan" : "inf", 3), n += 3;
                else if (c == 'f')
                    n += (size_t)put_f0(tmp + n, a);
                else if (a == 0)
                    tmp[n++] = '0';
                else
                    n += (size_t)put_g(tmp + n, a);
            } else if (c != '%') { /* unsupported: visible in the message rather than a misread argument */
                s = "%?";
                n = 2;
                f -= !c;
            }
            else
                s = f;
        }
        for (size_t i = 0; i < n; ++i, ++total)
            if (total + 1 < size)
                buf[total] = s[i];
    }
    if (size)
        buf[total < size ? total : size - 1] = '\0';
    return (int)total;
}

int nb_format(char* buf, size_t size, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = nb_vformat(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

nb_status nb_fail(nb_context* ctx, nb_status status, const char* fmt, ...)
{
    if (!ctx)
        return status;
    ctx->status = status;
    va_list ap;
    va_start(ap, fmt);
    nb_vformat(ctx->message, sizeof(ctx->message), fmt, ap);
    va_end(ap);
    return status;
}

static void swap_bytes(unsigned char* a, unsigned char* b, size_t size)
{
    for (; size; --size, ++a, ++b) {
        const unsigned char t = *a;
        *a = *b;
        *b = t;
    }
}

/* Moves element i down the max-heap of n elements to where it belongs. */
static void sift_down(unsigned char* base, size_t i, size_t n, size_t size, int (*cmp)(const void*, const void*))
{
    for (size_t child; (child = 2 * i + 1) < n; i = child) {
        if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
            child++;
        if (cmp(base + i * size, base + child * size) >= 0)
            return;
        swap_bytes(base + i * size, base + child * size, size);
    }
}

/* Heapsort: a fraction of libc qsort's code in the wasm build, O(n log n) with no recursion and no memory. */
void nb_sort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*))
{
    unsigned char* b = (unsigned char*)base;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(b, i, n, size, cmp);
    for (size_t end = n; end-- > 1;) {
        swap_bytes(b, b + end * size, size);
        sift_down(b, 0, end, size, cmp);
    }
}

nb_status nb_report(nb_context* ctx, nb_stage stage, uint32_t done, uint32_t total)
{
    if (!ctx || !ctx->progress)
        return NB_OK;
    if (ctx->report_stage == (int32_t)stage && ctx->report_done == done && ctx->report_total == total)
        return NB_OK;
    ctx->report_stage = (int32_t)stage;
    ctx->report_done = done;
    ctx->report_total = total;
    if (ctx->progress(ctx->progress_user, stage, done, total))
        return nb_fail(ctx, NB_ERR_CANCELLED, "nb_bake: cancelled by the progress callback (stage %d, %u/%u)",
                       (int)stage, done, total);
    return NB_OK;
}

nb_status nb_report_end(nb_context* ctx, nb_stage stage)
{
    if (!ctx || !ctx->progress)
        return NB_OK;
    const int same = ctx->report_stage == (int32_t)stage;
    if (same && ctx->report_done == ctx->report_total)
        return NB_OK;
    const uint32_t total = same && ctx->report_total ? ctx->report_total : 1;
    return nb_report(ctx, stage, total, total);
}

/* The monotonic clock, in ms. Also in wasm (a WASI clock_time_get import): Emscripten's standalone
 * emscripten_get_now() computes 1000 * clock() in a 32-bit long, which wraps every 4.3 s of process time, so a
 * stage that ran across a wrap timed negative. */
double nb_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}
