/* The message formatter (nb_format, used instead of printf to keep libc's printf out of the wasm) against the
 * C library's snprintf, and nb_sort against qsort. */
#include "../../c/src/nb_internal.h"
#include "nbtest.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int check_same(const char* fmt, const char* ours, const char* libc)
{
    if (strcmp(ours, libc) != 0) {
        fprintf(stderr, "  %s: nb_format \"%s\" vs snprintf \"%s\"\n", fmt, ours, libc);
        return 0;
    }
    return 1;
}

static void test_g_matches_printf(void)
{
    int bad = 0;
    const double fixed[] = { 0.0, -0.0, 1.0, -1.0, 0.3, 0.6, 5000.0, 1234567.0, 1e-5, 123456.5, 1e21, 0.1 + 0.2,
                             2.5e-7, 99999.95, 999999.5, NAN, INFINITY, -INFINITY, 1.0f / 3.0f };
    char a[64], b[64];
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); ++i) {
        nb_format(a, sizeof(a), "%g", fixed[i]);
        snprintf(b, sizeof(b), "%g", fixed[i]);
        bad += !check_same("%g", a, b);
    }
    for (int i = 0; i < 50000; ++i) {
        /* magnitudes 1e-15 .. 1e25, random mantissas, floats and doubles */
        const double m = (double)(next() >> 11) / 9007199254740992.0;
        const double v = (m + 0.1) * pow(10.0, (double)((int)(next() % 41) - 15)) * ((next() & 1) ? -1.0 : 1.0);
        const double x = (i & 1) ? (double)(float)v : v;
        nb_format(a, sizeof(a), "%g", x);
        snprintf(b, sizeof(b), "%g", x);
        bad += !check_same("%g", a, b);
        if (bad > 5)
            break;
    }
    CHECK_INT(bad, 0);
}

static void test_integers_strings_and_widths(void)
{
    char a[128], b[128];
    int bad = 0;
    for (int i = 0; i < 20000 && bad < 5; ++i) {
        const int d = (int)next();
        const unsigned u = (unsigned)next();
        const long long ll = (long long)next();
        const unsigned long long ull = next();
        const size_t z = (size_t)next();
        nb_format(a, sizeof(a), "%d %u %x %08x %lld %llu %zu %c %s %%", d, u, u, u, ll, ull, z, 'a' + (int)(u % 26),
                  (i & 1) ? "text" : "");
        snprintf(b, sizeof(b), "%d %u %x %08x %lld %llu %zu %c %s %%", d, u, u, u, ll, ull, z, 'a' + (int)(u % 26),
                 (i & 1) ? "text" : "");
        bad += !check_same("integers", a, b);
        const double f = (double)(next() % 100000000) / 7.0;
        nb_format(a, sizeof(a), "%.0f", f);
        snprintf(b, sizeof(b), "%.0f", f);
        bad += !check_same("%.0f", a, b);
    }
    CHECK_INT(bad, 0);
    /* truncation: the output is cut and NUL-terminated, the return value is the full length */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation" /* truncation is the point here */
    const int n = nb_format(a, 8, "%s-%d", "abcdef", 12345);
    snprintf(b, 8, "%s-%d", "abcdef", 12345);
#pragma GCC diagnostic pop
    CHECK(strcmp(a, b) == 0);
    CHECK_INT(n, 12);
}

static int cmp_int(const void* x, const void* y)
{
    const int a = *(const int*)x, b = *(const int*)y;
    return a < b ? -1 : a > b;
}

static void test_sort_matches_qsort(void)
{
    for (int round = 0; round < 200; ++round) {
        int a[257], b[257];
        const int n = (int)(next() % 257);
        for (int i = 0; i < n; ++i)
            a[i] = b[i] = (int)(next() % 50) - 25; /* plenty of duplicates */
        nb_sort(a, (size_t)n, sizeof(int), cmp_int);
        qsort(b, (size_t)n, sizeof(int), cmp_int);
        CHECK(memcmp(a, b, (size_t)n * sizeof(int)) == 0);
    }
}

int main(void)
{
    RUN(test_g_matches_printf);
    RUN(test_integers_strings_and_widths);
    RUN(test_sort_matches_qsort);
    return nbt_finish("test_format");
}
