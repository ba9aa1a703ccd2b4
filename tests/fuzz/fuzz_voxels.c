/* libFuzzer target: 3D voxel path search (nb_voxel_nearest, nb_voxel_find_path) on adversarial grids, agents and
 * ends; the checks are fuzz_check_voxels' (fuzz_common.h). Build and run with `make fuzz`; inputs that once failed
 * live in tests/fuzz/replay/voxels and are replayed by the native suite (tests/c/test_fuzz_replay.c). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > 4096)
        return 0;
    fuzz_check_voxels(data, size);
    return 0;
}
