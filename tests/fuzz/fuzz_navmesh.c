/* libFuzzer target: nb_navmesh_load on adversarial files, then every query on what loads.
 *
 * The checksums stop accidental damage, not a crafted file, so the harness first makes them right (the file
 * header's CRC and each length-prefixed tile's CRC): the fuzzer's bytes then reach the parser's own checks. A file
 * that loads must answer every query without reading out of bounds (ASan), without undefined behaviour (UBSan)
 * and without an endless loop (libFuzzer's -timeout), and must save to bytes that load again. Build and run with
 * `make fuzz` (see the Makefile); inputs that once failed live in tests/fuzz/replay and are replayed by the
 * native test suite (tests/c/test_fuzz_replay.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    uint8_t* copy = (uint8_t*)malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_navmesh_crcs(copy, size);
    fuzz_check_navmesh_file(copy, size);
    free(copy);
    return 0;
}
